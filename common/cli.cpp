#include "cli.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace sgemm {

namespace {

std::uint64_t parse_u64(const std::string& text, const std::string& what) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size())
    throw UsageError(what + " must be a non-negative integer, got '" + text + "'");
  if (ec == std::errc::result_out_of_range) throw UsageError(what + " is too large: '" + text + "'");
  return v;
}

int parse_int(const std::string& text, const std::string& what, int min, int max = std::numeric_limits<int>::max()) {
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size())
    throw UsageError(what + " must be an integer, got '" + text + "'");
  if (ec == std::errc::result_out_of_range || v > std::numeric_limits<int>::max())
    throw UsageError(what + " is too large: '" + text + "'");
  if (v < min) throw UsageError(what + " must be at least " + std::to_string(min) + ", got " + text);
  if (v > max) throw UsageError(what + " must be at most " + std::to_string(max) + ", got " + text);
  return static_cast<int>(v);
}

float parse_float(const std::string& text, const std::string& what) {
  // strtof accepts leading blanks and hex floats; require the whole text to be consumed.
  char* end = nullptr;
  errno = 0;
  float v = std::strtof(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || std::isspace(static_cast<unsigned char>(text[0])))
    throw UsageError(what + " must be a number, got '" + text + "'");
  if (errno == ERANGE || !std::isfinite(v))
    throw UsageError(what + " must be a finite float, got '" + text + "'");
  return v;
}

}  // namespace

int parse_dim(const std::string& text, const std::string& what) {
  const int v = parse_int(text, what, 1);
  if (v > kMaxDim)
    throw UsageError(what + " must be at most " + std::to_string(kMaxDim) + " (grids put up to " + what +
                     " / 16 blocks on grid.y, which holds 65535), got " + text);
  return v;
}

Shape parse_shape(const std::string& text) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, 'x')) parts.push_back(part);
  if (!text.empty() && text.back() == 'x') parts.push_back("");
  Shape s{};
  if (parts.size() == 1) {
    s.m = s.n = s.k = parse_dim(parts[0], "size");
  } else if (parts.size() == 3) {
    s = {parse_dim(parts[0], "M"), parse_dim(parts[1], "N"), parse_dim(parts[2], "K")};
  } else {
    throw UsageError("a size is S or MxNxK, got '" + text + "'");
  }
  check_indexable(s);
  return s;
}

std::vector<Shape> parse_shape_list(const std::string& text) {
  if (text.empty() || text.back() == ',') throw UsageError("empty size in list '" + text + "'");
  std::vector<Shape> shapes;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) shapes.push_back(parse_shape(item));
  return shapes;
}

void check_indexable(const Shape& s) {
  // The steps index with 32-bit ints, as tutorial kernels do; refuse what would overflow.
  constexpr long long kMax = std::numeric_limits<int>::max();
  const long long m = s.m, n = s.n, k = s.k;
  if (m * k > kMax || k * n > kMax || m * (n + kGuardCols) > kMax) {
    std::ostringstream msg;
    msg << "size " << m << "x" << n << "x" << k
        << " is too large: every matrix must have fewer than 2^31 elements";
    throw UsageError(msg.str());
  }
}

std::string usage(const std::string& program) {
  std::ostringstream u;
  u << "usage: " << program << " [options]\n"
    << "Computes C = alpha * A * B + beta * C (row-major FP32), verifies it against cuBLAS and\n"
    << "times it against cuBLAS in the same run.\n\n"
    << "sizes (default 4096):\n"
    << "  --size S | --size MxNxK     one problem\n"
    << "  --sizes LIST                comma-separated sizes, e.g. 1024,2048 or 17x31x13,1x1x1\n"
    << "  -m M -n N -k K              one problem, all three given\n"
    << "inputs:\n"
    << "  --alpha A --beta B          scalars (default 1 and 0); beta 0 means C is write-only\n"
    << "  --seed S                    seed of the random inputs in [-1, 1] (default 2024)\n"
    << "  --load-a F --load-b F --load-c F   2-D float32 .npy inputs; sizes follow the files\n"
    << "  --ld-pad PA,PB,PC           pad rows of A, B, C by PA, PB, PC floats (lda = K + PA, ...)\n"
    << "modes:\n"
    << "  --check                     verify only, no timing\n"
    << "  --time-only                 time only, no verification\n"
    << "  --no-cublas-timing          do not time cuBLAS (the ratio column is then empty)\n"
    << "  --record-failures           time and write a shape that fails its check (verified = 0;\n"
    << "                              exit code still 1), e.g. for a TF32 context point\n"
    << "  --reps N                    timed repetitions (default: about 1 s per shape)\n"
    << "  --warmup N                  untimed runs first (default 2)\n"
    << "outputs:\n"
    << "  --csv FILE                  append one row per shape (header written if new)\n"
    << "  --variant LABEL             label the rows, e.g. THREAD_TILE_X=8;THREAD_TILE_Y=4\n"
    << "  --save-c FILE               write the (last shape's) result C as .npy\n"
    << "  --device D                  CUDA device index (default 0)\n"
    << "  -h, --help                  this text\n"
    << "exit codes: 0 ok, 1 verification failed, 2 bad usage or input, 3 no GPU, 4 CUDA error\n";
  return u.str();
}

