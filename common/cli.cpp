#include "cli.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>

namespace sgemm {

namespace {

std::uint64_t parse_u64(const std::string& text, const std::string& what) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size())
    throw UsageError(what + " must be a non-negative integer, got '" + printable(text) + "'");
  if (ec == std::errc::result_out_of_range) throw UsageError(what + " is too large: '" + printable(text) + "'");
  return v;
}

int parse_int(const std::string& text, const std::string& what, int min, int max = std::numeric_limits<int>::max()) {
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size())
    throw UsageError(what + " must be an integer, got '" + printable(text) + "'");
  if (ec == std::errc::result_out_of_range || v > std::numeric_limits<int>::max())
    throw UsageError(what + " is too large: '" + printable(text) + "'");
  if (v < std::numeric_limits<int>::min()) throw UsageError(what + " is too small: '" + printable(text) + "'");
  if (v < min) throw UsageError(what + " must be at least " + std::to_string(min) + ", got " + printable(text));
  if (v > max) throw UsageError(what + " must be at most " + std::to_string(max) + ", got " + printable(text));
  return static_cast<int>(v);
}

float parse_float(const std::string& text, const std::string& what) {
  // strtof accepts leading blanks and hex floats; require the whole text to be consumed.
  char* end = nullptr;
  errno = 0;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || std::isspace(static_cast<unsigned char>(text[0])))
    throw UsageError(what + " must be a number, got '" + printable(text) + "'");
  if (std::isnan(v) || (std::isinf(v) && errno != ERANGE))
    throw UsageError(what + " must be a finite float, got '" + printable(text) + "'");
  if (std::isinf(v))
    throw UsageError(what + " " + printable(text) + " is beyond the largest finite float (3.4028235e38)");
  // strtof also sets ERANGE for subnormal results (1e-40), which are floats like any other;
  // only a non-zero number that rounds to zero is refused.
  if (errno == ERANGE && v == 0.0f)
    throw UsageError(what + " " + printable(text) +
                     " is below the smallest float (1.4e-45) and would round to 0; write 0 if you mean it");
  return v;
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  for (const char ch : text) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

int parse_dim(const std::string& text, const std::string& what) {
  const int v = parse_int(text, what, 1);
  if (v > kMaxDim)
    throw UsageError(what + " must be at most " + std::to_string(kMaxDim) + " (grids put up to " + what +
                     " / 16 blocks on grid.y, which holds 65535), got " + printable(text));
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
    throw UsageError("a size is S or MxNxK, got '" + printable(text) + "'");
  }
  check_indexable(s);
  return s;
}

std::vector<Shape> parse_shape_list(const std::string& text) {
  if (text.empty() || text.back() == ',') throw UsageError("empty size in list '" + printable(text) + "'");
  std::vector<Shape> shapes;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) shapes.push_back(parse_shape(item));
  return shapes;
}

void check_indexable(const Shape& s, int pad_a, int pad_b, int pad_c) {
  // The steps index with 32-bit ints, as tutorial kernels do; refuse what would overflow.
  // The harness stores A as M x lda, B as K x ldb and C as M x ldc (see Options).
  constexpr long long kMax = std::numeric_limits<int>::max();
  const long long m = s.m, n = s.n, k = s.k;
  struct Stored {
    const char* name;
    long long rows, cols;
    std::string how;
  };
  const Stored stored[] = {
      {"A", m, k + pad_a, pad_a ? " (K + ld-pad " + std::to_string(pad_a) + ")" : ""},
      {"B", k, n + pad_b, pad_b ? " (N + ld-pad " + std::to_string(pad_b) + ")" : ""},
      {"C", m, n + kGuardCols + pad_c,
       " (N + " + std::to_string(kGuardCols) + " guard columns" + (pad_c ? " + ld-pad " + std::to_string(pad_c) : "") +
           ")"},
  };
  for (const Stored& x : stored) {
    if (x.rows * x.cols <= kMax) continue;
    std::ostringstream msg;
    msg << "size " << m << "x" << n << "x" << k << " is too large: " << x.name << " is stored as " << x.rows
        << " x " << x.cols << x.how << " = " << x.rows * x.cols
        << " elements, and every matrix must have fewer than 2^31 elements (the steps index with 32-bit ints)";
    throw UsageError(msg.str());
  }
}

void check_dims(const Shape& s) {
  const std::pair<const char*, int> dims[] = {{"M", s.m}, {"N", s.n}, {"K", s.k}};
  for (const auto& [name, v] : dims)
    if (v > kMaxDim)
      throw UsageError(std::string(name) + " = " + std::to_string(v) + " is more than " + std::to_string(kMaxDim) +
                       " (grids put up to " + name + " / 16 blocks on grid.y, which holds 65535)");
}

