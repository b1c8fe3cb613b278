// Seeded random inputs in [-1, 1]. Never constants: A = 1, B = 0.01 hides every
// transposed index and every missing k term. With --specials, IEEE special values are
// planted into them (plant_specials below); with --exponents, they are scaled by powers of
// two into tiny, huge or subnormal classes (scale_inputs below).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sgemm {

// Fills `out` with values uniform in [-1, 1], reproducible from (seed, stream): each
// matrix gets its own stream so A, B and C never repeat each other.
void fill_uniform(std::vector<float>& out, std::uint64_t seed, std::uint64_t stream);

// --specials: IEEE special values planted into the random inputs A [M][K], B [K][N] and,
// when `plant_c` (beta != 0), C [M][N], at places drawn from (seed, M, N, K). What and why
// (docs/methodology.md, "Special values"):
//
//  - A few rows of A get one special each, at some k, in this order of priority:
//      +Inf, a value just below FLT_MAX that rounds up past it in TF32 (bits 0x7f7ff000 to
//      0x7f7fffff), NaN, -Inf, -FLT_MAX, the negative near-FLT_MAX value, +FLT_MAX.
//    As many kinds as min(7, max(1, M / 4)) when M >= 2, none when M == 1, so at least
//    three quarters of the rows (and outputs) stay finite where M >= 4.
//  - The same kinds, in the same order, in a few columns of B: min(7, max(1, N / 4)).
//  - Partners exact in TF32 (low 13 mantissa bits zero): on the row k of B where A holds an
//    infinity, at columns without a special, 1, 0, -0.5, 2, -0.75 (as many as fit); on the
//    column k of A where B holds an infinity, the same values in rows without one. A 3xTF32
//    kernel that splits Inf into big = Inf, small = 0 computes Inf * 0 = NaN in big * small
//    where FP32 gives Inf; the exact 0 itself makes IEEE's NaN (Inf * 0) the right answer.
//  - No dot product sums two huge finite values, whose FP32 sum may overflow mid-way where
//    the exact one does not (FP32's own limit, not a kernel's bug): every huge finite value
//    of A and B sits at the same k, so where a row of A with one meets a column of B with
//    one, they meet in a single product (huge x huge, beyond FP32's range, exactly as in
//    FP32); each row of A and column of B holds one special at most.
//  - With plant_c: +Inf, -Inf, NaN and FLT_MAX in C (as many as min(4, min(M, N) / 2)), at
//    outputs whose row of A and column of B hold no special.
struct Planted {
  char matrix;  // 'A', 'B' or 'C'
  int row, col;
  float value;
  std::string what;  // e.g. "+Inf", "near FLT_MAX", "TF32-exact partner of an infinity"
};
std::vector<Planted> plant_specials(std::vector<float>& A, std::vector<float>& B, std::vector<float>* C, int M, int N,
                                    int K, std::uint64_t seed);

// --exponents EA,EB: every value of A multiplied by 2^EA, of B by 2^EB and (if given) of C
// by 2^(EA+EB), in FP64, then rounded to float (round to nearest even). The floats are the
// inputs: the FP64 reference and cuBLAS see exactly these. Where a scaled value is a normal
// float the scaling is exact, so the product A B is the unscaled one times 2^(EA+EB); below
// 2^-126 values become subnormal floats, rounded to a multiple of 2^-149 (or to 0). The
// uniform inputs are multiples of 2^-23, so for EA >= -126 even the subnormal ones are exact;
// below, they lose their low bits. C is scaled so that beta C keeps its weight against
// alpha A B. Exponents keep every value finite when |values| <= 1 and E <= 127 (cli.hpp).
void scale_inputs(std::vector<float>& A, std::vector<float>& B, std::vector<float>* C, int exp_a, int exp_b);

// How many values of a matrix are subnormal and how many zero: what --exponents made of it.
struct Census {
  std::size_t total = 0, subnormal = 0, zero = 0;
};
Census census(const std::vector<float>& values);
// "12.5% subnormal, 0.4% zero" (percentages of the total, to about 3 digits).
std::string census_line(const Census& c);

}  // namespace sgemm
