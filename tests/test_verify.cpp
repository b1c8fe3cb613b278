#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "cli.hpp"
#include "inputs.hpp"
#include "verify.hpp"

using namespace sgemm;

namespace {

float to_tf32(float x) {  // round to nearest, 10 explicit mantissa bits (as cvt.rna.tf32.f32)
  int e;
  const float m = std::frexp(x, &e);
  return std::ldexp(std::round(std::ldexp(m, 11)), e - 11);
}

// A small problem with its FP64 reference, and a result laid out like the harness's C.
struct Fixture {
  int M, N, K;
  float alpha, beta;
  CLayout L;
  std::vector<float> A, B, c_in, got;
  Reference ref;

  std::vector<Planted> planted;  // with specials

  // specials: plant_specials() into A, B and (beta != 0) C, as --specials does; the reference
  // is computed in FP64 as cuBLAS DGEMM would (IEEE: Inf * 0 = NaN, Inf - Inf = NaN).
  explicit Fixture(float beta_ = -0.5f, int M_ = 5, int N_ = 7, int K_ = 33, float alpha_ = 1.5f,
                   bool specials = false)
      : M(M_), N(N_), K(K_), alpha(alpha_), beta(beta_), L(make_c_layout(M, N)), A(M * K), B(K * N), c_in(M * N),
        got(L.total(), guard_value()) {
    fill_uniform(A, 1, 1);
    fill_uniform(B, 1, 2);
    fill_uniform(c_in, 1, 3);
    if (specials) planted = plant_specials(A, B, beta != 0 ? &c_in : nullptr, M, N, K, 1);
    reference(specials);
  }
  // --exponents EA,EB: the inputs scaled as the harness scales them, the reference anew.
  void scale(int exp_a, int exp_b) {
    scale_inputs(A, B, &c_in, exp_a, exp_b);
    reference(false);
  }
  // The FP64 reference and scale of the inputs; got = the reference rounded to float.
  void reference(bool specials) {
    ref = {M, N, K, std::vector<double>(M * N), std::vector<double>(M * N), specials};
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0, abs_acc = 0;
        for (int k = 0; k < K; ++k) {
          acc += double(A[i * K + k]) * B[k * N + j];
          abs_acc += std::fabs(double(A[i * K + k]) * B[k * N + j]);
        }
        // beta == 0 does not read C (BLAS): a planted Inf there would make 0 * Inf = NaN.
        const double c = beta == 0 ? 0.0 : double(c_in[i * N + j]);
        ref.c[i * N + j] = alpha * acc + beta * c;
        ref.scale[i * N + j] = std::fabs(alpha) * abs_acc + std::fabs(beta) * std::fabs(c);
        got[L.index(i, j)] = float(ref.c[i * N + j]);
      }
  }
  // got = what an FP32 kernel computes, summing k in order, with the inputs passed through `round`.
  template <class Round>
  void compute_fp32(Round round, int skip_k = -1) {
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        float acc = 0;
        for (int k = 0; k < K; ++k)
          if (k != skip_k) acc = std::fma(round(A[i * K + k]), round(B[k * N + j]), acc);
        got[L.index(i, j)] = beta == 0 ? alpha * acc : alpha * acc + beta * c_in[i * N + j];
      }
  }
  // got = what a 3xTF32 kernel computes: each input split by `split` into (big, small), the
  // product a b as a_small b_big + a_big b_small + a_big b_big in FP32 (small terms first),
  // k in order. `guard`: the products of a non-finite big are big * big alone.
  template <class Split>
  void compute_3xtf32(Split split, bool guard) {
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        float acc = 0;
        for (int k = 0; k < K; ++k) {
          const auto [ab, as] = split(A[i * K + k]);
          const auto [bb, bs] = split(B[k * N + j]);
          if (!guard || (std::isfinite(ab) && std::isfinite(bb))) acc = std::fma(as, bb, std::fma(ab, bs, acc));
          acc = std::fma(ab, bb, acc);
        }
        got[L.index(i, j)] = beta == 0 ? alpha * acc : alpha * acc + beta * c_in[i * N + j];
      }
  }
  VerifyReport run(Rule rule = Rule::RandomInputs) const { return verify(L, got.data(), ref, rule); }
};

