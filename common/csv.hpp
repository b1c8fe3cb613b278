// Results as CSV: one row per (step, shape), with the provenance repeated on every row so
// a row means the same thing wherever it ends up. plots/ reads exactly these columns.
#pragma once
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
};

struct ResultRow {
  std::string step, variant;
  int m = 0, n = 0, k = 0;
  float alpha = 1, beta = 0;
  int reps = 0;
  double ms_median = 0, ms_min = 0;
  double gflops = 0, gflops_best = 0;         // from the median and the minimum time
  double cublas_ms_median = 0, cublas_gflops = 0;
  double ratio_to_cublas = 0;                 // cublas_ms_median / ms_median
  double max_err_over_bound = 0;
  bool verified = false;
  Provenance prov;
  std::string timestamp;    // ISO 8601, UTC
};

std::string csv_header();
std::string to_csv(const ResultRow& row);
// Parses one line written by to_csv; throws std::runtime_error naming the bad field.
ResultRow parse_csv(const std::string& line);
// Splits a CSV line into fields (double quotes around fields with commas or quotes).
std::vector<std::string> split_csv(const std::string& line);
// Appends a row, writing the header first if the file is new or empty; refuses to append
// to a file whose header differs (an old format would corrupt the results set).
void append_csv(const std::string& path, const ResultRow& row);

}  // namespace sgemm
