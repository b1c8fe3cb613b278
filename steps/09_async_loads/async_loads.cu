// Step 09 - async loads                                           previous: 08_warp_reshape
// Change: with ASYNC_LOADS, the global -> shared copies are cp.async instructions: each
//         thread hands the copy to the memory system and waits for all of its copies just
//         before the barrier, instead of loading into a register and storing it.
// Why:    a synchronous copy holds a register per element and stalls the thread until the
//         load returns before it can issue the store. cp.async writes shared memory
//         directly, so a thread issues all of its copies back to back and the loads of the
//         whole tile are in flight together. Out-of-range elements are zero-filled by the
//         copy itself (source size 0).
// Where:  copy_or_zero (cp.async, zero-fill by source size); copy_tile (tiles inside A and B
//         without zero-fill); wait_copies before the barrier in sgemm_kernel.
// Watch:  LDGSTS in the SASS instead of LDG + STS; stall reasons "long scoreboard" fall.
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -arch=sm_80 -Icommon common/*.cpp common/*.cu steps/09_async_loads/async_loads.cu -lcublas -o build-alone/async_loads
#include "sgemm.cuh"

constexpr int THREADS_X = SGEMM_KNOB(THREADS_X, 32);     // threads per block along N (columns of C)
constexpr int THREADS_Y = SGEMM_KNOB(THREADS_Y, 8);      // threads per block along M (rows of C)
constexpr int TUNE_SPLIT = SGEMM_KNOB(TUNE_SPLIT, 32);    // K-width of a shared tile
constexpr bool SWAP_XY = SGEMM_KNOB(SWAP_XY, true);    // true: blockIdx.x runs along M, blockIdx.y along N
constexpr int THREAD_TILE_X = SGEMM_KNOB(THREAD_TILE_X, 4);  // outputs per thread along N
constexpr int THREAD_TILE_Y = SGEMM_KNOB(THREAD_TILE_Y, 16); // outputs per thread along M
constexpr int MIN_BLOCKS = SGEMM_KNOB(MIN_BLOCKS, 2);     // blocks per SM the compiler must fit: caps registers
constexpr int WARP_SHAPE_X = SGEMM_KNOB(WARP_SHAPE_X, 32);  // lanes of a warp along N; 32 / WARP_SHAPE_X along M
constexpr bool ASYNC_LOADS = SGEMM_KNOB(ASYNC_LOADS, true);  // global -> shared with cp.async (false: through registers)
constexpr bool SKIP_ZERO_FILL = SGEMM_KNOB(SKIP_ZERO_FILL, true);  // tiles wholly inside A and B: cp.async without zero-fill

constexpr int A_PAD = SGEMM_KNOB(A_PAD, 4);  // floats of padding per row of the transposed A tile
constexpr int A_COPY_RUN = SGEMM_KNOB(A_COPY_RUN, 16);  // consecutive k of one row of A that neighbouring lanes copy

constexpr int THREADS = THREADS_X * THREADS_Y;
constexpr int BM = THREADS_Y * THREAD_TILE_Y;  // rows of C per block
constexpr int BN = THREADS_X * THREAD_TILE_X;  // columns of C per block
constexpr int SHARED_BYTES = TUNE_SPLIT * (BM + A_PAD + BN) * sizeof(float);  // sA and sB: what the harness checks against the GPU
constexpr int WARP_SHAPE_Y = 32 / WARP_SHAPE_X;
constexpr int WARPS_X = THREADS_X / WARP_SHAPE_X;  // warps side by side along N
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "a block is whole warps, at most 1024 threads");
static_assert(32 % WARP_SHAPE_X == 0 && THREADS_X % WARP_SHAPE_X == 0 && THREADS_Y % WARP_SHAPE_Y == 0,
              "warps of WARP_SHAPE_X x WARP_SHAPE_Y lanes tile the THREADS_X x THREADS_Y threads");
static_assert((BM + A_PAD + BN) * TUNE_SPLIT * sizeof(float) <= 48 * 1024, "static shared memory is at most 48 KB");
static_assert(THREADS % TUNE_SPLIT == 0 && BM % (THREADS / TUNE_SPLIT) == 0 && THREADS % BN == 0 &&
                  TUNE_SPLIT % (THREADS / BN) == 0,
              "the threads cover whole rows of each tile per pass, and whole passes cover the tile");
static_assert(A_PAD % 4 == 0 && THREAD_TILE_Y % 4 == 0 && THREAD_TILE_X % 4 == 0,
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

// Waits until this thread's cp.async copies have landed in shared memory.
__device__ __forceinline__ void wait_copies() {
  if constexpr (ASYNC_LOADS) asm volatile("cp.async.wait_all;\n" ::: "memory");
}

// C[row][col] = alpha * acc + beta * C[row][col]; with beta == 0, C is write-only (BLAS
// semantics): NaN or garbage already in C never leaks into the result.
__device__ __forceinline__ void store_c(const sgemm::Problem& p, int row, int col, float acc) {
  float& c = at(p.C, p.ldc, row, col);
  c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;
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
__device__ __forceinline__ void copy_tile_elements(const sgemm::Problem& p, float (&sA)[TUNE_SPLIT][BM + A_PAD], float (&sB)[TUNE_SPLIT][BN],
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
  constexpr int B_PASS = THREADS / BN;  // rows of the B tile copied per pass
  const int b_row = tid / BN, b_col = tid % BN;
  const float* b_src = &at(p.B, p.ldb, k0 + b_row, block_col + b_col);
  const bool b_col_inside = block_col + b_col < p.N;
#pragma unroll
  for (int n = 0; n < TUNE_SPLIT / B_PASS; ++n) {
    const int r = b_row + n * B_PASS;
    copy_or_zero<ZERO_FILL>(&sB[r][b_col], b_src + n * B_PASS * p.ldb, b_col_inside && k0 + r < p.K);
  }
}

// The tile at k0. With SKIP_ZERO_FILL, a tile wholly inside A and B (all but the last block
// row, the last block column and the last k tile) is copied without zero-fill.
__device__ __forceinline__ void copy_tile(const sgemm::Problem& p, float (&sA)[TUNE_SPLIT][BM + A_PAD], float (&sB)[TUNE_SPLIT][BN],
                                          int block_row, int block_col, int k0, int tid) {
  if (SKIP_ZERO_FILL && ASYNC_LOADS && block_row + BM <= p.M && block_col + BN <= p.N && k0 + TUNE_SPLIT <= p.K)
    copy_tile_elements<false>(p, sA, sB, block_row, block_col, k0, tid);
  else
    copy_tile_elements<true>(p, sA, sB, block_row, block_col, k0, tid);
}

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) sgemm_kernel(sgemm::Problem p) {
  __shared__ __align__(16) float sA[TUNE_SPLIT][BM + A_PAD];  // [TUNE_SPLIT][BM]: A transposed on load
  __shared__ __align__(16) float sB[TUNE_SPLIT][BN];          // [TUNE_SPLIT][BN]: the block's columns of B
  static_assert(sizeof(sA) + sizeof(sB) == SHARED_BYTES, "the harness checks the GPU for SHARED_BYTES");

  const int tid = threadIdx.y * THREADS_X + threadIdx.x;
  const int block_row = (SWAP_XY ? blockIdx.x : blockIdx.y) * BM;
  const int block_col = (SWAP_XY ? blockIdx.y : blockIdx.x) * BN;
  // This thread's place in the block's thread grid: its warp's rectangle, then its lane.
  const int warp = tid / 32, lane = tid % 32;
  const int thread_x = (warp % WARPS_X) * WARP_SHAPE_X + lane % WARP_SHAPE_X;
  const int thread_y = (warp / WARPS_X) * WARP_SHAPE_Y + lane / WARP_SHAPE_X;

  float acc[THREAD_TILE_Y][THREAD_TILE_X] = {};  // [TY][TX]: this thread's outputs
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);  // k_tile runs over these
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    copy_tile(p, sA, sB, block_row, block_col, k_tile * TUNE_SPLIT, tid);
    wait_copies();    // this thread's copies have landed...
    __syncthreads();  // ...and everyone's: the tile is complete before anyone reads it

#pragma unroll
    for (int k = 0; k < TUNE_SPLIT; ++k) {
      float a_frag[THREAD_TILE_Y], b_frag[THREAD_TILE_X];  // this k's column of A, row of B
#pragma unroll
      for (int i = 0; i < THREAD_TILE_Y; ++i) a_frag[i] = sA[k][tile_row(thread_y, i)];
#pragma unroll
      for (int j = 0; j < THREAD_TILE_X; ++j) b_frag[j] = sB[k][tile_col(thread_x, j)];
#pragma unroll
      for (int i = 0; i < THREAD_TILE_Y; ++i)
#pragma unroll
        for (int j = 0; j < THREAD_TILE_X; ++j) acc[i][j] += a_frag[i] * b_frag[j];
    }
    __syncthreads();  // everyone is done with the tile before it is overwritten
  }

#pragma unroll
  for (int i = 0; i < THREAD_TILE_Y; ++i)
#pragma unroll
    for (int j = 0; j < THREAD_TILE_X; ++j) {
      const int row = block_row + tile_row(thread_y, i);
      const int col = block_col + tile_col(thread_x, j);
      if (row < p.M && col < p.N) store_c(p, row, col, acc[i][j]);
    }
}

void launch(const sgemm::Problem& p, cudaStream_t stream) {
  const dim3 block(THREADS_X, THREADS_Y);
  const dim3 grid = SWAP_XY ? dim3(sgemm::ceil_div(p.M, BM), sgemm::ceil_div(p.N, BN))
                            : dim3(sgemm::ceil_div(p.N, BN), sgemm::ceil_div(p.M, BM));
  sgemm_kernel<<<grid, block, 0, stream>>>(p);
}

int main(int argc, char** argv) {
  return sgemm::run_step(argc, argv, SGEMM_STEP, launch, {.shared_bytes = SHARED_BYTES});
}
