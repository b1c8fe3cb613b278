#include "verify.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <thread>

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

double underflow_allowance(int K) { return (2.0 * K + 4.0) * 0x1p-150; }

// The smallest magnitude that rounds to infinity in FP32 (FLT_MAX plus half its last place).
constexpr double kFloatOverflow = 0x1.ffffffp127;

double error_u(float got, double ref, double scale, double allowance) {
  // An exact result beyond FP32's range rounds to an infinity of its sign: that is the
  // correctly rounded FP32 answer, not an error (e.g. a loaded matrix holding 3.4e38).
  if (std::isinf(got) && std::isfinite(ref) && std::fabs(ref) >= kFloatOverflow && std::signbit(got) == std::signbit(ref))
    return 0.0;
  double err = std::fabs(double(got) - ref) - allowance;
  if (err < 0) err = 0;  // written so that a NaN stays NaN
  if (!std::isfinite(ref) || !std::isfinite(scale)) return std::numeric_limits<double>::quiet_NaN();
  if (scale == 0) return err == 0 ? 0.0 : std::numeric_limits<double>::infinity();  // must be exact
  return err / (kUnitRoundoff * scale);
}

namespace {
// Runs body(begin, end, part) over `parts` consecutive row ranges of [0, rows) in parallel
// (an 8192 x 8192 result is 67 M elements; one thread takes a second over them).
template <class Body>
void for_row_ranges(int rows, int parts, Body body) {
  std::vector<std::thread> threads;
  for (int part = 0; part < parts; ++part) {
    const int begin = int(std::int64_t(rows) * part / parts), end = int(std::int64_t(rows) * (part + 1) / parts);
    threads.emplace_back(body, begin, end, part);
  }
  for (std::thread& t : threads) t.join();
}

int row_parts(const CLayout& L) {
  const std::size_t elements = std::size_t(L.M) * L.N;
  const int hw = std::max(1u, std::thread::hardware_concurrency());
  return int(std::clamp<std::size_t>(elements >> 20, 1, std::min(hw, 16)));  // ~1 M elements a thread at least
}

// Sum of squares and maximum of the element errors.
struct ErrorSum {
  double max_u = 0, sum_sq = 0;
  std::size_t count = 0;
  bool finite = true;
  void add(double e) {
    if (!std::isfinite(e)) finite = false;
    else max_u = std::max(max_u, e), sum_sq += e * e;
    ++count;
  }
  void merge(const ErrorSum& o) {
    max_u = std::max(max_u, o.max_u), sum_sq += o.sum_sq, count += o.count, finite = finite && o.finite;
  }
  Accuracy result() const {
    if (!finite) return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
    return {max_u, count ? std::sqrt(sum_sq / double(count)) : 0.0};
  }
};
}  // namespace

Accuracy measure(const Reference& ref, const float* got, std::size_t ld) {
  const int parts = row_parts(make_c_layout(ref.M, ref.N));
  const double allowance = underflow_allowance(ref.K);
  std::vector<ErrorSum> sums(parts);
  for_row_ranges(ref.M, parts, [&](int begin, int end, int part) {
    for (int row = begin; row < end; ++row)
      for (int col = 0; col < ref.N; ++col) {
        const std::size_t i = std::size_t(row) * ref.N + col;
        sums[part].add(error_u(got[row * ld + col], ref.c[i], ref.scale[i], allowance));
      }
  });
  for (int part = 1; part < parts; ++part) sums[0].merge(sums[part]);
  return sums[0].result();
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
  const double bound_u = error_bound(ref.K, 1.0) / kUnitRoundoff;  // in units of u: 2 (K + 2)
  const double limit_u = rule == Rule::RandomInputs ? std::min(bound_u, kAccuracyLimitU) : bound_u;
  const int parts = row_parts(L);
  const double allowance = underflow_allowance(ref.K);
  std::vector<VerifyReport> part_reports(parts);
  std::vector<ErrorSum> sums(parts);
  for_row_ranges(L.M, parts, [&](int begin, int end, int part) {
    VerifyReport& r = part_reports[part];
    for (int row = begin; row < end; ++row) {
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
        const double e = error_u(g, ref.c[i], ref.scale[i], allowance);
        sums[part].add(e);
        if (!(e <= limit_u)) {  // NaN and Inf fail here
          ++r.wrong;
          if (r.first.size() < max_listed) r.first.push_back({row, col, g, ref.c[i], e, limit_u});
        } else {
          r.max_err_over_bound = std::max(r.max_err_over_bound, e / bound_u);
        }
      }
    }
  });
  VerifyReport r;  // the parts merged in row order, so the first problems listed are the first rows'
  r.rule = rule;
  for (int part = 0; part < parts; ++part) {
    const VerifyReport& p = part_reports[part];
    r.wrong += p.wrong, r.guards_hit += p.guards_hit;
    r.max_err_over_bound = std::max(r.max_err_over_bound, p.max_err_over_bound);
    for (const Mismatch& m : p.first)
      if (r.first.size() < max_listed) r.first.push_back(m);
    if (part > 0) sums[0].merge(sums[part]);
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
  r.accuracy = sums[0].result();
  r.ok = r.wrong == 0 && r.guards_hit == 0;
  return r;
}

}  // namespace sgemm
