// Error checking for every CUDA and cuBLAS call: a failure throws sgemm::CudaError whose
// message names the failing expression, the file and the line, so the harness can print
// one readable line and exit with its own code instead of crashing.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace sgemm {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t st, const char* expr, const char* file, int line);

inline void cuda_check(cudaError_t err, const char* expr, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, expr, file, line);
}
inline void cublas_check(cublasStatus_t st, const char* expr, const char* file, int line) {
  if (st != CUBLAS_STATUS_SUCCESS) throw_cublas_error(st, expr, file, line);
}
}  // namespace detail

}  // namespace sgemm

#define CUDA_CHECK(expr) ::sgemm::detail::cuda_check((expr), #expr, __FILE__, __LINE__)
#define CUBLAS_CHECK(expr) ::sgemm::detail::cublas_check((expr), #expr, __FILE__, __LINE__)
// After a kernel launch: catches bad launch configurations (too much shared memory, ...).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
