// Step 22 - 3xTF32 with mma.sync                                     previous: 13_multi_stage
// Change: the math moves from FFMA to the tensor cores: each warp computes a 64 x 32 tile of
//         C with mma.sync m16n8k8 TF32 (16 x 8 outputs, 8 k per instruction), fragments read
//         from shared memory. TF32 keeps 10 of FP32's 23 mantissa bits, so every operand is
//         split in registers into big = TF32(x) and small = x - big (three instructions), and
//         each product is three: a_small b_big + a_big b_small + a_big b_big (PASSES = 3; 1 is
//         plain TF32). An Inf input turns that split's small part into NaN, so a block whose
//         outputs come out NaN computes them again with a careful split (clamped first).
//         The tensor core's accumulator truncates, so it only sums one k tile (a chunk of
//         TUNE_SPLIT k); the chunk is then added to FP32 registers with FADD, which rounds to
//         nearest. A is no longer transposed: the mma reads A's rows along k. C goes out as
//         16-byte vectors, as in step 14.
// Why:    an H100 runs mma.sync TF32 at 308-321 TFLOPS from registers: at three products per
//         multiply-add that is ~107 TFLOPS of FP32 work, 2x cuBLAS SGEMM's ~51.6, at FP32
//         accuracy (the harness's FP64 check; PASSES = 1 fails it).
// Watch:  the tensor pipe's active cycles and the math-pipe-throttle and wait stalls; the
//         split's share of the instructions (3 per value); registers (two sets of
//         accumulators, ~255) and no spills; shared bank conflicts of the fragment loads (0).
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -arch=sm_80 -Icommon common/*.cpp common/*.cu steps/22_tf32x3_mma/tf32x3_mma.cu -lcublas -o build-alone/tf32x3_mma
#include "sgemm.cuh"

constexpr int TUNE_SPLIT = SGEMM_KNOB(TUNE_SPLIT, 64);    // K-width of a shared tile, and of one truncating chunk
constexpr bool SWAP_XY = SGEMM_KNOB(SWAP_XY, true);    // true: blockIdx.x runs along M, blockIdx.y along N
constexpr int MIN_BLOCKS = SGEMM_KNOB(MIN_BLOCKS, 1);     // blocks per SM the compiler must fit: caps registers
constexpr bool ASYNC_LOADS = SGEMM_KNOB(ASYNC_LOADS, true);  // global -> shared with cp.async (false: through registers)
constexpr bool SKIP_ZERO_FILL = SGEMM_KNOB(SKIP_ZERO_FILL, true);  // tiles wholly inside A and B: cp.async without zero-fill
constexpr int COPY_VECTOR = SGEMM_KNOB(COPY_VECTOR, 4);      // floats per cp.async of A and B: 1, 2 or 4 (4, 8 or 16 bytes)
constexpr int B_PAD = SGEMM_KNOB(B_PAD, 4);            // floats of padding per row of the B tile

constexpr int A_PAD = SGEMM_KNOB(A_PAD, 8);  // floats of padding per row of the A tile

constexpr int STAGES = SGEMM_KNOB(STAGES, 2);  // shared buffers in the ring: one being read, STAGES - 1 being filled

constexpr int WARPS_X = SGEMM_KNOB(WARPS_X, 4);      // warps per block along N
constexpr int WARPS_Y = SGEMM_KNOB(WARPS_Y, 2);      // warps per block along M
constexpr int MMA_TILES_X = SGEMM_KNOB(MMA_TILES_X, 4);  // 8-column mma tiles per warp along N
constexpr int MMA_TILES_Y = SGEMM_KNOB(MMA_TILES_Y, 4);  // 16-row mma tiles per warp along M
constexpr int PASSES = SGEMM_KNOB(PASSES, 3);       // tensor-core products per multiply-add: 3 (3xTF32) or 1 (TF32)
constexpr bool FAST_SPLIT = SGEMM_KNOB(FAST_SPLIT, true);  // split without the clamp; a block whose outputs come out NaN does it again with it
constexpr int CHUNK_TILES = SGEMM_KNOB(CHUNK_TILES, 1);     // k tiles per truncating chunk (folded into the FP32 sums after each)
constexpr bool VECTOR_C = SGEMM_KNOB(VECTOR_C, true);    // C stored as 16-byte vectors where it is aligned (false: one float at a time)

constexpr int MMA_M = 16, MMA_N = 8, MMA_K = 8;  // mma.sync.m16n8k8: C[16][8] += A[16][8] B[8][8]
constexpr int THREADS = 32 * WARPS_X * WARPS_Y;
constexpr int WARP_TILE_M = MMA_TILES_Y * MMA_M;  // rows of C per warp
constexpr int WARP_TILE_N = MMA_TILES_X * MMA_N;  // columns of C per warp
constexpr int BM = WARPS_Y * WARP_TILE_M;  // rows of C per block
constexpr int BN = WARPS_X * WARP_TILE_N;  // columns of C per block
static_assert(THREADS <= 1024, "at most 1024 threads per block");
static_assert(PASSES == 1 || PASSES == 3, "3: a_small b_big + a_big b_small + a_big b_big; 1: a_big b_big");
static_assert(CHUNK_TILES >= 1, "a chunk is one or more whole k tiles");
static_assert(TUNE_SPLIT % MMA_K == 0, "a k tile is whole mma k steps");
static_assert(MMA_TILES_X == 4, "a lane reads its B values of the warp's four n tiles as one float4");
constexpr int SHARED_BYTES = STAGES * (BM * (TUNE_SPLIT + A_PAD) + TUNE_SPLIT * (BN + B_PAD)) * sizeof(float);
static_assert(SHARED_BYTES <= sgemm::shared_limit(),
              "a block has at most 99 KB of shared memory on sm_86 and sm_89, 163 KB on sm_80, 227 KB on sm_90: "
              "build with the GPU class's tuning (tunings/)");
static_assert(STAGES >= 2 && STAGES <= 4, "one stage is read while the others fill; past 4 the shared memory buys nothing");
static_assert(THREADS % (TUNE_SPLIT / COPY_VECTOR) == 0 && BM % (THREADS / (TUNE_SPLIT / COPY_VECTOR)) == 0 &&
                  THREADS % (BN / COPY_VECTOR) == 0 && TUNE_SPLIT % (THREADS / (BN / COPY_VECTOR)) == 0,
              "the threads cover whole rows of each tile per pass, and whole passes cover the tile");
static_assert(ASYNC_LOADS || COPY_VECTOR == 1, "vector copies are cp.async copies");
static_assert(COPY_VECTOR == 1 || COPY_VECTOR == 2 || COPY_VECTOR == 4, "cp.async copies 4, 8 or 16 bytes");
static_assert(TUNE_SPLIT % COPY_VECTOR == 0 && (TUNE_SPLIT + A_PAD) % 4 == 0 && (BN + B_PAD) % 4 == 0,
              "every vector copy's shared destination and every fragment load is aligned to its size");
static_assert((TUNE_SPLIT + A_PAD) % 32 == 8 && (BN + B_PAD) % 32 == 4,
              "the fragment loads are free of bank conflicts for these row strides (see load_fragments)");

// Element (row, col) of a row-major matrix with row stride ld.
template <class T>
__device__ __forceinline__ T& at(T* matrix, int ld, int row, int col) {
  return matrix[row * ld + col];
}

// *dst = *src, or 0 outside the matrix: edge tiles are padded with zeros, which add nothing.
// With ASYNC_LOADS the copy is a 4-byte cp.async; a source size of 0 makes it write zeros
// without reading the source. That source-size operand turns the LDGSTS into a predicated,
// zero-filling one, which costs time on this GPU even when nothing is filled, so a tile that
// lies wholly inside the matrices is copied without it (ZERO_FILL false, `inside` unused).
template <bool ZERO_FILL>
__device__ __forceinline__ void copy_or_zero(float* dst, const float* src, bool inside) {
  if constexpr (ASYNC_LOADS) {
    const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if constexpr (ZERO_FILL)
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst_shared), "l"(src), "r"(inside ? 4 : 0));
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst_shared), "l"(src));
  } else {
    *dst = inside ? *src : 0.0f;
  }
}

// dst[0..COPY_VECTOR) = the COPY_VECTOR floats at src, of which the first `valid` are inside
// the matrix; zeros for the rest. One cp.async when the source is aligned to the vector
// (src_aligned: the matrix's rows start at multiples of COPY_VECTOR floats): it copies the
// valid bytes and zero-fills the rest (ZERO_FILL false: all of it is valid; no source size).
// Otherwise, one float at a time.
template <bool ZERO_FILL>
__device__ __forceinline__ void copy_vector_or_zero(float* dst, const float* src, int valid, bool src_aligned) {
  if (ASYNC_LOADS && COPY_VECTOR > 1 && src_aligned) {
    const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if constexpr (ZERO_FILL)
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst_shared), "l"(src),
                   "n"(COPY_VECTOR * sizeof(float)), "r"(valid * int(sizeof(float))));
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst_shared), "l"(src),
                   "n"(COPY_VECTOR * sizeof(float)));
  } else {
#pragma unroll
    for (int v = 0; v < COPY_VECTOR; ++v) copy_or_zero<ZERO_FILL>(dst + v, src + v, v < valid);
  }
}

// Closes the group of cp.async copies this thread issued since the last commit: one group
// per tile (possibly empty), so that "the tile k_tile has landed" is "all but the newest
// groups have landed".
__device__ __forceinline__ void commit_copies() {
  if constexpr (ASYNC_LOADS) asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most IN_FLIGHT of this thread's newest cp.async groups are still in flight.
template <int IN_FLIGHT>
__device__ __forceinline__ void wait_copies() {
  if constexpr (ASYNC_LOADS) asm volatile("cp.async.wait_group %0;\n" ::"n"(IN_FLIGHT) : "memory");
}

// C[row][col] = alpha * acc + beta * C[row][col]; with beta == 0, C is write-only (BLAS
// semantics): NaN or garbage already in C never leaks into the result.
__device__ __forceinline__ void store_c(const sgemm::Problem& p, int row, int col, float acc) {
  float& c = at(p.C, p.ldc, row, col);
  c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;
}

// store_c for the 4 consecutive elements at (row, col .. col + 3), as one 16-byte access:
// the same arithmetic, so the same bits, as four store_c calls. C must be 16-byte aligned there.
__device__ __forceinline__ void store_c4(const sgemm::Problem& p, int row, int col, float a0, float a1, float a2,
                                         float a3) {
  float4& c = *reinterpret_cast<float4*>(&at(p.C, p.ldc, row, col));
  if (p.beta == 0.0f) {
    c = make_float4(p.alpha * a0, p.alpha * a1, p.alpha * a2, p.alpha * a3);
  } else {
    const float4 old = c;
    c = make_float4(p.alpha * a0 + p.beta * old.x, p.alpha * a1 + p.beta * old.y, p.alpha * a2 + p.beta * old.z,
                    p.alpha * a3 + p.beta * old.w);
  }
}

// global -> shared: the TUNE_SPLIT-wide tiles of A and B that start at column / row k0.
// Both tiles keep the matrices' row-major layout (the mma reads A along k, B along n), so
// both are copied the same way: consecutive threads take consecutive vectors of a row, so
// the global loads coalesce. A thread copies the same columns every time, one pass of rows
// apart, so its addresses and bounds are worked out once per tile, not once per element.
template <bool ZERO_FILL>
__device__ __forceinline__ void copy_tile_elements(const sgemm::Problem& p, float (&sA)[BM][TUNE_SPLIT + A_PAD], float (&sB)[TUNE_SPLIT][BN + B_PAD],
                                                   int block_row, int block_col, int k0, int tid) {
  constexpr int A_VECTORS = TUNE_SPLIT / COPY_VECTOR;  // vectors per row of the A tile
  constexpr int A_PASS = THREADS / A_VECTORS;          // rows of the A tile copied per pass
  const int a_row = tid / A_VECTORS, a_col = tid % A_VECTORS * COPY_VECTOR;
  const float* a_src = &at(p.A, p.lda, block_row + a_row, k0 + a_col);
  const int a_valid = max(0, min(p.K - k0 - a_col, COPY_VECTOR));  // floats inside the matrix
  const bool a_aligned = p.lda % COPY_VECTOR == 0 && reinterpret_cast<uintptr_t>(p.A) % sizeof(float[COPY_VECTOR]) == 0;
#pragma unroll
  for (int n = 0; n < BM / A_PASS; ++n) {
    const int r = a_row + n * A_PASS;
    copy_vector_or_zero<ZERO_FILL>(&sA[r][a_col], a_src + n * A_PASS * p.lda, block_row + r < p.M ? a_valid : 0, a_aligned);
  }
  constexpr int B_VECTORS = BN / COPY_VECTOR;  // vectors per row of the B tile
  constexpr int B_PASS = THREADS / B_VECTORS;   // rows of the B tile copied per pass
  const int b_row = tid / B_VECTORS, b_col = tid % B_VECTORS * COPY_VECTOR;
  const float* b_src = &at(p.B, p.ldb, k0 + b_row, block_col + b_col);
  const int b_valid = max(0, min(p.N - block_col - b_col, COPY_VECTOR));  // floats inside the matrix
  const bool b_aligned = p.ldb % COPY_VECTOR == 0 && reinterpret_cast<uintptr_t>(p.B) % sizeof(float[COPY_VECTOR]) == 0;
#pragma unroll
  for (int n = 0; n < TUNE_SPLIT / B_PASS; ++n) {
    const int r = b_row + n * B_PASS;
    copy_vector_or_zero<ZERO_FILL>(&sB[r][b_col], b_src + n * B_PASS * p.ldb, k0 + r < p.K ? b_valid : 0, b_aligned);
  }
}

// The tile at k0. With SKIP_ZERO_FILL, a tile wholly inside A and B (all but the last block
// row, the last block column and the last k tile) is copied without zero-fill.
__device__ __forceinline__ void copy_tile(const sgemm::Problem& p, float (&sA)[BM][TUNE_SPLIT + A_PAD], float (&sB)[TUNE_SPLIT][BN + B_PAD],
                                          int block_row, int block_col, int k0, int tid) {
  if (SKIP_ZERO_FILL && ASYNC_LOADS && block_row + BM <= p.M && block_col + BN <= p.N && k0 + TUNE_SPLIT <= p.K)
    copy_tile_elements<false>(p, sA, sB, block_row, block_col, k0, tid);
  else
    copy_tile_elements<true>(p, sA, sB, block_row, block_col, k0, tid);
}

// A lane's registers of one mma.sync.m16n8k8 (PTX ISA, "matrix fragments for mma.m16n8k8"),
// with g = lane / 4 and t = lane % 4:
//   a[0..3]: A[g][t], A[g + 8][t], A[g][t + 4], A[g + 8][t + 4]    (16 x 8, row-major)
//   b[0..1]: B[t][g], B[t + 4][g]                                  (8 x 8)
//   c[0..3]: C[g][2t], C[g][2t + 1], C[g + 8][2t], C[g + 8][2t + 1]
// The order of the 8 k inside one instruction does not change the sum, so mma k index t is
// stored k 2t of the tile and t + 4 is 2t + 1: a lane's two k of A are side by side (one
// 8-byte load). Likewise column g of the warp's n tile j is stored column 4g + j: a lane's
// B values of all four n tiles are side by side (one 16-byte load), and its outputs of n tile
// j land in columns 8t + j and 8t + 4 + j, so a lane owns 8 adjacent columns of C.
struct Fragments {
  float a[MMA_TILES_Y][4];  // [mma tile along M][a0..a3]
  float b[MMA_TILES_X][2];  // [mma tile along N][b0..b1]
};

// shared -> registers: this lane's A and B values for mma k step k_step of the tile. Bank
// check for a warp's 8-byte loads of A (16 lanes per wavefront, rows g = 0..3 at stride
// TUNE_SPLIT + A_PAD = 8 mod 32 banks, 2t + 0..1): banks 8g + 2t + {0,1} are all different.
// For the 16-byte loads of B (8 lanes per wavefront, rows 2t at stride BN + B_PAD = 4 mod 32,
// columns 4g): banks 8t + 4g + 0..3 are all different.
__device__ __forceinline__ void load_fragments(Fragments& f, const float (&sA)[BM][TUNE_SPLIT + A_PAD],
                                               const float (&sB)[TUNE_SPLIT][BN + B_PAD], int k_step, int warp_row,
                                               int warp_col, int lane) {
  const int g = lane / 4, t = lane % 4;
  const int k = k_step * MMA_K + 2 * t;
#pragma unroll
  for (int i = 0; i < MMA_TILES_Y; ++i) {
    const float2 top = *reinterpret_cast<const float2*>(&sA[warp_row + i * MMA_M + g][k]);
    const float2 bottom = *reinterpret_cast<const float2*>(&sA[warp_row + i * MMA_M + g + 8][k]);
    f.a[i][0] = top.x, f.a[i][1] = bottom.x, f.a[i][2] = top.y, f.a[i][3] = bottom.y;
  }
  const float4 b0 = *reinterpret_cast<const float4*>(&sB[k][warp_col + 4 * g]);
  const float4 b1 = *reinterpret_cast<const float4*>(&sB[k + 1][warp_col + 4 * g]);
  f.b[0][0] = b0.x, f.b[1][0] = b0.y, f.b[2][0] = b0.z, f.b[3][0] = b0.w;
  f.b[0][1] = b1.x, f.b[1][1] = b1.y, f.b[2][1] = b1.z, f.b[3][1] = b1.w;
}

// x = big + small, for the tensor cores. big = x rounded to TF32 (10 mantissa bits; to nearest,
// ties away from zero, as cvt.rna.tf32.f32 does): add half of TF32's last place to the bit
// pattern, then clear the 13 bits TF32 does not keep. small = x - big is exact in FP32 and at
// most 2^-11 of x; the tensor core reads its top 19 bits (it truncates the low 13), so big and
// small carry 22 of x's 24 significant bits. Three instructions per value.
// Inf and NaN: an Inf input makes small = Inf - Inf = NaN, and an x within half a TF32 place
// of FP32's largest value rounds to big = Inf and small = -Inf; either way every output that
// input reaches comes out NaN. The CAREFUL split first clamps x to TF32's range (two more
// instructions): an Inf then splits into big = +-TF32_MAX and small = Inf, a NaN into a finite
// big and small = NaN, and an x above TF32_MAX into TF32_MAX and an exact rest, so every
// product comes out Inf, NaN or finite as in FP32. The fast split is the default, and a block
// that finds a NaN among its outputs computes them again with the careful one (sgemm_kernel).
constexpr float TF32_MAX = 0x1.ffcp127f;  // (2 - 2^-10) * 2^127, the largest TF32 value
__device__ __forceinline__ float round_to_tf32(float x) {
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
}
template <bool CAREFUL>
__device__ __forceinline__ void split(float x, float& big, float& small) {
  if constexpr (PASSES == 1) {  // no small part to carry a NaN: cvt keeps Inf and NaN as they are
    unsigned bits;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
    big = __uint_as_float(bits);
  } else if constexpr (CAREFUL) {
    big = round_to_tf32(fminf(fmaxf(x, -TF32_MAX), TF32_MAX));
    small = x - big;
  } else {
    big = round_to_tf32(x);
    small = x - big;
  }
}

// d = a b + c on the tensor cores: one m16n8k8 product of TF32 values, accumulated in FP32
// (with truncation, not rounding to nearest).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const float (&a)[4], const float (&b)[2], const float (&c)[4]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])), "r"(__float_as_uint(a[3])),
        "r"(__float_as_uint(b[0])), "r"(__float_as_uint(b[1])), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

// K < MMA_K: every output is a sum of at most 7 products, too few for the split's error (the
// dropped a_small b_small, up to 2^-22 of a product) and the truncating accumulator's to
// average out, while the harness's limit there is its worst-case bound, 2 (K + 2) u: 6 u at
// K = 1, where FP32 is off by under 1 u. So these few products are FP32 FMAs, read straight
// from the one shared tile, in acc's layout (README.md, "Tiny K").
__device__ __forceinline__ void tiny_k_products(float (&acc)[MMA_TILES_Y][MMA_TILES_X][4], int K,
                                                const float (&sA)[BM][TUNE_SPLIT + A_PAD],
                                                const float (&sB)[TUNE_SPLIT][BN + B_PAD], int warp_row, int warp_col,
                                                int lane) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < MMA_TILES_Y; ++i)
#pragma unroll
    for (int j = 0; j < MMA_TILES_X; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int k = 0; k < MMA_K - 1; ++k)
          if (k < K) acc[i][j][r] += sA[warp_row + i * MMA_M + g + (r / 2) * 8][k] * sB[k][warp_col + 8 * t + j + (r % 2) * 4];
}

using StagesA = float[STAGES][BM][TUNE_SPLIT + A_PAD];
using StagesB = float[STAGES][TUNE_SPLIT][BN + B_PAD];

// The block's product over all of K, added to acc: the copy pipeline of step 13, and per k
// tile the split fragments' mma into a chunk that starts from zero, then folded into acc.
template <bool CAREFUL>
__device__ __forceinline__ void block_product(const sgemm::Problem& p, float (&acc)[MMA_TILES_Y][MMA_TILES_X][4],
                                              StagesA& sA, StagesB& sB, int block_row, int block_col, int warp_row,
                                              int warp_col, int tid, int lane) {
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);  // k_tile runs over these
  // Tiles 0 .. STAGES-2 in flight, one group each (empty past the last tile: the wait below
  // counts groups, so every tile slot commits one).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) copy_tile(p, sA[s], sB[s], block_row, block_col, s * TUNE_SPLIT, tid);
    commit_copies();
  }
  int stage = 0;               // the stage tile k_tile is read from
  int fill_stage = STAGES - 1;  // the stage tile k_tile + STAGES - 1 is copied into
  float chunk[MMA_TILES_Y][MMA_TILES_X][4];  // the same outputs, this chunk's sum (truncating)
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    wait_copies<STAGES - 2>();  // this thread's copies of tile k_tile have landed...
    __syncthreads();  // ...and everyone's; and everyone is done reading tile k_tile - 1's stage

    // Tile k_tile + STAGES - 1 flies into the stage tile k_tile - 1 was read from.
    if (k_tile + STAGES - 1 < k_tiles)
      copy_tile(p, sA[fill_stage], sB[fill_stage], block_row, block_col, (k_tile + STAGES - 1) * TUNE_SPLIT, tid);
    commit_copies();

    if (k_tile % CHUNK_TILES == 0)
#pragma unroll
      for (int i = 0; i < MMA_TILES_Y; ++i)
#pragma unroll
        for (int j = 0; j < MMA_TILES_X; ++j)
#pragma unroll
          for (int r = 0; r < 4; ++r) chunk[i][j][r] = 0.0f;
#pragma unroll
    for (int k_step = 0; k_step < TUNE_SPLIT / MMA_K; ++k_step) {
      Fragments big, small;  // big holds the loaded x until split() rounds it in place
      load_fragments(big, sA[stage], sB[stage], k_step, warp_row, warp_col, lane);
#pragma unroll
      for (int i = 0; i < MMA_TILES_Y; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r) split<CAREFUL>(big.a[i][r], big.a[i][r], small.a[i][r]);
#pragma unroll
      for (int j = 0; j < MMA_TILES_X; ++j)
#pragma unroll
        for (int r = 0; r < 2; ++r) split<CAREFUL>(big.b[j][r], big.b[j][r], small.b[j][r]);
      // The small products first, while the chunk is small.
#pragma unroll
      for (int i = 0; i < MMA_TILES_Y; ++i)
#pragma unroll
        for (int j = 0; j < MMA_TILES_X; ++j) {
          if constexpr (PASSES == 3) {
            mma_tf32(chunk[i][j], small.a[i], big.b[j], chunk[i][j]);
            mma_tf32(chunk[i][j], big.a[i], small.b[j], chunk[i][j]);
          }
        }
#pragma unroll
      for (int i = 0; i < MMA_TILES_Y; ++i)
#pragma unroll
        for (int j = 0; j < MMA_TILES_X; ++j)
          mma_tf32(chunk[i][j], big.a[i], big.b[j], chunk[i][j]);
    }
    // The chunk into the FP32 sums: one FADD per output, rounded to nearest.
    if ((k_tile + 1) % CHUNK_TILES == 0 || k_tile + 1 == k_tiles)
#pragma unroll
      for (int i = 0; i < MMA_TILES_Y; ++i)
#pragma unroll
        for (int j = 0; j < MMA_TILES_X; ++j)
#pragma unroll
          for (int r = 0; r < 4; ++r) acc[i][j][r] += chunk[i][j][r];
    stage = stage + 1 == STAGES ? 0 : stage + 1;  // the ring advances by one stage per tile
    fill_stage = fill_stage + 1 == STAGES ? 0 : fill_stage + 1;
  }
}

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) sgemm_kernel(sgemm::Problem p) {
  // The stages outgrow the 48 KB of static shared memory, so they live in dynamic shared
  // memory (the launch raises the block's limit): A's stages, then B's.
  extern __shared__ __align__(16) float shared[];
  auto& sA = *reinterpret_cast<StagesA*>(shared);  // [STAGES][BM][TUNE_SPLIT]
  auto& sB = *reinterpret_cast<StagesB*>(shared + STAGES * BM * (TUNE_SPLIT + A_PAD));  // [STAGES][TUNE_SPLIT][BN]

  const int tid = threadIdx.x;
  const int block_row = (SWAP_XY ? blockIdx.x : blockIdx.y) * BM;
  const int block_col = (SWAP_XY ? blockIdx.y : blockIdx.x) * BN;
  // This warp's tile of the block's C tile.
  const int warp = tid / 32, lane = tid % 32;
  const int warp_row = warp / WARPS_X * WARP_TILE_M;
  const int warp_col = warp % WARPS_X * WARP_TILE_N;

  float acc[MMA_TILES_Y][MMA_TILES_X][4] = {};  // this lane's outputs, FP32 sums (rounded to nearest)
  if (p.K < MMA_K) {  // tiny K: no mma, the one tile's products in FP32 (tiny_k_products)
    copy_tile(p, sA[0], sB[0], block_row, block_col, 0, tid);
    commit_copies();
    wait_copies<0>();
    __syncthreads();
    tiny_k_products(acc, p.K, sA[0], sB[0], warp_row, warp_col, lane);
  } else {
    block_product<!FAST_SPLIT>(p, acc, sA, sB, block_row, block_col, warp_row, warp_col, tid, lane);
    if constexpr (FAST_SPLIT && PASSES == 3) {
      // A NaN among the block's outputs: an Inf or a NaN in its rows of A or columns of B
      // (finite inputs never make one here). Then the whole block computes its outputs again
      // with the careful split, which gets Inf and NaN right; with finite inputs this costs one
      // comparison per output and a barrier.
      bool nan = false;
#pragma unroll
      for (int i = 0; i < MMA_TILES_Y; ++i)
#pragma unroll
        for (int j = 0; j < MMA_TILES_X; ++j)
#pragma unroll
          for (int r = 0; r < 4; ++r) nan = nan || isnan(acc[i][j][r]);
      if (__syncthreads_or(nan)) {  // also: every warp is done reading the stages
#pragma unroll
        for (int i = 0; i < MMA_TILES_Y; ++i)
#pragma unroll
          for (int j = 0; j < MMA_TILES_X; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;
        block_product<true>(p, acc, sA, sB, block_row, block_col, warp_row, warp_col, tid, lane);
      }
    }
  }

  // acc[i][j][r]: row g (+8 for r >= 2) of mma tile i; column 8t + j (+4 for odd r). So for
  // each row a lane holds columns 8t .. 8t + 3 (j = 0..3, even r) and 8t + 4 .. 8t + 7 (odd r):
  // two 16-byte vectors where C is aligned, where one float at a time would make each store
  // instruction touch 32 sectors of 32 bytes for 4 bytes each.
  const int g = lane / 4, t = lane % 4;
  const bool c_aligned = VECTOR_C && p.ldc % 4 == 0 && reinterpret_cast<uintptr_t>(p.C) % 16 == 0;
#pragma unroll
  for (int i = 0; i < MMA_TILES_Y; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) {  // (row half, column half) of the lane's outputs
      const int row = block_row + warp_row + i * MMA_M + g + (r / 2) * 8;
      const int col = block_col + warp_col + 8 * t + (r % 2) * 4;  // the first of 4 consecutive columns
      if (row >= p.M) continue;
      if (c_aligned && col + 4 <= p.N)
        store_c4(p, row, col, acc[i][0][r], acc[i][1][r], acc[i][2][r], acc[i][3][r]);
      else
#pragma unroll
        for (int j = 0; j < MMA_TILES_X; ++j)
          if (col + j < p.N) store_c(p, row, col + j, acc[i][j][r]);
    }
}

void launch(const sgemm::Problem& p, cudaStream_t stream) {
  const dim3 block(THREADS);
  const dim3 grid = SWAP_XY ? dim3(sgemm::ceil_div(p.M, BM), sgemm::ceil_div(p.N, BN))
                            : dim3(sgemm::ceil_div(p.N, BN), sgemm::ceil_div(p.M, BM));
  CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
  sgemm_kernel<<<grid, block, SHARED_BYTES, stream>>>(p);
}

int main(int argc, char** argv) {
  return sgemm::run_step(argc, argv, SGEMM_STEP, launch, {.shared_bytes = SHARED_BYTES});
}
