// Verification of a result against an FP64 reference. Host-only, unit-tested.
//
// The reference is alpha * A * B + beta * C computed in FP64 (cuBLAS DGEMM) from the same
// FP32 inputs, and with it the scale of every element,
//
//     scale_ij = |alpha| * (|A||B|)_ij + |beta| * |C_in_ij|        (also in FP64)
//
// A result is judged by its error relative to that scale, in units of u = 2^-24 (FP32's
// unit roundoff):  e_ij = |got_ij - ref_ij| / (u * scale_ij).  Two limits apply:
//
// 1. The worst-case bound, for any inputs and any summation order: an FP32 dot product of
//    length K is off by at most about K * u * sum_k |a_ik b_kj|, plus a few roundings of
//    alpha and beta; we allow (K + 2) * eps * scale (eps = 2u), i.e. e <= 2 (K + 2).
//    It holds for adversarial data, so it is the rule for loaded .npy inputs.
// 2. The FP32-grade limit, on the harness's own random inputs in [-1, 1]: e <= kAccuracyLimitU.
//    With random signs the partial sums of a dot product grow like sqrt(k), not k, so the
//    rounding error of every FP32 summation order stays a few u of the scale whatever K is
//    (measured: docs/methodology.md), while one dropped product costs about 2^24 / K u
//    (hundreds at K = 20000) and TF32-rounded inputs about 9000 / sqrt(K) u RMS. The limit
//    sits between the two with a wide margin on both sides (the margins are published in
//    docs/methodology.md); the worst-case bound is about 10^4 times looser at large K.
//
// NaN and Inf never pass (every test is written !(e <= limit)); a non-finite reference or
// scale is never a pass either. Element (i, j) with scale 0 must be exact.
//
// With special values in the inputs (--specials, Reference::specials) an element is judged
// first by its class, NaN, +Inf, -Inf or finite: where the reference is NaN the result must
// be NaN, where it is +-Inf the same infinity (an IEEE FP32 computation gets these whatever
// its summation order: no finite sum overflows in the planted inputs, see inputs.hpp); where
// the reference is finite the rules above apply unchanged. The error statistics are then over
// the elements whose reference is finite and whose result is of the right class.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
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
// pad: extra guard columns beyond kGuardCols (--ld-pad's third value), so ldc = N + kGuardCols + pad.
CLayout make_c_layout(int M, int N, int pad = 0);

// The sentinel stored in guard cells: a NaN with a recognisable payload, compared bitwise.
inline constexpr std::uint32_t kGuardBits = 0x7fc0de5eu;
float guard_value();
bool is_guard(float x);  // bitwise

inline constexpr double kUnitRoundoff = 0x1p-24;  // u: FP32's unit roundoff
// The FP32-grade limit on the error e (units of u of the scale), on random inputs.
inline constexpr double kAccuracyLimitU = 32.0;

// The worst-case bound on |got - ref| for an element of the given scale.
double error_bound(int K, double scale);

// How a result is judged: always by the worst-case bound; on the harness's own random
// inputs also by the FP32-grade limit.
enum class Rule { RandomInputs, WorstCase };

// The reference of one shape, M x N with row stride N, in FP64.
struct Reference {
  int M = 0, N = 0, K = 0;
  std::vector<double> c;      // alpha A B + beta C_in
  std::vector<double> scale;  // |alpha| |A||B| + |beta| |C_in|
  bool specials = false;      // the inputs hold planted specials: NaN and +-Inf are judged by class
};

// The class of a value, which is all that is judged where the reference is not finite.
enum class ValueClass : std::uint8_t { Finite, PosInf, NegInf, NaN };
ValueClass value_class(double x);
const char* class_name(ValueClass c);  // "finite", "+Inf", "-Inf", "NaN"

// The error of a whole result, in units of u of the scale: its maximum and its RMS.
struct Accuracy {
  double max_u = 0, rms_u = 0;
};

struct Mismatch {
  int row, col;  // row -1: a guard cell, col = its offset in the allocation
  float got;
  double expected, err_u, limit_u;
  bool wrong_class = false;  // with specials: got is not of the reference's class
};

// With specials: how the elements whose reference is not finite, and the classes, fared.
struct SpecialsReport {
  std::size_t nonfinite = 0;        // elements whose reference is NaN or +-Inf
  std::size_t wrong_class = 0;      // elements whose result is of another class than the reference
  std::optional<Mismatch> first;    // the first of those, rows first
  // "N non-finite outputs, all of the right class", or "..., K of the wrong class, the first
  // at (row r, col c): got X, expected Y"
  std::string line() const;
  void merge(const SpecialsReport& later);  // `later`: rows after this one's
};

struct VerifyReport {
  bool ok = true;
  std::size_t wrong = 0;          // matrix elements outside a limit (NaN included)
  std::size_t guards_hit = 0;     // guard cells that no longer hold the sentinel
  double max_err_over_bound = 0;  // max |got - ref| / worst-case bound over the matrix
  Accuracy accuracy;              // the error of the result (NaN if any element is not finite;
                                  // with specials: over the finite-reference, right-class elements)
  Rule rule = Rule::RandomInputs;
  SpecialsReport specials;        // counted only with Reference::specials
  std::vector<Mismatch> first;    // the first few problems, rows first
  std::string summary() const;
};

// Gradual underflow: below FP32's smallest normal number (2^-126) an operation may be off by
// half the subnormal spacing, 2^-150, however small the scale. A length-K dot product with
// alpha and beta takes about 2K + 4 operations, so that much absolute error is excused
// (at the harness's random inputs it is ~10^-36 of the result: it matters only for
// results near FP32's smallest numbers, e.g. --alpha 1e-40).
double underflow_allowance(int K);

// The error of element `got` against ref/scale, in units of u, after the allowance is taken
// off; NaN/Inf in, NaN/Inf out, except an infinity where the exact result overflows FP32 with
// the same sign, which is FP32's correctly rounded answer (error 0).
double error_u(float got, double ref, double scale, double allowance = 0);

// The accuracy of a result stored as M rows of stride ld (no guards): used for cuBLAS's.
// With ref.specials, the classes are counted into *specials (if given), and the accuracy is
// over the finite-reference elements of the right class, as verify() reports it.
Accuracy measure(const Reference& ref, const float* got, std::size_t ld, SpecialsReport* specials = nullptr);

// got: the whole C allocation (layout as above), after the kernel ran.
VerifyReport verify(const CLayout& layout, const float* got, const Reference& ref, Rule rule,
                    std::size_t max_listed = 8);

// With specials: the class IEEE arithmetic gives every element of alpha A B + beta C, worked
// out from the inputs' non-finite values alone (an FP64 sum of products of floats cannot
// overflow: |a b| <= 2^256, and K <= 10^6 of them), checked against the reference, whose
// scale must also be finite wherever it is. Returns "" when all agree, else a line naming
// the first element that does not. A (M x K), B (K x N), C (M x N) compact; beta == 0 does
// not read C, alpha == 0 neither A nor B (BLAS).
std::string check_reference_classes(const Reference& ref, const float* A, const float* B, const float* C, float alpha,
                                    float beta);

}  // namespace sgemm
