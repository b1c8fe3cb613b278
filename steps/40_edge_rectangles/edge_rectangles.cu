// Step 40 - the edges as rectangles of their own                         previous: 39_odd_strides
// Change: where the chosen tile does not divide M or N, C is cut: the main rectangle (the
//         tile's multiples) and the thin edges (a strip on the right, a strip below) each run
//         as a GEMM of its own, with the tile, the pieces of K and the place of A's split that
//         its own shape chooses (step 37's rule), one after another. The host takes the cut
//         where the rectangles' estimates (with the copies or phases of operands TMA cannot
//         read as they lie: estimate_us), each beyond the first charged EDGE_LAUNCH_US, beat
//         the whole's by EDGE_GAIN_PERCENT.
// Why:    N = 2049 with 128 columns a tile is 17 block columns for 16 and one column of C: at
//         2047 x 2049 x 2047, 272 tiles are three waves of 132 SMs where 256 (or 255, without
//         the last block row) would be two.
// Where:  launch (rectangle, estimate_us, the cut); launch_whole is step 39's launch.
// Watch:  the survey's odd shapes (2047x2049x2047, 1023x1025x8190) against step 39; the bench
//         shapes unchanged (no edge, no cut); SGEMM_EDGES=cut on every suite set.
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -Icommon common/*.cpp common/*.cu steps/40_edge_rectangles/edge_rectangles.cu -lcublas -o build-alone/edge_rectangles
#include <cuda.h>          // CUtensorMap (types only: the driver library is not linked)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled, the type of the function the runtime hands out

#include <algorithm>  // std::copy
#include <cmath>      // INFINITY
#include <cstdint>
#include <cstdio>   // the message for an unknown SGEMM_SPLIT
#include <cstdlib>  // std::getenv, std::exit
#include <cstring>  // std::strcmp
#include <string>   // the tiles' names (SGEMM_TILE, the path)
#include <type_traits>  // std::bool_constant: the consumers' two sweeps compiled apart

#include "sgemm.cuh"

constexpr int BM = SGEMM_KNOB(BM, 128);          // rows of C per block: wgmma's N (the A tile is its shared operand)
constexpr int BN = SGEMM_KNOB(BN, 128);          // columns of C per block of the wide tile: 64 per consumer warpgroup (wgmma's M)
constexpr int TUNE_SPLIT = SGEMM_KNOB(TUNE_SPLIT, 32);   // K-width of a shared tile: one 128-byte swizzle row of floats
constexpr int STAGES = SGEMM_KNOB(STAGES, 4);        // shared stages in the TMA ring
constexpr int GROUP_ROWS = SGEMM_KNOB(GROUP_ROWS, 16);   // block rows that neighbouring blocks walk down together (L2 reuse)
constexpr int CONSUMER_REGISTERS = SGEMM_KNOB(CONSUMER_REGISTERS, 232);  // setmaxnreg for the consumers (the producer keeps 40)

constexpr int WGMMA_M = 64, WGMMA_K = 8;  // one wgmma: 64 columns of C x BM rows x 8 k
constexpr int NARROW_BN = WGMMA_M;        // columns of C per block of the narrow tile: one consumer warpgroup
__host__ __device__ constexpr int consumers(int bn) { return bn / WGMMA_M; }  // consumer warpgroups of a tile BM x bn
__host__ __device__ constexpr int threads(int bn) { return 128 * (1 + consumers(bn)); }  // warpgroup 0 produces, the others consume
constexpr int K_STEPS = TUNE_SPLIT / WGMMA_K;   // wgmmas per k tile and pass
constexpr int B_BOX = SGEMM_KNOB(B_BOX, 32);  // columns of a TMA box of B: 128 bytes, the 128-byte swizzle's width
constexpr int PRODUCER_REGISTERS = SGEMM_KNOB(PRODUCER_REGISTERS, 40);
constexpr int SPLITTERS = SGEMM_KNOB(SPLITTERS, 96);  // threads of the producer warpgroup that split A in the pipeline (warps 1 .. 3)

constexpr int MAX_SPLITS = SGEMM_KNOB(MAX_SPLITS, 128);             // most pieces K is cut into (64 in steps 26-39: a lone small tile, as at 64 x 64 x 65536, needs more to fill the GPU)
constexpr int MIN_SPLIT_K_TILES = SGEMM_KNOB(MIN_SPLIT_K_TILES, 2);  // fewest k tiles in a piece: its ring has to fill (4 in steps 26-39)
constexpr int PIECE_OVERHEAD_TILES = SGEMM_KNOB(PIECE_OVERHEAD_TILES, 2);  // a block's start and end, in k tiles (the first TMA, the stores)
constexpr int MIN_GAIN_PERCENT = SGEMM_KNOB(MIN_GAIN_PERCENT, 10);  // more pieces must cut the estimated time by this much (in steps 37-39 the narrow tile too)
constexpr int TILE_GAIN_PERCENT = SGEMM_KNOB(TILE_GAIN_PERCENT, 1);  // the narrow tile must cut the wide tile's estimated time by this much (MIN_GAIN_PERCENT in steps 37-39: at 512^3 it kept the wide tile, 10-12% slower; the notes)
constexpr int NARROW_TILE_PERCENT = SGEMM_KNOB(NARROW_TILE_PERCENT, 75);  // a 128 x 64 tile's time, in % of a 128 x 128 tile's (half the work, one consumer)
constexpr int L2_BANDWIDTH_RATIO = SGEMM_KNOB(L2_BANDWIDTH_RATIO, 4);  // partial sums in L2 move this much faster than device memory
constexpr int REDUCE_THREADS = SGEMM_KNOB(REDUCE_THREADS, 256);     // threads per block of the reduction kernel
constexpr int MAX_REDUCE_GROUPS = SGEMM_KNOB(MAX_REDUCE_GROUPS, 32);  // most threads sharing one vector's pieces in the reduction (1: one thread a vector)
constexpr int REDUCE_LOADS = SGEMM_KNOB(REDUCE_LOADS, 4);  // pieces a reduction thread reads before it adds them
constexpr int PASS_THREADS = SGEMM_KNOB(PASS_THREADS, 256);  // threads per block of the pass before the GEMM (either place)
constexpr int PASS_LOADS = SGEMM_KNOB(PASS_LOADS, 16);       // loads each thread of a pass has in flight at once
constexpr int RAW_MIN_K = SGEMM_KNOB(RAW_MIN_K, 32);  // A and B themselves are their big parts in the first sweep where K is at least this (small_of_truncated says why)
constexpr int UNSCALED_EXPONENT = SGEMM_KNOB(UNSCALED_EXPONENT, 100);  // rows and columns with their largest magnitude in [2^-E, 2^(E+1)) are not scaled
constexpr int IN_PIPELINE_SPLIT_PERCENT = SGEMM_KNOB(IN_PIPELINE_SPLIT_PERCENT, 32);  // the pipeline's split makes the GEMM this much slower
constexpr int TENSOR_PERCENT = SGEMM_KNOB(TENSOR_PERCENT, 60);  // the GEMM without a split in its pipeline, in % of the TF32 peak (the notes)
constexpr int PASS_US = SGEMM_KNOB(PASS_US, 3);    // the pass's launch and the GEMM's wait for it, in microseconds (step 30's SPLIT_PASS_US)
constexpr int SWEEP_US = SGEMM_KNOB(SWEEP_US, 1);  // a pass's read of a row's chunk after its first: a trip to device memory, in microseconds
constexpr int PHASES_PERCENT = SGEMM_KNOB(PHASES_PERCENT, 12);  // B read in phases makes the GEMM this much slower: B is copied where the copy costs less (the notes)
constexpr int COPY_PERCENT = SGEMM_KNOB(COPY_PERCENT, 50);  // the aligned copy's pace, in % of the device memory's peak bandwidth (step 38's cudaMemcpy2DAsync)
constexpr int EDGE_LAUNCH_US = SGEMM_KNOB(EDGE_LAUNCH_US, 8);  // microseconds each rectangle beyond the first is charged (its launches and passes, A and B read again)
constexpr int EDGE_GAIN_PERCENT = SGEMM_KNOB(EDGE_GAIN_PERCENT, 3);  // the rectangles must cut the estimated time by this much
constexpr bool PRICE_ONCE = SGEMM_KNOB(PRICE_ONCE, true);  // keep launch's decision per shape (false: price the cut on every call)
constexpr int CUT_CACHE = SGEMM_KNOB(CUT_CACHE, 16);  // shapes whose decisions are kept
static_assert(CUT_CACHE >= 1, "PRICE_ONCE keeps at least one shape's decision (PRICE_ONCE=false keeps none)");
constexpr int TF32_FMAS_PER_SM_CLOCK = 1024;  // an H100 SM's dense TF32 rate (494.7 TFLOPS at 1830 MHz on 132 SMs)
static_assert(MAX_SPLITS >= 1 && MIN_SPLIT_K_TILES >= 1 && MIN_GAIN_PERCENT >= 0 && TILE_GAIN_PERCENT >= 0 && PIECE_OVERHEAD_TILES >= 0 &&
                  L2_BANDWIDTH_RATIO >= 1,
              "at least one piece, of at least one k tile; more pieces only for a gain, never for a loss");
static_assert(MAX_REDUCE_GROUPS >= 1 && (MAX_REDUCE_GROUPS & (MAX_REDUCE_GROUPS - 1)) == 0 && REDUCE_THREADS % MAX_REDUCE_GROUPS == 0 &&
                  REDUCE_LOADS >= 1,
              "a power of two of groups that divides a reduction block's threads, and at least one load at a time");
static_assert(RAW_MIN_K >= 16,
              "A and B truncated err by up to about 32 u of |a b| a product (each small part rounded, 2^-21, their "
              "product dropped, 2^-20), and the sums round: the harness's worst-case bound, 2 (K + 2) u, holds that "
              "with room from K = 16");
static_assert(UNSCALED_EXPONENT >= 0 && UNSCALED_EXPONENT <= 100,
              "an unscaled value (below 2^(E+1)) times a scaled one (below 4), summed over K, stays far below FLT_MAX");
static_assert(PASS_THREADS == 32 || PASS_THREADS == 64 || PASS_THREADS == 128 || PASS_THREADS == 256,
              "the pass works a warp at a time, and a team of its threads (32, 64, 128 or all) takes a row of A");
static_assert(PASS_LOADS >= 1, "each thread of a pass loads at least one value");
static_assert(TUNE_SPLIT * sizeof(float) == 128, "a row of the A tile is one 128-byte swizzle row");
static_assert(BN % WGMMA_M == 0 && BN > NARROW_BN && WGMMA_M % B_BOX == 0,
              "each consumer takes whole 32-column boxes of B; the wide tile is the one with more consumers");
static_assert(NARROW_TILE_PERCENT > 0, "a tile takes some time");
static_assert(BM % 8 == 0 && BM >= 8 && BM <= 256, "wgmma's N is a multiple of 8 up to 256");
static_assert(BM == 128, "the wgmma wrapper below spells out m64n128k8's 64 accumulators");
static_assert(PRODUCER_REGISTERS * 128 + CONSUMER_REGISTERS * 128 * consumers(BN) <= 65536 / threads(BN) / 8 * 8 * threads(BN),
              "setmaxnreg moves registers between warpgroups, never more than the launch gave the block: "
              "65536 / THREADS per thread, in steps of 8 (168 for 384 threads); more, and .inc waits forever");
static_assert(CONSUMER_REGISTERS % 8 == 0 && PRODUCER_REGISTERS % 8 == 0, "setmaxnreg counts are multiples of 8");

constexpr int A_TILE_BYTES = BM * TUNE_SPLIT * sizeof(float);  // [BM][TUNE_SPLIT], 128-byte swizzled
constexpr int B_PHASES_ODD = 4;  // phases of a B whose rows TMA cannot read: 4 ldb is a multiple of 4 floats
// [bn / 32][TUNE_SPLIT][32], swizzled; read in phases, one box of 32 columns more (each phase's
// columns start up to 3 floats before the block's: TMA's boxes start at 16-byte columns).
__host__ __device__ constexpr int b_tile_bytes(int bn, int phases = 1) {
  return TUNE_SPLIT * (bn + (phases > 1 ? B_BOX : 0)) * sizeof(float);
}
__host__ __device__ constexpr int stage_bytes(int bn, int phases = 1) {  // A's big part, A's small part, B
  return 2 * A_TILE_BYTES + b_tile_bytes(bn, phases);
}
constexpr int shared_bytes(int bn, int phases = 1) {  // + barriers, the decision, column factors, largest magnitudes, alignment
  return STAGES * stage_bytes(bn, phases) + 3 * STAGES * 8 + 16 + (BM + 2 * bn) * 4 + 1024;
}
static_assert(A_TILE_BYTES % 1024 == 0 && b_tile_bytes(NARROW_BN) % 1024 == 0 && b_tile_bytes(BN) % 1024 == 0 &&
                  b_tile_bytes(NARROW_BN, B_PHASES_ODD) % 1024 == 0 && b_tile_bytes(BN, B_PHASES_ODD) % 1024 == 0,
              "swizzled tiles start on 1024-byte boundaries (the swizzle repeats every 8 rows of 128 B)");
static_assert(shared_bytes(BN, B_PHASES_ODD) <= sgemm::shared_limit(),
              "a block has at most 99 KB of shared memory on sm_86 and sm_89, 163 KB on sm_80, 227 KB on sm_90: "
              "build with the GPU class's tuning (tunings/)");

// C[row][col] = alpha * acc + beta * C[row][col]; with beta == 0, C is write-only (BLAS
// semantics): NaN or garbage already in C never leaks into the result.
__device__ __forceinline__ void store_c(const sgemm::Problem& p, int row, int col, float acc) {
  float& c = p.C[static_cast<long long>(row) * p.ldc + col];
  c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;
}

// ---- the scales ------------------------------------------------------------------------
// The largest |A[i][k]| of each row i (entry i), written by the pass where A is split once
// (the columns of B are the consumers' since step 34), as float bits: for floats without their sign, the order of
// the bits is the order of the values (an Inf above every finite value, a NaN above an Inf),
// so atomicMax on the bits finds the largest magnitude. An entry holds the launch's number in
// its high 32 bits: an entry left by an earlier launch is smaller than any of this one's, so
// atomicMax replaces it and the entries need no clearing between launches (a memset would be
// one more launch before the GEMM); an entry this launch did not raise (a row of zeros) reads 0.
struct Magnitudes {
  unsigned long long* entries;
  unsigned launch;  // 1, 2, ...
  __device__ unsigned bits(int i) const {
    const unsigned long long e = entries[i];
    return static_cast<unsigned>(e >> 32) == launch ? static_cast<unsigned>(e) : 0u;
  }
  __device__ void raise(int i, unsigned m) const {
    atomicMax(&entries[i], (static_cast<unsigned long long>(launch) << 32) | m);
  }
};
//
// The exponent s of a row's (or column's) largest magnitude m, 2^s <= m < 2^(s+1), clamped to
// [-126, 126] so that 2^-s is a normal float: a row whose largest value is subnormal gets
// -126 (times 2^126, a subnormal becomes a normal number exactly). 0, and so no scaling, for
// a row whose m lies in [2^-UNSCALED_EXPONENT, 2^(UNSCALED_EXPONENT+1)), where step 27's
// split already holds (its products with a scaled partner, below 4, cannot overflow), for a
// row of zeros, and for a row with an Inf or a NaN (each of its results is an Inf or a NaN
// whatever the scale; unscaled, it keeps step 27's handling of them).
__device__ __forceinline__ int scale_exponent(unsigned bits) {
  if (bits == 0 || bits >= 0x7f800000u) return 0;
  const int s = min(max(static_cast<int>(bits >> 23), 1) - 127, 126);
  return abs(s) <= UNSCALED_EXPONENT ? 0 : s;
}
// 2^e as a float, for e in [-126, 127] (a normal number: its exponent field is e + 127).
__device__ __forceinline__ float pow2(int e) { return __int_as_float((e + 127) << 23); }

// x 2^e for e = s + t in [-252, 252]: two multiplications by 2^(e/2) and 2^(e - e/2), both
// normal floats. Both halves have e's sign, so the first product is exact unless the result
// itself is subnormal (then it is rounded twice, in its last place, 2^-149) or overflows.
// Not ldexpf: its general code, inlined for each of a thread's 64 sums, made the epilogue
// 5,000 instructions longer and the kernel 28% slower at 4096^3 (ncu, H100).
__device__ __forceinline__ float times_pow2(float x, int e) { return x * pow2(e / 2) * pow2(e - e / 2); }

constexpr int PASS_WARPS = PASS_THREADS / 32;

// ---- the split -------------------------------------------------------------------------
// The nearest TF32 of x (ties away from zero): add half a TF32 ulp, clear the 13 low bits.
__device__ __forceinline__ float tf32_round(float x) { return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u); }

// x = big + 2^-10 small + (a rest of about 2^-22 |x|): big is x rounded to TF32; small is
// the rest (exact in FP32) times 2^10 (exact: a power of two), rounded to TF32, so the tensor
// core, which reads only the top 19 bits of each word, truncates neither. Unscaled, a small
// part under 2^-126 would be a subnormal number, whose TF32 rounding keeps only its bits at
// 2^-136 and up: scaled, it keeps ten bits below its leading one down to x = 2^-125. (Here
// x has been scaled with its row or column, so it is that small only where it is 2^126
// times smaller than the largest value beside it.) |rest| <= 2^-11 2^e for x in [2^e, 2^(e+1)),
// so the scaled small part is at most half of |x|. x is first clamped to TF32's range, as in
// step 22's careful split: an Inf splits into big = +-TF32_MAX and small = Inf (so Inf times
// any nonzero partner is Inf, and Inf times 0 is NaN, as in FP32), a NaN into a finite big
// and small = NaN, and an x that would round past FLT_MAX into TF32_MAX and an exact rest.
// The scaled rest needs no clamp: below 2^127, it cannot round past TF32_MAX. A non-finite
// small is kept as it is: rounding it by adding to its bits could carry a NaN's all-ones
// payload into the sign bit and leave -0.
constexpr float TF32_MAX = 0x1.ffcp127f;  // (2 - 2^-10) * 2^127, the largest TF32 value
constexpr float SMALL_SCALE = 0x1p10f;    // 2^10: a small part's scale (at most half of the value it comes from)
__device__ __forceinline__ void tf32_split(float x, float& big, float& small) {
  big = tf32_round(fminf(fmaxf(x, -TF32_MAX), TF32_MAX));
  const float rest = (x - big) * SMALL_SCALE;
  small = fabsf(rest) < INFINITY ? tf32_round(rest) : rest;
}

// The small part of x where x itself is the big part (the first sweep's A tiles, and B's values
// in the consumers' registers): the tensor core reads only x's top 19 bits, x truncated to
// TF32, so the small part is the rest, x minus x truncated, exact in FP32 and of x's sign. It is
// below 2^-10 |x| (one-sided: twice tf32_split's bound of 2^-11), and is scaled by 2^10 and
// rounded to TF32 as there, so it stays below |x|. For a finite x only (an Inf would leave
// Inf - Inf, a NaN): a row of A or a column of B with an Inf or a NaN is voted to the second
// sweep, whose tf32_split keeps step 27's handling of them.
__device__ __forceinline__ float small_of_truncated(float x) {
  const float truncated = __uint_as_float(__float_as_uint(x) & 0xffffe000u);
  return tf32_round((x - truncated) * SMALL_SCALE);
}

// The larger of m and |x|, or a NaN where either is one: one FMNMX with its |x| and .NAN
// modifiers (PTX max.NaN), where the largest of the bits without their sign (step 34's,
// by which a NaN also beats an Inf) took two instructions. The consumers keep B's columns'
// largest magnitudes with it in every first sweep: with step 34's two, step 35's split-once
// GEMM ran 4% slower at 4096^3 than with none (the notes).
__device__ __forceinline__ float largest_magnitude(float m, float x) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(m), "f"(fabsf(x)));
  return r;
}

// The pass before the GEMM where A is split once: each row of A is read by one team of TEAM
// threads (a warp, two, four or the whole block, the fewest whose PASS_LOADS loads each
// cover K), in chunks of TEAM PASS_LOADS values. A itself is the GEMM's big part, so the pass
// writes only the small part of each value, small_of_truncated, without the row's factor, to a_small
// ([M][ldw], ldw: K rounded up to 4, so that TMA may read the rows), and raises the row's
// entry of max_bits with its largest magnitude: the GEMM's splitters read it for their vote.
// Where A's rows are not 16-byte aligned for TMA (a_copy not null), it writes each value to an
// aligned copy of A at the same place too, which the GEMM then reads as the big part: one read
// of A, where a copy before the pass would read and write A once more.
// A value's small part needs no factor, so each chunk is read once (step 31's pass read a
// long row twice: for its largest magnitude, then to split it scaled). A row that needs a
// factor, or holds an Inf or a NaN, is voted to the GEMM's second sweep, which splits the A
// tiles itself: its small parts here are never read.
template <int TEAM>
__device__ __forceinline__ void small_parts_of_rows(const sgemm::Problem& p, const Magnitudes& max_bits, float* a_small,
                                                    float* a_copy, int ldw) {
  constexpr int ROWS = PASS_THREADS / TEAM, CHUNK = TEAM * PASS_LOADS;  // rows per block, k per chunk
  const int member = threadIdx.x % TEAM, row = blockIdx.x * ROWS + threadIdx.x / TEAM;
  const bool live = row < p.M;  // a team past the last row still meets its block's barrier
  const float* a = p.A + static_cast<long long>(row) * p.lda;
  float* small = a_small + static_cast<long long>(row) * ldw;
  float* copy = a_copy == nullptr ? nullptr : a_copy + static_cast<long long>(row) * ldw;
  unsigned m = 0;
  for (int k0 = 0; k0 < p.K; k0 += CHUNK) {
    float v[PASS_LOADS];
#pragma unroll
    for (int i = 0; i < PASS_LOADS; ++i) {
      const int k = k0 + TEAM * i + member;  // neighbouring threads on neighbouring k
      v[i] = live && k < p.K ? a[k] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < PASS_LOADS; ++i) {
      const int k = k0 + TEAM * i + member;
      m = max(m, __float_as_uint(v[i]) & 0x7fffffffu);
      if (live && k < p.K) {
        small[k] = small_of_truncated(v[i]);
        if (copy != nullptr) copy[k] = v[i];
      }
    }
  }
  m = __reduce_max_sync(0xffffffffu, m);
  if constexpr (TEAM > 32) {  // the team's warps through shared memory
    __shared__ unsigned warp_max[PASS_WARPS];
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
    __syncthreads();
    const int first = threadIdx.x / TEAM * (TEAM / 32);
    for (int w = 0; w < TEAM / 32; ++w) m = max(m, warp_max[first + w]);
  }
  if (live && member == 0 && m != 0) max_bits.raise(row, m);
}

// A's small parts and its rows' largest magnitudes (and where A is not aligned for TMA, its
// aligned copy), TEAM threads to a row.
template <int TEAM>
__global__ void __launch_bounds__(PASS_THREADS)
    small_parts_of_a_for_sgemm_kernel(sgemm::Problem p, Magnitudes max_bits, float* a_small, float* a_copy, int ldw) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The GEMM may start launching now; its griddepcontrol.wait waits for this whole grid.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  small_parts_of_rows<TEAM>(p, max_bits, a_small, a_copy, ldw);
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// ---- mbarriers and TMA -----------------------------------------------------------------
__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void barrier_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void barrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
// Arrive and announce the bytes the stage's TMA copies will deliver to this barrier.
__device__ __forceinline__ void barrier_expect_bytes(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// Waits until the barrier's phase with this parity has completed.
__device__ __forceinline__ void barrier_wait(uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n @!done bra WAIT;\n}" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// One TMA box of a 2-D tensor (coordinates innermost first) into shared memory; the copy
// signals `bar` with its byte count. Boxes past the tensor's edge are filled with zeros.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap& map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

// ---- wgmma -------------------------------------------------------------------------------
// The descriptor of a K-major operand tile in shared memory with the 128-byte swizzle:
// rows of 128 bytes, 8-row groups 1024 bytes apart (stride byte offset), layout type 1.
// The start address moves 32 bytes per k step of 8 floats inside the swizzled row.
__device__ __forceinline__ uint64_t tile_descriptor(const void* tile, int k_step) {
  const uint64_t start = (smem_addr(tile) + k_step * WGMMA_K * sizeof(float)) & 0x3ffff;
  return (start >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

#define D8(i) "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])

// d[64] (+)= a[4] x tile: 64 x 128 x 8, a from registers, the tile K-major in shared memory.
// ZERO: start from zero instead of adding to d (wgmma's scale-d = 0).
template <bool ZERO>
__device__ __forceinline__ void wgmma_m64n128k8(float (&d)[64], const unsigned (&a)[4], uint64_t tile) {
  asm volatile(
      "{\n .reg .pred add;\n setp.ne.b32 add, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %68, add, 1, 1;\n}"
      : D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(tile), "n"(ZERO ? 0 : 1));
}
#undef D8

// ---- where a consumer thread's values sit --------------------------------------------------
// wgmma's register operand: thread (warp w of its warpgroup, lane = 4 g + t) holds rows
// 16 w + g + 8 h (h = 0, 1) and columns k = t + 4 kh (kh = 0, 1) of the 64 x 8 operand, as
// a[h + 2 kh]; its accumulator d[4 j + 2 h + v] is row 16 w + g + 8 h, column 8 j + 2 t + v.
// The rows of the operand are columns of B (and so of C): which column each row stands for
// is free, and this choice makes the fragment loads from the swizzled B tile hit 32
// different banks: the 8 lanes of one t read columns {4q .. 4q+3, 4q+16 .. 4q+19} of a
// 32-column box, and t and kh pick rows whose swizzle moves them to the other banks.
__device__ __forceinline__ int operand_col(int warp, int h, int g) {  // 0 .. 63 inside the warpgroup's columns
  const int q = 2 * (warp % 2) + h;
  return B_BOX * (warp / 2) + 4 * q + g % 4 + 16 * (g / 4);
}

// Byte offset of B[k][col] (col inside the block's BN columns) in a stage's B tile: boxes of
// [TUNE_SPLIT][32] floats; inside a 128-byte row, 16-byte chunk c sits at c ^ (k % 8).
__device__ __forceinline__ int b_tile_offset(int k, int col) {
  const int box = col / B_BOX, c = col % B_BOX;
  return box * (TUNE_SPLIT * B_BOX * 4) + k * 128 + (((c / 4) ^ (k % 8)) * 16) + (c % 4) * 4;
}

// Where row k of a k tile of B sits in the shared tile when B is read in P phases: phase p
// (rows p, p + P, ...) fills rows p TUNE_SPLIT/P .. (p+1) TUNE_SPLIT/P - 1 of each box.
template <int P>
__host__ __device__ constexpr int b_slot(int k) { return (k % P) * (TUNE_SPLIT / P) + k / P; }

#endif  // sm_90a

// B read in P phases (P = 1: B itself): map p is the matrix of B's rows p, p + P, p + 2P, ...,
// whose stride P ldb is a multiple of 4 floats; it starts at its first row's address rounded
// down to 16 bytes, so its column c + shift[p] is B's column c (shift[p] < 4). The kernel takes
// the maps as four parameters, each a __grid_constant__ map like A's.
struct PhaseMaps {
  CUtensorMap map[4];
  int shift[4];
};
struct PhaseShifts {
  int shift[4];
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

#endif  // sm_90a

// map_a_big is A itself. RAW (where K >= RAW_MIN_K): the first sweep takes the A tile itself as
// its big part. SPLIT_ONCE (RAW too): the first sweep's small parts come from the pass before
// the GEMM (map_a_small), copied with the tile; otherwise the splitters write them in the
// pipeline, as in step 33 (map_a_small is not read). Either way a block whose rows or columns
// need a factor runs a second sweep, whose splitters split the tiles scaled.
// BN: the block's columns of C, the wide tile's (two consumers) or the narrow tile's (one).
template <int BN, bool SPLIT_ONCE, bool RAW, int B_PHASES>
__global__ void __launch_bounds__(threads(BN), 1)
    sgemm_kernel(const __grid_constant__ CUtensorMap map_a_big, const __grid_constant__ CUtensorMap map_a_small,
                 const __grid_constant__ CUtensorMap map_b0, const __grid_constant__ CUtensorMap map_b1,
                 const __grid_constant__ CUtensorMap map_b2, const __grid_constant__ CUtensorMap map_b3,
                 PhaseShifts b_shifts, sgemm::Problem p,
                 int k_tiles_per_split, float* partials, int ld_partials, Magnitudes max_bits) {
  static_assert(!SPLIT_ONCE || RAW, "split once, the pass writes the small part of A itself");
  static_assert(B_PHASES == 1 || B_PHASES == 4, "in four phases a consumer thread's rows of B are all in one phase (k % 4 = t)");
  constexpr int CONSUMERS = consumers(BN), THREADS = threads(BN);
  constexpr int B_TILE_BYTES = b_tile_bytes(BN, B_PHASES), STAGE_BYTES = stage_bytes(BN, B_PHASES);
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char shared_raw[];
  // Swizzled tiles need 1024-byte alignment; the launch adds 1024 bytes of slack.
  unsigned char* shared = shared_raw + ((1024 - smem_addr(shared_raw) % 1024) % 1024);
  auto stage_a = [&](int s) { return shared + s * STAGE_BYTES; };                     // [BM][TUNE_SPLIT], big parts
  auto stage_a_small = [&](int s) { return shared + s * STAGE_BYTES + A_TILE_BYTES; };  // [BM][TUNE_SPLIT]
  auto stage_b = [&](int s) { return shared + s * STAGE_BYTES + 2 * A_TILE_BYTES; };  // [BN/32][TUNE_SPLIT][32]
  uint64_t* full = reinterpret_cast<uint64_t*>(shared + STAGES * STAGE_BYTES);  // TMA landed
  uint64_t* split = full + STAGES;   // the splitters wrote the A tile's small parts (the pipeline's first sweep) or rewrote it as its big part too (a second sweep)
  uint64_t* empty = split + STAGES;  // every consumer (one or two) is done with the stage
  uint64_t* decided = empty + STAGES;  // every thread has voted on a second sweep
  unsigned* second_sweep = reinterpret_cast<unsigned*>(decided + 1);  // the vote: 1 if any thread needs it
  float* col_factor = reinterpret_cast<float*>(decided + 2);  // [BN]: 2^-t of each of the block's columns of B
  unsigned* row_max = reinterpret_cast<unsigned*>(col_factor + BN);  // [BM]: each row's largest magnitude (in the pipeline, in this piece)
  unsigned* col_max = row_max + BM;                                  // [BN]: each column's

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      barrier_init(&full[s], 1);
      barrier_init(&split[s], SPLITTERS);
      barrier_init(&empty[s], 128 * CONSUMERS);
    }
    barrier_init(decided, THREADS);
    *second_sweep = 0;
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  // The block's decision after the first sweep: each thread raises the vote
  // where one of its rows or columns needs a factor, arrives on `decided`, and once every
  // thread has, reads the vote (the arrival releases the thread's writes: row_max, col_max).
  // An mbarrier rather than a named barrier: the three roles arrive from three places.
  auto decide = [&](bool needs) {
    if (needs) atomicOr(second_sweep, 1u);
    barrier_arrive(decided);
    barrier_wait(decided, 0);
    return *reinterpret_cast<volatile unsigned*>(second_sweep) != 0;
  };

  // Blocks run down GROUP_ROWS block rows before moving one block column on, so the blocks
  // on the GPU at one time share their tiles of A and B in L2.
  const int block_rows = sgemm::ceil_div(p.M, BM), block_cols = sgemm::ceil_div(p.N, BN);
  const int group = blockIdx.x / (GROUP_ROWS * block_cols);
  const int group_rows = min(block_rows - group * GROUP_ROWS, GROUP_ROWS);
  const int in_group = blockIdx.x % (GROUP_ROWS * block_cols);
  const int block_row = (group * GROUP_ROWS + in_group % group_rows) * BM;
  const int block_col = (in_group / group_rows) * BN;
  // This block's piece of K (blockIdx.y; one piece, all of K, when partials is null): k tiles
  // k_first .. k_first + k_tiles - 1, the last piece perhaps shorter. Loops below count
  // k_tile from 0, so the ring's stages and phases are the same as in step 25.
  const int k_first = blockIdx.y * k_tiles_per_split;
  const int k_tiles = min(k_tiles_per_split, sgemm::ceil_div(p.K, TUNE_SPLIT) - k_first);

  if (warpgroup == 0) {
    // The producer warpgroup hands its registers to the consumers. Its warp 0 issues every
    // copy (one thread); its warps 1 .. 3, the splitters, turn A tiles into their parts while
    // the consumers multiply the tiles before them: the small parts in the pipeline's first
    // sweep, both parts in a second sweep.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(PRODUCER_REGISTERS));
    // The copies of k tile k_tile into the ring's n-th use (a second sweep copies the k tiles
    // again, into uses k_tiles .. 2 k_tiles-1), once the consumers gave its stage back. Split
    // once, the first sweep copies the pass's small parts of the tile too.
    auto wait_empty = [&](int n) {
      if (n >= STAGES) barrier_wait(&empty[n % STAGES], (n / STAGES - 1) % 2);
    };
    auto copy = [&](int n, int k_tile, bool small_parts) {
      const int s = n % STAGES;
      barrier_expect_bytes(&full[s], (small_parts ? 2 : 1) * A_TILE_BYTES + B_TILE_BYTES);
      const int k0 = (k_first + k_tile) * TUNE_SPLIT;
      tma_load(stage_a(s), map_a_big, k0, block_row, &full[s]);
      if (small_parts) tma_load(stage_a_small(s), map_a_small, k0, block_row, &full[s]);
      // B: each box of 32 columns as B_PHASES boxes of TUNE_SPLIT / B_PHASES rows, phase by
      // phase, at the block's columns in each phase's own (a phase's column c + shift is B's c).
      for (int box = 0; box < B_TILE_BYTES / (TUNE_SPLIT * B_BOX * 4); ++box)
#pragma unroll
        for (int ph = 0; ph < B_PHASES; ++ph)
          tma_load(stage_b(s) + box * (TUNE_SPLIT * B_BOX * 4) + ph * (TUNE_SPLIT / B_PHASES) * 128,
                   ph == 0 ? map_b0 : ph == 1 ? map_b1 : ph == 2 ? map_b2 : map_b3, block_col + box * B_BOX,
                   k0 / B_PHASES, &full[s]);
    };
    if (threadIdx.x < 32) {
      // Warp 0: lane 0 copies (the consumers keep B's columns' largest magnitudes); the whole
      // warp takes part in the block's vote. Split once, the small parts are written by the
      // pass before this grid: wait for it.
      if constexpr (SPLIT_ONCE) asm volatile("griddepcontrol.wait;" ::: "memory");
      auto sweep = [&](int n0, bool small_parts) {
        if (threadIdx.x == 0)
          for (int n = n0; n < n0 + k_tiles; ++n) {
            wait_empty(n);
            copy(n, n - n0, small_parts);
          }
        __syncwarp();
      };
      sweep(0, SPLIT_ONCE);
      if (decide(false)) sweep(k_tiles, false);
    } else {
      // Step 28's splitters, for A alone (the consumers scale B's columns). Split once, the
      // pass has written the first sweep's small parts and each row's largest magnitude: the
      // splitters read the block's rows' from max_bits and vote. In the pipeline no pass runs:
      // the first sweep writes each tile's small parts, unscaled (the tile itself is its big
      // part), and keeps the largest magnitude it saw in each row. Splitter i takes the tile's
      // 16-byte vectors PER i .. PER i + PER-1 (a stride of 11 vectors reaches eight different
      // 16-byte bank groups: no conflicts), which lie in at most three rows (a row is 8
      // vectors): three registers hold their largest magnitudes. Where some row or column of
      // this block's piece needs a factor, a second sweep splits every tile again, scaled (the
      // tiles copied again).
      const int i0 = threadIdx.x - 32;
      constexpr int VECTORS = A_TILE_BYTES / 16;
      if constexpr (SPLIT_ONCE) {
        asm volatile("griddepcontrol.wait;" ::: "memory");  // the pass has written max_bits
        for (int r = i0; r < BM; r += SPLITTERS) row_max[r] = block_row + r < p.M ? max_bits.bits(block_row + r) : 0u;
      } else {
        constexpr int PER = (VECTORS + SPLITTERS - 1) / SPLITTERS;
        static_assert(PER % 2 == 1 && PER < 16, "an odd stride of vectors, within three rows of 8 vectors");
        const int first = i0 * PER, first_row = first / 8;
        for (int r = i0; r < BM; r += SPLITTERS) row_max[r] = 0;
        asm volatile("bar.sync 2, %0;" ::"n"(SPLITTERS) : "memory");  // zeroed before any splitter raises one
        unsigned seen[3] = {};  // rows first_row, first_row + 1, first_row + 2
        for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
          const int s = k_tile % STAGES;
          barrier_wait(&full[s], (k_tile / STAGES) % 2);
          float4* a = reinterpret_cast<float4*>(stage_a(s));
          float4* a_small = reinterpret_cast<float4*>(stage_a_small(s));
#pragma unroll 2
          for (int i = first; i < min(first + PER, VECTORS); ++i) {
            const float4 v = a[i];
            const unsigned m = max(max(__float_as_uint(v.x) & 0x7fffffffu, __float_as_uint(v.y) & 0x7fffffffu),
                                   max(__float_as_uint(v.z) & 0x7fffffffu, __float_as_uint(v.w) & 0x7fffffffu));
            const int r = i / 8 - first_row;
            seen[0] = r == 0 ? max(seen[0], m) : seen[0];
            seen[1] = r == 1 ? max(seen[1], m) : seen[1];
            seen[2] = r == 2 ? max(seen[2], m) : seen[2];
            if constexpr (RAW) {
              a_small[i] = make_float4(small_of_truncated(v.x), small_of_truncated(v.y), small_of_truncated(v.z),
                                       small_of_truncated(v.w));
            } else {  // step 32's split: the tile rewritten as its big part
              float4 big, small;
              tf32_split(v.x, big.x, small.x);
              tf32_split(v.y, big.y, small.y);
              tf32_split(v.z, big.z, small.z);
              tf32_split(v.w, big.w, small.w);
              a[i] = big;
              a_small[i] = small;
            }
          }
          // Make these generic-proxy stores visible to wgmma's (async-proxy) reads.
          asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
          barrier_arrive(&split[s]);
        }
        // Each row's largest magnitude: its (one or two) splitters raise it in shared memory.
        for (int r = 0; r < 3; ++r)
          if (first_row + r < BM && first < VECTORS) atomicMax(&row_max[first_row + r], seen[r]);
        asm volatile("bar.sync 2, %0;" ::"n"(SPLITTERS) : "memory");
      }
      bool needs = false;
      // A row with an Inf or a NaN needs the second sweep too: its first sweep's small parts
      // (Inf - Inf) are NaNs, and its big part, the Inf itself, times a small part of 0 in B
      // would be one more.
      for (int r = i0; r < BM; r += SPLITTERS)
        needs = needs || scale_exponent(row_max[r]) != 0 || (RAW && row_max[r] >= 0x7f800000u);
      if (decide(needs)) {
        // The second sweep: step 28's scaled split, each row's factor from its largest
        // magnitude (written by its splitters before the block's decision).
        for (int n = k_tiles; n < 2 * k_tiles; ++n) {
          const int s = n % STAGES;
          barrier_wait(&full[s], (n / STAGES) % 2);
          float4* a = reinterpret_cast<float4*>(stage_a(s));
          float4* a_small = reinterpret_cast<float4*>(stage_a_small(s));
#pragma unroll 2
          for (int i = i0; i < VECTORS; i += SPLITTERS) {
            float4 v = a[i];
            const float f = pow2(-scale_exponent(row_max[i / 8]));
            v.x *= f, v.y *= f, v.z *= f, v.w *= f;
            float4 big, small;
            tf32_split(v.x, big.x, small.x);
            tf32_split(v.y, big.y, small.y);
            tf32_split(v.z, big.z, small.z);
            tf32_split(v.w, big.w, small.w);
            a[i] = big;
            a_small[i] = small;
          }
          asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
          barrier_arrive(&split[s]);
        }
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CONSUMER_REGISTERS));
  const int consumer = warpgroup - 1;               // which 64 columns of the block
  const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  int frag_offset[2][2];  // [kh][h]: byte offset of this thread's B values at k step 0
#pragma unroll
  for (int kh = 0; kh < 2; ++kh)
#pragma unroll
    for (int h = 0; h < 2; ++h) frag_offset[kh][h] = b_tile_offset(t + 4 * kh, consumer * WGMMA_M + operand_col(warp, h, g));
  // B read in phases: this thread's rows are all in phase t (k = t + 4 kh + 8 step), whose
  // columns lie b_shifts.shift[t] further on in the tile.
  int phase_col[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) phase_col[h] = consumer * WGMMA_M + operand_col(warp, h, g) + (B_PHASES > 1 ? b_shifts.shift[t] : 0);
  // The columns' factors (col_factor, in shared memory: two registers held through the loop
  // made it spill) are read in the second sweep only, which sets them: the first sweep's are 1
  // in either place (step 34 set them to 1 here; step 33 read them split once, from its pass).

  float acc[64];           // this thread's part of C^T (big x big), summed in FP32 over the k tiles
  float d[64];             // wgmma's accumulator for one k tile's big x big
  float d_small[64];       // wgmma's accumulator for the two products with a small part, 2^10 too large, all k tiles
  float seen[2] = {};      // in the first sweep, the largest magnitudes of this thread's two columns of B (a NaN, where one was seen)
  // One sweep over the piece's k tiles, the ring's uses n0 .. n0 + k_tiles - 1. In the first
  // sweep (n0 = 0) the A tile is its own big part, untouched by the splitters. Split once, TMA
  // brings its small parts too: nothing to wait for. In the pipeline the splitters write its
  // small parts (raw): two of the three products need only TMA's copies. FIRST (a
  // std::bool_constant) marks the first sweep, compiled apart from the second.
  auto sweep = [&](int n0, auto FIRST) {
  constexpr bool first = decltype(FIRST)::value, raw = RAW && first && !SPLIT_ONCE;
  constexpr bool from_pass = SPLIT_ONCE && first;
  constexpr bool raw_b = RAW && first;  // B's values their own big parts
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = d_small[i] = 0.0f;
  for (int n = n0; n < n0 + k_tiles; ++n) {
    const int s = n % STAGES;
    const unsigned parity = (n / STAGES) % 2;
    // `split` completes a phase only where the splitters work on a tile: split once, not in
    // the first sweep, so there a second sweep's phases count from its own first use.
    const unsigned split_parity = SPLIT_ONCE ? ((n - n0) / STAGES) % 2 : parity;
    barrier_wait(&full[s], parity);  // A (or its two parts) and B have landed

    // B^T's fragments, per k step. In the first sweep with RAW, each value is its own big part
    // (the tensor core truncates the register) and only its small part is computed; elsewhere
    // each value, times its column's factor, is split in registers into big and small parts.
    unsigned b_big[K_STEPS][4], b_small[K_STEPS][4];
    const unsigned char* b_tile = stage_b(s);
    float factor[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) factor[h] = first ? 1.0f : col_factor[consumer * WGMMA_M + operand_col(warp, h, g)];
#pragma unroll
    for (int step = 0; step < K_STEPS; ++step)
#pragma unroll
      for (int kh = 0; kh < 2; ++kh)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          // k = 8 step + t + 4 kh: 8 rows further per step, the same swizzle phase (k % 8). Read
          // in phases, row k is at b_slot(k) (for P = 4, rows 8 t + kh + 2 step), and column c
          // at c + shift: all of a thread's rows are in phase t.
          const int k = WGMMA_K * step + t + 4 * kh;
          const float b =
              (B_PHASES == 1 ? *reinterpret_cast<const float*>(b_tile + frag_offset[kh][h] + step * WGMMA_K * 128)
                             : *reinterpret_cast<const float*>(b_tile + b_tile_offset(b_slot<B_PHASES>(k), phase_col[h]))) *
              factor[h];
          if constexpr (first) seen[h] = largest_magnitude(seen[h], b);
          if constexpr (raw_b) {
            b_big[step][h + 2 * kh] = __float_as_uint(b);
            b_small[step][h + 2 * kh] = __float_as_uint(small_of_truncated(b));
          } else {
            float big, small;
            tf32_split(b, big, small);
            b_big[step][h + 2 * kh] = __float_as_uint(big);
            b_small[step][h + 2 * kh] = __float_as_uint(small);
          }
        }

    // The second sweep's splitters (and in the pipeline, step 32's where K < RAW_MIN_K)
    // rewrite the A tile itself as its big part: wait for them.
    if constexpr (!from_pass && !raw) barrier_wait(&split[s], split_parity);

    // The two products with a small part into d_small, which runs on over the k tiles (its
    // rounding errors are 2^-10 of the result's); big x big into d, from zero. In the first
    // sweep of the pipeline, big x big and B's small part times A's big part first: they read
    // the tile as TMA left it, while the splitters write A's small part for the third product.
    // Elsewhere (split once, the small part is there from the start) step 32's order (an order that switched accumulators between the groups, d_small, d, d_small,
    // ran the split-once GEMM 17% slower at 4096^3: the notes).
    wgmma_fence();
    if constexpr (raw) {
      wgmma_m64n128k8<true>(d, b_big[0], tile_descriptor(stage_a(s), 0));
#pragma unroll
      for (int step = 1; step < K_STEPS; ++step) wgmma_m64n128k8<false>(d, b_big[step], tile_descriptor(stage_a(s), step));
    }
#pragma unroll
    for (int step = 0; step < K_STEPS; ++step)
      wgmma_m64n128k8<false>(d_small, b_small[step], tile_descriptor(stage_a(s), step));
    if constexpr (raw) {
      barrier_wait(&split[s], split_parity);  // the splitters have written A's small part
      wgmma_fence();  // after the wait's loop, as before any wgmma (else ptxas inserts one, C7519)
    }
#pragma unroll
    for (int step = 0; step < K_STEPS; ++step)
      wgmma_m64n128k8<false>(d_small, b_big[step], tile_descriptor(stage_a_small(s), step));
    if constexpr (!raw) {
      wgmma_m64n128k8<true>(d, b_big[0], tile_descriptor(stage_a(s), 0));
#pragma unroll
      for (int step = 1; step < K_STEPS; ++step) wgmma_m64n128k8<false>(d, b_big[step], tile_descriptor(stage_a(s), step));
    }
    wgmma_commit();
    wgmma_wait_all();
    barrier_arrive(&empty[s]);  // the stage may be refilled

#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += d[i];  // FP32, round to nearest
  }
  };
  sweep(0, std::true_type{});
  // A second sweep only where some row or column of this block's piece needs a factor (the
  // splitters have written row_max, the consumers col_max, by then), with the columns'
  // factors. A column's values lie with the four threads t = 0 .. 3 of its g (lanes 4 g + t):
  // two shuffles give each of them the column's largest magnitude.
  bool scaled = false;
  {
    bool needs = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      unsigned m = __float_as_uint(seen[h]);
      m = max(m, __shfl_xor_sync(0xffffffffu, m, 1));
      m = max(m, __shfl_xor_sync(0xffffffffu, m, 2));
      if (t == 0) col_max[consumer * WGMMA_M + operand_col(warp, h, g)] = m;
      // A column with an Inf or a NaN needs the second sweep too where its first sweep took B
      // itself as its big part (RAW): its small parts there are NaNs, like A's rows'.
      needs = needs || scale_exponent(m) != 0 || (RAW && m >= 0x7f800000u);
    }
    scaled = decide(needs);
    if (scaled) {
      if (threadIdx.x % 128 < WGMMA_M) {
        const int c = consumer * WGMMA_M + threadIdx.x % 128;
        col_factor[c] = pow2(-scale_exponent(col_max[c]));
      }
      asm volatile("bar.sync 1, %0;" ::"n"(128 * CONSUMERS) : "memory");
      sweep(k_tiles, std::false_type{});
    }
  }

  // The reduction may start launching: its blocks wait (griddepcontrol.wait) for this whole
  // grid to finish and its stores to be visible before they read a partial sum.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");

  // The small parts' products, scaled back once (the product exact unless it is subnormal;
  // the add rounds once).
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] += d_small[i] * (1.0f / SMALL_SCALE);

  // acc holds C^T: d[4 j + 2 h + v] is column operand_col(warp, h, g) and row 8 j + 2 t + v.
  // One piece of K: the raw sums (no alpha, no beta) go to the piece's slice of partials,
  // [M][ld_partials], columns up to ld_partials (N rounded up to 4: zeros past N) so that
  // the reduction reads only what was written. All of K: C itself, as in step 25. Where the
  // sums go, and alpha and beta, are the same for every sum of the block: they are chosen once,
  // and each case gets its own loop (in the unscaled beta-0 one a sum is a multiply, a predicate
  // and a store). Steps 25-37 chose per sum: 3,161 instructions of code from the first store to
  // the last, read once per block from a cold instruction cache (the notes).
  const bool to_slice = partials != nullptr;
  float* const out = to_slice ? partials + std::size_t(blockIdx.y) * p.M * ld_partials : p.C;
  const long long ld = to_slice ? ld_partials : p.ldc;
  const int cols = to_slice ? ld_partials : p.N;
  const float alpha = to_slice ? 1.0f : p.alpha, beta = to_slice ? 0.0f : p.beta;
  const int row0 = block_row + 2 * t, col0 = block_col + consumer * WGMMA_M;
  // Each sum is multiplied by 2^(s_row + t_col) where the block ran a second sweep. The
  // exponents of this thread's 32 rows and 2 columns are read before any store: for all the
  // compiler knows, a store to C could change them, and it would read them again for every
  // sum. They are the block's (row_max, col_max: split once, the rows' from the pass).
  int row_exponent[BM / 8][2] = {};
  int col_exp[2] = {};
  if (scaled) {
#pragma unroll
    for (int h = 0; h < 2; ++h) col_exp[h] = scale_exponent(col_max[consumer * WGMMA_M + operand_col(warp, h, g)]);
#pragma unroll
    for (int j = 0; j < BM / 8; ++j)
#pragma unroll
      for (int v = 0; v < 2; ++v) row_exponent[j][v] = scale_exponent(row_max[8 * j + 2 * t + v]);
  }
  // SCALED and BETA_ZERO (std::bool_constant): the four loops, compiled apart. A thread's two
  // columns are 4 apart (operand_col: h adds 4), so one pointer per row serves both (the second
  // store at +16 bytes); the two rows' pointers step 8 rows at a time; each store's predicate is
  // its row's test combined with its column's, tested once.
  auto store = [&](auto SCALED, auto BETA_ZERO) {
    const int col = col0 + operand_col(warp, 0, g);
    const bool col_in[2] = {col < cols, col + 4 < cols};
    const int rows_left = p.M - row0;  // row 8 j + v of this thread's is in C where 8 j + v < rows_left
    float* at[2] = {out + row0 * ld + col, out + (row0 + 1) * ld + col};  // rows row0 + 8 j + v, v = 0, 1
#pragma unroll
    for (int j = 0; j < BM / 8; ++j) {
#pragma unroll
      for (int v = 0; v < 2; ++v)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          if (!(8 * j + v < rows_left && col_in[h])) continue;
          float sum = acc[4 * j + 2 * h + v];
          if constexpr (decltype(SCALED)::value) sum = times_pow2(sum, row_exponent[j][v] + col_exp[h]);
          float& c = at[v][4 * h];
          c = decltype(BETA_ZERO)::value ? alpha * sum : alpha * sum + beta * c;  // beta 0: C is write-only
        }
      at[0] += 8 * ld;
      at[1] += 8 * ld;
    }
  };
  if (scaled) {
    if (beta == 0.0f) store(std::true_type{}, std::true_type{});
    else store(std::true_type{}, std::false_type{});
  } else {
    if (beta == 0.0f) store(std::false_type{}, std::true_type{});
    else store(std::false_type{}, std::false_type{});
  }
#else
  // Built without sm_90a (wgmma, TMA and setmaxnreg do not exist elsewhere): the harness
  // refuses to run this step on such GPUs; if the kernel is reached anyway, fail loudly.
  __trap();
#endif
}

// C = alpha * (piece 0 + piece 1 + ... + piece splits-1) + beta * C, four columns of one row
// per vector, as in step 15. The pieces are added in the same order on every run, so the
// result has the same bits every time (float atomics would add them in whatever order the
// blocks finish; `groups` depends on the GPU's SMs, so the bits do too). Where C has few
// vectors for the GPU (64 x 64 x 65536: 1,024 vectors, one 128 x 64 tile in 121 pieces), a
// vector's pieces are shared by `groups` threads of a block (a power of two up to
// MAX_REDUCE_GROUPS), each adding a run of consecutive pieces in registers, and the first
// group then adds the runs in order through shared memory. Each thread reads REDUCE_LOADS
// pieces before it adds any, so that many loads are in flight (the order of the adds is
// unchanged by that).
__global__ void __launch_bounds__(REDUCE_THREADS)
    sgemm_kernel_split_reduce(sgemm::Problem p, int splits, int groups, const float* partials, int ld_partials) {
  __shared__ float4 runs[REDUCE_THREADS];  // [groups][vectors_per_block]
  const int vectors_per_block = REDUCE_THREADS / groups;
  const int lane = threadIdx.x % vectors_per_block, group = threadIdx.x / vectors_per_block;
  const int vectors_per_row = ld_partials / 4;
  const long long vector = static_cast<long long>(blockIdx.x) * vectors_per_block + lane;
  const bool inside = vector < static_cast<long long>(p.M) * vectors_per_row;
  if (groups == 1 && !inside) return;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");  // the GEMM's partial sums are all written
#endif
  const int run = (splits + groups - 1) / groups;  // pieces a group adds (the last groups' runs may be shorter, or empty)
  const int row = static_cast<int>(vector / vectors_per_row), col = static_cast<int>(vector % vectors_per_row) * 4;
  const std::size_t slice_floats = std::size_t(p.M) * ld_partials;
  float4 sum = {};
  const int first = group * run, last = first + run < splits ? first + run : splits;
  if (inside && first < last) {
    const float* piece = partials + std::size_t(row) * ld_partials + col;
    sum = *reinterpret_cast<const float4*>(piece + first * slice_floats);
    for (int z = first + 1; z < last; z += REDUCE_LOADS) {
      float4 v[REDUCE_LOADS];
#pragma unroll
      for (int i = 0; i < REDUCE_LOADS; ++i)
        if (z + i < last) v[i] = *reinterpret_cast<const float4*>(piece + (z + i) * slice_floats);
#pragma unroll
      for (int i = 0; i < REDUCE_LOADS; ++i)
        if (z + i < last) sum.x += v[i].x, sum.y += v[i].y, sum.z += v[i].z, sum.w += v[i].w;
    }
  }
  if (groups > 1) {
    runs[threadIdx.x] = sum;
    __syncthreads();
    if (group != 0 || !inside) return;
    for (int g = 1; g * run < splits; ++g) {
      const float4 v = runs[g * vectors_per_block + lane];
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
  }
  const float out[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
  for (int v = 0; v < 4; ++v)
    if (col + v < p.N) store_c(p, row, col + v, out[v]);
}

// ---- host side -------------------------------------------------------------------------------

// cuTensorMapEncodeTiled lives in the driver library; the runtime hands out its address, so
// the step needs no -lcuda.
static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || f == nullptr)
      throw sgemm::CudaError("cuTensorMapEncodeTiled is not available from this driver");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// A row-major [rows][cols] matrix with row stride ld, read in boxes of [box_rows][box_cols]
// with the 128-byte swizzle; boxes past the edges are zero-filled.
static CUtensorMap tensor_map(const float* base, int rows, int cols, int ld, int box_rows, int box_cols) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(ld) * sizeof(float)};
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims, strides,
                                    box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw sgemm::CudaError("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r));
  return map;
}

// TMA reads global memory at 16-byte-aligned bases and row strides. A matrix that is not
// (a row stride that is no multiple of 4 floats, or a base off by a few floats) is first
// copied into an aligned workspace, allocated once and grown when needed.
static const float* aligned_operand(const float* m, int rows, int cols, int& ld, int which, cudaStream_t stream) {
  if (reinterpret_cast<uintptr_t>(m) % 16 == 0 && ld % 4 == 0) return m;
  static float* workspace[2] = {};
  static size_t capacity[2] = {};
  const int aligned_ld = (cols + 3) / 4 * 4;
  const size_t bytes = size_t(rows) * aligned_ld * sizeof(float);
  if (bytes > capacity[which]) {
    if (workspace[which] != nullptr) {
      CUDA_CHECK(cudaStreamSynchronize(stream));  // a rectangle before may still be reading it
      CUDA_CHECK(cudaFree(workspace[which]));
    }
    CUDA_CHECK(cudaMalloc(&workspace[which], bytes));
    capacity[which] = bytes;
  }
  CUDA_CHECK(cudaMemcpy2DAsync(workspace[which], aligned_ld * sizeof(float), m, size_t(ld) * sizeof(float),
                               cols * sizeof(float), rows, cudaMemcpyDeviceToDevice, stream));
  ld = aligned_ld;
  return workspace[which];
}

// B as phases (PhaseMaps): where B's rows are 16-byte aligned, one map of B itself (1); where
// not, 4 maps of every fourth row, each with the stride 4 ldb (a multiple of 4 floats for any
// ldb), based at its first row rounded down to 16 bytes (4), or B copied to an aligned
// workspace first, as in step 38 (0). The phases cost the GEMM PHASES_PERCENT of its time (a
// box of columns more and four boxes of 8 rows for each of 32, and consumers' reads that
// collide in shared memory: the notes); the copy reads and writes K x N floats at COPY_PERCENT
// of the device memory's bandwidth, plus its launch (PASS_US). The phases are taken where they
// cost less, and where K < 4 never (a phase would have no rows). SGEMM_B (an environment
// variable: phases or copy) forces one, for the tests and for re-measuring the rule.
int b_phases(const sgemm::Problem& p, double gemm_us) {
  if (reinterpret_cast<uintptr_t>(p.B) % 16 == 0 && p.ldb % 4 == 0) return 1;
  if (p.K < B_PHASES_ODD) return 0;
  static const char* forced = std::getenv("SGEMM_B");
  if (forced != nullptr) {
    if (std::strcmp(forced, "phases") == 0) return B_PHASES_ODD;
    if (std::strcmp(forced, "copy") == 0) return 0;
    std::fprintf(stderr, "SGEMM_B=%s: B is read in phases or copied (phases, copy)\n", forced);
    std::exit(2);
  }
  const double copy_us = 8.0 * p.K * p.N / (sgemm::gpu().dram_bytes_per_us * COPY_PERCENT / 100.0) + PASS_US;
  return copy_us * 100 > gemm_us * PHASES_PERCENT ? B_PHASES_ODD : 0;
}
PhaseMaps phase_maps(const float* b, int rows, int cols, int ld, int phases) {
  PhaseMaps maps = {};
  for (int ph = 0; ph < phases; ++ph) {
    const float* first = b + std::size_t(ph) * ld;
    maps.shift[ph] = static_cast<int>(reinterpret_cast<uintptr_t>(first) % 16 / sizeof(float));
    const int phase_rows = (rows - ph + phases - 1) / phases;
    maps.map[ph] = tensor_map(first - maps.shift[ph], phase_rows, cols + maps.shift[ph], phases * ld,
                              TUNE_SPLIT / phases, B_BOX);
  }
  return maps;
}

// One k tile of one block of the tile BM x bn, in microseconds: BM x BN x TUNE_SPLIT FMAs of
// the wide tile, three times (3xTF32), at the SM's TF32 tensor rate, about 0.78 us on an H100
// at 1980 MHz; the narrow tile's NARROW_TILE_PERCENT of that. Half the work, but more than half
// the time: its one consumer waits for its own wgmmas, where two consumers fill each other's
// waits (the notes).
double tile_us(int bn) {
  const double wide = 3.0 * BM * BN * TUNE_SPLIT / (double(TF32_FMAS_PER_SM_CLOCK) * sgemm::gpu().clock_mhz);
  return bn == BN ? wide : wide * NARROW_TILE_PERCENT / 100.0;
}

// The partial sums of `pieces` pieces, in tile-times: M x N floats per piece written, then
// read back by the reduction. What fits in half the L2 moves at L2_BANDWIDTH_RATIO times the
// device memory's peak bandwidth, the rest at that peak (step 15's model).
double partial_sums_tile_times(const sgemm::Problem& p, int pieces, int bn) {
  const sgemm::Gpu& gpu = sgemm::gpu();
  const double bytes = double(pieces) * p.M * p.N * sizeof(float), in_l2 = std::min(bytes, 0.5 * gpu.l2_bytes);
  return 2.0 * (in_l2 / L2_BANDWIDTH_RATIO + (bytes - in_l2)) / gpu.dram_bytes_per_us / tile_us(bn);
}

// How many pieces K is cut into, from the shape. With T output tiles and S pieces of
// ceil(k_tiles / S) k tiles each, T x S blocks (one per SM) run in ceil(T x S / SMs) waves,
// each as long as a piece's k tiles plus PIECE_OVERHEAD_TILES; pieces beyond one add their
// partial sums' traffic. More pieces are taken only where they cut that estimate by
// MIN_GAIN_PERCENT; each piece keeps at least MIN_SPLIT_K_TILES k tiles.
double tile_times(const sgemm::Problem& p, int tiles, int splits, int bn) {
  const int slots = sgemm::gpu().sm_count;  // one block per SM: its shared memory
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  const long long per_piece = sgemm::ceil_div(k_tiles, splits);
  const int pieces = sgemm::ceil_div(k_tiles, static_cast<int>(per_piece));
  const long long blocks = static_cast<long long>(tiles) * pieces;
  return double((blocks + slots - 1) / slots * (per_piece + PIECE_OVERHEAD_TILES)) +
         (pieces > 1 ? partial_sums_tile_times(p, pieces, bn) : 0.0);
}
int choose_splits(const sgemm::Problem& p, int tiles, int bn) {
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  const int most = std::min(MAX_SPLITS, std::max(1, k_tiles / MIN_SPLIT_K_TILES));
  int best = 1;
  for (int splits = 2; splits <= most; ++splits)
    if (tile_times(p, tiles, splits, bn) * (100 + MIN_GAIN_PERCENT) <= tile_times(p, tiles, best, bn) * 100) best = splits;
  return best;
}

// The threads of the pass that take one row of A: 32, 64, 128 or PASS_THREADS, the fewest
// whose PASS_LOADS loads each cover K.
int team_size(int k) {
  int team = 32;
  while (team < PASS_THREADS && team * PASS_LOADS < k) team *= 2;
  return team;
}

// Where A is split, and the GEMM's estimated time with it. In the pipeline (step 28) the GEMM
// takes IN_PIPELINE_SPLIT_PERCENT longer (measured on step 27: the notes), and no pass runs
// before it; once (step 29), the pass before the GEMM reads A and writes its small part,
// 8 MK bytes at the device memory's bandwidth, plus its launch (PASS_US), and where a row is
// longer than one chunk, its team reads the chunks one after the other: SWEEP_US for each
// chunk after the first (a few rows of a long K wait on these trips). The GEMM's time is the
// estimate of choose_splits in tile-times, at TENSOR_PERCENT of the TF32 peak. Once wins where
// C has many block columns (each value of A would be split once per block column) and the
// GEMM is long next to the writes. Where K < RAW_MIN_K, A is split in the pipeline (step 32's
// split): the pass writes only the small part of A itself. SGEMM_SPLIT (an environment
// variable: pipeline or once) forces one where K allows, for the tests and for re-measuring
// the rule on a reader's own shapes; the estimate is then the forced place's.
struct Place {
  bool once;
  double us;  // the pass (split once) and the GEMM
};
Place split_place(const sgemm::Problem& p, int tiles, int splits, int bn) {
  const double gemm_us = tile_times(p, tiles, splits, bn) * tile_us(bn) * 100.0 / TENSOR_PERCENT;
  const int chunks = sgemm::ceil_div(p.K, team_size(p.K) * PASS_LOADS);
  const double bytes = 8.0 * p.M * p.K;
  const double pass_us = bytes / sgemm::gpu().dram_bytes_per_us + PASS_US + (chunks - 1) * SWEEP_US;
  const Place once = {true, pass_us + gemm_us}, pipeline = {false, gemm_us * (100 + IN_PIPELINE_SPLIT_PERCENT) / 100.0};
  static const char* forced = std::getenv("SGEMM_SPLIT");
  if (forced != nullptr) {
    if (std::strcmp(forced, "once") == 0 || std::strcmp(forced, "pipeline") == 0)
      return std::strcmp(forced, "once") == 0 && p.K >= RAW_MIN_K ? once : pipeline;
    std::fprintf(stderr, "SGEMM_SPLIT=%s: the places are pipeline and once\n", forced);
    std::exit(2);
  }
  if (p.K < RAW_MIN_K) return pipeline;
  return pass_us < gemm_us * IN_PIPELINE_SPLIT_PERCENT / 100.0 ? once : pipeline;
}

// The block tile: BM x BN (two consumers) or BM x NARROW_BN (one), each with the pieces of K
// and the place of A's split its own estimate chooses. The narrow tile runs where its estimate
// beats the wide tile's by TILE_GAIN_PERCENT (steps 37-39: MIN_GAIN_PERCENT, the margin more
// pieces of K must win by, as in step 21's rule): where N is at most 64 (the wide tile's second
// consumer would multiply zeros), and where C has too few wide tiles for the SMs and K too few
// k tiles to cut into pieces instead. SGEMM_TILE (an environment variable: 128x128 or 128x64)
// forces one, for the tests and for comparing the tiles on a reader's own shapes.
struct Plan {
  int bn, tiles, k_tiles_per_split, splits;
  Place place;
};
Plan plan_for(const sgemm::Problem& p, int bn) {
  Plan plan;
  plan.bn = bn;
  plan.tiles = sgemm::ceil_div(p.M, BM) * sgemm::ceil_div(p.N, bn);
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  plan.k_tiles_per_split = sgemm::ceil_div(k_tiles, choose_splits(p, plan.tiles, bn));
  plan.splits = sgemm::ceil_div(k_tiles, plan.k_tiles_per_split);  // no piece left empty
  plan.place = split_place(p, plan.tiles, plan.splits, bn);
  return plan;
}
std::string tile_name(int bn) { return std::to_string(BM) + "x" + std::to_string(bn); }
Plan choose_tile(const sgemm::Problem& p) {
  const Plan wide = plan_for(p, BN), narrow = plan_for(p, NARROW_BN);
  static const char* forced = std::getenv("SGEMM_TILE");
  if (forced != nullptr) {
    if (tile_name(BN) == forced) return wide;
    if (tile_name(NARROW_BN) == forced) return narrow;
    std::fprintf(stderr, "SGEMM_TILE=%s: the tiles are %s and %s\n", forced, tile_name(BN).c_str(),
                 tile_name(NARROW_BN).c_str());
    std::exit(2);
  }
  return narrow.place.us * (100 + TILE_GAIN_PERCENT) <= wide.place.us * 100 ? narrow : wide;
}

// The partial sums' workspace: allocated on the first call that needs it and grown only when
// a later call needs more, so a timed run of a shape seen before allocates nothing.
float* partials_workspace(std::size_t floats, cudaStream_t stream) {
  static float* buffer = nullptr;
  static std::size_t capacity = 0;  // floats
  if (floats > capacity) {
    if (buffer) {
      CUDA_CHECK(cudaStreamSynchronize(stream));  // the previous call may still be reading it
      CUDA_CHECK(cudaFree(buffer));
    }
    CUDA_CHECK(cudaMalloc(&buffer, floats * sizeof(float)));
    capacity = floats;
  }
  return buffer;
}

// The largest magnitudes' workspace (M + N entries), grown like the partial sums', cleared
// only when it is new and when the launch number would wrap around.
Magnitudes magnitudes_workspace(std::size_t entries, cudaStream_t stream) {
  static unsigned long long* buffer = nullptr;
  static std::size_t capacity = 0;
  static unsigned launches = 0;
  if (entries > capacity || launches == ~0u) {
    if (entries > capacity) {
      if (buffer) {
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaFree(buffer));
      }
      CUDA_CHECK(cudaMalloc(&buffer, entries * sizeof(unsigned long long)));
      capacity = entries;
    }
    CUDA_CHECK(cudaMemsetAsync(buffer, 0, capacity * sizeof(unsigned long long), stream));
    launches = 0;
  }
  return {buffer, ++launches};
}

// A's small parts, [M][ldw], grown like the partial sums'.
float* split_workspace(std::size_t floats, cudaStream_t stream) {
  static float* buffer = nullptr;
  static std::size_t capacity = 0;  // floats
  if (floats > capacity) {
    if (buffer) {
      CUDA_CHECK(cudaStreamSynchronize(stream));  // the previous call may still be reading it
      CUDA_CHECK(cudaFree(buffer));
    }
    CUDA_CHECK(cudaMalloc(&buffer, floats * sizeof(float)));
    capacity = floats;
  }
  return buffer;
}

// A programmatic dependent launch: the kernel may start while the one before it in the stream
// is still running, and waits for it with griddepcontrol.wait.
template <typename... Params, typename... Args>
void launch_after_previous(void (*kernel)(Params...), dim3 grid, dim3 block, int shared_bytes, cudaStream_t stream,
                           Args... args) {
  cudaLaunchAttribute overlap = {};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &overlap;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
}

// The path of the last launch_with, for launch's rectangles to name.
std::string last_path;

template <int TILE_BN>
void launch_with(const sgemm::Problem& p, const Plan& plan, cudaStream_t stream) {
  const int tiles = plan.tiles, k_tiles_per_split = plan.k_tiles_per_split, splits = plan.splits;
  const bool once = plan.place.once;
  static std::string path;  // took_path keeps the pointer
  const int phases = b_phases(p, plan.place.us);
  path = std::string(splits == 1 ? "whole-tiles/" : "split-K/") + (once ? "split-once/" : "in-pipeline/") + tile_name(TILE_BN) +
         (phases > 1 ? "/B-in-" + std::to_string(phases) + "-phases" : "");
  sgemm::took_path(path.c_str(), splits);
  last_path = path;
  int lda = p.lda, ldb = p.ldb;
  // B where it lies, in phases where its rows are not aligned (step 38 copied it first).
  const float* b = phases == 0 ? aligned_operand(p.B, p.K, p.N, ldb, 1, stream) : p.B;
  // Split once: the pass writes A's small parts and every row's largest magnitude (the
  // consumers keep B's columns'), and where A's rows are not aligned for TMA, A's aligned copy
  // as well. In the pipeline no pass runs: A is copied to an aligned workspace where it needs
  // one, and each block finds its own rows' and columns' largest magnitudes as its first sweep
  // goes. Either way, A itself is the big part TMA reads.
  Magnitudes max_bits = {};
  CUtensorMap map_a, map_a_small;  // boxes [BM][TUNE_SPLIT]
  if (once) {
    max_bits = magnitudes_workspace(p.M, stream);
    // The small parts (and A's copy) row by row, K rounded up to 4 (TMA's 16-byte row stride).
    const int ldw = sgemm::ceil_div(p.K, 4) * 4;
    const bool aligned = reinterpret_cast<uintptr_t>(p.A) % 16 == 0 && p.lda % 4 == 0;
    float* a_small = split_workspace((aligned ? 1 : 2) * std::size_t(p.M) * ldw, stream);
    float* a_copy = aligned ? nullptr : a_small + std::size_t(p.M) * ldw;
    const int team = team_size(p.K);
    auto* pass = team == 32   ? small_parts_of_a_for_sgemm_kernel<32>
                 : team == 64  ? small_parts_of_a_for_sgemm_kernel<64>
                 : team == 128 ? small_parts_of_a_for_sgemm_kernel<128>
                               : small_parts_of_a_for_sgemm_kernel<PASS_THREADS>;
    pass<<<sgemm::ceil_div(p.M, PASS_THREADS / team), PASS_THREADS, 0, stream>>>(p, max_bits, a_small, a_copy, ldw);
    map_a = aligned ? tensor_map(p.A, p.M, p.K, lda, BM, TUNE_SPLIT) : tensor_map(a_copy, p.M, p.K, ldw, BM, TUNE_SPLIT);
    map_a_small = tensor_map(a_small, p.M, p.K, ldw, BM, TUNE_SPLIT);
  } else {
    const float* a = aligned_operand(p.A, p.M, p.K, lda, 0, stream);
    map_a = map_a_small = tensor_map(a, p.M, p.K, lda, BM, TUNE_SPLIT);  // the pipeline reads no map_a_small
  }
  const PhaseMaps maps_b = phase_maps(b, p.K, p.N, ldb, std::max(phases, 1));  // boxes [TUNE_SPLIT / P][32]
  const PhaseShifts shifts = {{maps_b.shift[0], maps_b.shift[1], maps_b.shift[2], maps_b.shift[3]}};
  // Where K is short, the raw big part's error would show against an FP32 dot product's
  // (small_of_truncated): step 32's split in the pipeline there (split_place never picks once).
  auto kernel = [&]<int P>() {
    return once                ? sgemm_kernel<TILE_BN, true, true, P>
           : p.K >= RAW_MIN_K ? sgemm_kernel<TILE_BN, false, true, P>
                              : sgemm_kernel<TILE_BN, false, false, P>;
  };
  auto* gemm = phases == B_PHASES_ODD ? kernel.template operator()<B_PHASES_ODD>() : kernel.template operator()<1>();
  const int SHARED_BYTES = shared_bytes(TILE_BN, std::max(phases, 1));
  constexpr int THREADS = threads(TILE_BN);
  CUDA_CHECK(cudaFuncSetAttribute(gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
  const int ld_partials = sgemm::ceil_div(p.N, 4) * 4;
  float* partials = splits == 1 ? nullptr : partials_workspace(std::size_t(splits) * p.M * ld_partials, stream);
  // Split once: the GEMM as a programmatic dependent launch of the pass (griddepcontrol.wait
  // in the kernel). In the pipeline, an ordinary launch: nothing in the stream before it may
  // still be writing A or B when its first copies start.
  if (once)
    launch_after_previous(gemm, dim3(tiles, splits), dim3(THREADS), SHARED_BYTES, stream, map_a, map_a_small, maps_b.map[0],
                          maps_b.map[1], maps_b.map[2], maps_b.map[3], shifts,
                          p, k_tiles_per_split, partials, splits == 1 ? 0 : ld_partials, max_bits);
  else
    gemm<<<dim3(tiles, splits), THREADS, SHARED_BYTES, stream>>>(map_a, map_a_small, maps_b.map[0], maps_b.map[1], maps_b.map[2],
                                                                 maps_b.map[3], shifts, p, k_tiles_per_split,
                                                                 partials, splits == 1 ? 0 : ld_partials, max_bits);
  if (splits == 1) return;
  // The reduction, as a programmatic dependent launch: its launch overlaps the GEMM's end.
  const long long vectors = static_cast<long long>(p.M) * (ld_partials / 4);
  // Groups doubled while C's vectors times them are fewer than one block of REDUCE_THREADS an
  // SM, so it stops at one to two blocks an SM (where C alone fills the SMs, sharing cost about
  // 2% at 384^3: step 21's notes), up to MAX_REDUCE_GROUPS and at least two pieces a group.
  int groups = 1;
  while (groups < MAX_REDUCE_GROUPS && groups * 2 <= splits && vectors * groups < 1LL * REDUCE_THREADS * sgemm::gpu().sm_count)
    groups *= 2;
  const long long vectors_per_block = REDUCE_THREADS / groups;
  launch_after_previous(sgemm_kernel_split_reduce, dim3(static_cast<unsigned>((vectors + vectors_per_block - 1) / vectors_per_block)),
                        dim3(REDUCE_THREADS), 0, stream, p, splits, groups, static_cast<const float*>(partials), ld_partials);
}

// A GEMM's estimate as launch_whole will run it: its plan's, and what the plan leaves out for
// operands TMA cannot read as they are. A is copied where it is split in the pipeline and its
// rows are not aligned (split once, the pass writes A's copy as it goes); B, where its rows are
// not aligned, is copied or read in phases, as b_phases decides. A copy reads and writes its
// floats at COPY_PERCENT of the device memory's bandwidth, plus a launch (PASS_US); the phases
// make the GEMM PHASES_PERCENT longer: b_phases's own prices. A strip of C is a GEMM over all of
// A's rows or B's columns that meet it: its copies can cost more than its math.
double estimate_us(const sgemm::Problem& p, const Plan& plan) {
  const double pace = sgemm::gpu().dram_bytes_per_us * COPY_PERCENT / 100.0;
  double us = plan.place.us;
  if (!plan.place.once && !(reinterpret_cast<uintptr_t>(p.A) % 16 == 0 && p.lda % 4 == 0))
    us += 8.0 * p.M * p.K / pace + PASS_US;
  const int phases = b_phases(p, plan.place.us);
  if (phases == 0 && !(reinterpret_cast<uintptr_t>(p.B) % 16 == 0 && p.ldb % 4 == 0))
    us += 8.0 * p.K * p.N / pace + PASS_US;
  else if (phases == B_PHASES_ODD)
    us += plan.place.us * PHASES_PERCENT / 100.0;
  return us;
}

void launch_whole(const sgemm::Problem& p, const Plan& plan, cudaStream_t stream) {
  if (plan.bn == BN)
    launch_with<BN>(p, plan, stream);
  else
    launch_with<NARROW_BN>(p, plan, stream);
}

// The rectangle of C at (row, col), rows x cols, as a GEMM of its own: the same K, A's rows
// and B's columns that meet there, the same alpha and beta.
sgemm::Problem rectangle(const sgemm::Problem& p, int row, int col, int rows, int cols) {
  sgemm::Problem r = p;
  r.M = rows, r.N = cols;
  r.A = p.A + std::size_t(row) * p.lda;
  r.B = p.B + col;
  r.C = p.C + std::size_t(row) * p.ldc + col;
  return r;
}

// launch's decision for a shape: C whole (parts 0, plans[0] the whole's plan), or cut into
// `parts` rectangles, each at (row, col), rows x cols, with its plan.
struct Cut {
  int parts = 0;
  int at[3][4] = {};  // row, col, rows, cols
  Plan plans[3] = {};
};
Cut decide(const sgemm::Problem& p) {
  static const char* forced = std::getenv("SGEMM_EDGES");
  if (forced != nullptr && std::strcmp(forced, "whole") != 0 && std::strcmp(forced, "cut") != 0) {
    std::fprintf(stderr, "SGEMM_EDGES=%s: C is run whole or cut\n", forced);
    std::exit(2);
  }
  const bool force_cut = forced != nullptr && std::strcmp(forced, "cut") == 0;
  const Plan whole = choose_tile(p);
  Cut decision;
  decision.plans[0] = whole;
  if ((forced != nullptr && !force_cut) || (std::getenv("SGEMM_TILE") != nullptr && !force_cut)) return decision;
  const int bn = force_cut ? BN : whole.bn;
  const int main_rows = p.M - p.M % BM, main_cols = p.N - p.N % bn;  // the main rectangle, at most
  double best_us = force_cut ? INFINITY : estimate_us(p, whole) * (100 - EDGE_GAIN_PERCENT) / 100.0;
  for (int cut = 1; cut <= 3; ++cut) {  // 1: the right strip, 2: the strip below, 3: both
    const bool cut_cols = cut & 1, cut_rows = cut & 2;
    if ((cut_cols && (main_cols == 0 || main_cols == p.N)) || (cut_rows && (main_rows == 0 || main_rows == p.M))) continue;
    const int rows = cut_rows ? main_rows : p.M, cols = cut_cols ? main_cols : p.N;
    sgemm::Problem parts[3] = {rectangle(p, 0, 0, rows, cols)};
    int n = 1;
    if (cut_cols) parts[n++] = rectangle(p, 0, cols, rows, p.N - cols);
    if (cut_rows) parts[n++] = rectangle(p, rows, 0, p.M - rows, p.N);
    const int right[4] = {0, cols, rows, p.N - cols}, below[4] = {rows, 0, p.M - rows, p.N};
    int at[3][4] = {{0, 0, rows, cols}};
    if (cut_cols) std::copy(right, right + 4, at[1]);
    if (cut_rows) std::copy(below, below + 4, at[cut_cols ? 2 : 1]);
    Plan plans[3];
    double us = EDGE_LAUNCH_US * (n - 1);
    for (int i = 0; i < n; ++i) us += estimate_us(parts[i], plans[i] = choose_tile(parts[i]));
    if (us < best_us) {
      best_us = us, decision.parts = n;
      std::copy(&at[0][0], &at[0][0] + 12, &decision.at[0][0]), std::copy(plans, plans + n, decision.plans);
    }
  }
  return decision;
}

// PRICE_ONCE: decide() prices up to seven rectangles' plans on the host before the first
// launch, and at a long K each plan tries many pieces: tens of microseconds, which a call pays
// before its first kernel starts (the notes). Its answer depends only on the shape, the strides
// and whether A and B start 16-byte aligned (estimate_us), so the last CUT_CACHE answers are
// kept, and a shape seen before launches at once.
const Cut& decide_once(const sgemm::Problem& p) {
  struct Entry {
    long long key[7];
    Cut cut;
  };
  static Entry entries[CUT_CACHE];
  static int used = 0, next = 0;
  const long long key[7] = {p.M, p.N, p.K, p.lda, p.ldb, p.ldc,
                            (reinterpret_cast<uintptr_t>(p.A) % 16 == 0) + 2 * (reinterpret_cast<uintptr_t>(p.B) % 16 == 0)};
  for (int i = 0; i < used; ++i)
    if (std::equal(key, key + 7, entries[i].key)) return entries[i].cut;
  Entry& entry = entries[next];
  next = (next + 1) % CUT_CACHE, used = std::min(used + 1, CUT_CACHE);
  std::copy(key, key + 7, entry.key);
  entry.cut = decide(p);
  return entry.cut;
}

// C cut into rectangles. Where the chosen tile does not divide M or N, its last block row or
// column computes a whole tile for a thin edge of C. Cut there instead: the main rectangle, a
// multiple of the tile, and the edges (a strip on the right, a strip below) each become a GEMM
// of their own, whose tile, pieces and place choose_tile picks for its shape, launched one
// after another (each waits for the one before: its first launch is an ordinary one, and the
// workspaces are reused). The cut is taken where the sum of the rectangles' estimates (with
// their operands' copies: estimate_us), each beyond the first charged EDGE_LAUNCH_US, beats
// the whole's by EDGE_GAIN_PERCENT (decide, priced once a shape: decide_once).
// SGEMM_EDGES (an environment variable: whole or cut) forces either, for the tests and for
// re-measuring the rule; forced, the cut is at the wide tile's multiples. With SGEMM_TILE
// (and no SGEMM_EDGES) C runs whole.
void launch(const sgemm::Problem& p, cudaStream_t stream) {
  const Cut& cut = PRICE_ONCE ? decide_once(p) : decide(p);
  if (cut.parts == 0) {
    launch_whole(p, cut.plans[0], stream);
    return;
  }
  static std::string path;  // took_path keeps the pointer
  for (int i = 0; i < cut.parts; ++i) {
    launch_whole(rectangle(p, cut.at[i][0], cut.at[i][1], cut.at[i][2], cut.at[i][3]), cut.plans[i], stream);
    if (i == 0) path = "edges-" + std::to_string(cut.parts) + "/" + last_path;  // the main rectangle's path
  }
  sgemm::took_path(path.c_str(), cut.plans[0].splits);  // and its pieces of K
}

// 90: compute capability 9.0 exactly, the only one the sm_90a kernel runs on.
// sm_90a code (wgmma, setmaxnreg) runs on compute capability 9.0 alone.
int main(int argc, char** argv) {
  return sgemm::run_step(argc, argv, SGEMM_STEP, launch, {.shared_bytes = shared_bytes(BN, B_PHASES_ODD), .compute_capability = 90});
}
