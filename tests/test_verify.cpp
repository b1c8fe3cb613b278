#include <cfloat>
#include <cmath>
#include <limits>
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

  explicit Fixture(float beta_ = -0.5f, int M_ = 5, int N_ = 7, int K_ = 33, float alpha_ = 1.5f)
      : M(M_), N(N_), K(K_), alpha(alpha_), beta(beta_), L(make_c_layout(M, N)), A(M * K), B(K * N), c_in(M * N),
        got(L.total(), guard_value()) {
    fill_uniform(A, 1, 1);
    fill_uniform(B, 1, 2);
    fill_uniform(c_in, 1, 3);
    ref = {M, N, K, std::vector<double>(M * N), std::vector<double>(M * N)};
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0, abs_acc = 0;
        for (int k = 0; k < K; ++k) {
          acc += double(A[i * K + k]) * B[k * N + j];
          abs_acc += std::fabs(double(A[i * K + k]) * B[k * N + j]);
        }
        ref.c[i * N + j] = alpha * acc + beta * double(c_in[i * N + j]);
        ref.scale[i * N + j] = std::fabs(alpha) * abs_acc + std::fabs(beta) * std::fabs(double(c_in[i * N + j]));
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
  VerifyReport run(Rule rule = Rule::RandomInputs) const { return verify(L, got.data(), ref, rule); }
};

float exact(float x) { return x; }

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
