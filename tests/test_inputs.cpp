#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "catch.hpp"
#include "inputs.hpp"

using namespace sgemm;

TEST_CASE("random inputs are in [-1, 1], reproducible, and differ between streams and seeds") {
  std::vector<float> a(10000), b(10000), c(10000), d(10000);
  fill_uniform(a, 7, 1);
  fill_uniform(b, 7, 1);
  fill_uniform(c, 7, 2);
  fill_uniform(d, 8, 1);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a != d);
  CHECK(*std::min_element(a.begin(), a.end()) >= -1.0f);
  CHECK(*std::max_element(a.begin(), a.end()) <= 1.0f);
  // Spread over the whole range, not a constant: mean near 0, both signs well represented.
  double mean = 0;
  for (float x : a) mean += x;
  mean /= a.size();
  CHECK(std::abs(mean) < 0.05);
  CHECK(std::count_if(a.begin(), a.end(), [](float x) { return x < -0.9f; }) > 300);
  CHECK(std::count_if(a.begin(), a.end(), [](float x) { return x > 0.9f; }) > 300);
}

namespace {
bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {  // NaN == NaN here
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}
bool huge(float x) { return std::isfinite(x) && std::fabs(x) > 1e30f; }
bool special(float x) { return !std::isfinite(x) || huge(x); }
bool tf32_exact(float x) { return (std::bit_cast<std::uint32_t>(x) & 0x1fffu) == 0; }
// x rounded to TF32 (10 explicit mantissa bits), to nearest with ties away, as cvt.rna.tf32.f32.
float to_tf32(float x) {
  int e;
  const float m = std::frexp(x, &e);
  return std::ldexp(std::round(std::ldexp(m, 11)), e - 11);
}

// Inputs of one shape with specials planted, as --specials makes them.
struct Planting {
  int M, N, K;
  std::vector<float> A, B, C, C_before;
  std::vector<Planted> planted;
  Planting(int M_, int N_, int K_, std::uint64_t seed, bool plant_c = true)
      : M(M_), N(N_), K(K_), A(std::size_t(M) * K), B(std::size_t(K) * N), C(std::size_t(M) * N) {
    fill_uniform(A, seed, 1);
    fill_uniform(B, seed, 2);
    fill_uniform(C, seed, 3);
    C_before = C;
    planted = plant_specials(A, B, plant_c ? &C : nullptr, M, N, K, seed);
  }
  float a(int i, int k) const { return A[std::size_t(i) * K + k]; }
  float b(int k, int j) const { return B[std::size_t(k) * N + j]; }
  std::set<int> special_rows() const {  // rows of A holding a special
    std::set<int> rows;
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k)
        if (special(a(i, k))) rows.insert(i);
    return rows;
  }
  std::set<int> special_cols() const {
    std::set<int> cols;
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j)
        if (special(b(k, j))) cols.insert(j);
    return cols;
  }
};
}  // namespace

TEST_CASE("specials: planted deterministically from the seed and the shape") {
  const Planting p(40, 36, 50, 7), q(40, 36, 50, 7), other_seed(40, 36, 50, 8), other_shape(40, 36, 51, 7);
  CHECK(same_bits(p.A, q.A));
  CHECK(same_bits(p.B, q.B));
  CHECK(same_bits(p.C, q.C));
  REQUIRE(p.planted.size() == q.planted.size());
  for (std::size_t i = 0; i < p.planted.size(); ++i)
    CHECK((p.planted[i].row == q.planted[i].row && p.planted[i].col == q.planted[i].col &&
           p.planted[i].what == q.planted[i].what));
  CHECK(p.special_rows() != other_seed.special_rows());
  CHECK(p.special_rows() != other_shape.special_rows());
}

