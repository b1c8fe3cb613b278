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
                           "--time-only", "--csv", "out.csv", "--variant", "A=1;B=2", "--device", "1",
                           "--no-cublas-timing"});
  CHECK(o.alpha == -1.5f);
  CHECK(o.beta == 0.25f);
  CHECK(o.reps == 7);
  CHECK(o.warmup == 0);
  CHECK(o.seed == 99);
  CHECK(o.mode == Mode::TimeOnly);
  CHECK(o.csv_path == "out.csv");
  CHECK(o.variant == "A=1;B=2");
  CHECK(o.device == 1);
  CHECK_FALSE(o.compare_cublas);
  CHECK(parse({"--check", "--alpha", "2"}).mode == Mode::CheckOnly);
  CHECK(parse({"--csv", "f.csv", "--variant", ""}).variant.empty());  // the default tunables' label
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
  // 46340^2 < 2^31, but C with its guard columns is 46340 x 46344 > 2^31: the message says so.
  CHECK(contains(error_of({"--size", "46340"}), "C is stored as 46340 x 46344 (N + 4 guard columns) = 2147580960"));
  CHECK(contains(error_of({"--size", "46341x1x46341"}), "A is stored as 46341 x 46341"));
  CHECK(contains(error_of({"--size", "1x46341x46341"}), "B is stored as 46341 x 46341"));
  CHECK(parse({"--size", "46000"}).shapes.size() == 1);
  CHECK(contains(error_of({"--size", "46000", "--ld-pad", "0,0,1024"}), "C is stored as 46000 x 47028 (N + 4 guard columns + ld-pad 1024)"));
  CHECK(contains(error_of({"--ld-pad", "100,0,0", "--size", "46300"}), "A is stored as 46300 x 46400 (K + ld-pad 100)"));
  CHECK(contains(error_of({"-m", "5", "-n", "6"}), "-m, -n and -k together"));
  CHECK(contains(error_of({"-m", "5", "-n", "6", "-k", "7", "--size", "4"}), "not both"));
  CHECK(contains(error_of({"--size", "4", "--sizes", "5"}), "once"));
}