std::string inputs_label(const Options& o) {
  std::vector<std::string> items;
  if (!o.load_a.empty()) items.push_back("loaded");
  if (o.specials) items.push_back("specials");
  if (o.exponents) items.push_back("exponents=" + std::to_string(o.exp_a) + "," + std::to_string(o.exp_b));
  if (o.pad_a || o.pad_b || o.pad_c)
    items.push_back("ld-pad=" + std::to_string(o.pad_a) + "," + std::to_string(o.pad_b) + "," + std::to_string(o.pad_c));
  std::string label;
  for (const std::string& item : items) label += (label.empty() ? "" : ";") + item;
  return label;
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
    << "  --specials                  plant +-Inf, NaN and values near FLT_MAX (some rounding past it\n"
    << "                              in TF32) into a few rows of A, columns of B (and C if beta != 0);\n"
    << "                              NaN and +-Inf outputs must then match the FP64 reference's class\n"
    << "  --exponents EA,EB           multiply A by 2^EA, B by 2^EB (and C by 2^(EA+EB)), each value in\n"
    << "                              FP64 then rounded to float: tiny, huge or subnormal inputs\n"
    << "                              (EA, EB in -140..127), e.g. -134,120 for a wholly subnormal A\n"
    << "modes:\n"
    << "  --check                     verify only, no timing\n"
    << "  --time-only                 time only, no verification\n"
    << "  --no-cublas-timing          do not time cuBLAS (the ratio column is then empty)\n"
    << "  --record-failures           time and write a shape that fails its check (verified = 0;\n"
    << "                              exit code still 1), e.g. for a TF32 context point\n"
    << "  --reps N                    timed repetitions, at most 10000 (default: about --time-ms per shape)\n"
    << "  --time-ms MS                how long the step's timed runs of a shape take, 10..60000, when\n"
    << "                              --reps is not given (default 1000; 5 to 200 repetitions)\n"
    << "  --warmup N                  untimed runs first, at most 1000 (default 2)\n"
    << "outputs:\n"
    << "  --csv FILE                  append one row per timed shape (header written if new)\n"
    << "  --variant LABEL             label the CSV rows, e.g. THREAD_TILE_X=8;THREAD_TILE_Y=4\n"
    << "  --save-c FILE               write the (last shape's) result C as .npy\n"
    << "  --device D                  CUDA device index (default 0)\n"
    << "  --sms N                     run on N of the GPU's SMs (a green context, rounded up by the\n"
    << "                              GPU); rows record the count: an emulation of a smaller GPU\n"
    << "  --requirements              print the shared memory and compute capability this build\n"
    << "                              needs, and its tuning; needs no GPU\n"
    << "  --expect-path P             the check fails unless the step took path P (whole-tiles,\n"
    << "                              split-K, stream-K, ...) for every shape\n"
    << "  -h, --help                  this text\n"
    << "Each option is given at most once. Input files are read and output files opened before\n"
    << "the GPU is used, so a bad file or path is reported at once.\n"
    << "exit codes: 0 ok, 1 verification failed, 2 bad usage or input, 3 no GPU (no driver or no\n"
    << "device), 4 CUDA or I/O error (a driver too old for this build included)\n";
  return u.str();
}

