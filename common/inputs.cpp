#include "inputs.hpp"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace sgemm {

namespace {
// SplitMix64: a tiny, well-mixed counter-based generator; element i of a stream depends on
// (seed, stream, i) alone, so the inputs do not depend on how they are generated.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The draws of plant_specials, one after another from (seed, M, N, K).
class Draws {
 public:
  Draws(std::uint64_t seed, int M, int N, int K)
      : state_(splitmix64(seed ^ splitmix64(4 + 0x51ed2701ull)) ^
               splitmix64((std::uint64_t(M) << 42) ^ (std::uint64_t(N) << 21) ^ std::uint64_t(K))) {}
  std::uint64_t next() { return splitmix64(state_++); }
  int below(int n) { return int(next() % std::uint64_t(n)); }  // n <= 10^6: the bias is negligible
  // `count` distinct indices of [0, n) outside `taken`, which they join; fewer if fewer are free.
  std::vector<int> distinct(int n, int count, std::set<int>& taken) {
    count = std::min<long long>(count, std::max<long long>(0, n - (long long)taken.size()));
    std::vector<int> out;
    while (int(out.size()) < count) {  // at most 12 are taken: a few tries each
      const int i = below(n);
      if (taken.insert(i).second) out.push_back(i);
    }
    return out;
  }

 private:
  std::uint64_t state_;
};

float from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

struct Kind {
  const char* what;
  bool huge_finite;  // the kinds that must share one k (see inputs.hpp)
};
// In order of priority: where M (or N) is small only the first few are planted. The
// near-FLT_MAX values get their last 12 bits drawn, so they vary with the seed.
constexpr Kind kKinds[] = {{"+Inf", false},    {"near FLT_MAX", true}, {"NaN", false}, {"-Inf", false},
                           {"-FLT_MAX", true}, {"-near FLT_MAX", true}, {"+FLT_MAX", true}};
constexpr int kKindCount = int(std::size(kKinds));

float kind_value(int kind, Draws& d) {
  const std::uint32_t near_max = 0x7f7ff000u | std::uint32_t(d.next() & 0xfffu);  // rounds up past FLT_MAX in TF32
  switch (kind) {
    case 0: return std::numeric_limits<float>::infinity();
    case 1: return from_bits(near_max);
    case 2: return from_bits(0x7fffffffu);  // the NaN a GPU makes: adding half a TF32 place to it carries into the sign
    case 3: return -std::numeric_limits<float>::infinity();
    case 4: return -FLT_MAX;
    case 5: return from_bits(near_max | 0x80000000u);
    default: return FLT_MAX;
  }
}

// How many rows of A (columns of B) get a special: none in a matrix of one row, else about a
// quarter of them, at least one, at most one of each kind.
int special_count(int n) { return n < 2 ? 0 : std::clamp(n / 4, 1, kKindCount); }

// Exact in TF32 (10 explicit mantissa bits): big = x, small = 0 in a 3xTF32 split. 0 makes
// Inf * 0 = NaN the right answer where it meets an infinity.
constexpr float kExactPartners[] = {1.0f, 0.0f, -0.5f, 2.0f, -0.75f};
}  // namespace

void fill_uniform(std::vector<float>& out, std::uint64_t seed, std::uint64_t stream) {
  const std::uint64_t base = splitmix64(seed ^ splitmix64(stream + 0x51ed2701ull));
  for (std::size_t i = 0; i < out.size(); ++i) {
    // 24 random bits -> [0, 1) exactly representable in float, then to [-1, 1).
    const std::uint64_t bits = splitmix64(base + i) >> 40;
    out[i] = static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
  }
}