TEST_CASE("specials: what is planted, and where") {
  for (std::uint64_t seed : {1u, 2u, 3u, 2024u}) {
    CAPTURE(seed);
    const Planting p(40, 36, 50, seed);
    // The list says what is where, each place once.
    std::set<std::tuple<char, int, int>> places;
    for (const Planted& x : p.planted) CHECK(places.insert({x.matrix, x.row, x.col}).second);
    for (const Planted& x : p.planted) {
      const float v = x.matrix == 'A' ? p.a(x.row, x.col) : x.matrix == 'B' ? p.b(x.row, x.col)
                                                                           : p.C[std::size_t(x.row) * p.N + x.col];
      CHECK(std::bit_cast<std::uint32_t>(v) == std::bit_cast<std::uint32_t>(x.value));
    }
    // Every kind, in min(7, M / 4) rows of A and min(7, N / 4) columns of B, one a row (column).
    for (char m : {'A', 'B'}) {
      CAPTURE(m);
      std::multiset<std::string> kinds;
      std::set<int> lines;
      for (const Planted& x : p.planted)
        if (x.matrix == m && x.what.find("partner") == std::string::npos) {
          kinds.insert(x.what);
          lines.insert(m == 'A' ? x.row : x.col);
        }
      CHECK(kinds == std::multiset<std::string>{"+Inf", "-Inf", "NaN", "+FLT_MAX", "-FLT_MAX", "near FLT_MAX",
                                                 "-near FLT_MAX"});
      CHECK(lines == (m == 'A' ? p.special_rows() : p.special_cols()));
      CHECK(lines.size() == 7);
    }
    for (int i = 0; i < p.M; ++i)
      CHECK(std::count_if(p.A.begin() + std::size_t(i) * p.K, p.A.begin() + std::size_t(i + 1) * p.K, special) <= 1);
    for (int j = 0; j < p.N; ++j) {
      int n = 0;
      for (int k = 0; k < p.K; ++k) n += special(p.b(k, j));
      CHECK(n <= 1);
    }
    // The values: +-FLT_MAX exactly; near FLT_MAX in [0x7f7ff000, 0x7f7fffff], rounding past it in TF32.
    for (const Planted& x : p.planted) {
      const std::uint32_t bits = std::bit_cast<std::uint32_t>(x.value) & 0x7fffffffu;
      if (x.what.find("near") != std::string::npos) {
        CHECK((bits >= 0x7f7ff000u && bits <= 0x7f7fffffu));
        CHECK(std::isinf(to_tf32(x.value)));
        CHECK(std::signbit(x.value) == (x.what[0] == '-'));
      }
      if (x.what.ends_with("FLT_MAX") && x.what.find("near") == std::string::npos)
        CHECK(std::fabs(x.value) == FLT_MAX);
    }
    // No dot product sums two huge finite values: they all sit at one k.
    std::set<int> huge_k;
    for (const Planted& x : p.planted)
      if (huge(x.value) && x.matrix != 'C') huge_k.insert(x.matrix == 'A' ? x.col : x.row);
    CHECK(huge_k.size() == 1);
    for (int i = 0; i < p.M; ++i)
      for (int j = 0; j < p.N; ++j) {
        int huge_terms = 0;
        for (int k = 0; k < p.K; ++k) huge_terms += huge(p.a(i, k)) || huge(p.b(k, j));
        REQUIRE(huge_terms <= 1);
      }
    // Every infinity of A meets, on its k row of B, TF32-exact partners 1, 0, -0.5, 2, -0.75 in
    // columns without a special; every infinity of B likewise in A's rows.
    for (const Planted& x : p.planted) {
      if (x.matrix == 'C' || !std::isinf(x.value)) continue;
      // B's partners of an Inf of A sit on row k of A's Inf, A's on column k of B's Inf.
      std::multiset<float> partners;
      if (x.matrix == 'A') {
        for (int j = 0; j < p.N; ++j)
          if (!p.special_cols().count(j) && tf32_exact(p.b(x.col, j)) &&
              std::count_if(p.planted.begin(), p.planted.end(), [&](const Planted& y) {
                return y.matrix == 'B' && y.row == x.col && y.col == j && y.what == "TF32-exact partner of an infinity";
              }))
            partners.insert(p.b(x.col, j));
      } else {
        for (int i = 0; i < p.M; ++i)
          if (!p.special_rows().count(i) && tf32_exact(p.a(i, x.row)) &&
              std::count_if(p.planted.begin(), p.planted.end(), [&](const Planted& y) {
                return y.matrix == 'A' && y.col == x.row && y.row == i && y.what == "TF32-exact partner of an infinity";
              }))
            partners.insert(p.a(i, x.row));
      }
      CHECK(partners == std::multiset<float>{1.0f, 0.0f, -0.5f, 2.0f, -0.75f});
    }
    // C: +-Inf, NaN and FLT_MAX, where no row of A or column of B holds a special.
    std::multiset<std::string> c_kinds;
    for (const Planted& x : p.planted)
      if (x.matrix == 'C') {
        c_kinds.insert(x.what);
        CHECK_FALSE(p.special_rows().count(x.row));
        CHECK_FALSE(p.special_cols().count(x.col));
      }
    CHECK(c_kinds == std::multiset<std::string>{"+Inf", "-Inf", "NaN", "+FLT_MAX"});
    // Most outputs see no special: their row of A and column of B hold none.
    int untouched = 0;
    for (int i = 0; i < p.M; ++i)
      for (int j = 0; j < p.N; ++j) untouched += !p.special_rows().count(i) && !p.special_cols().count(j);
    CHECK(untouched > p.M * p.N / 2);
  }
}

