// Step 07 - transpose                                         previous: 06_register_caching
// Change: A is stored transposed in shared memory, sA[k][m] instead of sA[m][k], with its
//         rows padded by A_PAD floats.
// Why:    a thread's a_frag is THREAD_TILE_Y rows of A at one k. In step 06 they sit
//         TUNE_SPLIT floats apart, so nvcc reads A along k instead: one LDS.128 brings 4 k of
//         one row, and a thread holds 4 * THREAD_TILE_Y floats of A at once, too many to load
//         ahead within 128 registers, so warps wait on shared memory. Transposed, one k's
//         a_frag is contiguous: LDS.128 along M, THREAD_TILE_Y + THREAD_TILE_X floats per k.
//         The price: the copy into shared memory now writes down columns, and those stores
//         can collide in one bank.
// Where:  copy_tile (A stored as sA[k][r], copied in runs of A_COPY_RUN k) and sgemm_kernel (sA's
//         shape; a_frag read along M).
// Watch:  short_scoreboard stalls (waits on shared memory); shared-memory bank conflicts on
//         the stores (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st).
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -arch=sm_80 -Icommon common/*.cpp common/*.cu steps/07_transpose/transpose.cu -lcublas -o build-alone/transpose
#include "sgemm.cuh"

constexpr int THREADS_X = SGEMM_KNOB(THREADS_X, 32);     // threads per block along N (columns of C)
constexpr int THREADS_Y = SGEMM_KNOB(THREADS_Y, 8);      // threads per block along M (rows of C)
constexpr int TUNE_SPLIT = SGEMM_KNOB(TUNE_SPLIT, 32);    // K-width of a shared tile
constexpr bool SWAP_XY = SGEMM_KNOB(SWAP_XY, true);    // true: blockIdx.x runs along M, blockIdx.y along N
constexpr int THREAD_TILE_X = SGEMM_KNOB(THREAD_TILE_X, 4);  // outputs per thread along N
constexpr int THREAD_TILE_Y = SGEMM_KNOB(THREAD_TILE_Y, 16); // outputs per thread along M
constexpr int MIN_BLOCKS = SGEMM_KNOB(MIN_BLOCKS, 2);     // blocks per SM the compiler must fit: caps registers

constexpr int A_PAD = SGEMM_KNOB(A_PAD, 4);  // floats of padding per row of the transposed A tile
constexpr int A_COPY_RUN = SGEMM_KNOB(A_COPY_RUN, 16);  // consecutive k of one row of A that neighbouring lanes copy

constexpr int THREADS = THREADS_X * THREADS_Y;
constexpr int BM = THREADS_Y * THREAD_TILE_Y;  // rows of C per block
constexpr int BN = THREADS_X * THREAD_TILE_X;  // columns of C per block
constexpr int SHARED_BYTES = TUNE_SPLIT * (BM + A_PAD + BN) * sizeof(float);  // sA and sB: what the harness checks against the GPU
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "a block is whole warps, at most 1024 threads");
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

// *src, or 0 outside the matrix: edge tiles are padded with zeros, which add nothing.
__device__ __forceinline__ float load_or_zero(const float* src, bool inside) { return inside ? *src : 0.0f; }

// C[row][col] = alpha * acc + beta * C[row][col]; with beta == 0, C is write-only (BLAS
// semantics): NaN or garbage already in C never leaks into the result.
__device__ __forceinline__ void store_c(const sgemm::Problem& p, int row, int col, float acc) {
  float& c = at(p.C, p.ldc, row, col);
  c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;
}

// global -> shared: the TUNE_SPLIT-wide tiles of A and B that start at column / row k0.
// Consecutive threads take consecutive elements of a row, so the global loads coalesce. A
// thread copies the same columns of both tiles every time, one pass of rows apart, so its
// addresses and bounds are worked out once per tile, not once per element.
__device__ __forceinline__ void copy_tile(const sgemm::Problem& p, float (&sA)[TUNE_SPLIT][BM + A_PAD], float (&sB)[TUNE_SPLIT][BN],
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
    sA[a_col][r] = load_or_zero(a_src + n * A_PASS * p.lda, a_col_inside && block_row + r < p.M);
  }
  constexpr int B_PASS = THREADS / BN;  // rows of the B tile copied per pass
  const int b_row = tid / BN, b_col = tid % BN;
  const float* b_src = &at(p.B, p.ldb, k0 + b_row, block_col + b_col);
  const bool b_col_inside = block_col + b_col < p.N;
#pragma unroll
  for (int n = 0; n < TUNE_SPLIT / B_PASS; ++n) {
    const int r = b_row + n * B_PASS;
    sB[r][b_col] = load_or_zero(b_src + n * B_PASS * p.ldb, b_col_inside && k0 + r < p.K);
  }
}

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) sgemm_kernel(sgemm::Problem p) {
  __shared__ __align__(16) float sA[TUNE_SPLIT][BM + A_PAD];  // [TUNE_SPLIT][BM]: A transposed on load
  __shared__ __align__(16) float sB[TUNE_SPLIT][BN];          // [TUNE_SPLIT][BN]: the block's columns of B
  static_assert(sizeof(sA) + sizeof(sB) == SHARED_BYTES, "the harness checks the GPU for SHARED_BYTES");

  const int tid = threadIdx.y * THREADS_X + threadIdx.x;
  const int block_row = (SWAP_XY ? blockIdx.x : blockIdx.y) * BM;
  const int block_col = (SWAP_XY ? blockIdx.y : blockIdx.x) * BN;

  float acc[THREAD_TILE_Y][THREAD_TILE_X] = {};  // [TY][TX]: this thread's outputs
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);  // k_tile runs over these
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    copy_tile(p, sA, sB, block_row, block_col, k_tile * TUNE_SPLIT, tid);
    __syncthreads();  // the tile is complete before anyone reads it

#pragma unroll
    for (int k = 0; k < TUNE_SPLIT; ++k) {
      float a_frag[THREAD_TILE_Y], b_frag[THREAD_TILE_X];  // this k's column of A, row of B
#pragma unroll
      for (int i = 0; i < THREAD_TILE_Y; ++i) a_frag[i] = sA[k][threadIdx.y * THREAD_TILE_Y + i];
#pragma unroll
      for (int j = 0; j < THREAD_TILE_X; ++j) b_frag[j] = sB[k][threadIdx.x * THREAD_TILE_X + j];
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
      const int row = block_row + threadIdx.y * THREAD_TILE_Y + i;
      const int col = block_col + threadIdx.x * THREAD_TILE_X + j;
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
