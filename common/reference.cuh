// The harness's side of the cuBLAS reference (the step-facing call is in sgemm.cuh).
#pragma once
#include <string>

#include "sgemm.cuh"

namespace sgemm {
void create_cublas_handle();
void destroy_cublas_handle();
std::string cublas_version_string();

// The FP64 reference: C = alpha * A * B + beta * C in double, row-major and compact
// (lda = K, ldb = ldc = N), on device buffers, with the same operand swap as cublas_sgemm.
void cublas_dgemm(int M, int N, int K, double alpha, const double* A, const double* B, double beta, double* C,
                  cudaStream_t stream);
}  // namespace sgemm
