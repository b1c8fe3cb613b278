#include "verify.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <sstream>

#include "cli.hpp"

namespace sgemm {

CLayout make_c_layout(int M, int N) {
  return {M, N, N + kGuardCols, static_cast<std::size_t>(kGuardCells),
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

float error_bound(int K, float alpha, float beta, float abs_ab, float abs_c) {
  const double scale = std::fabs(double(alpha)) * abs_ab + std::fabs(double(beta)) * abs_c;
  return static_cast<float>((double(K) + 2.0) * FLT_EPSILON * scale);
}

std::string VerifyReport::summary() const {
  std::ostringstream s;
  if (ok) {
    s << "ok (max error " << max_err_over_bound << " of the bound)";
    return s.str();
  }
  s << "FAILED: " << wrong << " wrong element(s), " << guards_hit << " guard cell(s) overwritten";
  for (const Mismatch& m : first) {
    if (m.row < 0)
      s << "\n    guard cell at offset " << m.col << " overwritten with " << m.got;
    else
      s << "\n    (row " << m.row << ", col " << m.col << "): got " << m.got << ", expected "
        << m.expected << " (bound " << m.bound << ")";
  }
  return s.str();
}

VerifyReport verify(const CLayout& L, const float* got, const float* expected, const float* abs_ab,
                    const float* c_in, int K, float alpha, float beta, std::size_t max_listed) {
  VerifyReport r;
  for (int row = 0; row < L.M; ++row) {
    for (int col = 0; col < L.ldc; ++col) {
      const float g = got[L.index(row, col)];
      if (col >= L.N) {  // guard column
        if (!is_guard(g)) {
          ++r.guards_hit;
          if (r.first.size() < max_listed) r.first.push_back({-1, int(L.index(row, col)), g, 0, 0});
        }
        continue;
      }
      const std::size_t i = static_cast<std::size_t>(row) * L.N + col;
      const float c = beta != 0.0f ? std::fabs(c_in[i]) : 0.0f;
      const float bound = error_bound(K, alpha, beta, abs_ab[i], c);
      const double err = std::fabs(double(g) - double(expected[i]));
      if (!(err <= bound)) {  // NaN and Inf fail here
        ++r.wrong;
        if (r.first.size() < max_listed) r.first.push_back({row, col, g, expected[i], bound});
      } else if (bound > 0) {
        r.max_err_over_bound = std::max(r.max_err_over_bound, err / bound);
      }
    }
  }
  auto check_cells = [&](std::size_t begin, std::size_t end) {
    for (std::size_t j = begin; j < end; ++j) {
      if (!is_guard(got[j])) {
        ++r.guards_hit;
        if (r.first.size() < max_listed) r.first.push_back({-1, int(j), got[j], 0, 0});
      }
    }
  };
  check_cells(0, L.front);
  check_cells(L.total() - L.back, L.total());
  r.ok = r.wrong == 0 && r.guards_hit == 0;
  return r;
}

}  // namespace sgemm