Options parse_args(int argc, const char* const* argv) {
  Options o;
  bool have_sizes = false;
  std::string m, n, k;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError("option " + arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--size" || arg == "--sizes") {
      if (have_sizes) throw UsageError("give the sizes once (" + arg + ")");
      o.shapes = parse_shape_list(value());
      if (arg == "--size" && o.shapes.size() != 1) throw UsageError("--size takes one size; use --sizes for a list");
      have_sizes = true;
    } else if (arg == "-m") {
      m = value();
    } else if (arg == "-n") {
      n = value();
    } else if (arg == "-k") {
      k = value();
    } else if (arg == "--alpha") {
      o.alpha = parse_float(value(), "alpha");
    } else if (arg == "--beta") {
      o.beta = parse_float(value(), "beta");
    } else if (arg == "--seed") {
      o.seed = parse_u64(value(), "seed");
    } else if (arg == "--reps") {
      o.reps = parse_int(value(), "reps", 1);
    } else if (arg == "--warmup") {
      o.warmup = parse_int(value(), "warmup", 0);
    } else if (arg == "--device") {
      o.device = parse_int(value(), "device", 0);
    } else if (arg == "--check") {
      o.mode = Mode::CheckOnly;
    } else if (arg == "--time-only") {
      o.mode = Mode::TimeOnly;
    } else if (arg == "--no-cublas-timing") {
      o.compare_cublas = false;
    } else if (arg == "--record-failures") {
      o.record_failures = true;
    } else if (arg == "--csv") {
      o.csv_path = value();
    } else if (arg == "--variant") {
      o.variant = value();
      if (o.variant.find_first_of(",\"\n") != std::string::npos)
        throw UsageError("variant label must not contain commas, quotes or newlines");
    } else if (arg == "--load-a") {
      o.load_a = value();
    } else if (arg == "--load-b") {
      o.load_b = value();
    } else if (arg == "--load-c") {
      o.load_c = value();
    } else if (arg == "--save-c") {
      o.save_c = value();
    } else if (arg == "--ld-pad") {
      const std::string text = value();
      const auto first = text.find(','), second = text.find(',', first == std::string::npos ? first : first + 1);
      if (first == std::string::npos || second == std::string::npos || text.find(',', second + 1) != std::string::npos)
        throw UsageError("--ld-pad takes three comma-separated counts PA,PB,PC, got '" + text + "'");
      o.pad_a = parse_int(text.substr(0, first), "ld-pad A", 0, kMaxPad);
      o.pad_b = parse_int(text.substr(first + 1, second - first - 1), "ld-pad B", 0, kMaxPad);
      o.pad_c = parse_int(text.substr(second + 1), "ld-pad C", 0, kMaxPad);
    } else {
      throw UsageError("unknown option '" + arg + "'");
    }
  }
  const int mnk_given = !m.empty() + !n.empty() + !k.empty();
  if (mnk_given != 0) {
    if (mnk_given != 3) throw UsageError("give -m, -n and -k together");
    if (have_sizes) throw UsageError("give either -m/-n/-k or --size/--sizes, not both");
    Shape s{parse_dim(m, "M"), parse_dim(n, "N"), parse_dim(k, "K")};
    check_indexable(s);
    o.shapes = {s};
    have_sizes = true;
  }
  const bool loading = !o.load_a.empty() || !o.load_b.empty() || !o.load_c.empty();
  if (loading) {
    if (o.load_a.empty() || o.load_b.empty()) throw UsageError("--load-a and --load-b go together");
    if (have_sizes) throw UsageError("sizes come from the loaded files; drop --size/-m/-n/-k");
    o.shapes = {};  // filled in from the files by the harness
  }
  if (!o.load_c.empty() && o.beta == 0.0f) throw UsageError("--load-c needs a non-zero --beta (beta 0 never reads C)");
  if (!o.save_c.empty() && o.mode == Mode::TimeOnly) throw UsageError("--save-c needs a verified result; drop --time-only");
  return o;
}

}  // namespace sgemm
