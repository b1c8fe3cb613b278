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

namespace {
// An exact result beyond FP32's range rounds to an infinity of its sign: that is the
// correctly rounded FP32 answer, not an error (e.g. a loaded matrix holding 3.4e38).
bool overflows_to(float got, double ref) {
  return std::isinf(got) && std::isfinite(ref) && std::fabs(ref) >= kFloatOverflow &&
         std::signbit(got) == std::signbit(ref);
}
}  // namespace

ValueClass value_class(double x) {
  if (std::isnan(x)) return ValueClass::NaN;
  if (std::isinf(x)) return x > 0 ? ValueClass::PosInf : ValueClass::NegInf;
  return ValueClass::Finite;
}

const char* class_name(ValueClass c) {
  switch (c) {
    case ValueClass::PosInf: return "+Inf";
    case ValueClass::NegInf: return "-Inf";
    case ValueClass::NaN: return "NaN";
    default: return "finite";
  }
}

double error_u(float got, double ref, double scale, double allowance) {
  if (overflows_to(got, ref)) return 0.0;
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

// One element of a result: its error e in u, to be counted in the statistics and held against
// the limits; or, with specials, a class to match. Without specials every element is counted,
// so NaN and Inf fail and make the statistics NaN, as before.
struct Judged {
  double e = 0;
  bool counted = true;       // in the statistics and the limits
  bool nonfinite = false;    // specials: the reference is NaN or +-Inf
  bool wrong_class = false;  // specials: the result's class is not the reference's
};

Judged judge(float got, double ref, double scale, double allowance, bool specials) {
  if (specials) {
    const ValueClass want = value_class(ref), have = value_class(got);
    if (want != ValueClass::Finite) return {0, false, true, have != want};
    if (have != ValueClass::Finite && !overflows_to(got, ref))
      return {std::numeric_limits<double>::quiet_NaN(), false, false, true};
  }
  return {error_u(got, ref, scale, allowance)};
}

// Counts one element into a SpecialsReport; `mismatch` describes it if its class is wrong.
void count_special(SpecialsReport& s, const Judged& j, const Mismatch& mismatch) {
  s.nonfinite += j.nonfinite;
  if (!j.wrong_class) return;
  ++s.wrong_class;
  if (!s.first) s.first = mismatch;
}
}  // namespace

std::string SpecialsReport::line() const {
  std::ostringstream s;
  s << nonfinite << " non-finite output" << (nonfinite == 1 ? "" : "s");
  if (wrong_class == 0) {
    s << ", all of the right class";
    return s.str();
  }
  s << ", " << wrong_class << " output" << (wrong_class == 1 ? "" : "s") << " of the wrong class";
  if (first)
    s << ", the first at (row " << first->row << ", col " << first->col << "): got " << first->got << ", expected "
      << first->expected;
  return s.str();
}

void SpecialsReport::merge(const SpecialsReport& later) {
  nonfinite += later.nonfinite;
  wrong_class += later.wrong_class;
  if (!first) first = later.first;
}

