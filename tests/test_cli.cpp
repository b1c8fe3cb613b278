#include <string>
#include <vector>

#include "catch.hpp"
#include "cli.hpp"

using namespace sgemm;

namespace {
Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "step");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_args(static_cast<int>(argv.size()), argv.data());
}

// The message of the UsageError that parsing `args` throws ("" if none).
std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("defaults: 4096^3, alpha 1, beta 0, check and time") {
  const Options o = parse({});
  REQUIRE(o.shapes == std::vector<Shape>{{4096, 4096, 4096}});
  CHECK(o.alpha == 1.0f);
  CHECK(o.beta == 0.0f);
  CHECK(o.mode == Mode::CheckAndTime);
  CHECK(o.reps == 0);
  CHECK_FALSE(o.help);
}

TEST_CASE("sizes: single, list, MxNxK and -m/-n/-k") {
  CHECK(parse({"--size", "1024"}).shapes == std::vector<Shape>{{1024, 1024, 1024}});
  CHECK(parse({"--size", "17x31x13"}).shapes == std::vector<Shape>{{17, 31, 13}});
  CHECK(parse({"--sizes", "1,2x3x4,8"}).shapes == std::vector<Shape>{{1, 1, 1}, {2, 3, 4}, {8, 8, 8}});
  CHECK(parse({"-m", "5", "-n", "6", "-k", "7"}).shapes == std::vector<Shape>{{5, 6, 7}});
}

TEST_CASE("options are read") {
  const Options o = parse({"--alpha", "-1.5", "--beta", "0.25", "--reps", "7", "--warmup", "0", "--seed", "99",
                           "--check", "--csv", "out.csv", "--variant", "A=1;B=2", "--device", "1"});
  CHECK(o.alpha == -1.5f);
  CHECK(o.beta == 0.25f);
  CHECK(o.reps == 7);
  CHECK(o.warmup == 0);
  CHECK(o.seed == 99);
  CHECK(o.mode == Mode::CheckOnly);
  CHECK(o.csv_path == "out.csv");
  CHECK(o.variant == "A=1;B=2");
  CHECK(o.device == 1);
  CHECK(parse({"--time-only"}).mode == Mode::TimeOnly);
  CHECK(parse({"--help"}).help);
  CHECK(parse({"-h"}).help);
}

TEST_CASE("bad sizes are rejected with a message naming the problem") {
  CHECK(contains(error_of({"--size", "0"}), "at least 1"));
  CHECK(contains(error_of({"--size", "-5"}), "size must be at least 1, got -5"));
  CHECK(contains(error_of({"--size", "abc"}), "must be an integer"));
  CHECK(contains(error_of({"--size", "12abc"}), "must be an integer"));
  CHECK(contains(error_of({"--size", ""}), "empty size"));
  CHECK(contains(error_of({"--size", "99999999999999999999"}), "too large"));
  CHECK(contains(error_of({"--size", "2147483648"}), "too large"));
  CHECK(contains(error_of({"--size", "1000001"}), "at most 1000000"));
  CHECK(contains(error_of({"--size", "1x2"}), "S or MxNxK"));
  CHECK(contains(error_of({"--size", "1x2x3x4"}), "S or MxNxK"));
  CHECK(contains(error_of({"--size", "4x4x"}), "must be an integer"));
  CHECK(contains(error_of({"--sizes", "1,,2"}), "S or MxNxK"));
  CHECK(contains(error_of({"--sizes", "1,2,"}), "empty size"));
  CHECK(contains(error_of({"--size", "1,2"}), "one size"));
  CHECK(contains(error_of({"--size", "100000"}), "fewer than 2^31 elements"));  // 10^10 elements
  CHECK(contains(error_of({"-m", "5", "-n", "6"}), "-m, -n and -k together"));
  CHECK(contains(error_of({"-m", "5", "-n", "6", "-k", "7", "--size", "4"}), "not both"));
  CHECK(contains(error_of({"--size", "4", "--sizes", "5"}), "once"));
}

TEST_CASE("bad options are rejected") {
  CHECK(contains(error_of({"--alpha"}), "needs a value"));
  CHECK(contains(error_of({"--alpha", "x"}), "alpha must be a number"));
  CHECK(contains(error_of({"--beta", "1e99"}), "finite"));
  CHECK(contains(error_of({"--beta", "nan"}), "finite"));
  CHECK(contains(error_of({"--beta", " 1"}), "must be a number"));
  CHECK(contains(error_of({"--reps", "0"}), "at least 1"));
  CHECK(contains(error_of({"--warmup", "-1"}), "at least 0"));
  CHECK(contains(error_of({"--seed", "-1"}), "non-negative integer"));
  CHECK(contains(error_of({"--seed", "123456789012345678901234"}), "too large"));
  CHECK(contains(error_of({"--frobnicate"}), "unknown option '--frobnicate'"));
  CHECK(contains(error_of({"--variant", "a,b"}), "commas"));
}

TEST_CASE("npy loading rules") {
  CHECK(parse({"--load-a", "a.npy", "--load-b", "b.npy"}).shapes.empty());  // sizes come from the files
  CHECK(contains(error_of({"--load-a", "a.npy"}), "go together"));
  CHECK(contains(error_of({"--load-a", "a.npy", "--load-b", "b.npy", "--size", "4"}), "from the loaded files"));
  CHECK(contains(error_of({"--load-a", "a", "--load-b", "b", "--load-c", "c"}), "non-zero --beta"));
  CHECK(contains(error_of({"--save-c", "c.npy", "--time-only"}), "verified result"));
}

TEST_CASE("usage text names every option") {
  const std::string u = usage("step");
  for (const char* opt : {"--size", "--sizes", "--alpha", "--beta", "--seed", "--reps", "--warmup", "--check",
                          "--time-only", "--csv", "--load-a", "--load-b", "--load-c", "--save-c", "--help"})
    CHECK(contains(u, opt));
}