float exact(float x) { return x; }

// 3xTF32 splits x = big + small. The naive one: big = x rounded to TF32, small = the rest
// (rounded to TF32 too). Inf gives small = Inf - Inf = NaN, and a value within half a TF32
// step of FLT_MAX rounds up to big = Inf.
std::pair<float, float> split_naive(float x) {
  const float big = to_tf32(x);
  return {big, to_tf32(x - big)};
}
// A half-fixed one: small = 0 where big is not finite; Inf * 0 = NaN then comes from
// a_big * b_small wherever b is exact in TF32, and near-FLT_MAX values still become Inf.
std::pair<float, float> split_inf_small_zero(float x) {
  const float big = to_tf32(x);
  return {big, std::isfinite(big) ? to_tf32(x - big) : 0.0f};
}
// TF32 as the hardware rounds it (cvt.rna.tf32.f32): the float's bits rounded at bit 13, ties
// away from zero. TF32 has FP32's exponents, so a subnormal keeps the mantissa bits at 2^-136
// and up: its fixed place, not 11 significant bits as to_tf32 (frexp) would keep.
float to_tf32_bits(float x) {
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(x) + 0x1000u) & 0xffffe000u);
}
// The 3xTF32 split of steps 22-25 on finite values: big and small both TF32, by the bits.
std::pair<float, float> split_bits(float x) {
  const float big = to_tf32_bits(x);
  return {big, to_tf32_bits(x - big)};
}
// A careful one: non-finite x is its own big (small 0); a value that would round past
// FLT_MAX is truncated to TF32 instead, so big stays finite and small holds the rest.
std::pair<float, float> split_careful(float x) {
  if (!std::isfinite(x)) return {x, 0.0f};
  float big = to_tf32(x);
  if (std::isinf(big)) big = std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) & 0xffffe000u);
  return {big, to_tf32(x - big)};
}

// A reference of one row: N elements with the given references, scale 1 (or the reference's
// magnitude where larger), with specials; got starts equal to ref (as floats).
struct Row {
  CLayout L;
  Reference ref;
  std::vector<float> got;
  explicit Row(std::vector<double> c, bool specials = true)
      : L(make_c_layout(1, int(c.size()))), got(L.total(), guard_value()) {
    const int n = int(c.size());
    ref = {1, n, 10, c, std::vector<double>(n, 1.0), specials};
    for (int j = 0; j < n; ++j) {
      if (std::isfinite(c[j])) ref.scale[j] = std::max(1.0, std::fabs(c[j]));
      else ref.scale[j] = std::numeric_limits<double>::infinity();
      got[L.index(0, j)] = float(c[j]);
    }
  }
  VerifyReport run() const { return verify(L, got.data(), ref, Rule::RandomInputs); }
};

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("the worst-case bound grows with K and with the scale") {
  CHECK(error_bound(1, 1.0) == Approx(3 * FLT_EPSILON));
  CHECK(error_bound(1000, 1.0) == Approx(1002 * FLT_EPSILON));
  CHECK(error_bound(100, 6.0) == Approx(102 * FLT_EPSILON * 6));
  CHECK(error_bound(4096, 0.0) == 0.0);
  CHECK(error_bound(2000, 1.0) > error_bound(1000, 1.0));
  // Computed in double: a scale beyond FP32's range is still a finite bound.
  CHECK(std::isfinite(error_bound(1 << 20, 1e60)));
}

