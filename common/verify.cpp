#include "verify.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "cli.hpp"

namespace sgemm {

CLayout make_c_layout(int M, int N, int pad) {
  return {M, N, N + kGuardCols + pad, static_cast<std::size_t>(kGuardCells),
          static_cast<std::size_t>(kGuardCells)};
}

float guard_value() {
  float f;
  std::memcpy(&f, &kGuardBits, sizeof f);
  return f;
}

bool is_guard(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits == kGuardBits;
}

double error_bound(int K, double scale) { return (double(K) + 2.0) * FLT_EPSILON * scale; }

double error_u(float got, double ref, double scale) {
  const double err = std::fabs(double(got) - ref);
  if (!std::isfinite(ref) || !std::isfinite(scale)) return std::numeric_limits<double>::quiet_NaN();
  if (scale == 0) return err == 0 ? 0.0 : std::numeric_limits<double>::infinity();  // must be exact
  return err / (kUnitRoundoff * scale);
}

namespace {
// Sum of squares and maximum of the element errors, in a stable order.
struct ErrorSum {
  double max_u = 0, sum_sq = 0;
  std::size_t count = 0;
  bool finite = true;
  void add(double e) {
    if (!std::isfinite(e)) finite = false;
    else max_u = std::max(max_u, e), sum_sq += e * e;
    ++count;
  }
  Accuracy result() const {
    if (!finite) return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
    return {max_u, count ? std::sqrt(sum_sq / double(count)) : 0.0};
  }
};
}  // namespace

Accuracy measure(const Reference& ref, const float* got, std::size_t ld) {
  ErrorSum sum;
  for (int row = 0; row < ref.M; ++row)
    for (int col = 0; col < ref.N; ++col) {
      const std::size_t i = std::size_t(row) * ref.N + col;
      sum.add(error_u(got[row * ld + col], ref.c[i], ref.scale[i]));
    }
  return sum.result();
}

std::string VerifyReport::summary() const {
  std::ostringstream s;
  s.precision(3);
  const char* limit = rule == Rule::RandomInputs ? "" : ", worst-case bound only (loaded inputs)";
  if (ok) {
    s << "ok (error max " << accuracy.max_u << " u, RMS " << accuracy.rms_u << " u" << limit << ")";
    return s.str();
  }
  s << "FAILED: " << wrong << " wrong element(s), " << guards_hit << " guard cell(s) overwritten; error max "
    << accuracy.max_u << " u, RMS " << accuracy.rms_u << " u (FP32-grade limit " << kAccuracyLimitU << " u" << limit
    << ")";
  for (const Mismatch& m : first) {
    if (m.row < 0)
      s << "\n    guard cell at offset " << m.col << " overwritten with " << m.got;
    else
      s << "\n    (row " << m.row << ", col " << m.col << "): got " << m.got << ", expected " << m.expected
        << " (error " << m.err_u << " u, limit " << m.limit_u << " u)";
  }
  return s.str();
}

VerifyReport verify(const CLayout& L, const float* got, const Reference& ref, Rule rule, std::size_t max_listed) {
  VerifyReport r;
  r.rule = rule;
  ErrorSum sum;
  for (int row = 0; row < L.M; ++row) {
    for (int col = 0; col < L.ldc; ++col) {
      const float g = got[L.index(row, col)];
      if (col >= L.N) {  // guard column
        if (!is_guard(g)) {
          ++r.guards_hit;
          if (r.first.size() < max_listed) r.first.push_back({-1, int(L.index(row, col)), g, 0, 0, 0});
        }
        continue;
      }
      const std::size_t i = static_cast<std::size_t>(row) * L.N + col;
      const double e = error_u(g, ref.c[i], ref.scale[i]);
      sum.add(e);
      // The worst-case bound in units of u: (K + 2) * eps / u = 2 (K + 2).
      const double bound_u = 2.0 * (double(ref.K) + 2.0);
      const double limit_u = rule == Rule::RandomInputs ? std::min(bound_u, kAccuracyLimitU) : bound_u;
      if (!(e <= limit_u)) {  // NaN and Inf fail here
        ++r.wrong;
        if (r.first.size() < max_listed) r.first.push_back({row, col, g, ref.c[i], e, limit_u});
      } else {
        r.max_err_over_bound = std::max(r.max_err_over_bound, e / bound_u);
      }
    }
  }
  auto check_cells = [&](std::size_t begin, std::size_t end) {
    for (std::size_t j = begin; j < end; ++j) {
      if (!is_guard(got[j])) {
        ++r.guards_hit;
        if (r.first.size() < max_listed) r.first.push_back({-1, int(j), got[j], 0, 0, 0});
      }
    }
  };
  check_cells(0, L.front);
  check_cells(L.total() - L.back, L.total());
  r.accuracy = sum.result();
  r.ok = r.wrong == 0 && r.guards_hit == 0;
  return r;
}

}  // namespace sgemm
