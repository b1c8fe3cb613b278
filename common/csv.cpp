#include "csv.hpp"

#include "io.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sgemm {

namespace {

const char* const kColumns[] = {
    "step", "variant", "m", "n", "k", "alpha", "beta", "inputs", "reps", "ms_median", "ms_min", "gflops",
    "gflops_best", "cublas_ms_median", "cublas_gflops", "ratio_to_cublas", "max_err_over_bound",
    "err_max_u", "err_rms_u", "cublas_err_max_u", "cublas_err_rms_u", "err_rms_vs_cublas", "verified", "gpu", "sm_count", "sm_clock_mhz", "driver", "runtime", "cublas", "arch",
    "build_type", "git_rev", "tuning", "device_sm_count", "timestamp"};
constexpr std::size_t kNumColumns = sizeof(kColumns) / sizeof(kColumns[0]);

std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// An empty field for a value that was not measured (NaN).
std::string num_or_empty(double v) { return v != v ? std::string() : num(v); }


}  // namespace

std::string csv_header() {
  std::string h;
  for (std::size_t i = 0; i < kNumColumns; ++i) h.append(i ? "," : "").append(kColumns[i]);
  return h;
}

std::string to_csv(const ResultRow& r) {
  const Provenance& p = r.prov;
  const std::string fields[] = {
      quote(r.step), quote(r.variant), std::to_string(r.m), std::to_string(r.n), std::to_string(r.k),
      num(r.alpha), num(r.beta), quote(r.inputs), std::to_string(r.reps), num(r.ms_median), num(r.ms_min),
      num(r.gflops), num(r.gflops_best), num(r.cublas_ms_median), num(r.cublas_gflops),
      num(r.ratio_to_cublas), num(r.max_err_over_bound), num_or_empty(r.err_max_u),
      num_or_empty(r.err_rms_u), num_or_empty(r.cublas_err_max_u), num_or_empty(r.cublas_err_rms_u),
      num_or_empty(r.err_rms_vs_cublas), r.verified ? "1" : "0", quote(p.gpu),
      std::to_string(p.sm_count), std::to_string(p.sm_clock_mhz), quote(p.driver), quote(p.runtime),
      quote(p.cublas), quote(p.arch), quote(p.build_type), quote(p.git_rev), quote(p.tuning),
      std::to_string(p.device_sm_count), quote(r.timestamp)};
  static_assert(sizeof(fields) / sizeof(fields[0]) == kNumColumns);
  std::string line;
  for (std::size_t i = 0; i < kNumColumns; ++i) line += (i ? "," : "") + fields[i];
  return line;
}

void append_csv(const std::string& path, const ResultRow& row) { CsvOutput(path).append(row); }

}  // namespace sgemm