TEST_CASE("the error is measured in units of u of the scale") {
  CHECK(error_u(1.0f, 1.0, 4.0) == 0.0);
  CHECK(error_u(1.0f + FLT_EPSILON, 1.0, 1.0) == Approx(2.0));
  CHECK(error_u(0.0f, 0.0, 0.0) == 0.0);                      // scale 0: exact is fine...
  CHECK(std::isinf(error_u(1e-30f, 0.0, 0.0)));               // ...anything else is not
  CHECK(std::isnan(error_u(std::nanf(""), 1.0, 1.0)));
  CHECK(std::isnan(error_u(1.0f, std::numeric_limits<double>::infinity(), 1.0)));  // non-finite reference
}

TEST_CASE("results near FP32's smallest numbers: gradual underflow is excused, no more") {
  Fixture f(0.0f, 4, 6, 300, 1e-40f);  // alpha subnormal: every result is a subnormal number
  f.compute_fp32(exact);
  CHECK(f.run().ok);
  CHECK(f.run().accuracy.max_u <= kAccuracyLimitU);
  f.compute_fp32(exact, 17);  // a dropped product is still seen
  CHECK_FALSE(f.run().ok);
  CHECK(error_u(0x1p-149f, 0.0, 0x1p-149, underflow_allowance(1)) == 0.0);  // one subnormal step: excused
  CHECK(error_u(0x1p-140f, 0.0, 0x1p-140, underflow_allowance(1)) > kAccuracyLimitU);
}

TEST_CASE("a correct result passes, with rounding-sized differences") {
  Fixture f;
  REQUIRE(f.run().ok);
  // Perturb every element by a couple of ulps: still well inside both limits.
  for (int i = 0; i < f.M; ++i)
    for (int j = 0; j < f.N; ++j) {
      float& g = f.got[f.L.index(i, j)];
      g = std::nextafter(std::nextafter(g, INFINITY), INFINITY);
    }
  const VerifyReport r = f.run();
  CHECK(r.ok);
  CHECK(r.max_err_over_bound < 1.0);
  CHECK(r.accuracy.max_u > 0);
  CHECK(r.accuracy.rms_u <= r.accuracy.max_u);
}

TEST_CASE("an FP32 kernel summing in order passes at large K, with a few u of error") {
  Fixture f(0.5f, 4, 6, 20000);
  f.compute_fp32(exact);
  const VerifyReport r = f.run();
  CHECK(r.ok);
  CHECK(r.accuracy.max_u < kAccuracyLimitU / 4);
}

TEST_CASE("one missing product fails the FP32-grade limit at K = 20000") {
  Fixture f(0.5f, 4, 6, 20000);
  f.compute_fp32(exact, 12345);
  const VerifyReport r = f.run();
  CHECK_FALSE(r.ok);
  CHECK(r.accuracy.max_u > 4 * kAccuracyLimitU);
  CHECK(f.run(Rule::WorstCase).ok);  // the worst-case bound alone does not see it
}

TEST_CASE("TF32-rounded inputs fail the FP32-grade limit at K = 20000") {
  Fixture f(0.0f, 4, 6, 20000);
  f.compute_fp32(to_tf32);
  const VerifyReport r = f.run();
  CHECK_FALSE(r.ok);
  CHECK(r.accuracy.max_u > kAccuracyLimitU);
  CHECK(f.run(Rule::WorstCase).ok);
}

TEST_CASE("a planted wrong value is rejected and located") {
  Fixture f;
  f.got[f.L.index(3, 4)] += 0.01f;
  const VerifyReport r = f.run();
  CHECK_FALSE(r.ok);
  CHECK(r.wrong == 1);
  REQUIRE(r.first.size() == 1);
  CHECK(r.first[0].row == 3);
  CHECK(r.first[0].col == 4);
  CHECK(r.summary().find("(row 3, col 4)") != std::string::npos);
}

