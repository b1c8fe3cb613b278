// The cuBLAS reference: the baseline every step is verified and timed against.
#include "reference.cuh"

namespace sgemm {

namespace {
cublasHandle_t g_handle = nullptr;
}

void create_cublas_handle() {
  if (g_handle) return;
  CUBLAS_CHECK(cublasCreate(&g_handle));
  // FP32 with default math: no TF32 tensor cores. CUBLAS_DEFAULT_MATH never picks TF32 for
  // SGEMM on its own; the harness also refuses to run with NVIDIA_TF32_OVERRIDE set to a
  // non-zero value (see runner.cu), so the baseline is the plain FP32 one.
  CUBLAS_CHECK(cublasSetMathMode(g_handle, CUBLAS_DEFAULT_MATH));
}

void destroy_cublas_handle() {
  if (g_handle) cublasDestroy(g_handle);
  g_handle = nullptr;
}

// cuBLAS is column-major; our matrices are row-major. A row-major matrix X (rows x cols,
// row stride ld) is, byte for byte, the column-major matrix X^T with leading dimension ld.
// So the row-major product C = A * B is, to cuBLAS, the column-major product
//
//     C^T = B^T * A^T      (an N x M result from an N x K and a K x M operand)
//
// which is one plain column-major GEMM with the operands swapped and no transposes:
// m = N, n = M, k = K, first operand B (ld = ldb), second A (ld = lda), output C (ld = ldc).
void cublas_sgemm(const Problem& p, cudaStream_t stream) {
  CUBLAS_CHECK(cublasSetStream(g_handle, stream));
  CUBLAS_CHECK(cublasSgemm(g_handle, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &p.alpha, p.B, p.ldb,
                           p.A, p.lda, &p.beta, p.C, p.ldc));
}

void cublas_dgemm(int M, int N, int K, double alpha, const double* A, const double* B, double beta, double* C,
                  cudaStream_t stream) {
  CUBLAS_CHECK(cublasSetStream(g_handle, stream));
  CUBLAS_CHECK(cublasDgemm(g_handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N));
}

std::string cublas_version_string() {
  int major = 0, minor = 0, patch = 0;
  CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
  CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
  CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace sgemm
