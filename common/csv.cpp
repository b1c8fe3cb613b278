#include "csv.hpp"

#include "io.hpp"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sgemm {

namespace {

const char* const kColumns[] = {
    "step", "variant", "m", "n", "k", "alpha", "beta", "reps", "ms_median", "ms_min", "gflops",
    "gflops_best", "cublas_ms_median", "cublas_gflops", "ratio_to_cublas", "max_err_over_bound",
    "verified", "gpu", "sm_count", "sm_clock_mhz", "driver", "runtime", "cublas", "arch",
    "build_type", "git_rev", "timestamp"};
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

template <class T>
T parse_number(const std::string& field, const char* column) {
  T v{};
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size())
    throw std::runtime_error(std::string("column ") + column + ": not a number: '" + field + "'");
  return v;
}

}  // namespace

std::string csv_header() {
  std::string h;
  for (std::size_t i = 0; i < kNumColumns; ++i) h += (i ? "," : "") + std::string(kColumns[i]);
  return h;
}

std::string to_csv(const ResultRow& r) {
  const Provenance& p = r.prov;
  const std::string fields[] = {
      quote(r.step), quote(r.variant), std::to_string(r.m), std::to_string(r.n), std::to_string(r.k),
      num(r.alpha), num(r.beta), std::to_string(r.reps), num(r.ms_median), num(r.ms_min),
      num(r.gflops), num(r.gflops_best), num(r.cublas_ms_median), num(r.cublas_gflops),
      num(r.ratio_to_cublas), num(r.max_err_over_bound), r.verified ? "1" : "0", quote(p.gpu),
      std::to_string(p.sm_count), std::to_string(p.sm_clock_mhz), quote(p.driver), quote(p.runtime),
      quote(p.cublas), quote(p.arch), quote(p.build_type), quote(p.git_rev), quote(r.timestamp)};
  static_assert(sizeof(fields) / sizeof(fields[0]) == kNumColumns);
  std::string line;
  for (std::size_t i = 0; i < kNumColumns; ++i) line += (i ? "," : "") + fields[i];
  return line;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool in_quotes = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (in_quotes) throw std::runtime_error("unterminated quote");
  return out;
}

ResultRow parse_csv(const std::string& line) {
  const std::vector<std::string> f = split_csv(line);
  if (f.size() != kNumColumns)
    throw std::runtime_error("expected " + std::to_string(kNumColumns) + " fields, found " +
                             std::to_string(f.size()));
  ResultRow r;
  std::size_t i = 0;
  auto next_int = [&] {
    const int v = parse_number<int>(f[i], kColumns[i]);
    ++i;
    return v;
  };
  auto next_double = [&] {
    const double v = parse_number<double>(f[i], kColumns[i]);
    ++i;
    return v;
  };
  r.step = f[i++];
  r.variant = f[i++];
  r.m = next_int();
  r.n = next_int();
  r.k = next_int();
  r.alpha = static_cast<float>(next_double());
  r.beta = static_cast<float>(next_double());
  r.reps = next_int();
  r.ms_median = next_double();
  r.ms_min = next_double();
  r.gflops = next_double();
  r.gflops_best = next_double();
  r.cublas_ms_median = next_double();
  r.cublas_gflops = next_double();
  r.ratio_to_cublas = next_double();
  r.max_err_over_bound = next_double();
  if (f[i] != "0" && f[i] != "1") throw std::runtime_error("column verified: expected 0 or 1, got '" + f[i] + "'");
  r.verified = f[i++] == "1";
  r.prov.gpu = f[i++];
  r.prov.sm_count = next_int();
  r.prov.sm_clock_mhz = next_int();
  r.prov.driver = f[i++];
  r.prov.runtime = f[i++];
  r.prov.cublas = f[i++];
  r.prov.arch = f[i++];
  r.prov.build_type = f[i++];
  r.prov.git_rev = f[i++];
  r.timestamp = f[i++];
  return r;
}

void append_csv(const std::string& path, const ResultRow& row) { CsvOutput(path).append(row); }

}  // namespace sgemm