TEST_CASE("an off-by-one in K (one product missing) is rejected") {
  Fixture f;
  for (int j = 0; j < f.N; ++j) f.got[f.L.index(f.M - 1, j)] -= f.alpha * f.A[(f.M - 1) * f.K + f.K - 1] * f.B[(f.K - 1) * f.N + j];
  const VerifyReport r = f.run();
  CHECK_FALSE(r.ok);
  CHECK(r.wrong == size_t(f.N));
}

TEST_CASE("NaN and Inf never pass, and make the accuracy NaN") {
  Fixture f;
  f.got[f.L.index(0, 0)] = std::numeric_limits<float>::quiet_NaN();
  f.got[f.L.index(1, 1)] = std::numeric_limits<float>::infinity();
  const VerifyReport r = f.run(Rule::WorstCase);
  CHECK_FALSE(r.ok);
  CHECK(r.wrong == 2);
  CHECK(std::isnan(r.accuracy.rms_u));
}

TEST_CASE("an exact result beyond FP32's range: only the infinity of its sign is right") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(error_u(inf, 1.02e39, 1.02e39) == 0.0);
  CHECK(std::isinf(error_u(-inf, 1.02e39, 1.02e39)));  // the wrong sign
  CHECK(std::isinf(error_u(inf, 3.0e38, 3.0e38)));     // in range: Inf is wrong
  CHECK(std::isnan(error_u(std::nanf(""), 1.02e39, 1.02e39)));
}

TEST_CASE("a non-finite reference is never a pass") {
  Fixture f;
  f.ref.c[0] = std::numeric_limits<double>::infinity();
  f.got[f.L.index(0, 0)] = std::numeric_limits<float>::infinity();
  CHECK_FALSE(f.run(Rule::WorstCase).ok);
}

TEST_CASE("alpha = beta = 0: the result must be exactly zero") {
  Fixture f(0.0f, 3, 4, 9, 0.0f);
  for (int i = 0; i < f.M; ++i)
    for (int j = 0; j < f.N; ++j) f.got[f.L.index(i, j)] = 0.0f;
  REQUIRE(f.run().ok);
  f.got[f.L.index(2, 3)] = 1e-30f;
  CHECK_FALSE(f.run().ok);
}

TEST_CASE("an unwritten element (still the NaN poison) is rejected") {
  Fixture f(0.0f);  // beta 0: C is write-only, and the harness poisons it with NaN
  REQUIRE(f.run().ok);
  f.got[f.L.index(f.M - 1, f.N - 1)] = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(f.run().ok);
}

TEST_CASE("writes into guard cells are caught: past a row's end, before and after C") {
  Fixture f;
  SECTION("guard column") { f.got[f.L.index(2, f.N)] = 1.0f; }
  SECTION("before row 0") { f.got[f.L.front - 1] = 0.0f; }
  SECTION("after the last row") { f.got[f.L.total() - f.L.back] = 0.0f; }
  const VerifyReport r = f.run();
  CHECK_FALSE(r.ok);
  CHECK(r.guards_hit == 1);
  CHECK(r.wrong == 0);
}

TEST_CASE("guard sentinel is compared bitwise") {
  CHECK(is_guard(guard_value()));
  CHECK_FALSE(is_guard(std::numeric_limits<float>::quiet_NaN()));
  CHECK_FALSE(is_guard(0.0f));
}

TEST_CASE("C layout keeps 16-byte alignment of rows like the unpadded matrix; padding is extra guard columns") {
  for (int n : {1, 4, 7, 128, 129}) {
    const CLayout L = make_c_layout(3, n);
    CHECK(L.ldc == n + kGuardCols);
    CHECK(L.ldc % 4 == n % 4);
    CHECK(L.front % 4 == 0);
    CHECK(make_c_layout(3, n, 1).ldc == n + kGuardCols + 1);
  }
}

