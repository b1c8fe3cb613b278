// "No GPU" (skip) against "a GPU with a driver too old" (fail), with a stand-in driver.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "driver.hpp"

using namespace sgemm;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// What explain_insufficient_driver says: its return value, or "THROWS: " + the message.
std::string outcome(const char* library, const char* gpu_dir) {
  try {
    return explain_insufficient_driver(13000, library, gpu_dir);
  } catch (const std::runtime_error& e) {
    return std::string("THROWS: ") + e.what();
  }
}

void fake(const char* init, const char* devices) {
  ::setenv("FAKE_CUINIT", init, 1);
  ::setenv("FAKE_DEVICES", devices, 1);
  ::setenv("FAKE_DRIVER_VERSION", "12020", 1);
}
}  // namespace

TEST_CASE("no driver library and no GPU listed: no GPU, which the GPU tests skip") {
  const std::string r = outcome("libcuda_that_does_not_exist.so.1", "/nonexistent/gpus");
  CHECK(contains(r, "no CUDA driver installed"));
  CHECK_FALSE(contains(r, "THROWS"));
}

TEST_CASE("a driver that finds a GPU but is older than the runtime is a failure, not a skip") {
  fake("0", "1");
  const std::string r = outcome(SGEMM_FAKE_LIBCUDA, "/nonexistent/gpus");
  CHECK(contains(r, "THROWS: the CUDA driver (it supports CUDA 12.2) is older than the CUDA runtime 13.0"));
  CHECK(contains(r, "update the driver"));
}

TEST_CASE("a driver that finds no device: no GPU") {
  fake("100", "0");  // CUDA_ERROR_NO_DEVICE
  CHECK(contains(outcome(SGEMM_FAKE_LIBCUDA, "/nonexistent/gpus"), "finds no device (cuInit error 100)"));
  fake("0", "0");
  CHECK(contains(outcome(SGEMM_FAKE_LIBCUDA, "/nonexistent/gpus"), "finds no device"));
}

TEST_CASE("a driver that fails while the kernel module lists GPUs is a failure") {
  const std::string dir = std::string(SGEMM_TEST_TMP) + "/fake_gpus";
  ::mkdir(dir.c_str(), 0755);
  ::mkdir((dir + "/0000:01:00.0").c_str(), 0755);
  fake("999", "0");
  CHECK(contains(outcome(SGEMM_FAKE_LIBCUDA, dir.c_str()), "THROWS: the CUDA driver (it supports CUDA 12.2) fails to start"));
  CHECK(contains(outcome("libcuda_that_does_not_exist.so.1", dir.c_str()), "THROWS: the kernel module lists 1 GPU(s)"));
  fake("999", "0");
  CHECK_FALSE(contains(outcome(SGEMM_FAKE_LIBCUDA, "/nonexistent/gpus"), "THROWS"));  // no GPU listed: skip
}
