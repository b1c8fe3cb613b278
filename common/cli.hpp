// Command-line parsing for every step. Host-only C++ (no CUDA), so it is unit-tested
// everywhere. Bad input throws UsageError with a one-line message naming the problem.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sgemm {

// Process exit codes, shared by every step.
enum ExitCode : int {
  kExitOk = 0,
  kExitVerifyFailed = 1,  // a result did not match cuBLAS (or a guard cell was written)
  kExitUsage = 2,         // bad command line or input file
  kExitNoGpu = 3,         // no CUDA GPU: the GPU tests report this as SKIPPED
  kExitRuntime = 4,       // a CUDA / cuBLAS / I/O error at run time
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Shape {
  int m, n, k;
  bool operator==(const Shape&) const = default;
};

enum class Mode { CheckAndTime, CheckOnly, TimeOnly };

struct Options {
  std::vector<Shape> shapes{{4096, 4096, 4096}};
  float alpha = 1.0f;
  float beta = 0.0f;
  int reps = 0;      // 0: chosen per shape so each implementation is timed for ~time_ms
  int time_ms = 1000;  // --time-ms: the step's timed runs per shape, when --reps is not given
  int warmup = 2;
  std::uint64_t seed = 2024;
  Mode mode = Mode::CheckAndTime;
  bool compare_cublas = true;  // time cuBLAS in the same run for the ratio
  bool record_failures = false;  // time and write a shape that failed its check (verified = 0)
  std::string csv_path;        // append one row per shape
  std::string variant;         // label of non-default tunables, for tuning sweeps
  std::string load_a, load_b, load_c, save_c;  // .npy files
  int device = 0;
  // Extra floats at the end of each row of A, B and C (--ld-pad): lda = K + pad_a,
  // ldb = N + pad_b, ldc = N + kGuardCols + pad_c. Padding is filled with NaN, so a step
  // that strides by K where it means lda, or reads past a row's end, fails its check.
  int pad_a = 0, pad_b = 0, pad_c = 0;
  // --specials: IEEE special values (Inf, NaN, values near FLT_MAX) planted into the random
  // inputs (inputs.hpp); non-finite outputs are then judged by their class (verify.hpp).
  bool specials = false;
  // --exponents EA,EB: after the random fill, A is multiplied by 2^EA, B by 2^EB and C by
  // 2^(EA+EB), each value in FP64 and then rounded to float (inputs.hpp, scale_inputs): tiny,
  // huge and subnormal input classes, with the FP64 reference computed from those floats.
  bool exponents = false;
  int exp_a = 0, exp_b = 0;
  // --sms N: run on N of the GPU's SMs (a green context; the GPU rounds N up to its SM
  // groups), to see how a step's choices and speed move with another GPU's SM count.
  int sms = 0;
  bool requirements = false;  // --requirements: print what the step needs of a GPU, and exit
  std::string expect_path;    // --expect-path P: the check also fails where the step took another path
  bool help = false;
};

// Guard columns added to every row of C (ldc = N + kGuardCols) and guard cells before and
// after the whole of C. Four columns keep ldc % 4 == N % 4, so 16-byte alignment of C's rows
// is the same as without guards.
inline constexpr int kGuardCols = 4;
inline constexpr int kGuardCells = 64;

// Largest M, N or K: a step may put one block per 16 rows or columns on grid.y (max 65535).
inline constexpr int kMaxDim = 1000000;
// Largest --ld-pad value.
inline constexpr int kMaxPad = 1024;
// --exponents: each exponent in [kMinExponent, kMaxExponent]. Below 2^-140 few values of
// [-1, 1] survive as subnormals (the smallest is 2^-149); above 2^127 values near 1 pass
// FLT_MAX.
inline constexpr int kMinExponent = -140;
inline constexpr int kMaxExponent = 127;
// Largest --reps and --warmup: 10000 repetitions of 8192^3 already take minutes.
inline constexpr int kMaxReps = 10000;
inline constexpr int kMaxWarmup = 1000;

Options parse_args(int argc, const char* const* argv);
std::string usage(const std::string& program);

// Parsing pieces, exposed for the tests.
int parse_dim(const std::string& text, const std::string& what);
Shape parse_shape(const std::string& text);               // "S" or "MxNxK"
std::vector<Shape> parse_shape_list(const std::string& text);  // comma-separated shapes
// Every matrix, with its row padding (--ld-pad) and C's guard columns, must be indexable
// with 32-bit ints; the message names the matrix that is not.
void check_indexable(const Shape& s, int pad_a = 0, int pad_b = 0, int pad_c = 0);
// M, N and K of a shape that came from files must be at most kMaxDim, as typed ones are.
void check_dims(const Shape& s);

// What sets a run's inputs apart from the default uniform [-1, 1] ones, for the CSV's `inputs`
// column: "" for the defaults, else ';'-separated items in this order: "loaded" (--load-a/-b),
// "specials", "exponents=EA,EB", "ld-pad=PA,PB,PC" (e.g. "exponents=-118,118").
std::string inputs_label(const Options& o);

// `text` as it may appear inside a one-line message: control and non-ASCII bytes escaped
// (\n, \xNN), cut to about `max_chars` characters.
std::string printable(std::string_view text, std::size_t max_chars = 80);

}  // namespace sgemm