TEST_CASE("specials: NaN and infinities are judged by class, the rest as before") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // References: NaN, +Inf, -Inf, finite in range, finite beyond FP32's range.
  const std::vector<double> refs = {kNaN, kInf, -kInf, 0.25, 1.02e39};
  // The report with element `col` of the result replaced by `value` (the others as expected;
  // the last one is the infinity of its sign: FP32's correctly rounded answer).
  auto with = [&](int col, float value) {
    Row r(refs);
    r.got[r.L.index(0, 4)] = inf;
    if (col >= 0) r.got[r.L.index(0, col)] = value;
    return r.run();
  };
  const VerifyReport right = with(-1, 0);
  CHECK(right.ok);
  CHECK(right.specials.nonfinite == 3);
  CHECK(right.specials.wrong_class == 0);
  CHECK(right.specials.line() == "3 non-finite outputs, all of the right class");
  CHECK(right.accuracy.max_u == 0);  // over the finite references only: not NaN
  CHECK(with(0, -nan).ok);           // any NaN where NaN is expected
  // (col, value, a class mismatch?) that must fail
  const struct {
    int col;
    float value;
    bool wrong_class;
  } wrong[] = {
      {0, inf, true},       // an infinity where NaN is expected
      {0, 1.0f, true},      // a finite value where NaN is expected
      {1, nan, true},       // NaN where +Inf is expected
      {2, inf, true},       // +Inf where -Inf is expected
      {1, FLT_MAX, true},   // a finite value where +Inf is expected, even FLT_MAX
      {3, inf, true},       // an infinity where the reference is finite and in range
      {3, nan, true},       // NaN where the reference is finite
      {4, -inf, true},      // the other infinity where the exact result overflows
      {4, nan, true},       // NaN where the exact result overflows
      {4, FLT_MAX, false},  // finite where the exact result overflows: far off, by the limits
      {3, 0.5f, false},     // finite and far off: the limits, as without specials
  };
  for (const auto& w : wrong) {
    CAPTURE(w.col, w.value);
    const VerifyReport v = with(w.col, w.value);
    CHECK_FALSE(v.ok);
    CHECK(v.wrong == 1);
    CHECK(v.specials.wrong_class == (w.wrong_class ? 1u : 0u));
    REQUIRE(v.first.size() == 1);
    CHECK(v.first[0].wrong_class == w.wrong_class);
    CHECK(v.summary().find("(row 0, col " + std::to_string(w.col) + ")") != std::string::npos);
    // A wrong class is left out of the statistics (the rest are exact here); a finite error is in them.
    CHECK(std::isfinite(v.accuracy.max_u));
    CHECK((v.accuracy.max_u == 0) == w.wrong_class);
  }
}

TEST_CASE("specials: a wrong class is named with its place, the first one rows first") {
  Fixture f(0.5f, 40, 36, 50, 1.5f, true);
  REQUIRE(f.run().ok);
  REQUIRE(f.run().specials.nonfinite > 0);
  // The first NaN reference, rows first: made +Inf, and a later element made NaN.
  std::size_t first_nan = 0;
  while (!std::isnan(f.ref.c[first_nan])) ++first_nan;
  const int row = int(first_nan / f.N), col = int(first_nan % f.N);
  f.got[f.L.index(row, col)] = std::numeric_limits<float>::infinity();
  f.got[f.L.index(f.M - 1, f.N - 1)] = std::numeric_limits<float>::quiet_NaN();  // NaN is right only where NaN is expected
  const VerifyReport v = f.run();
  CHECK_FALSE(v.ok);
  CHECK(v.specials.wrong_class == (std::isnan(f.ref.c.back()) ? 1u : 2u));
  REQUIRE(v.specials.first);
  CHECK(v.specials.first->row == row);
  CHECK(v.specials.first->col == col);
  const std::string where = "(row " + std::to_string(row) + ", col " + std::to_string(col) + "): got inf, expected nan";
  CHECK(v.specials.line().find(where) != std::string::npos);
  CHECK(v.summary().find(where + " (wrong class: +Inf where the reference is NaN)") != std::string::npos);
  CHECK(std::isfinite(v.accuracy.max_u));  // the wrong-class elements are left out of the statistics
}

