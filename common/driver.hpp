// Telling "no GPU here" from "a GPU whose driver is too old". The CUDA runtime answers
// cudaErrorInsufficientDriver in both cases: on a machine without any driver (CI, a laptop:
// the GPU tests must skip) and on a GPU machine whose driver is older than the runtime this
// program was built with (that machine needs fixing: the GPU tests must fail, not skip).
// Host-only: the driver library is opened with dlopen, so this builds and runs anywhere.
#pragma once
#include <string>

namespace sgemm {

// Called after the runtime reported cudaErrorInsufficientDriver; `runtime_version` is the
// runtime's (CUDART_VERSION, e.g. 13000). Looks for a GPU through the driver library itself
// and through the kernel module's list of GPUs (`gpu_list_dir`). Returns why there is no
// GPU (no driver library, or no device) for a "no GPU" message; throws std::runtime_error
// when there is a GPU, saying the driver must be updated.
std::string explain_insufficient_driver(int runtime_version, const char* driver_library = "libcuda.so.1",
                                        const char* gpu_list_dir = "/proc/driver/nvidia/gpus");

}  // namespace sgemm