Options parse_args(int argc, const char* const* argv) {
  static const std::set<std::string> kFlags = {"--check", "--time-only", "--no-cublas-timing",
                                                "--record-failures", "--specials", "--requirements"};
  static const std::set<std::string> kWithValue = {
      "--size", "--sizes", "-m", "-n", "-k", "--alpha", "--beta", "--seed", "--reps", "--time-ms", "--warmup", "--device",
      "--csv", "--variant", "--load-a", "--load-b", "--load-c", "--save-c", "--ld-pad", "--sms", "--expect-path",
      "--exponents"};
  auto is_option = [&](const std::string& a) {
    return a == "-h" || a == "--help" || kFlags.count(a) || kWithValue.count(a);
  };
  Options o;
  std::set<std::string> given;  // every option but --help counts once
  std::string m, n, k;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      o.help = true;
      continue;
    }
    if (!is_option(arg)) {
      const auto eq = arg.find('=');
      if (eq != std::string::npos && kWithValue.count(arg.substr(0, eq)))
        throw UsageError("write '" + printable(arg.substr(0, eq)) + " " + printable(arg.substr(eq + 1)) +
                         "', not '" + printable(arg) + "'");
      throw UsageError(arg.rfind("-", 0) == 0 ? "unknown option '" + printable(arg) + "'"
                                              : "unexpected argument '" + printable(arg) + "' (options start with --)");
    }
    if (!given.insert(arg == "--size" ? "--sizes" : arg).second) {
      if (arg == "--size" || arg == "--sizes") throw UsageError("give the sizes once (--size/--sizes given twice)");
      throw UsageError("option " + arg + " given twice; give it once");
    }
    if (kFlags.count(arg)) continue;  // read after the loop
    if (i + 1 >= argc) throw UsageError("option " + arg + " needs a value");
    const std::string v = argv[++i];
    // "--csv --check" would write a file named --check; "-5" is a (bad) number, not an option.
    if (v.rfind("--", 0) == 0 || is_option(v))
      throw UsageError("option " + arg + " needs a value, but is followed by the option " + printable(v));
    auto file_name = [&] {
      if (v.empty()) throw UsageError(arg + " needs a file name, got an empty one");
      if (v[0] == '-')
        throw UsageError(arg + " '" + printable(v) + "' looks like an option; name a file (./" + printable(v) +
                         " for one that starts with '-', /dev/stdout for standard output)");
      return v;
    };
    if (arg == "--size" || arg == "--sizes") {
      o.shapes = parse_shape_list(v);
      if (arg == "--size" && o.shapes.size() != 1) throw UsageError("--size takes one size; use --sizes for a list");
    } else if (arg == "-m") {
      m = v;
    } else if (arg == "-n") {
      n = v;
    } else if (arg == "-k") {
      k = v;
    } else if (arg == "--alpha") {
      o.alpha = parse_float(v, "alpha");
    } else if (arg == "--beta") {
      o.beta = parse_float(v, "beta");
    } else if (arg == "--seed") {
      o.seed = parse_u64(v, "seed");
    } else if (arg == "--reps") {
      o.reps = parse_int(v, "reps", 1, kMaxReps);
    } else if (arg == "--time-ms") {
      o.time_ms = parse_int(v, "time-ms", 10, 60000);
    } else if (arg == "--warmup") {
      o.warmup = parse_int(v, "warmup", 0, kMaxWarmup);
    } else if (arg == "--device") {
      o.device = parse_int(v, "device", 0);
    } else if (arg == "--sms") {
      o.sms = parse_int(v, "sms", 1, 100000);
    } else if (arg == "--expect-path") {  // a step's path name: whole-tiles, split-K, stream-K, ...
      if (v.empty() || v.size() > 40 || v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != std::string::npos)
        throw UsageError("--expect-path takes a path name such as whole-tiles, split-K or stream-K, got '" + printable(v) + "'");
      o.expect_path = v;
    } else if (arg == "--csv") {
      o.csv_path = file_name();
    } else if (arg == "--variant") {  // may be empty: the label of the default tunables
      o.variant = v;
      // A CSV field: no separator, no quote, and no control character (a carriage return
      // or a tab would reach the results file).
      if (std::any_of(v.begin(), v.end(), [](char ch) {
            const auto c = static_cast<unsigned char>(ch);
            return c == ',' || c == '"' || c < 0x20 || c == 0x7f;
          }))
        throw UsageError("--variant label must not contain commas, quotes or control characters, got '" +
                         printable(v) + "'");
    } else if (arg == "--load-a") {
      o.load_a = file_name();
    } else if (arg == "--load-b") {
      o.load_b = file_name();
    } else if (arg == "--load-c") {
      o.load_c = file_name();
    } else if (arg == "--save-c") {
      o.save_c = file_name();
    } else if (arg == "--exponents") {
      const auto comma = v.find(',');
      if (comma == std::string::npos || v.find(',', comma + 1) != std::string::npos)
        throw UsageError("--exponents takes two comma-separated integers EA,EB (A is multiplied by 2^EA, B by 2^EB), "
                         "got '" + printable(v) + "'");
      auto exponent = [&](const std::string& text, const char* what) {
        const int e = parse_int(text, what, std::numeric_limits<int>::min());
        if (e > kMaxExponent)
          throw UsageError(std::string(what) + " must be at most " + std::to_string(kMaxExponent) + ", got " +
                           printable(text) + ": values near 1 times 2^" + printable(text) +
                           " pass FLT_MAX (3.4e38)");
        if (e < kMinExponent)
          throw UsageError(std::string(what) + " must be at least " + std::to_string(kMinExponent) + ", got " +
                           printable(text) + ": below that almost every input rounds to 0 (the smallest float is "
                           "2^-149)");
        return e;
      };
      o.exp_a = exponent(v.substr(0, comma), "--exponents EA");
      o.exp_b = exponent(v.substr(comma + 1), "--exponents EB");
    } else if (arg == "--ld-pad") {
      const auto first = v.find(','), second = v.find(',', first == std::string::npos ? first : first + 1);
      if (first == std::string::npos || second == std::string::npos || v.find(',', second + 1) != std::string::npos)
        throw UsageError("--ld-pad takes three comma-separated counts PA,PB,PC, got '" + printable(v) + "'");
      o.pad_a = parse_int(v.substr(0, first), "ld-pad A", 0, kMaxPad);
      o.pad_b = parse_int(v.substr(first + 1, second - first - 1), "ld-pad B", 0, kMaxPad);
      o.pad_c = parse_int(v.substr(second + 1), "ld-pad C", 0, kMaxPad);
    }
  }
  auto has = [&](const char* opt) { return given.count(opt) != 0; };

  // Modes: options that would be silently ignored are errors.
  if (has("--check") && has("--time-only")) throw UsageError("--check and --time-only exclude each other; give one");
  if (has("--check")) {
    o.mode = Mode::CheckOnly;
    for (const char* timing : {"--reps", "--time-ms", "--warmup", "--no-cublas-timing"})
      if (has(timing))
        throw UsageError(std::string(timing) + " belongs to timing, and --check does not time; drop one of them");
    if (has("--csv") && !has("--record-failures"))  // --check writes rows only with --record-failures
      throw UsageError("--csv writes timed rows, and --check does not time: drop one of them (or add "
                       "--record-failures to write the checked rows)");
  }
  if (has("--time-only")) o.mode = Mode::TimeOnly;
  o.compare_cublas = !has("--no-cublas-timing");
  o.record_failures = has("--record-failures");
  o.requirements = has("--requirements");
  if (has("--variant") && !has("--csv")) throw UsageError("--variant labels CSV rows; it needs --csv");

  const bool have_sizes = has("--sizes");
  const int mnk_given = has("-m") + has("-n") + has("-k");
  if (mnk_given != 0) {
    if (mnk_given != 3) throw UsageError("give -m, -n and -k together");
    if (have_sizes) throw UsageError("give either -m/-n/-k or --size/--sizes, not both");
    o.shapes = {{parse_dim(m, "M"), parse_dim(n, "N"), parse_dim(k, "K")}};
  }
  const bool loading = has("--load-a") || has("--load-b") || has("--load-c");
  o.specials = has("--specials");
  if (o.specials) {
    if (loading)
      throw UsageError("--specials plants into the harness's random inputs, and loaded files keep their own values; "
                       "drop one of them");
    if (o.mode == Mode::TimeOnly)
      throw UsageError("--specials is a check of IEEE special values, and --time-only does not check; drop one of them");
    // BLAS reads neither A nor B when alpha == 0 (the reference then gives beta C, finite),
    // while 0 * Inf is NaN: there is no one right answer to check against.
    if (o.alpha == 0.0f)
      throw UsageError("--specials needs a non-zero --alpha: with alpha 0, A and B (where the specials are) are not read");
  }
  o.exponents = has("--exponents");
  if (o.exponents) {
    if (loading)
      throw UsageError("--exponents scales the harness's random inputs, and loaded files are taken as they are; "
                       "drop one of them (scale the files instead)");
    if (o.specials)
      throw UsageError("--exponents and --specials exclude each other: scaled, the specials near FLT_MAX would no "
                       "longer be what they test; give one");
    // A correct FP32 sum must not overflow where the exact one does not: its partial sums
    // reach K * 2^(EA+EB) (|A|, |B| <= 2^EA, 2^EB).
    for (const Shape& s : o.shapes)
      if (std::ldexp(double(s.k), o.exp_a + o.exp_b) > 0x1p126)
        throw UsageError("--exponents " + std::to_string(o.exp_a) + "," + std::to_string(o.exp_b) + ": at K = " +
                         std::to_string(s.k) + " an FP32 sum of products up to 2^" +
                         std::to_string(o.exp_a + o.exp_b) +
                         " may pass FLT_MAX where the exact one does not; lower EA + EB");
  }
  if (loading) {
    if (!has("--load-a") || !has("--load-b"))
      throw UsageError(has("--load-c") ? "--load-c needs --load-a and --load-b" : "--load-a and --load-b go together");
    if (have_sizes || mnk_given) throw UsageError("sizes come from the loaded files; drop --size/-m/-n/-k");
    o.shapes = {};  // filled in from the files by the harness
  }
  for (const Shape& s : o.shapes) check_indexable(s, o.pad_a, o.pad_b, o.pad_c);
  if (has("--load-c") && o.beta == 0.0f) throw UsageError("--load-c needs a non-zero --beta (beta 0 never reads C)");
  if (has("--save-c") && o.mode == Mode::TimeOnly)
    throw UsageError("--save-c needs a verified result; drop --time-only");
  if (has("--csv") && has("--save-c") && o.csv_path == o.save_c)
    throw UsageError("--csv and --save-c name the same file '" + printable(o.csv_path) + "'");
  return o;
}

}  // namespace sgemm