TEST_CASE("without specials a non-finite reference still never passes") {
  Row r({kNaN, kInf, 0.25}, false);
  const VerifyReport v = r.run();
  CHECK_FALSE(v.ok);
  CHECK(v.wrong == 2);
  CHECK(v.specials.nonfinite == 0);  // not counted: there are no specials
  CHECK(std::isnan(v.accuracy.max_u));
}

TEST_CASE("specials: FP32 arithmetic passes on planted inputs; 3xTF32 passes only with a careful split") {
  for (float beta : {0.0f, 0.5f})
    for (float alpha : {1.5f, -1.25f}) {
      CAPTURE(beta, alpha);
      Fixture f(beta, 40, 36, 50, alpha, true);
      REQUIRE(check_reference_classes(f.ref, f.A.data(), f.B.data(), f.c_in.data(), alpha, beta).empty());
      f.compute_fp32(exact);
      VerifyReport v = f.run();
      CHECK(v.ok);
      CHECK(v.specials.wrong_class == 0);
      // Plenty of non-finite outputs, most of them finite (the statistics still mean something).
      CHECK(v.specials.nonfinite >= std::size_t(f.M + f.N));
      CHECK(v.specials.nonfinite < std::size_t(f.M * f.N) / 2);
      CHECK(v.accuracy.max_u < kAccuracyLimitU / 4);
      // Some results beyond FP32's range (huge x huge), passed as the infinity of their sign.
      std::size_t overflowed = 0;
      for (std::size_t e = 0; e < f.ref.c.size(); ++e)
        overflowed += std::isfinite(f.ref.c[e]) && std::fabs(f.ref.c[e]) > FLT_MAX;
      CHECK(overflowed > 0);

      f.compute_3xtf32(split_careful, true);
      v = f.run();
      CHECK(v.ok);
      CHECK(v.specials.wrong_class == 0);

      f.compute_3xtf32(split_naive, false);  // Inf - Inf = NaN in small; near FLT_MAX -> Inf
      v = f.run();
      CHECK_FALSE(v.ok);
      CHECK(v.specials.wrong_class > 0);

      f.compute_3xtf32(split_inf_small_zero, false);  // Inf * 0 from a_big * b_small
      v = f.run();
      CHECK_FALSE(v.ok);
      CHECK(v.specials.wrong_class > 0);

      f.compute_3xtf32(split_careful, false);  // big-small products of an infinity: Inf * 0 again
      v = f.run();
      CHECK_FALSE(v.ok);
      REQUIRE(v.specials.first);
      CHECK(std::isinf(v.specials.first->expected));  // an Inf made NaN
      CHECK(std::isnan(v.specials.first->got));
    }
}

TEST_CASE("specials: cuBLAS's result is measured alike, its wrong classes counted, not judged") {
  Fixture f(0.5f, 40, 36, 50, 1.5f, true);
  f.compute_fp32(exact);
  std::vector<float> compact(std::size_t(f.M) * f.N);
  for (int i = 0; i < f.M; ++i)
    for (int j = 0; j < f.N; ++j) compact[i * f.N + j] = f.got[f.L.index(i, j)];
  SpecialsReport s;
  const Accuracy clean = measure(f.ref, compact.data(), f.N, &s);
  CHECK(s.nonfinite == f.run().specials.nonfinite);
  CHECK(s.wrong_class == 0);
  CHECK(clean.max_u == f.run().accuracy.max_u);
  std::size_t inf_at = 0;
  while (!std::isinf(f.ref.c[inf_at])) ++inf_at;
  compact[inf_at] = std::numeric_limits<float>::quiet_NaN();
  const Accuracy with_one_wrong = measure(f.ref, compact.data(), f.N, &s);
  CHECK(s.wrong_class == 1);
  REQUIRE(s.first);
  CHECK(s.first->row == int(inf_at / f.N));
  CHECK(with_one_wrong.max_u == clean.max_u);  // left out of the statistics, which stay finite
}