TEST_CASE("bad options are rejected") {
  CHECK(contains(error_of({"--alpha"}), "needs a value"));
  CHECK(contains(error_of({"--alpha", "x"}), "alpha must be a number"));
  CHECK(contains(error_of({"--beta", "1e99"}), "beyond the largest finite float"));
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

TEST_CASE("the specials flag: parsed, and refused where it would mean nothing") {
  CHECK_FALSE(parse({}).specials);
  CHECK(parse({"--specials"}).specials);
  CHECK(parse({"--check", "--specials", "--beta", "0.5"}).specials);
  CHECK(parse({"--specials", "--alpha", "-1e-30"}).specials);
  CHECK(contains(error_of({"--specials", "--specials"}), "option --specials given twice"));
  CHECK(contains(error_of({"--specials", "1"}), "unexpected argument '1'"));  // a flag takes no value
  CHECK(contains(error_of({"--specials=1"}), "unknown option '--specials=1'"));
  CHECK(contains(error_of({"--specials", "--load-a", "a.npy", "--load-b", "b.npy"}),
                 "--specials plants into the harness's random inputs"));
  CHECK(contains(error_of({"--time-only", "--specials"}), "--time-only does not check"));
  CHECK(contains(error_of({"--specials", "--alpha", "0"}), "--specials needs a non-zero --alpha"));
  CHECK(contains(error_of({"--specials", "--alpha", "-0.0"}), "--specials needs a non-zero --alpha"));
}

TEST_CASE("usage text names every option") {
  const std::string u = usage("step");
  for (const char* opt : {"--size", "--sizes", "--alpha", "--beta", "--seed", "--reps", "--warmup", "--check",
                          "--time-only", "--csv", "--load-a", "--load-b", "--load-c", "--save-c", "--specials", "--exponents",
                          "--help"})
    CHECK(contains(u, opt));
}

TEST_CASE("floats: subnormals are floats; overflow, NaN and underflow to zero are not") {
  CHECK(parse({"--alpha", "1e-40"}).alpha == 1e-40f);  // subnormal: strtof reports ERANGE, still a float
  CHECK(parse({"--alpha", "0x1p-149"}).alpha == 0x1p-149f);
  CHECK(parse({"--beta", "0"}).beta == 0.0f);
  CHECK(parse({"--beta", "-0.0"}).beta == 0.0f);
  CHECK(parse({"--alpha", "3.4e38"}).alpha == 3.4e38f);
  CHECK(contains(error_of({"--alpha", "1e-50"}), "would round to 0"));
  CHECK(contains(error_of({"--alpha", "-1e39"}), "beyond the largest finite float"));
  CHECK(contains(error_of({"--alpha", "inf"}), "must be a finite float"));
  CHECK(contains(error_of({"--alpha", "-nan"}), "must be a finite float"));
}

TEST_CASE("every option is given once") {
  CHECK(contains(error_of({"-m", "5", "-m", "6", "-n", "1", "-k", "1"}), "option -m given twice"));
  CHECK(contains(error_of({"--alpha", "1", "--alpha", "2"}), "option --alpha given twice"));
  CHECK(contains(error_of({"--beta", "1", "--beta", "1"}), "option --beta given twice"));
  CHECK(contains(error_of({"--csv", "a.csv", "--csv", "b.csv"}), "option --csv given twice"));
  CHECK(contains(error_of({"--check", "--check"}), "option --check given twice"));
  CHECK(contains(error_of({"--size", "4", "--size", "5"}), "give the sizes once"));
  CHECK(parse({"-h", "--help"}).help);
}

TEST_CASE("modes that contradict or ignore an option are errors") {
  CHECK(contains(error_of({"--check", "--time-only"}), "--check and --time-only exclude each other"));
  CHECK(contains(error_of({"--time-only", "--check"}), "--check and --time-only exclude each other"));
  CHECK(contains(error_of({"--check", "--csv", "f.csv"}), "--csv writes timed rows, and --check does not time"));
  CHECK(parse({"--check", "--csv", "f.csv", "--record-failures"}).record_failures);  // checked rows, failed ones too
  CHECK(contains(error_of({"--check", "--reps", "3"}), "--reps belongs to timing"));
  CHECK(contains(error_of({"--warmup", "1", "--check"}), "--warmup belongs to timing"));
  CHECK(contains(error_of({"--check", "--no-cublas-timing"}), "--no-cublas-timing belongs to timing"));
  CHECK(contains(error_of({"--variant", "X=1"}), "--variant labels CSV rows; it needs --csv"));
  CHECK(contains(error_of({"--csv", "same", "--save-c", "same"}), "name the same file"));
  CHECK(contains(error_of({"--load-c", "c.npy", "--beta", "1"}), "--load-c needs --load-a and --load-b"));
}

TEST_CASE("empty values and options in place of values are errors") {
  CHECK(contains(error_of({"--csv", ""}), "--csv needs a file name, got an empty one"));
  CHECK(contains(error_of({"--save-c", ""}), "--save-c needs a file name"));
  CHECK(contains(error_of({"--load-a", "", "--load-b", ""}), "--load-a needs a file name"));
  CHECK(contains(error_of({"--csv", "--check"}), "option --csv needs a value, but is followed by the option --check"));
  CHECK(contains(error_of({"--alpha", "--beta", "2"}), "option --alpha needs a value, but is followed by the option --beta"));
  CHECK(contains(error_of({"-m", "-n", "5", "-k", "5"}), "option -m needs a value, but is followed by the option -n"));
  CHECK(contains(error_of({"--save-c", "-x.npy"}), "looks like an option"));
  CHECK(contains(error_of({"--csv", "-"}), "/dev/stdout"));
  CHECK(contains(error_of({"--alpha=2"}), "write '--alpha 2', not '--alpha=2'"));
  CHECK(contains(error_of({"stray"}), "unexpected argument 'stray'"));
  CHECK(contains(error_of({"--size", "-5"}), "size must be at least 1, got -5"));  // a number, not an option
}

TEST_CASE("repetitions are capped") {
  CHECK(parse({"--reps", "10000", "--warmup", "1000"}).reps == kMaxReps);
  CHECK(contains(error_of({"--reps", "2147483647"}), "reps must be at most 10000"));
  CHECK(parse({}).time_ms == 1000);
  CHECK(parse({"--time-ms", "100"}).time_ms == 100);
  CHECK(contains(error_of({"--time-ms", "5"}), "at least 10"));
  CHECK(contains(error_of({"--time-ms", "60001"}), "at most 60000"));
  CHECK(contains(error_of({"--check", "--time-ms", "100"}), "--time-ms belongs to timing"));
  CHECK(contains(error_of({"--warmup", "2147483647"}), "warmup must be at most 1000"));
}

TEST_CASE("messages are one line: echoed text is made printable") {
  CHECK(printable("a\nb\x01") == "a\\nb\\x01");
  CHECK(printable(std::string(500, 'x'), 10) == std::string(10, 'x') + "...");
  const std::string e = error_of({"--alpha", "1\n2"});
  CHECK(contains(e, "'1\\n2'"));
  CHECK_FALSE(contains(e, "\n"));
  CHECK_FALSE(contains(error_of({"--frob\nnicate"}), "\n"));
}

TEST_CASE("shapes from files obey the same limits as typed ones") {
  CHECK_NOTHROW(check_dims({kMaxDim, 1, kMaxDim}));
  std::string message;
  try {
    check_dims({1, kMaxDim + 1, 1});
  } catch (const UsageError& e) {
    message = e.what();
  }
  CHECK(contains(message, "N = 1000001 is more than 1000000"));
}

TEST_CASE("Options: sms, requirements and expect-path") {
  auto parse = [](std::vector<const char*> args) {
    args.insert(args.begin(), "step");
    return parse_args(int(args.size()), args.data());
  };
  CHECK(parse({"--sms", "88"}).sms == 88);
  CHECK(parse({}).sms == 0);
  CHECK_THROWS_AS(parse({"--sms", "0"}), UsageError);
  CHECK_THROWS_AS(parse({"--sms", "-4"}), UsageError);
  CHECK(parse({"--requirements"}).requirements);
  CHECK(parse({"--check", "--expect-path", "split-K-pairs"}).expect_path == "split-K-pairs");
  CHECK_THROWS_AS(parse({"--check", "--expect-path", "split K"}), UsageError);
  CHECK_THROWS_AS(parse({"--check", "--expect-path", ""}), UsageError);
}

TEST_CASE("messages echo at most about 200 characters of what was typed") {
  // 100,000 zeros, then 10001: a valid integer past the cap, once echoed whole (100 KB).
  const std::string reps = std::string(100000, '0') + "10001";
  const std::string e = error_of({"--reps", reps});
  CHECK(contains(e, "reps must be at most 10000, got 000"));
  CHECK(contains(e, "..."));
  CHECK(e.size() < 200);
  CHECK(error_of({"--warmup", "-" + std::string(100000, '0') + "1"}).size() < 200);
  CHECK(error_of({"--size", std::string(100000, '0') + "1000001"}).size() < 200);
  CHECK(error_of({"--size", std::string(100000, '0') + "0"}).size() < 200);
  CHECK(error_of({"--sizes", "4x" + std::string(100000, '0') + "1000001x4"}).size() < 200);
  CHECK(error_of({"--alpha", std::string(100000, '1')}).size() < 200);
  CHECK(error_of({"--" + std::string(100000, 'x')}).size() < 200);
}

TEST_CASE("a variant label is one CSV field: no separators, quotes or control characters") {
  CHECK(parse({"--csv", "r.csv", "--variant", "TUNE_SPLIT=16;MIN_BLOCKS=2"}).variant == "TUNE_SPLIT=16;MIN_BLOCKS=2");
  CHECK(parse({"--csv", "r.csv", "--variant", "caf\xc3\xa9"}).variant == "caf\xc3\xa9");  // UTF-8 is text
  for (const std::string& bad : std::vector<std::string>{"a,b", "a\"b", "a\nb", "a\rb", "a\tb", "a\x1b[31mb", "a\x7f"}) {
    INFO(printable(bad));
    const std::string e = error_of({"--csv", "r.csv", "--variant", bad});
    CHECK(contains(e, "--variant label must not contain commas, quotes or control characters, got '"));
    CHECK_FALSE(contains(e, "\r"));
  }
}

TEST_CASE("exponents: two integers EA,EB, each in -140..127") {
  const Options d = parse({});
  CHECK_FALSE(d.exponents);
  CHECK((d.exp_a == 0 && d.exp_b == 0));
  Options o = parse({"--exponents", "-118,118"});
  CHECK(o.exponents);
  CHECK((o.exp_a == -118 && o.exp_b == 118));
  o = parse({"--exponents", "-134,120", "--check", "--beta", "0.5"});
  CHECK((o.exp_a == -134 && o.exp_b == 120));
  o = parse({"--exponents", "0,0"});  // given, if neutral: still recorded as other inputs
  CHECK(o.exponents);
  CHECK((parse({"--exponents", "-140,127"}).exp_a == -140 && parse({"--exponents", "127,-140"}).exp_a == 127));
  // Malformed.
  for (const char* bad : {"5", "1,2,3", ",3", "3,", "a,b", "1.5,2", "1,,2", "", " 1,2"}) {
    INFO(bad);
    CHECK_FALSE(error_of({"--exponents", bad}).empty());
  }
  CHECK(contains(error_of({"--exponents", "5"}), "--exponents takes two comma-separated integers EA,EB"));
  CHECK(contains(error_of({"--exponents", "1,2,3"}), "two comma-separated integers"));
  CHECK(contains(error_of({"--exponents", "x,2"}), "--exponents EA must be an integer, got 'x'"));
  CHECK(contains(error_of({"--exponents", "2,"}), "--exponents EB must be an integer, got ''"));
  // Out of range, with the reason.
  CHECK(contains(error_of({"--exponents", "128,0"}), "--exponents EA must be at most 127, got 128"));
  CHECK(contains(error_of({"--exponents", "128,0"}), "values near 1 times 2^128 pass FLT_MAX"));
  CHECK(contains(error_of({"--exponents", "0,-141"}), "--exponents EB must be at least -140, got -141"));
  CHECK(contains(error_of({"--exponents", "0,-99999999999"}), "--exponents EB is too small"));
  CHECK(contains(error_of({"--exponents", "99999999999,0"}), "--exponents EA is too large"));
  CHECK(contains(error_of({"--exponents", "1,1", "--exponents", "2,2"}), "option --exponents given twice"));
  CHECK(contains(error_of({"--exponents=1,2"}), "write '--exponents 1,2'"));
}

TEST_CASE("exponents: refused with loaded files and specials, and where an FP32 sum could overflow") {
  CHECK(contains(error_of({"--exponents", "-118,118", "--load-a", "a.npy", "--load-b", "b.npy"}),
                 "--exponents scales the harness's random inputs, and loaded files are taken as they are"));
  CHECK(contains(error_of({"--load-a", "a.npy", "--load-b", "b.npy", "--exponents", "1,1"}), "taken as they are"));
  CHECK(contains(error_of({"--exponents", "-118,118", "--specials"}), "--exponents and --specials exclude each other"));
  // Partial sums reach K * 2^(EA+EB): 2^100 * 4096 = 2^112 is fine, 2^120 * 128 = 2^127 is not.
  CHECK(parse({"--exponents", "60,40", "--size", "4096"}).exponents);
  CHECK(parse({"--exponents", "127,-1", "--size", "1"}).exponents);    // 2^126 * 1
  CHECK(contains(error_of({"--exponents", "127,0", "--size", "1"}), "may pass FLT_MAX"));
  CHECK(contains(error_of({"--exponents", "60,60", "--sizes", "4,1x1x128"}),
                 "--exponents 60,60: at K = 128 an FP32 sum of products up to 2^120 may pass FLT_MAX"));
  CHECK(parse({"--exponents", "60,60", "--sizes", "4,1x1x64"}).exponents);  // 2^120 * 64 = 2^126
  // Allowed with the other modes and scalars: time-only, alpha 0 (C = beta C, C scaled too).
  CHECK(parse({"--exponents", "-134,120", "--time-only"}).mode == Mode::TimeOnly);
  CHECK(parse({"--exponents", "-134,120", "--alpha", "0", "--beta", "0.5", "--check"}).exponents);
}

TEST_CASE("inputs label: empty for the default inputs, else what differs") {
  CHECK(inputs_label(parse({})) == "");
  CHECK(inputs_label(parse({"--seed", "7", "--alpha", "2", "--beta", "0.5"})) == "");  // still uniform [-1, 1]
  CHECK(inputs_label(parse({"--exponents", "-118,118"})) == "exponents=-118,118");
  CHECK(inputs_label(parse({"--exponents", "-134,120", "--ld-pad", "3,5,1"})) == "exponents=-134,120;ld-pad=3,5,1");
  CHECK(inputs_label(parse({"--specials"})) == "specials");
  CHECK(inputs_label(parse({"--ld-pad", "0,0,0"})) == "");
  CHECK(inputs_label(parse({"--load-a", "a.npy", "--load-b", "b.npy"})) == "loaded");
}
