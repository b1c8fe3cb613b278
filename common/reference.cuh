// The harness's side of the cuBLAS reference (the step-facing call is in sgemm.cuh).
#pragma once
#include <string>

#include "sgemm.cuh"

namespace sgemm {
void create_cublas_handle();
void destroy_cublas_handle();
std::string cublas_version_string();
}  // namespace sgemm