std::vector<Planted> plant_specials(std::vector<float>& A, std::vector<float>& B, std::vector<float>* C, int M, int N,
                                    int K, std::uint64_t seed) {
  Draws d(seed, M, N, K);
  std::vector<Planted> planted;
  std::set<int> rows_taken, cols_taken;  // rows of A, columns of B holding a special
  const std::vector<int> rows = d.distinct(M, special_count(M), rows_taken);
  const std::vector<int> cols = d.distinct(N, special_count(N), cols_taken);
  const int k_huge = d.below(K);  // every huge finite value of A and B sits at this k

  // One special per chosen row of A (column of B), kind i in row i of the list; an infinity's
  // k is remembered for its exact partners (once: +Inf and -Inf may share a k).
  std::set<int> a_inf_k, b_inf_k;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const int k = kKinds[i].huge_finite ? k_huge : d.below(K);
    const float v = kind_value(int(i), d);
    A[std::size_t(rows[i]) * K + k] = v;
    planted.push_back({'A', rows[i], k, v, kKinds[i].what});
    if (v == std::numeric_limits<float>::infinity() || v == -std::numeric_limits<float>::infinity())
      a_inf_k.insert(k);
  }
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const int k = kKinds[i].huge_finite ? k_huge : d.below(K);
    const float v = kind_value(int(i), d);
    B[std::size_t(k) * N + cols[i]] = v;
    planted.push_back({'B', k, cols[i], v, kKinds[i].what});
    if (v == std::numeric_limits<float>::infinity() || v == -std::numeric_limits<float>::infinity())
      b_inf_k.insert(k);
  }

  // Exact partners: in columns of B (rows of A) without a special, the same ones for every
  // infinity, so each such column meets every infinity of A in a product of known class.
  constexpr int kPartners = int(std::size(kExactPartners));
  std::set<int> partner_cols_taken = cols_taken, partner_rows_taken = rows_taken;
  const std::vector<int> partner_cols = a_inf_k.empty() ? std::vector<int>{}
                                                        : d.distinct(N, kPartners, partner_cols_taken);
  const std::vector<int> partner_rows = b_inf_k.empty() ? std::vector<int>{}
                                                        : d.distinct(M, kPartners, partner_rows_taken);
  for (const int k : a_inf_k)
    for (std::size_t p = 0; p < partner_cols.size(); ++p) {
      B[std::size_t(k) * N + partner_cols[p]] = kExactPartners[p];
      planted.push_back({'B', k, partner_cols[p], kExactPartners[p], "TF32-exact partner of an infinity"});
    }
  for (const int k : b_inf_k)
    for (std::size_t p = 0; p < partner_rows.size(); ++p) {
      A[std::size_t(partner_rows[p]) * K + k] = kExactPartners[p];
      planted.push_back({'A', partner_rows[p], k, kExactPartners[p], "TF32-exact partner of an infinity"});
    }

  // C: outputs whose row of A and column of B are free of specials, so beta C is the only
  // special (or huge) term there.
  if (C) {
    const std::pair<float, const char*> c_kinds[] = {{std::numeric_limits<float>::infinity(), "+Inf"},
                                                     {-std::numeric_limits<float>::infinity(), "-Inf"},
                                                     {std::numeric_limits<float>::quiet_NaN(), "NaN"},
                                                     {FLT_MAX, "+FLT_MAX"}};
    std::set<int> c_rows_taken = rows_taken, c_cols_taken = cols_taken;
    const int count = std::min(int(std::size(c_kinds)), std::min(M, N) / 2);  // none in a 1 x N or M x 1 C
    const std::vector<int> c_rows = d.distinct(M, count, c_rows_taken);
    const std::vector<int> c_cols = d.distinct(N, int(c_rows.size()), c_cols_taken);
    for (std::size_t i = 0; i < c_cols.size(); ++i) {
      (*C)[std::size_t(c_rows[i]) * N + c_cols[i]] = c_kinds[i].first;
      planted.push_back({'C', c_rows[i], c_cols[i], c_kinds[i].first, c_kinds[i].second});
    }
  }
  return planted;
}

void scale_inputs(std::vector<float>& A, std::vector<float>& B, std::vector<float>* C, int exp_a, int exp_b) {
  auto scale = [](std::vector<float>& m, int e) {
    for (float& x : m) x = static_cast<float>(std::ldexp(double(x), e));  // exact in FP64, one rounding to float
  };
  scale(A, exp_a);
  scale(B, exp_b);
  if (C) scale(*C, exp_a + exp_b);
}

Census census(const std::vector<float>& values) {
  Census c;
  c.total = values.size();
  for (const float x : values) {
    if (x == 0.0f) ++c.zero;
    else if (std::fpclassify(x) == FP_SUBNORMAL) ++c.subnormal;
  }
  return c;
}

std::string census_line(const Census& c) {
  auto percent = [&](std::size_t n) { return c.total ? 100.0 * double(n) / double(c.total) : 0.0; };
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.3g%% subnormal, %.3g%% zero", percent(c.subnormal), percent(c.zero));
  return buf;
}

}  // namespace sgemm
