// Step 15 - split-K                                            previous: 14_large_thread_tile
// Change: when the output tiles are too few to fill the GPU, K is split into pieces and each
//         block computes one tile over one piece (blockIdx.z); the pieces' partial sums go
//         to a workspace, and a second kernel adds them up in a fixed order and applies
//         alpha and beta. The step picks the number of pieces from the shape (no flag).
// Why:    at 1024^3 the 128 x 256 tiles make 32 blocks: 100 of 132 SMs would idle. Four
//         pieces make 128 blocks, at the cost of writing and reading 4 x M x N partial sums.
//         The split and the unsplit kernel are compiled apart (block_gemm<SPLIT>), so that
//         where one piece is chosen the step runs step 14's kernel (the same source);
//         the split one keeps the barrier at the top of each tile and its FFMAs row by row:
//         both measured faster there. The reduction is a programmatic dependent launch
//         (sm_90): its launch overlaps the split kernel's end.
// Where:  block_gemm<SPLIT> (a piece's k range, its sums to partials), sgemm_kernel_split,
//         sgemm_kernel_split_reduce, choose_splits and partial_sums_tile_times, and launch.
// Watch:  the split chosen per shape (choose_splits); the reduction kernel's time next to
//         the GEMM's; the same bits on every run (no float atomics: a fixed summation order).
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -arch=sm_80 -Icommon common/*.cpp common/*.cu steps/15_split_k/split_k.cu -lcublas -o build-alone/split_k
#include "sgemm.cuh"

constexpr int THREADS_X = SGEMM_KNOB(THREADS_X, 16);     // threads per block along N (columns of C)
constexpr int THREADS_Y = SGEMM_KNOB(THREADS_Y, 16);     // threads per block along M (rows of C)
constexpr int TUNE_SPLIT = SGEMM_KNOB(TUNE_SPLIT, 32);    // K-width of a shared tile
constexpr bool SWAP_XY = SGEMM_KNOB(SWAP_XY, true);    // true: blockIdx.x runs along M, blockIdx.y along N
constexpr int THREAD_TILE_X = SGEMM_KNOB(THREAD_TILE_X, 16);  // outputs per thread along N
constexpr int THREAD_TILE_Y = SGEMM_KNOB(THREAD_TILE_Y, 8);  // outputs per thread along M
constexpr int MIN_BLOCKS = SGEMM_KNOB(MIN_BLOCKS, 1);     // blocks per SM the compiler must fit: caps registers
constexpr int WARP_SHAPE_X = SGEMM_KNOB(WARP_SHAPE_X, 16);  // lanes of a warp along N; 32 / WARP_SHAPE_X along M
constexpr bool ASYNC_LOADS = SGEMM_KNOB(ASYNC_LOADS, true);  // global -> shared with cp.async (false: through registers)
constexpr bool SKIP_ZERO_FILL = SGEMM_KNOB(SKIP_ZERO_FILL, true);  // tiles wholly inside A and B: cp.async without zero-fill
constexpr int COPY_VECTOR = SGEMM_KNOB(COPY_VECTOR, 4);      // floats per cp.async of B: 1, 2 or 4 (4, 8 or 16 bytes)
constexpr int B_PAD = SGEMM_KNOB(B_PAD, 0);            // floats of padding per row of the B tile

constexpr int A_PAD = SGEMM_KNOB(A_PAD, 4);  // floats of padding per row of the transposed A tile
constexpr int A_COPY_RUN = SGEMM_KNOB(A_COPY_RUN, 16);  // consecutive k of one row of A that neighbouring lanes copy

constexpr int STAGES = SGEMM_KNOB(STAGES, 3);  // shared buffers in the ring: one being read, STAGES - 1 being filled
constexpr int K_UNROLL = SGEMM_KNOB(K_UNROLL, 8);  // k steps per pass of the unrolled k loop: keeps the loop in the instruction cache
constexpr bool VECTOR_C = SGEMM_KNOB(VECTOR_C, true);  // C stored as 16-byte vectors where it is aligned (false: one float at a time)
constexpr bool EARLY_SYNC = SGEMM_KNOB(EARLY_SYNC, true);  // wait and barrier before a tile's last k: the next tile's first fragments load under its FFMAs
constexpr bool FFMA_BY_COLUMN = SGEMM_KNOB(FFMA_BY_COLUMN, true);  // a k's FFMAs reach the compiler column by column of the thread tile (false: row by row)
constexpr int STAGES_SPLIT = SGEMM_KNOB(STAGES_SPLIT, 3);  // STAGES in the kernel that computes one piece of K

constexpr int MAX_SPLITS = SGEMM_KNOB(MAX_SPLITS, 64);        // most pieces K is split into
constexpr int MIN_SPLIT_K_TILES = SGEMM_KNOB(MIN_SPLIT_K_TILES, 4);  // fewest k tiles in a piece: its pipeline has to fill and drain
constexpr int MIN_GAIN_PERCENT = SGEMM_KNOB(MIN_GAIN_PERCENT, 10);  // more pieces must cut the estimated time by this much
constexpr int L2_BANDWIDTH_RATIO = SGEMM_KNOB(L2_BANDWIDTH_RATIO, 4);  // how much faster partial sums that stay in L2 move than device memory does (split-K's cost)
constexpr int REDUCE_THREADS = SGEMM_KNOB(REDUCE_THREADS, 256);   // threads per block of the reduction kernel

constexpr int THREADS = THREADS_X * THREADS_Y;
constexpr int BM = THREADS_Y * THREAD_TILE_Y;  // rows of C per block
constexpr int BN = THREADS_X * THREAD_TILE_X;  // columns of C per block
constexpr int WARP_SHAPE_Y = 32 / WARP_SHAPE_X;
constexpr int WARPS_X = THREADS_X / WARP_SHAPE_X;  // warps side by side along N
// Registers a thread needs for data: the accumulators and two buffers of fragments (the
// next k's load in flight while this k's FMAs run); addresses, indices and the copy's
// bookkeeping take about 30 more. A thread may have at most 255, and MIN_BLOCKS blocks of
// THREADS threads must share the SM's 65536.
constexpr int DATA_REGISTERS = THREAD_TILE_Y * THREAD_TILE_X + 2 * (THREAD_TILE_Y + THREAD_TILE_X);
static_assert(TUNE_SPLIT % K_UNROLL == 0 && K_UNROLL % 2 == 0,
              "the unrolled k loop covers the tile in whole passes, each of an even number of k, so that "
              "every copy of the body knows which of the two fragment buffers it reads");
static_assert(DATA_REGISTERS + 30 <= 255 && DATA_REGISTERS + 30 <= 65536 / (THREADS * MIN_BLOCKS),
              "the accumulators and fragments must fit the register budget, or the compiler spills them");
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "a block is whole warps, at most 1024 threads");
static_assert(32 % WARP_SHAPE_X == 0 && THREADS_X % WARP_SHAPE_X == 0 && THREADS_Y % WARP_SHAPE_Y == 0,
              "warps of WARP_SHAPE_X x WARP_SHAPE_Y lanes tile the THREADS_X x THREADS_Y threads");
constexpr int shared_bytes(int stages) { return stages * (BM + A_PAD + BN + B_PAD) * TUNE_SPLIT * sizeof(float); }
constexpr int SHARED_BYTES = shared_bytes(STAGES), SHARED_BYTES_SPLIT = shared_bytes(STAGES_SPLIT);
static_assert(SHARED_BYTES <= sgemm::shared_limit() && SHARED_BYTES_SPLIT <= sgemm::shared_limit(),
              "a block has at most 99 KB of shared memory on sm_86 and sm_89, 163 KB on sm_80, 227 KB on sm_90: "
              "build with the GPU class's tuning (tunings/)");
static_assert(MAX_SPLITS >= 1 && MIN_SPLIT_K_TILES >= 1 && MIN_GAIN_PERCENT >= 0 && L2_BANDWIDTH_RATIO >= 1,
              "at least one piece, of at least one k tile; more pieces only for a gain, never for a loss");
static_assert(REDUCE_THREADS % 32 == 0 && REDUCE_THREADS <= 1024, "the reduction's blocks are whole warps");
static_assert(BN % 4 == 0 && THREAD_TILE_X % 4 == 0,
              "partial sums are stored as float4: the block's columns start at multiples of 4");
static_assert(STAGES >= 2 && STAGES <= 4 && STAGES_SPLIT >= 2 && STAGES_SPLIT <= 4, "one stage is read while the others fill; past 4 the shared memory buys nothing");
static_assert(THREADS % TUNE_SPLIT == 0 && BM % (THREADS / TUNE_SPLIT) == 0 && THREADS % (BN / COPY_VECTOR) == 0 &&
                  TUNE_SPLIT % (THREADS / (BN / COPY_VECTOR)) == 0,
              "the threads cover whole rows of each tile per pass, and whole passes cover the tile");
static_assert(COPY_VECTOR == 1 || COPY_VECTOR == 2 || COPY_VECTOR == 4, "cp.async copies 4, 8 or 16 bytes");
static_assert(BN % COPY_VECTOR == 0 && (BN + B_PAD) % COPY_VECTOR == 0,
              "every vector copy's shared destination must be aligned to its size: pad B's rows by a "
              "multiple of COPY_VECTOR floats (+1 breaks 8-byte copies)");
static_assert(A_PAD % 4 == 0 && B_PAD % 4 == 0 && THREAD_TILE_Y % 4 == 0 && THREAD_TILE_X % 4 == 0,
              "fragments are read as aligned float4: rows and thread tiles are multiples of 4 floats");
static_assert(TUNE_SPLIT % A_COPY_RUN == 0 && 32 % A_COPY_RUN == 0,
              "a warp copies whole runs of A_COPY_RUN consecutive k, and whole runs make a row of the A tile");

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
// (src_aligned: B's rows start at multiples of COPY_VECTOR floats): it copies the valid
// bytes and zero-fills the rest (ZERO_FILL false: all of it is valid; no source size).
// Otherwise, or without ASYNC_LOADS, one float at a time.
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

// Where a thread's outputs sit in the block's tile: in 4-wide vectors, with the threads of a
// row (column) of the thread grid owning side-by-side vectors, and the thread's next vector a
// whole thread grid further on. So the lanes of a warp read one contiguous run of shared memory
// per 16-byte fragment load (no bank conflicts), and a thread's vectors stay 16-byte aligned.
__device__ __forceinline__ int tile_row(int thread_y, int i) { return (i / 4) * (THREADS_Y * 4) + thread_y * 4 + i % 4; }
__device__ __forceinline__ int tile_col(int thread_x, int j) { return (j / 4) * (THREADS_X * 4) + thread_x * 4 + j % 4; }

// global -> shared: the TUNE_SPLIT-wide tiles of A and B that start at column / row k0.
// Consecutive threads take consecutive elements of a row, so the global loads coalesce. A
// thread copies the same columns of both tiles every time, one pass of rows apart, so its
// addresses and bounds are worked out once per tile, not once per element.
template <bool ZERO_FILL>
__device__ __forceinline__ void copy_tile_elements(const sgemm::Problem& p, float (&sA)[TUNE_SPLIT][BM + A_PAD], float (&sB)[TUNE_SPLIT][BN + B_PAD],
                                                   int block_row, int block_col, int k0, int tid) {
  constexpr int A_PASS = THREADS / TUNE_SPLIT;  // rows of the A tile copied per pass
  // Lanes copy runs of A_COPY_RUN consecutive k, the next run one row further down. As
  // BM + A_PAD = 4 (mod 32), a warp's transposed stores sA[k][r] fall in 32 different banks
  // with 8-float runs (4 rows per warp), 16 with 16-float runs (2 rows), 8 with a whole row
  // of 32: fewer rows per warp read fewer cache lines, more rows conflict less.
  const int a_row = tid / A_COPY_RUN % A_PASS, a_col = tid / (A_COPY_RUN * A_PASS) * A_COPY_RUN + tid % A_COPY_RUN;
  const float* a_src = &at(p.A, p.lda, block_row + a_row, k0 + a_col);
  const bool a_col_inside = k0 + a_col < p.K;
#pragma unroll
  for (int n = 0; n < BM / A_PASS; ++n) {
    const int r = a_row + n * A_PASS;
    copy_or_zero<ZERO_FILL>(&sA[a_col][r], a_src + n * A_PASS * p.lda, a_col_inside && block_row + r < p.M);
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
__device__ __forceinline__ void copy_tile(const sgemm::Problem& p, float (&sA)[TUNE_SPLIT][BM + A_PAD], float (&sB)[TUNE_SPLIT][BN + B_PAD],
                                          int block_row, int block_col, int k0, int tid) {
  if (SKIP_ZERO_FILL && ASYNC_LOADS && block_row + BM <= p.M && block_col + BN <= p.N && k0 + TUNE_SPLIT <= p.K)
    copy_tile_elements<false>(p, sA, sB, block_row, block_col, k0, tid);
  else
    copy_tile_elements<true>(p, sA, sB, block_row, block_col, k0, tid);
}

// shared -> registers: this thread's column of A and row of B at k (a_frag, b_frag).
__device__ __forceinline__ void load_fragments(float (&a_frag)[THREAD_TILE_Y], float (&b_frag)[THREAD_TILE_X],
                                               const float (&sA)[TUNE_SPLIT][BM + A_PAD],
                                               const float (&sB)[TUNE_SPLIT][BN + B_PAD], int k, int thread_x,
                                               int thread_y) {
#pragma unroll
  for (int i = 0; i < THREAD_TILE_Y; ++i) a_frag[i] = sA[k][tile_row(thread_y, i)];
#pragma unroll
  for (int j = 0; j < THREAD_TILE_X; ++j) b_frag[j] = sB[k][tile_col(thread_x, j)];
}

// acc += a b^T: the thread tile's THREAD_TILE_Y x THREAD_TILE_X FFMAs of one k. Each output
// gets the same operations either way; only the order the compiler is handed them differs.
// Column by column (FFMA_BY_COLUMN), consecutive FFMAs share their b operand, which the
// hardware can keep in its operand reuse cache instead of reading it from the register file
// again; row by row they share a. The compiler schedules and allocates registers from this
// order, and column by column comes out faster on the H100 (see step 14's page), except in
// the split kernel (see this step's page).
template <bool BY_COLUMN>
__device__ __forceinline__ void outer_product(float (&acc)[THREAD_TILE_Y][THREAD_TILE_X],
                                              const float (&a)[THREAD_TILE_Y], const float (&b)[THREAD_TILE_X]) {
  if constexpr (BY_COLUMN) {
#pragma unroll
    for (int j = 0; j < THREAD_TILE_X; ++j)
#pragma unroll
      for (int i = 0; i < THREAD_TILE_Y; ++i) acc[i][j] += a[i] * b[j];
  } else {
#pragma unroll
    for (int i = 0; i < THREAD_TILE_Y; ++i)
#pragma unroll
      for (int j = 0; j < THREAD_TILE_X; ++j) acc[i][j] += a[i] * b[j];
  }
}

// Programmatic dependent launch (sm_90): the split kernel lets the reduction's launch begin
// once every block has finished its k loop (launch_dependents), and the reduction waits for
// the whole split kernel to finish, its stores visible, before it reads a partial sum
// (wait_for_producer). Only the launch overlaps; the data dependence is kept.
__device__ __forceinline__ void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_producer() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// One block's tile of C. SPLIT: the block computes one piece of K (blockIdx.z) and writes
// its raw sums A*B (no alpha, no beta) to partials, [gridDim.z][M][ld_partials], where
// ld_partials is N rounded up to 4. Not SPLIT: all of K, and C itself, as in step 14. The
// two are separate kernels, so the unsplit one is compiled from step 14's code alone: the split's
// extra arguments and branches would change its register allocation.
template <bool SPLIT>
__device__ __forceinline__ void block_gemm(const sgemm::Problem& p, int k_tiles_per_split, float* partials,
                                           int ld_partials) {
  // The stages outgrow the 48 KB of static shared memory at TUNE_SPLIT 32, so they live in
  // dynamic shared memory (the launch raises the block's limit): A's stages, then B's.
  constexpr int stages = SPLIT ? STAGES_SPLIT : STAGES;  // this kernel's ring
  extern __shared__ __align__(16) float shared[];
  auto& sA = *reinterpret_cast<float(*)[stages][TUNE_SPLIT][BM + A_PAD]>(shared);  // [stages][TUNE_SPLIT][BM]
  auto& sB = *reinterpret_cast<float(*)[stages][TUNE_SPLIT][BN + B_PAD]>(shared + stages * TUNE_SPLIT * (BM + A_PAD));

  const int tid = threadIdx.y * THREADS_X + threadIdx.x;
  const int block_row = (SWAP_XY ? blockIdx.x : blockIdx.y) * BM;
  const int block_col = (SWAP_XY ? blockIdx.y : blockIdx.x) * BN;
  // This thread's place in the block's thread grid: its warp's rectangle, then its lane.
  const int warp = tid / 32, lane = tid % 32;
  const int thread_x = (warp % WARPS_X) * WARP_SHAPE_X + lane % WARP_SHAPE_X;
  const int thread_y = (warp / WARPS_X) * WARP_SHAPE_Y + lane / WARP_SHAPE_X;

  // The split kernel keeps the barrier at the top of each tile and its FFMAs row by row:
  // both measured faster there than the unsplit kernel's choices (step 15's page).
  constexpr bool early_sync = !SPLIT && EARLY_SYNC;
  constexpr bool by_column = !SPLIT && FFMA_BY_COLUMN;
  float acc[THREAD_TILE_Y][THREAD_TILE_X] = {};  // [TY][TX]: this thread's outputs
  // This block's piece of K: k tiles [k_first / TUNE_SPLIT, + k_tiles); the last may be short.
  const int k_first = SPLIT ? blockIdx.z * k_tiles_per_split * TUNE_SPLIT : 0;
  const int k_tiles = SPLIT ? min(k_tiles_per_split, sgemm::ceil_div(p.K - k_first, TUNE_SPLIT))
                            : sgemm::ceil_div(p.K, TUNE_SPLIT);  // k_tile runs over these
  // Tiles 0 .. stages-2 in flight, one group each (empty past the last tile: the wait below
  // counts groups, so every tile slot commits one).
#pragma unroll
  for (int s = 0; s < stages - 1; ++s) {
    if (s < k_tiles) copy_tile(p, sA[s], sB[s], block_row, block_col, k_first + s * TUNE_SPLIT, tid);
    commit_copies();
  }
  int stage = 0;               // the stage tile k_tile is read from
  int fill_stage = stages - 1;  // the stage tile k_tile + stages - 1 is copied into
  // shared -> registers, one k ahead of the math: buffer k % 2 is used while k + 1 loads.
  float a_frag[2][THREAD_TILE_Y], b_frag[2][THREAD_TILE_X];  // [2][TY], [2][TX]
  if (early_sync && k_tiles > 0) {  // tile 0's first k; every later tile's loads under the last k before it
    wait_copies<stages - 2>();
    __syncthreads();
    load_fragments(a_frag[0], b_frag[0], sA[0], sB[0], 0, thread_x, thread_y);
  }
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    if constexpr (!early_sync) {
      wait_copies<stages - 2>();  // this thread's copies of tile k_tile have landed...
      __syncthreads();  // ...and everyone's; and everyone is done reading tile k_tile - 1's stage
    }

    // Tile k_tile + stages - 1 flies into the stage tile k_tile - 1 was read from.
    if (k_tile + stages - 1 < k_tiles)
      copy_tile(p, sA[fill_stage], sB[fill_stage], block_row, block_col, k_first + (k_tile + stages - 1) * TUNE_SPLIT, tid);
    commit_copies();

    if constexpr (!early_sync) load_fragments(a_frag[0], b_frag[0], sA[stage], sB[stage], 0, thread_x, thread_y);
    const int next_stage = stage + 1 == stages ? 0 : stage + 1;
#pragma unroll K_UNROLL
    for (int k = 0; k < TUNE_SPLIT; ++k) {
      if (k + 1 < TUNE_SPLIT) {
        load_fragments(a_frag[(k + 1) % 2], b_frag[(k + 1) % 2], sA[stage], sB[stage], k + 1, thread_x, thread_y);
      } else if (early_sync) {
        // The last k: this tile's fragments are all in registers. Wait for tile k_tile + 1
        // here rather than at the top of the next pass, so that its first fragments load
        // while this k's FFMAs run, instead of every warp waiting for them after the barrier.
        wait_copies<stages - 2>();  // this thread's copies of tile k_tile + 1 have landed...
        __syncthreads();  // ...and everyone's; and everyone is done reading tile k_tile's stage
        if (k_tile + 1 < k_tiles)
          load_fragments(a_frag[0], b_frag[0], sA[next_stage], sB[next_stage], 0, thread_x, thread_y);
      }
      outer_product<by_column>(acc, a_frag[k % 2], b_frag[k % 2]);
    }
    stage = next_stage;  // the ring advances by one stage per tile
    fill_stage = fill_stage + 1 == stages ? 0 : fill_stage + 1;
  }

  if constexpr (SPLIT) {  // one piece of K: the raw sums go to this piece's slice, 4 columns at a time
    launch_dependents();
    float* slice = partials + std::size_t(blockIdx.z) * p.M * ld_partials;  // [M][ld_partials]
#pragma unroll
    for (int i = 0; i < THREAD_TILE_Y; ++i)
#pragma unroll
      for (int j = 0; j < THREAD_TILE_X; j += 4) {
        const int row = block_row + tile_row(thread_y, i);
        const int col = block_col + tile_col(thread_x, j);  // a multiple of 4, as is ld_partials
        if (row < p.M && col < ld_partials)
          *reinterpret_cast<float4*>(&at(slice, ld_partials, row, col)) =
              make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      }
    return;
  }
  // One block per SM: while this block stores its 128 x 256 outputs the SM does nothing else,
  // so C goes out as 16-byte vectors where it can (C's rows 16-byte aligned, the vector inside).
  const bool c_aligned = VECTOR_C && p.ldc % 4 == 0 && reinterpret_cast<uintptr_t>(p.C) % 16 == 0;
#pragma unroll
  for (int i = 0; i < THREAD_TILE_Y; ++i)
#pragma unroll
    for (int j = 0; j < THREAD_TILE_X; j += 4) {
      const int row = block_row + tile_row(thread_y, i);
      const int col = block_col + tile_col(thread_x, j);  // the first of 4 consecutive columns
      if (row >= p.M) continue;
      if (c_aligned && col + 4 <= p.N)
        store_c4(p, row, col, acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      else
#pragma unroll
        for (int v = 0; v < 4; ++v)
          if (col + v < p.N) store_c(p, row, col + v, acc[i][j + v]);
    }
}

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) sgemm_kernel(sgemm::Problem p) {
  block_gemm<false>(p, 0, nullptr, 0);
}

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    sgemm_kernel_split(sgemm::Problem p, int k_tiles_per_split, float* partials, int ld_partials) {
  block_gemm<true>(p, k_tiles_per_split, partials, ld_partials);
}

// A reduction's output: C's four elements at (row, col .. col + 3) = alpha * sum + beta * C,
// as one 16-byte store_c4 where C is aligned there and all four lie inside, else one float
// at a time.
__device__ __forceinline__ void store_sum(const sgemm::Problem& p, int row, int col, float4 sum) {
  const bool c_aligned = VECTOR_C && p.ldc % 4 == 0 && reinterpret_cast<uintptr_t>(p.C) % 16 == 0;
  if (c_aligned && col + 4 <= p.N) {
    store_c4(p, row, col, sum.x, sum.y, sum.z, sum.w);
    return;
  }
  const float out[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
  for (int v = 0; v < 4; ++v)
    if (col + v < p.N) store_c(p, row, col + v, out[v]);
}

// C = alpha * (piece 0 + piece 1 + ... + piece splits-1) + beta * C, four columns of one row
// per thread. The pieces are added in the same order on every run, so the result has the
// same bits every time (float atomics would add them in whatever order the blocks finish).
__global__ void __launch_bounds__(REDUCE_THREADS)
    sgemm_kernel_split_reduce(sgemm::Problem p, int splits, const float* partials, int ld_partials) {
  const int vectors_per_row = ld_partials / 4;
  const long long vector = static_cast<long long>(blockIdx.x) * REDUCE_THREADS + threadIdx.x;
  if (vector >= static_cast<long long>(p.M) * vectors_per_row) return;
  wait_for_producer();  // the split kernel's partial sums are all written
  const int row = static_cast<int>(vector / vectors_per_row), col = static_cast<int>(vector % vectors_per_row) * 4;
  const std::size_t slice_floats = std::size_t(p.M) * ld_partials;
  const float* piece = partials + std::size_t(row) * ld_partials + col;
  float4 sum = *reinterpret_cast<const float4*>(piece);
  for (int z = 1; z < splits; ++z) {
    const float4 v = *reinterpret_cast<const float4*>(piece + z * slice_floats);
    sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
  }
  store_sum(p, row, col, sum);
}

// Blocks the whole GPU runs at once: SMs x blocks per SM (one on an H100 at this tile),
// asked for the split kernel with its shared memory. Every GEMM kernel of the step needs
// more than 230 registers a thread, so registers alone hold each to one block per SM.
int gpu_slots() {
  static const int slots = [] {
    int per_sm = 0;
    const int sms = sgemm::gpu().sm_count;  // the SMs this run has (fewer with --sms)
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sgemm_kernel_split, THREADS, SHARED_BYTES_SPLIT));
    return sms * std::max(per_sm, 1);
  }();
  return slots;
}

// The partial sums of `pieces` pieces, in tile-times (one k tile of one block: BM x BN x
// TUNE_SPLIT FMAs on one SM's FP32 lanes): M x N floats per piece written, then read back by
// the reduction. What fits in half the L2 moves at L2_BANDWIDTH_RATIO times the device
// memory's peak bandwidth, the rest at that peak. On an H100 (50 MB of L2) one tile-time is
// 4.1 us and 1024^3's four pieces (16 MiB) cost 0.6 of them; on an RTX A6000 (6 MB of L2,
// 768 GB/s) 2048^3 in 13 pieces (208 MiB) would cost 123, more than the 28 they save.
double partial_sums_tile_times(const sgemm::Problem& p, int pieces) {
  const sgemm::Gpu& gpu = sgemm::gpu();
  const double tile_us = double(BM) * BN * TUNE_SPLIT / (double(gpu.fp32_lanes_per_sm) * gpu.clock_mhz);
  const double bytes = double(pieces) * p.M * p.N * sizeof(float), in_l2 = std::min(bytes, 0.5 * gpu.l2_bytes);
  return 2.0 * (in_l2 / L2_BANDWIDTH_RATIO + (bytes - in_l2)) / gpu.dram_bytes_per_us / tile_us;
}

// How many pieces K is cut into, from the shape. With T output tiles and S pieces of
// ceil(k_tiles / S) k tiles each, T * S blocks run in ceil(T * S / slots) waves, so the time
// is about waves x (k tiles per piece) tile-times, plus the partial sums' traffic. More pieces
// are taken only where they cut that estimate by MIN_GAIN_PERCENT; each piece keeps at least
// MIN_SPLIT_K_TILES k tiles.
int choose_splits(const sgemm::Problem& p, int tiles) {
  const int slots = gpu_slots();
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  const int most = std::min(MAX_SPLITS, std::max(1, k_tiles / MIN_SPLIT_K_TILES));
  auto tile_times = [&](int splits) {  // waves x k tiles per piece, and the partial sums
    const long long per_piece = sgemm::ceil_div(k_tiles, splits);
    const int pieces = sgemm::ceil_div(k_tiles, per_piece);
    const long long blocks = static_cast<long long>(tiles) * pieces;
    return double((blocks + slots - 1) / slots * per_piece) + (pieces > 1 ? partial_sums_tile_times(p, pieces) : 0.0);
  };
  int best = 1;
  for (int splits = 2; splits <= most; ++splits)
    if (tile_times(splits) * (100 + MIN_GAIN_PERCENT) <= tile_times(best) * 100) best = splits;
  return best;
}

// Whether a reduction kernel was compiled with its griddepcontrol.wait (sm_90 and newer), so
// that its launch may overlap the kernel before it: a build whose reduction comes from older
// PTX (say compute_80, JIT-compiled for this GPU) must not let it start early.
template <class Kernel>
bool waits_for_producer(Kernel* kernel) {
  static const bool waits = [kernel] {  // one answer per reduction kernel
    cudaFuncAttributes attributes = {};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    return attributes.ptxVersion >= 90;
  }();
  return waits;
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

// A reduction kernel over `vectors` float4 outputs, REDUCE_THREADS a block, launched as a
// programmatic dependent launch where it waits for the kernel before it.
template <class... Params, class... Args>
void launch_reduction(void (*kernel)(Params...), long long vectors, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>((vectors + REDUCE_THREADS - 1) / REDUCE_THREADS));
  config.blockDim = dim3(REDUCE_THREADS);
  config.stream = stream;
  cudaLaunchAttribute overlap = {};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = waits_for_producer(kernel) ? 1 : 0;
  config.attrs = &overlap;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
}

void launch(const sgemm::Problem& p, cudaStream_t stream) {
  const dim3 block(THREADS_X, THREADS_Y);
  const dim3 grid = SWAP_XY ? dim3(sgemm::ceil_div(p.M, BM), sgemm::ceil_div(p.N, BN))
                            : dim3(sgemm::ceil_div(p.N, BN), sgemm::ceil_div(p.M, BM));
  CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
  CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel_split, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES_SPLIT));
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  const int k_tiles_per_split = sgemm::ceil_div(k_tiles, choose_splits(p, grid.x * grid.y));
  const int splits = sgemm::ceil_div(k_tiles, k_tiles_per_split);  // no piece left empty
  sgemm::took_path(splits == 1 ? "whole-tiles" : "split-K", splits);
  if (splits == 1) {
    sgemm_kernel<<<grid, block, SHARED_BYTES, stream>>>(p);
    return;
  }
  const int ld_partials = sgemm::ceil_div(p.N, 4) * 4;
  float* partials = partials_workspace(std::size_t(splits) * p.M * ld_partials, stream);
  sgemm_kernel_split<<<dim3(grid.x, grid.y, splits), block, SHARED_BYTES_SPLIT, stream>>>(p, k_tiles_per_split, partials, ld_partials);
  launch_reduction(sgemm_kernel_split_reduce, static_cast<long long>(p.M) * (ld_partials / 4), stream, p, splits,
                   static_cast<const float*>(partials), ld_partials);
}

int main(int argc, char** argv) {
  return sgemm::run_step(argc, argv, SGEMM_STEP, launch,
                         {.shared_bytes = SHARED_BYTES > SHARED_BYTES_SPLIT ? SHARED_BYTES : SHARED_BYTES_SPLIT});
}
