// A stand-in for the CUDA driver library (libcuda.so.1), for testing driver.cpp on any
// machine: FAKE_CUINIT, FAKE_DEVICES and FAKE_DRIVER_VERSION say what it reports.
#include <cstdlib>

namespace {
int env(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}
}  // namespace

extern "C" {
int cuInit(unsigned) { return env("FAKE_CUINIT", 0); }
int cuDriverGetVersion(int* v) {
  *v = env("FAKE_DRIVER_VERSION", 12020);
  return 0;
}
int cuDeviceGetCount(int* n) {
  *n = env("FAKE_DEVICES", 1);
  return 0;
}
}
