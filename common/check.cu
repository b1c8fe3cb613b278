#include <sstream>

#include "check.cuh"

namespace sgemm::detail {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  std::ostringstream msg;
  msg << file << ":" << line << ": " << expr << " failed: " << cudaGetErrorName(err) << " ("
      << cudaGetErrorString(err) << ")";
  throw CudaError(msg.str());
}

void throw_cublas_error(cublasStatus_t st, const char* expr, const char* file, int line) {
  std::ostringstream msg;
  msg << file << ":" << line << ": " << expr << " failed: " << cublasGetStatusName(st) << " ("
      << cublasGetStatusString(st) << ")";
  throw CudaError(msg.str());
}

}  // namespace sgemm::detail