Accuracy measure(const Reference& ref, const float* got, std::size_t ld, SpecialsReport* specials) {
  const int parts = row_parts(make_c_layout(ref.M, ref.N));
  const double allowance = underflow_allowance(ref.K);
  std::vector<ErrorSum> sums(parts);
  std::vector<SpecialsReport> classes(parts);
  for_row_ranges(ref.M, parts, [&](int begin, int end, int part) {
    for (int row = begin; row < end; ++row)
      for (int col = 0; col < ref.N; ++col) {
        const std::size_t i = std::size_t(row) * ref.N + col;
        const float g = got[row * ld + col];
        const Judged j = judge(g, ref.c[i], ref.scale[i], allowance, ref.specials);
        if (j.counted) sums[part].add(j.e);
        count_special(classes[part], j, {row, col, g, ref.c[i], j.e, 0, true});
      }
  });
  for (int part = 1; part < parts; ++part) sums[0].merge(sums[part]), classes[0].merge(classes[part]);
  if (specials) *specials = classes[0];
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
    else if (m.wrong_class)
      s << "\n    (row " << m.row << ", col " << m.col << "): got " << m.got << ", expected " << m.expected
        << " (wrong class: " << class_name(value_class(m.got)) << " where the reference is "
        << class_name(value_class(m.expected)) << ")";
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
        const Judged j = judge(g, ref.c[i], ref.scale[i], allowance, ref.specials);
        count_special(r.specials, j, {row, col, g, ref.c[i], j.e, limit_u, true});
        if (j.wrong_class) {
          ++r.wrong;
          if (r.first.size() < max_listed) r.first.push_back({row, col, g, ref.c[i], j.e, limit_u, true});
        }
        if (!j.counted) continue;  // specials: judged by its class alone
        const double e = j.e;
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
    r.specials.merge(p.specials);
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

namespace {
// The classes among the terms of one element's sum: NaN if any term is NaN or two infinities
// of opposite signs meet, else the sign of the infinities, else finite.
struct TermClasses {
  bool nan = false, pos = false, neg = false;
  void add(double term) {
    if (std::isnan(term)) nan = true;
    else if (std::isinf(term)) (term > 0 ? pos : neg) = true;
  }
  // a * b where a or b may not be finite; finite products do not matter (no FP64 overflow),
  // so they are not formed.
  void add_product(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) nan = true;
    else if (std::isinf(a) || std::isinf(b)) add(a == 0 || b == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                 : (std::signbit(a) != std::signbit(b) ? -HUGE_VAL : HUGE_VAL));
  }
  ValueClass result() const {
    if (nan || (pos && neg)) return ValueClass::NaN;
    return pos ? ValueClass::PosInf : neg ? ValueClass::NegInf : ValueClass::Finite;
  }
};
}  // namespace

std::string check_reference_classes(const Reference& ref, const float* A, const float* B, const float* C, float alpha,
                                    float beta) {
  const int M = ref.M, N = ref.N, K = ref.K;
  // The non-finite values of every row of A and column of B, (k, value): few with --specials,
  // so each element's class costs a handful of lookups.
  std::vector<std::vector<std::pair<int, float>>> a_rows(M), b_cols(N);
  if (alpha != 0.0f) {
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k)
        if (const float a = A[std::size_t(i) * K + k]; !std::isfinite(a)) a_rows[i].emplace_back(k, a);
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j)
        if (const float b = B[std::size_t(k) * N + j]; !std::isfinite(b)) b_cols[j].emplace_back(k, b);
  }
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      TermClasses t;
      for (const auto& [k, a] : a_rows[i]) t.add_product(a, B[std::size_t(k) * N + j]);
      for (const auto& [k, b] : b_cols[j])  // both not finite: already counted from the row
        if (const float a = A[std::size_t(i) * K + k]; std::isfinite(a)) t.add_product(a, b);
      if (alpha < 0) std::swap(t.pos, t.neg);
      if (beta != 0.0f) t.add(double(beta) * C[std::size_t(i) * N + j]);
      const std::size_t e = std::size_t(i) * N + j;
      const ValueClass want = t.result(), got = value_class(ref.c[e]);
      const bool bad_scale = got == ValueClass::Finite && !std::isfinite(ref.scale[e]);
      if (want == got && !bad_scale) continue;
      std::ostringstream s;
      s << "element (row " << i << ", col " << j << "): ";
      if (want != got)
        s << "IEEE arithmetic gives " << class_name(want) << ", the FP64 reference holds " << ref.c[e];
      else
        s << "the reference " << ref.c[e] << " is finite, its scale |alpha||A||B| + |beta||C| is not ("
          << ref.scale[e] << ")";
      return s.str();
    }
  return "";
}

}  // namespace sgemm