TEST_CASE("specials: the reference's classes are checked against IEEE arithmetic") {
  Fixture f(0.5f, 40, 36, 50, -1.25f, true);
  const auto check = [&] { return check_reference_classes(f.ref, f.A.data(), f.B.data(), f.c_in.data(), f.alpha, f.beta); };
  REQUIRE(check().empty());
  std::size_t nan_at = 0, inf_at = 0, finite_at = 0;
  while (!std::isnan(f.ref.c[nan_at])) ++nan_at;
  while (!std::isinf(f.ref.c[inf_at])) ++inf_at;
  while (!std::isfinite(f.ref.c[finite_at])) ++finite_at;
  auto where = [&](std::size_t e) { return "(row " + std::to_string(e / f.N) + ", col " + std::to_string(e % f.N) + ")"; };
  SECTION("NaN made Inf") {
    f.ref.c[nan_at] = kInf;
    CHECK(check().find(where(nan_at) + ": IEEE arithmetic gives NaN, the FP64 reference holds inf") != std::string::npos);
  }
  SECTION("an infinity's sign flipped") {
    f.ref.c[inf_at] = -f.ref.c[inf_at];
    CHECK(check().find(where(inf_at)) != std::string::npos);
  }
  SECTION("a finite element made NaN") {
    f.ref.c[finite_at] = kNaN;
    CHECK(check().find(where(finite_at) + ": IEEE arithmetic gives finite") != std::string::npos);
  }
  SECTION("a finite element with a scale that is not") {
    f.ref.scale[finite_at] = kInf;
    CHECK(check().find(where(finite_at) + ": the reference") != std::string::npos);
  }
  SECTION("beta 0 does not read C") {
    Fixture g(0.0f, 40, 36, 50, 1.5f, true);
    g.c_in[0] = std::numeric_limits<float>::quiet_NaN();
    CHECK(check_reference_classes(g.ref, g.A.data(), g.B.data(), g.c_in.data(), g.alpha, g.beta).empty());
  }
}

TEST_CASE("scaled inputs: the error in u is the same at every scale where the values stay normal") {
  // Power-of-two scaling is exact for normal floats, and so is every FP32 operation on them:
  // the result, the reference and the scale all move by 2^(EA+EB), the error in u not at all,
  // whether the results sit near 2^-14, 2^-100 or 2^+100.
  for (float beta : {0.0f, 0.5f}) {
    Fixture plain(beta, 6, 5, 300, 1.25f);
    plain.compute_fp32(exact);
    const VerifyReport p = plain.run();
    REQUIRE(p.ok);
    REQUIRE(p.accuracy.max_u > 0);
    for (auto [ea, eb] : std::vector<std::pair<int, int>>{{-7, -7}, {-50, -50}, {50, 50}, {-118, 118}, {118, -118},
                                                          {-20, 120}}) {
      CAPTURE(beta, ea, eb);
      Fixture f(beta, 6, 5, 300, 1.25f);
      f.scale(ea, eb);
      f.compute_fp32(exact);
      for (int i = 0; i < f.M; ++i)  // the very same result, scaled
        for (int j = 0; j < f.N; ++j)
          REQUIRE(f.got[f.L.index(i, j)] == std::ldexp(plain.got[plain.L.index(i, j)], ea + eb));
      const VerifyReport r = f.run();
      CHECK(r.ok);
      // The underflow allowance, (2K + 4) 2^-150 of absolute error, is all that differs: a part
      // in 10^5 of the error near 2^-100, nothing at 2^-14 or 2^+100.
      CHECK(r.accuracy.max_u == Approx(p.accuracy.max_u).epsilon(1e-4));
      CHECK(r.accuracy.rms_u == Approx(p.accuracy.rms_u).epsilon(1e-4));
      CHECK(r.max_err_over_bound == Approx(p.max_err_over_bound).epsilon(1e-4));
      CHECK(measure(f.ref, f.got.data() + f.L.front, f.L.ldc).max_u == Approx(p.accuracy.max_u).epsilon(1e-4));
      // A dropped product is seen alike at every scale.
      f.compute_fp32(exact, 150);
      CHECK_FALSE(f.run().ok);
    }
  }
}