TEST_CASE("specials: C only when asked (beta != 0); small shapes get fewer, 1-row matrices none") {
  const Planting no_c(40, 36, 50, 5, false);
  CHECK(same_bits(no_c.C, no_c.C_before));
  CHECK(std::none_of(no_c.planted.begin(), no_c.planted.end(), [](const Planted& x) { return x.matrix == 'C'; }));
  const Planting one(1, 1, 1, 5);
  CHECK(one.planted.empty());
  const Planting row(1, 100, 9, 5);  // no row of A can hold one; B's columns can, with partners in A's one row
  CHECK(row.special_rows().empty());
  CHECK(row.special_cols().size() == 7);
  CHECK(std::count_if(row.planted.begin(), row.planted.end(),
                      [](const Planted& x) { return x.matrix == 'A' && x.what.starts_with("TF32-exact"); }) > 0);
  const Planting few(9, 2, 1, 5);  // M / 4 = 2 kinds in A, one in B, all at k = 0
  CHECK(few.special_rows().size() == 2);
  CHECK(few.special_cols().size() == 1);
  for (int m = 1; m <= 12; ++m)  // every shape keeps one special per row and column, and no huge sums
    for (int n = 1; n <= 12; n += 3)
      for (int k = 1; k <= 5; k += 2) {
        CAPTURE(m, n, k);
        const Planting p(m, n, k, 11);
        CHECK(int(p.special_rows().size()) == (m < 2 ? 0 : std::clamp(m / 4, 1, 7)));
        CHECK(int(p.special_cols().size()) == (n < 2 ? 0 : std::clamp(n / 4, 1, 7)));
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            int huge_terms = 0;
            for (int kk = 0; kk < k; ++kk) huge_terms += huge(p.a(i, kk)) || huge(p.b(kk, j));
            CHECK(huge_terms <= 1);
          }
      }
}

TEST_CASE("exponents: scaling by 2^EA, 2^EB and 2^(EA+EB) is exact where the values stay normal") {
  std::vector<float> a(5000), b(4000), c(3000);
  fill_uniform(a, 11, 1), fill_uniform(b, 11, 2), fill_uniform(c, 11, 3);
  for (auto [ea, eb] : std::vector<std::pair<int, int>>{{-118, 118}, {118, -118}, {-7, -7}, {60, 40}, {0, 0}}) {
    CAPTURE(ea, eb);
    std::vector<float> sa = a, sb = b, sc = c;
    scale_inputs(sa, sb, &sc, ea, eb);
    // The uniform values are multiples of 2^-23 below 1: scaled by 2^E >= 2^-126 each one is a
    // float again (normal, or subnormal on the 2^-149 grid), so the scaling is exact and undoes.
    for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(std::ldexp(sa[i], -ea) == a[i]);
    for (std::size_t i = 0; i < b.size(); ++i) REQUIRE(std::ldexp(sb[i], -eb) == b[i]);
    for (std::size_t i = 0; i < c.size(); ++i) REQUIRE(std::ldexp(sc[i], -(ea + eb)) == c[i]);
    // So every product is the plain one times 2^(EA+EB), exactly.
    for (std::size_t i = 0; i < 1000; ++i) {
      const float plain = a[i] * b[i], scaled = sa[i] * sb[i];
      REQUIRE(double(scaled) == std::ldexp(double(plain), ea + eb));
    }
    const float largest = *std::max_element(sa.begin(), sa.end(), [](float x, float y) { return std::fabs(x) < std::fabs(y); });
    CHECK(std::fabs(largest) <= std::ldexp(1.0f, ea));
    CHECK(std::fabs(largest) > std::ldexp(0.99f, ea));
  }
  // Without C (nullptr) only A and B move.
  std::vector<float> sa = a, sb = b;
  scale_inputs(sa, sb, nullptr, 3, -2);
  CHECK(sa[7] == 8 * a[7]);
  CHECK(sb[7] == b[7] / 4);
}

