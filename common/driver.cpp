#include "driver.hpp"

#include <dirent.h>
#include <dlfcn.h>

#include <cstring>
#include <stdexcept>

namespace sgemm {

namespace {

constexpr int kCudaSuccess = 0;          // CUDA_SUCCESS
constexpr int kCudaErrorNoDevice = 100;  // CUDA_ERROR_NO_DEVICE

std::string version_text(int v) {  // 12020 -> "12.2"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// Entries of the NVIDIA kernel module's GPU list (one directory per GPU); 0 if none or no module.
int listed_gpus(const char* dir) {
  DIR* d = ::opendir(dir);
  if (!d) return 0;
  int n = 0;
  while (const dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++n;
  ::closedir(d);
  return n;
}

}  // namespace

std::string explain_insufficient_driver(int runtime_version, const char* driver_library, const char* gpu_list_dir) {
  const std::string runtime = "CUDA runtime " + version_text(runtime_version);
  // Never closed: unloading a driver library after cuInit is not safe.
  void* lib = ::dlopen(driver_library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    if (const int listed = listed_gpus(gpu_list_dir); listed > 0)
      throw std::runtime_error("the kernel module lists " + std::to_string(listed) + " GPU(s) but the CUDA driver " +
                               "library (" + driver_library + ") cannot be loaded; reinstall the driver");
    return std::string("no CUDA driver installed: ") + driver_library + " not found";
  }
  using IntFn = int (*)(int*);
  using InitFn = int (*)(unsigned);
  const auto init = reinterpret_cast<InitFn>(::dlsym(lib, "cuInit"));
  const auto get_version = reinterpret_cast<IntFn>(::dlsym(lib, "cuDriverGetVersion"));
  const auto get_count = reinterpret_cast<IntFn>(::dlsym(lib, "cuDeviceGetCount"));
  if (!init || !get_version || !get_count)
    return std::string(driver_library) + " is not a CUDA driver (cuInit, cuDriverGetVersion or cuDeviceGetCount missing)";
  int driver_version = 0;
  if (get_version(&driver_version) != kCudaSuccess) driver_version = 0;
  const std::string driver = "the CUDA driver (it supports CUDA " + version_text(driver_version) + ")";
  const int rc = init(0);
  int devices = 0;
  if (rc == kCudaSuccess && get_count(&devices) != kCudaSuccess) devices = 0;
  if (rc == kCudaSuccess && devices > 0)
    throw std::runtime_error(driver + " is older than the " + runtime + " this program was built with; " +
                             std::to_string(devices) + " GPU(s) found: update the driver");
  const int listed = listed_gpus(gpu_list_dir);
  if (rc != kCudaSuccess && rc != kCudaErrorNoDevice && listed > 0)
    throw std::runtime_error(driver + " fails to start (cuInit error " + std::to_string(rc) + ") although the " +
                             "kernel module lists " + std::to_string(listed) + " GPU(s), and the " + runtime +
                             " reports an insufficient driver: update or reinstall the driver");
  if (rc == kCudaSuccess) return driver + " finds no device";
  return driver + " finds no device (cuInit error " + std::to_string(rc) + ")";
}

}  // namespace sgemm