TEST_CASE("scaled inputs: subnormal A with products in the normal range, FP32 passes") {
  // --exponents -134,120 (gpu.subnormal_a) and the mirror: the subnormal matrix is coarse
  // (multiples of 2^-149), but those floats are the inputs; the products are normal, and an
  // FP32 kernel is as accurate as on the plain inputs.
  for (auto [ea, eb] : std::vector<std::pair<int, int>>{{-134, 120}, {120, -134}})
    for (float beta : {0.0f, 0.5f}) {
      CAPTURE(ea, eb, beta);
      Fixture f(beta, 8, 9, 400, 1.0f);
      f.scale(ea, eb);
      const std::vector<float>& small = ea < 0 ? f.A : f.B;
      const Census c = census(small);
      CHECK(c.subnormal + c.zero == c.total);
      CHECK(c.subnormal > c.total * 9 / 10);
      f.compute_fp32(exact);
      const VerifyReport r = f.run();
      CHECK(r.ok);
      CHECK(r.accuracy.max_u < kAccuracyLimitU / 4);
    }
}

TEST_CASE("scaled inputs: 3xTF32 loses the small part of subnormal inputs, and the check sees it") {
  // TF32 keeps FP32's exponents: a subnormal value rounds to a multiple of 2^-136, so its
  // small part (below 2^-137) rounds to 0 or 2^-136 and 3xTF32 is TF32 there. Values near
  // 2^-118 (gpu.tiny_a) keep small parts down to 2^-136: most of their bits survive.
  Fixture plain(0.0f, 8, 9, 400, 1.0f);
  plain.compute_3xtf32(split_bits, false);
  const VerifyReport p = plain.run();
  CHECK(p.ok);
  for (auto [ea, eb] : std::vector<std::pair<int, int>>{{-118, 118}, {118, -118}}) {
    CAPTURE(ea, eb);
    Fixture f(0.0f, 8, 9, 400, 1.0f);
    f.scale(ea, eb);
    f.compute_3xtf32(split_bits, false);
    CHECK(f.run().ok);
  }
  for (auto [ea, eb] : std::vector<std::pair<int, int>>{{-134, 120}, {120, -134}}) {
    CAPTURE(ea, eb);
    Fixture f(0.0f, 8, 9, 400, 1.0f);
    f.scale(ea, eb);
    f.compute_3xtf32(split_bits, false);
    const VerifyReport r = f.run();
    CHECK_FALSE(r.ok);
    CHECK(r.accuracy.max_u > 4 * kAccuracyLimitU);
    f.compute_fp32(exact);  // FP32 on the same floats passes
    CHECK(f.run().ok);
  }
}

TEST_CASE("scaled inputs: products below FP32's normal range are judged with the underflow allowance") {
  // --exponents -70,-70: every product is below 2^-126; FP32 cannot hold them to u of the
  // scale, and the absolute allowance (2K + 4) 2^-150 forgives what underflow costs. A dropped
  // product is still caught where its size passes the allowance.
  Fixture f(0.0f, 4, 6, 300, 1.0f);
  f.scale(-70, -70);
  f.compute_fp32(exact);
  CHECK(f.run().ok);
  f.scale(20, 20);  // back to products near 2^-100
  f.compute_fp32(exact, 17);
  CHECK_FALSE(f.run().ok);
}
