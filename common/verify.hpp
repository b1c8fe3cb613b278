// Verification of a result against the cuBLAS reference. Host-only, unit-tested.
//
// The bound: each output is a dot product of length K. In FP32 the rounding error of such
// a sum is at most about K * u * sum_k |a_ik * b_kj| (u = 2^-24, the unit roundoff), for
// our kernel and for cuBLAS alike, whatever order either sums in. So two correct results
// differ by at most about 2 * K * u = K * eps (eps = FLT_EPSILON = 2^-23) times
// (|A| |B|)_ij, plus the few roundings of alpha and beta:
//
//     bound_ij = (K + 2) * eps * (|alpha| * (|A||B|)_ij + |beta| * |C_in_ij|)
//
// (|A||B|) is computed by cuBLAS on the absolute values. The bound grows with K, holds for
// any summation order, and is far below the error of any indexing bug at the shapes the
// GPU suite uses. NaN and Inf never pass: the test is !(|got - ref| <= bound).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sgemm {

// Where C lives in its allocation: kGuardCells sentinels, then M rows of ldc floats whose
// first N are the matrix and the rest guard columns, then kGuardCells sentinels.
struct CLayout {
  int M, N, ldc;
  std::size_t front;  // guard cells before row 0
  std::size_t back;   // guard cells after the last row
  std::size_t total() const { return front + static_cast<std::size_t>(M) * ldc + back; }
  std::size_t index(int row, int col) const {
    return front + static_cast<std::size_t>(row) * ldc + col;
  }
};
CLayout make_c_layout(int M, int N);

// The sentinel stored in guard cells: a NaN with a recognisable payload, compared bitwise.
inline constexpr std::uint32_t kGuardBits = 0x7fc0de5eu;
float guard_value();
bool is_guard(float x);  // bitwise

float error_bound(int K, float alpha, float beta, float abs_ab, float abs_c);

struct Mismatch {
  int row, col;  // row -1: a guard cell, col = its offset in the allocation
  float got, expected, bound;
};

struct VerifyReport {
  bool ok = true;
  std::size_t wrong = 0;          // matrix elements outside their bound (NaN included)
  std::size_t guards_hit = 0;     // guard cells that no longer hold the sentinel
  double max_err_over_bound = 0;  // max |got - ref| / bound over the matrix
  std::vector<Mismatch> first;    // the first few problems, rows first
  std::string summary() const;
};

// got:      the whole C allocation (layout as above), after the kernel ran
// expected: cuBLAS's result, M x N, row stride N
// abs_ab:   (|A||B|), M x N, row stride N
// c_in:     C before the run, M x N, row stride N (only read when beta != 0)
VerifyReport verify(const CLayout& layout, const float* got, const float* expected,
                    const float* abs_ab, const float* c_in, int K, float alpha, float beta,
                    std::size_t max_listed = 8);

}  // namespace sgemm
