// Step 03 - shared-memory tiling                                    previous: 02_refactored
// Change: a block stages TUNE_SPLIT-wide tiles of A and B in shared memory; each thread
//         then reads its row of the A tile and its column of the B tile from there.
// Why:    in step 02 every thread fetches all of its K products from L1/L2 on its own. Now a
//         block loads each element of a tile once and THREADS_X (for A) or THREADS_Y (for B)
//         threads reuse it, so global/L2 traffic drops by that factor.
// Where:  copy_tile (one tile of A and of B into shared memory) and sgemm_kernel's k_tile loop
//         (copy, barrier, the products from sA and sB, barrier).
// Watch:  L1/L2 throughput falls, shared-memory loads (LDS) appear in the inner loop, and
//         the __syncthreads barriers (two per tile) start to cost.
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -arch=sm_80 -Icommon common/*.cpp common/*.cu steps/03_shared_memory_tiling/shared_memory_tiling.cu -lcublas -o build-alone/shared_memory_tiling
#include "sgemm.cuh"

constexpr int THREADS_X = SGEMM_KNOB(THREADS_X, 32);   // threads per block along N (columns of C)
constexpr int THREADS_Y = SGEMM_KNOB(THREADS_Y, 16);   // threads per block along M (rows of C)
constexpr int TUNE_SPLIT = SGEMM_KNOB(TUNE_SPLIT, 32);  // K-width of a shared tile

constexpr int THREADS = THREADS_X * THREADS_Y;
constexpr int BM = THREADS_Y;   // rows of C per block
constexpr int BN = THREADS_X;   // columns of C per block
constexpr int SHARED_BYTES = (BM * TUNE_SPLIT + TUNE_SPLIT * BN) * sizeof(float);  // sA and sB: what the harness checks against the GPU
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "a block is whole warps, at most 1024 threads");
static_assert((BM + BN) * TUNE_SPLIT * sizeof(float) <= 48 * 1024, "static shared memory is at most 48 KB");
static_assert(THREADS % TUNE_SPLIT == 0 && BM % (THREADS / TUNE_SPLIT) == 0 && THREADS % BN == 0 &&
                  TUNE_SPLIT % (THREADS / BN) == 0,
              "the threads cover whole rows of each tile per pass, and whole passes cover the tile");

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
__device__ __forceinline__ void copy_tile(const sgemm::Problem& p, float (&sA)[BM][TUNE_SPLIT], float (&sB)[TUNE_SPLIT][BN],
                                          int block_row, int block_col, int k0, int tid) {
  constexpr int A_PASS = THREADS / TUNE_SPLIT;  // rows of the A tile copied per pass
  const int a_row = tid / TUNE_SPLIT, a_col = tid % TUNE_SPLIT;
  const float* a_src = &at(p.A, p.lda, block_row + a_row, k0 + a_col);
  const bool a_col_inside = k0 + a_col < p.K;
#pragma unroll
  for (int n = 0; n < BM / A_PASS; ++n) {
    const int r = a_row + n * A_PASS;
    sA[r][a_col] = load_or_zero(a_src + n * A_PASS * p.lda, a_col_inside && block_row + r < p.M);
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

__global__ void __launch_bounds__(THREADS) sgemm_kernel(sgemm::Problem p) {
  __shared__ float sA[BM][TUNE_SPLIT];  // [BM][TUNE_SPLIT]: the block's rows of A, one k tile
  __shared__ float sB[TUNE_SPLIT][BN];  // [TUNE_SPLIT][BN]: the block's columns of B, one k tile
  static_assert(sizeof(sA) + sizeof(sB) == SHARED_BYTES, "the harness checks the GPU for SHARED_BYTES");

  const int tid = threadIdx.y * THREADS_X + threadIdx.x;
  const int block_row = blockIdx.y * BM;
  const int block_col = blockIdx.x * BN;

  float acc = 0.0f;
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);  // k_tile runs over these
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    copy_tile(p, sA, sB, block_row, block_col, k_tile * TUNE_SPLIT, tid);
    __syncthreads();  // the tile is complete before anyone reads it

#pragma unroll
    for (int k = 0; k < TUNE_SPLIT; ++k) acc += sA[threadIdx.y][k] * sB[k][threadIdx.x];
    __syncthreads();  // everyone is done with the tile before it is overwritten
  }

  const int row = block_row + threadIdx.y;
  const int col = block_col + threadIdx.x;
  if (row < p.M && col < p.N) store_c(p, row, col, acc);
}

void launch(const sgemm::Problem& p, cudaStream_t stream) {
  const dim3 block(THREADS_X, THREADS_Y);
  const dim3 grid(sgemm::ceil_div(p.N, BN), sgemm::ceil_div(p.M, BM));
  sgemm_kernel<<<grid, block, 0, stream>>>(p);
}

int main(int argc, char** argv) {
  return sgemm::run_step(argc, argv, SGEMM_STEP, launch, {.shared_bytes = SHARED_BYTES});
}
