// A control, not a step: cuBLAS with TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32), one
// pass, wrapped as a step. Its inputs are rounded to TF32's 10-bit mantissa, so its error is
// hundreds of times an FP32 SGEMM's, and the harness's FP32-grade check must reject it (exit
// code 1) at every size; the GPU suite and scripts/device_run.sh hold that. With
// --record-failures its speed and error give the "one-pass TF32" context point of the plots:
// fast, and not an SGEMM.
#include <cublas_v2.h>

#include "sgemm.cuh"

void launch(const sgemm::Problem& p, cudaStream_t stream) {
  static cublasHandle_t handle = [] {
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    return h;
  }();
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  // Row-major C = A B is column-major C^T = B^T A^T: the operand swap of the harness's reference.
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &p.alpha, p.B, CUDA_R_32F, p.ldb, p.A,
                            CUDA_R_32F, p.lda, &p.beta, p.C, CUDA_R_32F, p.ldc, CUBLAS_COMPUTE_32F_FAST_TF32,
                            CUBLAS_GEMM_DEFAULT));
}

int main(int argc, char** argv) { return sgemm::run_step(argc, argv, SGEMM_STEP, launch); }
