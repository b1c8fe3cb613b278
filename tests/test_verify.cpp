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

// A small problem with a correct result computed in double, laid out like the harness's C.
struct Fixture {
  int M = 5, N = 7, K = 33;
  float alpha = 1.5f, beta;
  CLayout L = make_c_layout(M, N);
  std::vector<float> A, B, c_in, expected, abs_ab, got;

  explicit Fixture(float beta_ = -0.5f)
      : beta(beta_), A(M * K), B(K * N), c_in(M * N), expected(M * N), abs_ab(M * N), got(L.total(), guard_value()) {
    fill_uniform(A, 1, 1);
    fill_uniform(B, 1, 2);
    fill_uniform(c_in, 1, 3);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0, abs_acc = 0;
        for (int k = 0; k < K; ++k) {
          acc += double(A[i * K + k]) * B[k * N + j];
          abs_acc += std::fabs(double(A[i * K + k]) * B[k * N + j]);
        }
        expected[i * N + j] = float(alpha * acc + beta * double(c_in[i * N + j]));
        abs_ab[i * N + j] = float(abs_acc);
        got[L.index(i, j)] = expected[i * N + j];
      }
  }
  VerifyReport run() const { return verify(L, got.data(), expected.data(), abs_ab.data(), c_in.data(), K, alpha, beta); }
};

}  // namespace

TEST_CASE("error bound grows with K and with the magnitudes") {
  CHECK(error_bound(1, 1, 0, 1, 0) == Approx(3 * FLT_EPSILON));
  CHECK(error_bound(1000, 1, 0, 1, 0) == Approx(1002 * FLT_EPSILON));
  CHECK(error_bound(100, 2, 0, 3, 0) == Approx(102 * FLT_EPSILON * 6));
  CHECK(error_bound(100, 1, -0.5f, 3, 4) == Approx(102 * FLT_EPSILON * 5));
  CHECK(error_bound(4096, 1, 0, 0, 0) == 0.0f);
  CHECK(error_bound(2000, 1, 0, 1, 0) > error_bound(1000, 1, 0, 1, 0));
}

TEST_CASE("a correct result passes, with rounding-sized differences") {
  Fixture f;
  REQUIRE(f.run().ok);
  // Perturb every element by a couple of ulps: still well inside the bound.
  for (int i = 0; i < f.M; ++i)
    for (int j = 0; j < f.N; ++j) {
      float& g = f.got[f.L.index(i, j)];
      g = std::nextafter(std::nextafter(g, INFINITY), INFINITY);
    }
  const VerifyReport r = f.run();
  CHECK(r.ok);
  CHECK(r.max_err_over_bound < 1.0);
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

TEST_CASE("NaN and Inf never pass") {
  Fixture f;
  f.got[f.L.index(0, 0)] = std::numeric_limits<float>::quiet_NaN();
  f.got[f.L.index(1, 1)] = std::numeric_limits<float>::infinity();
  const VerifyReport r = f.run();
  CHECK_FALSE(r.ok);
  CHECK(r.wrong == 2);
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

TEST_CASE("C layout keeps 16-byte alignment of rows like the unpadded matrix") {
  for (int n : {1, 4, 7, 128, 129}) {
    const CLayout L = make_c_layout(3, n);
    CHECK(L.ldc == n + kGuardCols);
    CHECK(L.ldc % 4 == n % 4);
    CHECK(L.front % 4 == 0);
  }
}