TEST_CASE("exponents: below 2^-126 the values become subnormal floats, below 2^-149 zero") {
  std::vector<float> a(20000), b(20000);
  fill_uniform(a, 5, 1), fill_uniform(b, 5, 2);
  const std::vector<float> plain = a;
  // tiny_a: A near 2^-118, a few of its values (|x| < 2^-8) subnormal, none lost.
  std::vector<float> t = a, tb = b;
  scale_inputs(t, tb, nullptr, -118, 118);
  Census c = census(t);
  CHECK(c.total == t.size());
  CHECK(c.subnormal > 0);
  CHECK(c.subnormal < c.total / 100);  // about 1/256 of them
  CHECK(c.zero == census(plain).zero);
  CHECK(census(tb).subnormal == 0);
  // subnormal_a: every value of A below 2^-134 is subnormal or zero, rounded to the 2^-149
  // grid (round to nearest even, from FP64) and no longer exactly 2^-134 times the plain one.
  std::vector<float> s = a, sb = b;
  scale_inputs(s, sb, nullptr, -134, 120);
  c = census(s);
  CHECK(c.subnormal + c.zero == c.total);
  CHECK(c.zero < c.total / 1000);  // |x| < 2^-16 rounds to 0: about 1.5 in 10^5
  std::size_t inexact = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    REQUIRE(s[i] == static_cast<float>(std::ldexp(double(plain[i]), -134)));   // FP64, then one rounding
    REQUIRE(std::fabs(double(s[i]) - std::ldexp(double(plain[i]), -134)) <= 0x1p-150);
    REQUIRE(std::fmod(std::fabs(double(s[i])), 0x1p-149) == 0.0);
    inexact += std::ldexp(double(s[i]), 134) != double(plain[i]);
  }
  CHECK(inexact > s.size() / 2);  // most values had bits below 2^-149
  CHECK(census(sb).subnormal == 0);  // B near 2^120: ordinary
  CHECK(census(sb).zero == census(b).zero);
  // The floor: 2^-140 keeps the values above 2^-149, most of them.
  std::vector<float> f = a, fb = b;
  scale_inputs(f, fb, nullptr, -140, 0);
  c = census(f);
  CHECK(c.zero > 0);              // |x| < 2^-10: about 1 in 10^3
  CHECK(c.zero < c.total / 100);
  CHECK(c.subnormal + c.zero == c.total);
}

TEST_CASE("exponents: the largest exponents keep every value finite") {
  std::vector<float> a(10000), b(10000), c(10000);
  fill_uniform(a, 3, 1), fill_uniform(b, 3, 2), fill_uniform(c, 3, 3);
  a[0] = -1.0f;  // the uniform fill's extreme
  scale_inputs(a, b, &c, 127, -127);
  CHECK(a[0] == -0x1p127f);
  CHECK(std::all_of(a.begin(), a.end(), [](float x) { return std::isfinite(x); }));
  CHECK(c == [] { std::vector<float> p(10000); fill_uniform(p, 3, 3); return p; }());  // 2^0
}

TEST_CASE("census: counts subnormal and zero values; its line gives percentages") {
  const std::vector<float> v = {0.0f, -0.0f, 0x1p-149f, -0x1p-127f, 0x1p-126f, 1.0f, 0x1.fffffcp-127f, 3.0f};
  const Census c = census(v);
  CHECK(c.total == 8);
  CHECK(c.zero == 2);
  CHECK(c.subnormal == 3);
  CHECK(census_line(c) == "37.5% subnormal, 25% zero");
  CHECK(census_line(census({})) == "0% subnormal, 0% zero");
}
