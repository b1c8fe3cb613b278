// Step 02 - refactored                                               previous: 01_initial
// Change: the same algorithm, tidied: named block dimensions, __launch_bounds__, and small
//         index helpers (at(), store_c()) that every later step keeps.
// Why:    later steps change how a block's work is split; named sizes and helpers keep those
//         diffs about the idea. __launch_bounds__ tells the compiler the block size, so it
//         can budget registers for it (it changes nothing here: the kernel needs few).
// Watch:  nothing should move: same SASS inner loop, same GFLOPS as step 01 (within noise).
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -arch=sm_80 -Icommon common/*.cpp common/*.cu steps/02_refactored/refactored.cu -lcublas -o build-alone/refactored
#include "sgemm.cuh"

constexpr int THREADS_X = SGEMM_KNOB(THREADS_X, 16);  // threads per block along N (columns of C)
constexpr int THREADS_Y = SGEMM_KNOB(THREADS_Y, 16);  // threads per block along M (rows of C)
static_assert(THREADS_X * THREADS_Y <= 1024, "a block has at most 1024 threads");

// Element (row, col) of a row-major matrix with row stride ld.
template <class T>
__device__ __forceinline__ T& at(T* matrix, int ld, int row, int col) {
  return matrix[row * ld + col];
}

// C[row][col] = alpha * acc + beta * C[row][col]; with beta == 0, C is write-only (BLAS
// semantics): NaN or garbage already in C never leaks into the result.
__device__ __forceinline__ void store_c(const sgemm::Problem& p, int row, int col, float acc) {
  float& c = at(p.C, p.ldc, row, col);
  c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;
}

__global__ void __launch_bounds__(THREADS_X * THREADS_Y) sgemm_kernel(sgemm::Problem p) {
  const int col = blockIdx.x * THREADS_X + threadIdx.x;
  const int row = blockIdx.y * THREADS_Y + threadIdx.y;
  if (row >= p.M || col >= p.N) return;

  float acc = 0.0f;
  for (int k = 0; k < p.K; ++k) acc += at(p.A, p.lda, row, k) * at(p.B, p.ldb, k, col);
  store_c(p, row, col, acc);
}

void launch(const sgemm::Problem& p, cudaStream_t stream) {
  const dim3 block(THREADS_X, THREADS_Y);
  const dim3 grid(sgemm::ceil_div(p.N, THREADS_X), sgemm::ceil_div(p.M, THREADS_Y));
  sgemm_kernel<<<grid, block, 0, stream>>>(p);
}

int main(int argc, char** argv) { return sgemm::run_step(argc, argv, SGEMM_STEP, launch); }
