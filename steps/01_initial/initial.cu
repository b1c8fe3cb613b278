// Step 01 - initial                                                  previous: 00_cublas
// Change: the simplest correct kernel: one thread computes one element of C.
// Why:    the starting point. threadIdx.x runs along the columns of C, so the 32 threads of a
//         warp read 32 consecutive floats of a row of B (one coalesced 128-byte load) and all
//         read the same element of A (a broadcast). Every operand comes from L1/L2 or DRAM:
//         two loads per FMA, no reuse in registers or shared memory.
// Watch:  memory throughput (L1/L2) is the limit, not FMA; GFLOPS far below cuBLAS.
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -arch=sm_80 -Icommon common/*.cpp common/*.cu steps/01_initial/initial.cu -lcublas -o build-alone/initial
#include "sgemm.cuh"

__global__ void sgemm_kernel(sgemm::Problem p) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= p.M || col >= p.N) return;

  float acc = 0.0f;
  for (int k = 0; k < p.K; ++k) acc += p.A[row * p.lda + k] * p.B[k * p.ldb + col];

  // beta == 0: C is write-only (BLAS semantics), so NaN or garbage in C never leaks in.
  float& c = p.C[row * p.ldc + col];
  c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;
}

void launch(const sgemm::Problem& p, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid(sgemm::ceil_div(p.N, block.x), sgemm::ceil_div(p.M, block.y));
  sgemm_kernel<<<grid, block, 0, stream>>>(p);
}

int main(int argc, char** argv) { return sgemm::run_step(argc, argv, SGEMM_STEP, launch); }
