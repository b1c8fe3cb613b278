#include "csv_read.hpp"

#include <charconv>
#include <stdexcept>

namespace sgemm::test {

namespace {
template <class T>
T parse_number(const std::string& field, const char* column) {
  T v{};
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size())
    throw std::runtime_error(std::string("column ") + column + ": not a number: '" + field + "'");
  return v;
}


}  // namespace

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
  const std::vector<std::string> columns = split_csv(csv_header());
  if (f.size() != columns.size())
    throw std::runtime_error("expected " + std::to_string(columns.size()) + " fields, found " +
                             std::to_string(f.size()));
  ResultRow r;
  std::size_t i = 0;
  auto next_int = [&] {
    const int v = parse_number<int>(f[i], columns[i].c_str());
    ++i;
    return v;
  };
  auto next_double = [&] {
    const double v = parse_number<double>(f[i], columns[i].c_str());
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
  r.inputs = f[i++];
  r.reps = next_int();
  r.ms_median = next_double();
  r.ms_min = next_double();
  r.gflops = next_double();
  r.gflops_best = next_double();
  r.cublas_ms_median = next_double();
  r.cublas_gflops = next_double();
  r.ratio_to_cublas = next_double();
  r.max_err_over_bound = next_double();
  auto next_optional = [&] {  // an empty field: not measured
    if (f[i].empty()) return ++i, kNotMeasured;
    return next_double();
  };
  r.err_max_u = next_optional();
  r.err_rms_u = next_optional();
  r.cublas_err_max_u = next_optional();
  r.cublas_err_rms_u = next_optional();
  r.err_rms_vs_cublas = next_optional();
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
  r.prov.tuning = f[i++];
  r.prov.device_sm_count = next_int();
  r.timestamp = f[i++];
  return r;
}

}  // namespace sgemm::test
