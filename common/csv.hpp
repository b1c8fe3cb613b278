// Results as CSV: one row per (step, shape), with the provenance repeated on every row so
// a row means the same thing wherever it ends up. plots/ reads exactly these columns.
#pragma once
#include <limits>
#include <string>
#include <vector>

namespace sgemm {

struct Provenance {
  std::string gpu;          // device name
  int sm_count = 0;
  int sm_clock_mhz = 0;     // maximum SM clock the device reports
  std::string driver;       // CUDA driver API version, e.g. 13.0
  std::string runtime;      // CUDA runtime version
  std::string cublas;       // cuBLAS version, e.g. 13.0.0
  std::string arch;         // architectures the binary was built for, e.g. 90
  std::string build_type;   // build type and flags
  std::string git_rev;      // short hash, "-dirty" if the tree had changes
  std::string tuning;       // the knobs' source: "defaults", a GPU's or class's tuning (tunings/)
  int device_sm_count = 0;  // the device's SMs; more than sm_count in an emulation (--sms)
};

inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

struct ResultRow {
  std::string step, variant;
  int m = 0, n = 0, k = 0;
  float alpha = 1, beta = 0;
  // What sets the inputs apart from the default uniform [-1, 1] ones (cli.hpp, inputs_label):
  // "" for the defaults, e.g. "exponents=-118,118"; such rows are never ordinary results.
  std::string inputs;
  int reps = 0;
  double ms_median = 0, ms_min = 0;
  double gflops = 0, gflops_best = 0;         // from the median and the minimum time
  double cublas_ms_median = 0, cublas_gflops = 0;
  double ratio_to_cublas = 0;                 // cublas_ms_median / ms_median
  double max_err_over_bound = 0;              // max |got - ref64| / worst-case bound
  // Accuracy against the FP64 reference, in units of u = 2^-24 of |alpha||A||B| + |beta||C|
  // (see verify.hpp); NaN when not measured (written as an empty field).
  double err_max_u = kNotMeasured, err_rms_u = kNotMeasured;
  double cublas_err_max_u = kNotMeasured, cublas_err_rms_u = kNotMeasured;  // cuBLAS SGEMM, same inputs
  double err_rms_vs_cublas = kNotMeasured;    // err_rms_u / cublas_err_rms_u
  bool verified = false;
  Provenance prov;
  std::string timestamp;    // ISO 8601, UTC
};

std::string csv_header();
std::string to_csv(const ResultRow& row);
// Appends a row, writing the header first if the file is new or empty; refuses to append
// to a file whose header differs (an old format would corrupt the results set).
void append_csv(const std::string& path, const ResultRow& row);

}  // namespace sgemm
