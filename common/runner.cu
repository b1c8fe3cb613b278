// run_step(): everything a step program does besides its kernel. Per shape:
//   1. inputs: seeded random in [-1, 1] (with --specials, Inf, NaN and values near FLT_MAX
//      planted into them; with --exponents, scaled by powers of two) or loaded from .npy
//   2. the reference: alpha A B + beta C and its scale |alpha||A||B| + |beta||C| in FP64
//      (cuBLAS DGEMM on widened copies), and cuBLAS SGEMM's own error against it
//   3. check: C poisoned (NaN when beta == 0) and fenced by guard cells, one launch, verify
//      (verify.hpp: the worst-case bound always, the FP32-grade limit on random inputs);
//      then a second launch from the same C, whose result must have the same bits
//   4. time: warm-up, then repetitions of step and cuBLAS interleaved, each after an L2
//      flush, timed with CUDA events; median and minimum. Before every run of the step C is
//      reset outside the events: poisoned again with NaN (beta == 0) or restored (beta != 0)
//   5. check again: the result left by the last timed repetition must verify too
//   6. report: a table row on stdout, a CSV row with provenance, optionally C as .npy
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <cuda.h>  // the driver API's green-context types (--sms); its functions come through the runtime

#include <thrust/execution_policy.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include "cli.hpp"
#include "csv.hpp"
#include "driver.hpp"
#include "inputs.hpp"
#include "io.hpp"
#include "npy.hpp"
#include "reference.cuh"
#include "sgemm.cuh"
// CMake generates sgemm_build_info.h (git revision, architectures, flags) for the CSV rows;
// a step built alone, with the nvcc line in its header, has none and says so.
#if __has_include("sgemm_build_info.h")
#include "sgemm_build_info.h"
#else
#define SGEMM_GIT_REV "unknown"
#define SGEMM_CUDA_ARCHS "unknown"
#define SGEMM_BUILD_FLAGS "unknown (built without CMake)"
#endif
#include "verify.hpp"

namespace sgemm {

namespace {

struct NoGpu : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A device allocation that frees itself.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count) : count_(count) {
    CUDA_CHECK(cudaMalloc(&ptr_, std::max<std::size_t>(count, 1) * sizeof(T)));
  }
  ~DeviceArray() { cudaFree(ptr_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return ptr_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  // Copies from pageable host memory may still be landing when cudaMemcpy returns, and the
  // step's launches go to another stream, which in a green context (--sms) does not wait for
  // the legacy default stream: every upload waits until its bytes are on the GPU.
  void upload(const std::vector<T>& h) {
    CUDA_CHECK(cudaMemcpy(ptr_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  // rows x cols from a compact host matrix into rows of stride ld; the padding of each row
  // (ld - cols elements) is filled with NaN bytes, so reading it poisons the result.
  void upload_padded(const std::vector<T>& h, int rows, int cols, int ld) {
    CUDA_CHECK(cudaMemset(ptr_, 0xff, bytes()));
    CUDA_CHECK(cudaMemcpy2D(ptr_, ld * sizeof(T), h.data(), cols * sizeof(T), cols * sizeof(T), rows,
                            cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  void download(std::vector<T>& h) const {
    h.resize(count_);
    CUDA_CHECK(cudaMemcpy(h.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};
using DeviceBuffer = DeviceArray<float>;

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_{};
};

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

int select_device(int device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorInsufficientDriver) {  // no driver (skip), or one too old for a GPU here (fail)
    cudaGetLastError();
    throw NoGpu("no CUDA GPU found (" + explain_insufficient_driver(CUDART_VERSION) + ")");
  }
  if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) {
    cudaGetLastError();
    throw NoGpu(std::string("no CUDA GPU found (cudaGetDeviceCount: ") + cudaGetErrorName(err) +
                "); this program needs an NVIDIA GPU (the host tests do not)");
  }
  CUDA_CHECK(err);
  if (device >= count)
    throw UsageError("--device " + std::to_string(device) + " but only " + std::to_string(count) + " GPU(s)");
  CUDA_CHECK(cudaSetDevice(device));
  return count;
}

Gpu g_gpu;  // sgemm::gpu(): filled in by read_gpu before the step's first launch
const char* g_path = nullptr;  // sgemm::took_path(): the last launch's path, and its count
int g_path_count = 0;

// The GPU's facts, for the step's choices (split-K, stream-K) and the needs check. sm_count
// is `sms` in a green context (--sms), else the device's.
Gpu read_gpu(int device, int sms) {
  Gpu g;
  int major = 0, minor = 0, mem_khz = 0, bus_bits = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&g.sm_count, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&g.shared_per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&g.clock_mhz, cudaDevAttrClockRate, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&g.l2_bytes, cudaDevAttrL2CacheSize, device));
  g.compute_capability = major * 10 + minor;
  g.clock_mhz /= 1000;
  // sm_80 (A100) has 64 FP32 lanes per SM; sm_86, sm_89 and sm_90 have 128.
  g.fp32_lanes_per_sm = g.compute_capability == 80 ? 64 : 128;
  g.dram_bytes_per_us = 2.0 * mem_khz * 1e3 * (bus_bits / 8) / 1e6;  // double data rate
  if (sms > 0) g.sm_count = sms;
  return g;
}

// --sms N: a green context of at least N of the device's SMs, made current, so that every
// launch after it (the step's, cuBLAS's and the harness's) runs on those SMs alone. The
// driver's functions come through the runtime (cudaGetDriverEntryPointByVersion), so the
// programs need no link to the driver library. Returns the SMs granted: the GPU hands them
// out in groups (8 on an H100), so N is rounded up.
int make_green_context(int device, int sms) {
  auto entry = [](const char* name) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12040, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !fn)
      throw NoGpu(std::string("--sms needs green contexts (CUDA driver 12.4 or newer); ") + name + " not found");
    return fn;
  };
  auto check = [](CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) throw std::runtime_error(std::string("--sms: ") + what + " failed (CUresult " + std::to_string(r) + ")");
  };
  using GetDevice = CUresult (*)(CUdevice*, int);
  using GetResource = CUresult (*)(CUdevice, CUdevResource*, CUdevResourceType);
  using Split = CUresult (*)(CUdevResource*, unsigned*, const CUdevResource*, CUdevResource*, unsigned, unsigned);
  using Describe = CUresult (*)(CUdevResourceDesc*, CUdevResource*, unsigned);
  using Create = CUresult (*)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned);
  using ToContext = CUresult (*)(CUcontext*, CUgreenCtx);
  using SetCurrent = CUresult (*)(CUcontext);
  CUdevice dev{};
  check(reinterpret_cast<GetDevice>(entry("cuDeviceGet"))(&dev, device), "cuDeviceGet");
  CUdevResource all{}, group{}, rest{};
  check(reinterpret_cast<GetResource>(entry("cuDeviceGetDevResource"))(dev, &all, CU_DEV_RESOURCE_TYPE_SM),
        "cuDeviceGetDevResource");
  if (unsigned(sms) > all.sm.smCount)
    throw NoGpu("--sms " + std::to_string(sms) + ": this GPU has " + std::to_string(all.sm.smCount) + " SMs");
  if (unsigned(sms) == all.sm.smCount) return sms;  // all of them: no green context needed
  unsigned groups = 1;
  check(reinterpret_cast<Split>(entry("cuDevSmResourceSplitByCount"))(&group, &groups, &all, &rest, 0, sms),
        "cuDevSmResourceSplitByCount");
  CUdevResourceDesc desc{};
  check(reinterpret_cast<Describe>(entry("cuDevResourceGenerateDesc"))(&desc, &group, 1), "cuDevResourceGenerateDesc");
  CUgreenCtx green{};
  check(reinterpret_cast<Create>(entry("cuGreenCtxCreate"))(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM),
        "cuGreenCtxCreate");
  CUcontext context{};
  check(reinterpret_cast<ToContext>(entry("cuCtxFromGreenCtx"))(&context, green), "cuCtxFromGreenCtx");
  check(reinterpret_cast<SetCurrent>(entry("cuCtxSetCurrent"))(context), "cuCtxSetCurrent");
  return static_cast<int>(group.sm.smCount);
}

// "NN_slug needs ... ; this GPU ... allows ...", or "" where the GPU can run the step.
std::string unmet_need(const char* step, const Needs& needs, const Gpu& g, const std::string& gpu_name,
                       const char* tuning) {
  if (needs.compute_capability != 0 && g.compute_capability != needs.compute_capability)
    return std::string(step) + " needs a GPU of compute capability " + std::to_string(needs.compute_capability / 10) +
           "." + std::to_string(needs.compute_capability % 10) + "; this one (" + gpu_name + ") is " +
           std::to_string(g.compute_capability / 10) + "." + std::to_string(g.compute_capability % 10);
  if (needs.shared_bytes > g.shared_per_block)
    return std::string(step) + " needs " + std::to_string(needs.shared_bytes) +
           " B of shared memory per block (tuning " + tuning + "); this GPU (" + gpu_name + ") allows " +
           std::to_string(g.shared_per_block) + " B: build with its tuning (README, 'Tune it for your GPU')";
  return "";
}

Provenance read_provenance(int device) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int clock_khz = 0, driver = 0, runtime = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  Provenance p;
  p.gpu = prop.name;
  p.sm_count = prop.multiProcessorCount;
  p.sm_clock_mhz = clock_khz / 1000;
  p.driver = version_string(driver);
  p.runtime = version_string(runtime);
  p.cublas = cublas_version_string();
  p.build_type = SGEMM_BUILD_FLAGS;
  p.git_rev = SGEMM_GIT_REV;
  p.device_sm_count = p.sm_count;
  return p;
}

// to[i] = (double) from[row * ld + col] (or its magnitude) for the rows x cols matrix, compact:
// the FP64 reference's inputs, widened on the GPU (a host loop and upload take seconds at 8192).
struct Widen {
  const float* from;
  int cols, ld;
  bool magnitude;
  __device__ double operator()(std::size_t i) const {
    const double x = from[(i / cols) * ld + i % cols];
    return magnitude ? fabs(x) : x;
  }
};

void widen_on_device(const float* from, int rows, int cols, int ld, double* to, bool magnitude, cudaStream_t stream) {
  const std::size_t n = std::size_t(rows) * cols;
  thrust::transform(thrust::cuda::par.on(stream), thrust::counting_iterator<std::size_t>(0),
                     thrust::counting_iterator<std::size_t>(n), to, Widen{from, cols, ld, magnitude});
  CUDA_CHECK(cudaGetLastError());
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (double(v[n / 2 - 1]) + v[n / 2]);
}

double gflops(const Shape& s, double ms) { return 2.0 * s.m * s.n * double(s.k) / (ms * 1e6); }

// The inputs of one shape, on the host.
struct HostInputs {
  Shape shape{};
  std::vector<float> A, B, C;  // A [M][K], B [K][N], C [M][N] (C only read when beta != 0)
  std::vector<Planted> planted;  // --specials: what was planted where
};

HostInputs make_inputs(const Options& o, const Shape& s) {
  HostInputs in;
  in.shape = s;
  in.A.resize(std::size_t(s.m) * s.k);
  in.B.resize(std::size_t(s.k) * s.n);
  in.C.resize(std::size_t(s.m) * s.n);
  fill_uniform(in.A, o.seed, 1);
  fill_uniform(in.B, o.seed, 2);
  fill_uniform(in.C, o.seed, 3);
  // C is planted only where it is read: at beta == 0 it is write-only (and poisoned with NaN).
  if (o.specials) in.planted = plant_specials(in.A, in.B, o.beta != 0.0f ? &in.C : nullptr, s.m, s.n, s.k, o.seed);
  // After the fill (specials and loaded files go with no --exponents): the scaled floats are
  // the inputs of the step, of cuBLAS and of the FP64 reference alike.
  if (o.exponents) scale_inputs(in.A, in.B, &in.C, o.exp_a, o.exp_b);
  return in;
}

// Reads and judges the .npy inputs on the host (io.hpp): a bad file is a usage error.
HostInputs load_inputs(const Options& o) {
  LoadedMatrices m = load_matrices(o, [&] { select_device(o.device); });  // no GPU: exit 3 before gigabytes are read
  HostInputs in;
  in.shape = m.shape;
  in.A = std::move(m.A);
  in.B = std::move(m.B);
  if (!o.load_c.empty()) {
    in.C = std::move(m.C);
  } else {
    in.C.resize(std::size_t(in.shape.m) * in.shape.n);
    fill_uniform(in.C, o.seed, 3);
  }
  return in;
}

class ShapeRun {
 public:
  ShapeRun(const Options& o, const HostInputs& in, std::size_t flush_floats, Rule rule)
      : o_(o),
        s_(in.shape),
        rule_(rule),
        lda_(s_.k + o.pad_a),
        ldb_(s_.n + o.pad_b),
        L_(make_c_layout(s_.m, s_.n, o.pad_c)),
        a_(std::size_t(s_.m) * lda_),
        b_(std::size_t(s_.k) * ldb_),
        c_in_(in.C.size()),
        c_(L_.total()),
        c_cublas_(in.C.size()),
        flush_(flush_floats),
        h_c_in_(in.C) {
    a_.upload_padded(in.A, s_.m, s_.k, lda_);
    b_.upload_padded(in.B, s_.k, s_.n, ldb_);
    c_in_.upload(in.C);
    // Written by cuBLAS (uninstrumented) before it is read back: defined first, so that
    // compute-sanitizer's initcheck sees no read of memory it never saw written.
    CUDA_CHECK(cudaMemset(c_cublas_.get(), 0, c_cublas_.bytes()));
    CUDA_CHECK(cudaStreamCreate(&stream_));
    CUDA_CHECK(cudaDeviceSynchronize());  // the memsets above ran on the legacy default stream
    if (o.mode != Mode::TimeOnly) make_reference(in);
  }
  ~ShapeRun() { cudaStreamDestroy(stream_); }

  Problem step_problem() const {
    return {s_.m, s_.n, s_.k, o_.alpha, o_.beta, a_.get(), lda_, b_.get(), ldb_, c_.get() + L_.front, L_.ldc};
  }
  Problem cublas_problem() const {
    return {s_.m, s_.n, s_.k, o_.alpha, o_.beta, a_.get(), lda_, b_.get(), ldb_, c_cublas_.get(), s_.n};
  }
  const Accuracy& cublas_accuracy() const { return cublas_accuracy_; }
  const SpecialsReport& cublas_specials() const { return cublas_specials_; }
  double reference_seconds() const { return reference_seconds_; }

  // C as the step finds it: guards hold the sentinel; the matrix holds C_in, or NaN when
  // beta == 0 (C is write-only then, and nothing of the old C may leak into the result).
  void poison_c() {
    std::vector<float> h(L_.total(), guard_value());
    for (int r = 0; r < s_.m; ++r)
      for (int c = 0; c < s_.n; ++c)
        h[L_.index(r, c)] = o_.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN()
                                            : h_c_in_[std::size_t(r) * s_.n + c];
    c_.upload(h);
  }

  VerifyReport check_result(std::vector<float>& got) const {
    CUDA_CHECK(cudaDeviceSynchronize());
    c_.download(got);
    return verify(L_, got.data(), ref_, rule_);
  }

  // Runs the step once more from the same C (poisoned again) and compares the result with
  // `first`, bit for bit, guard cells included: a deterministic step gives the same bits
  // every time (split-K and stream-K add their pieces in a fixed order; float atomics, whose
  // order follows the blocks' finishing order, would not).
  bool same_bits_again(LaunchFn launch, const std::vector<float>& first) {
    poison_c();
    launch_step(launch);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> second;
    c_.download(second);
    return second.size() == first.size() &&
           std::memcmp(second.data(), first.data(), first.size() * sizeof(float)) == 0;
  }

  void launch_step(LaunchFn launch) {
    launch(step_problem(), stream_);
    CUDA_CHECK_LAUNCH();
  }

  // Puts C back to its input before a timed run (beta != 0 reads it), outside the events.
  void restore(float* dst, int ld) {
    if (o_.beta == 0.0f) return;
    CUDA_CHECK(cudaMemcpy2DAsync(dst, ld * sizeof(float), c_in_.get(), s_.n * sizeof(float),
                                 s_.n * sizeof(float), s_.m, cudaMemcpyDeviceToDevice, stream_));
  }

  // The step's C before each of its runs, outside the events: its input when beta != 0;
  // NaN when beta == 0, so a result left over from an earlier run cannot pass for this one.
  void reset_step_c() {
    if (o_.beta != 0.0f) return restore(c_.get() + L_.front, L_.ldc);
    CUDA_CHECK(cudaMemset2DAsync(c_.get() + L_.front, L_.ldc * sizeof(float), 0xff, s_.n * sizeof(float), s_.m,
                                 stream_));
  }

  // Evicts A, B and C from L2 (the flush buffer is twice the L2 size), so each repetition
  // starts from device memory, as one SGEMM inside a larger program would.
  void flush_l2(int rep) {
    CUDA_CHECK(cudaMemsetAsync(flush_.get(), rep & 0xff, flush_.bytes(), stream_));
  }

  float timed(const auto& enqueue) {
    CUDA_CHECK(cudaEventRecord(start_.get(), stream_));
    enqueue();
    CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
    CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return ms;
  }

  struct Times {
    std::vector<float> step, cublas;
  };

  Times time(LaunchFn launch) {
    const Problem pc = cublas_problem();
    auto run_step_once = [&] { launch_step(launch); };
    auto run_cublas_once = [&] { cublas_sgemm(pc, stream_); };
    for (int i = 0; i < o_.warmup; ++i) {
      reset_step_c();
      run_step_once();
      if (o_.compare_cublas) {
        restore(c_cublas_.get(), s_.n);
        run_cublas_once();
      }
    }
    int reps = o_.reps;
    if (reps == 0) {  // about --time-ms of the step (1 s by default), at least 5 and at most 200 repetitions
      reset_step_c();
      flush_l2(0);
      const float estimate = timed(run_step_once);
      reps = std::clamp(int(std::ceil(float(o_.time_ms) / std::max(estimate, 1e-3f))), 5, 200);
    }
    Times t;
    for (int rep = 0; rep < reps; ++rep) {  // interleaved, so both see the same clocks
      reset_step_c();
      flush_l2(rep);
      t.step.push_back(timed(run_step_once));
      if (o_.compare_cublas) {
        restore(c_cublas_.get(), s_.n);
        flush_l2(rep);
        t.cublas.push_back(timed(run_cublas_once));
      }
    }
    return t;
  }

  const CLayout& layout() const { return L_; }

 private:
  // The FP64 reference and the scale of every element (verify.hpp), from widened copies of
  // the inputs; then cuBLAS SGEMM on the same inputs, whose error is the yardstick the
  // step's error is reported against.
  void make_reference(const HostInputs& in) {
    const auto start = std::chrono::steady_clock::now();
    const std::size_t mn = in.C.size();
    ref_ = {s_.m, s_.n, s_.k, {}, {}, o_.specials};
    {
      DeviceArray<double> a(in.A.size()), b(in.B.size()), c(mn);
      for (DeviceArray<double>* d : {&a, &b, &c}) CUDA_CHECK(cudaMemsetAsync(d->get(), 0, d->bytes(), stream_));
      // The FP32 inputs already on the GPU, widened there (compact rows) or their magnitudes.
      auto widen = [this](const float* from, int rows, int cols, int ld, DeviceArray<double>& to, bool magnitude) {
        widen_on_device(from, rows, cols, ld, to.get(), magnitude, stream_);
      };
      widen(a_.get(), s_.m, s_.k, lda_, a, false), widen(b_.get(), s_.k, s_.n, ldb_, b, false);
      widen(c_in_.get(), s_.m, s_.n, s_.n, c, false);
      cublas_dgemm(s_.m, s_.n, s_.k, o_.alpha, a.get(), b.get(), o_.beta, c.get(), stream_);
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      c.download(ref_.c);
      widen(a_.get(), s_.m, s_.k, lda_, a, true), widen(b_.get(), s_.k, s_.n, ldb_, b, true);
      widen(c_in_.get(), s_.m, s_.n, s_.n, c, true);
      cublas_dgemm(s_.m, s_.n, s_.k, std::fabs(double(o_.alpha)), a.get(), b.get(), std::fabs(double(o_.beta)),
                   c.get(), stream_);
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      c.download(ref_.scale);
    }
    // With specials, the reference's NaN and infinities are what the results are held to:
    // they are checked against IEEE arithmetic worked out on the host first (verify.hpp).
    if (o_.specials) {
      const std::string wrong =
          check_reference_classes(ref_, in.A.data(), in.B.data(), in.C.data(), o_.alpha, o_.beta);
      if (!wrong.empty()) throw std::runtime_error("--specials: the FP64 reference (cuBLAS DGEMM) is wrong at " + wrong);
    }
    restore(c_cublas_.get(), s_.n);
    cublas_sgemm(cublas_problem(), stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<float> got;
    c_cublas_.download(got);
    cublas_accuracy_ = measure(ref_, got.data(), s_.n, &cublas_specials_);
    reference_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  const Options& o_;
  Shape s_;
  Rule rule_;
  int lda_, ldb_;
  CLayout L_;
  DeviceBuffer a_, b_, c_in_, c_, c_cublas_, flush_;
  std::vector<float> h_c_in_;
  Reference ref_;
  Accuracy cublas_accuracy_;
  SpecialsReport cublas_specials_;
  double reference_seconds_ = 0;
  cudaStream_t stream_{};
  Event start_, stop_;  // around each timed run; created once per shape
};

// Bytes a shape needs on the GPU at its peak: A and B with their padded rows, C with guards,
// cuBLAS's C, C_in and the L2 flush buffer, plus the FP64 copies of A, B and C while the
// reference is computed.
std::size_t bytes_needed(const Options& o, const Shape& s, std::size_t flush_floats) {
  const std::size_t mk = std::size_t(s.m) * s.k, kn = std::size_t(s.k) * s.n, mn = std::size_t(s.m) * s.n;
  const std::size_t padded = std::size_t(s.m) * (s.k + o.pad_a) + std::size_t(s.k) * (s.n + o.pad_b);
  const CLayout L = make_c_layout(s.m, s.n, o.pad_c);
  const std::size_t reference = o.mode == Mode::TimeOnly ? 0 : sizeof(double) * (mk + kn + mn);
  return sizeof(float) * (padded + L.total() + 2 * mn + flush_floats) + reference;
}

void print_header(const char* step, const Provenance& p, const Options& o) {
  const std::string sms = p.sm_count < p.device_sm_count
                              ? std::to_string(p.sm_count) + " of its " + std::to_string(p.device_sm_count) +
                                    " SMs (--sms: an emulation of a smaller GPU)"
                              : std::to_string(p.sm_count) + " SMs";
  std::printf("%s on %s (%s, %d MHz max), driver %s, runtime %s, cuBLAS %s, %s, tuning %s\n", step, p.gpu.c_str(),
              sms.c_str(), p.sm_clock_mhz, p.driver.c_str(), p.runtime.c_str(), p.cublas.c_str(), p.git_rev.c_str(),
              p.tuning.c_str());
  std::printf("errors in units of u = 2^-24 of |alpha||A||B| + |beta||C| against an FP64 reference; "
              "FP32-grade limit %g u on random inputs\n", kAccuracyLimitU);
  if (o.exponents)
    std::printf("--exponents %d,%d: A scaled by 2^%d, B by 2^%d, C by 2^%d, each value rounded to float (below "
                "2^-126: subnormal);\nerrors are relative to the scaled |alpha||A||B| + |beta||C|\n",
                o.exp_a, o.exp_b, o.exp_a, o.exp_b, o.exp_a + o.exp_b);
  if (o.specials)
    std::printf("--specials: +-Inf, NaN, +-FLT_MAX and values rounding past it in TF32 planted in A and B (and C "
                "if beta != 0);\nNaN and +-Inf outputs must match the reference's class, errors are over the "
                "finite outputs\n");
  std::printf("%7s %7s %7s  %-6s %8s %8s %8s %6s %5s %10s %10s %10s %10s %7s\n", "M", "N", "K", "check", "err max",
              "err RMS", "cuBLAS", "chk s", "reps", "ms med", "ms min", "GFLOPS", "cuBLAS", "ratio");
}

// "steps/05_thread_tiling/thread_tiling.cu" -> "05_thread_tiling"; a plain name stays.
std::string step_folder(std::string name) {
  if (!name.ends_with(".cu") || name.find('/') == std::string::npos) return name;
  name.erase(name.rfind('/'));              // the folder: "/slug.cu" dropped
  return name.substr(name.rfind('/') + 1);  // npos + 1 == 0: no folder above it
}

}  // namespace

const Gpu& gpu() { return g_gpu; }

void took_path(const char* path, int count) {
  g_path = path;
  g_path_count = count;
}

// nvcc's "800,900" as "80 90", the form of CMAKE_CUDA_ARCHITECTURES; the harness's own list
// where the step's is unknown.
std::string arch_list(const char* archs) {
  std::string out;
  for (const char* c = archs; *c;) {
    int v = 0;
    while (*c >= '0' && *c <= '9') v = v * 10 + (*c++ - '0');
    if (v) out += (out.empty() ? "" : " ") + std::to_string(v / 10);
    while (*c && (*c < '0' || *c > '9')) ++c;
  }
  return out.empty() ? SGEMM_CUDA_ARCHS : out;
}

int run_step(int argc, char** argv, const char* step_name, LaunchFn launch, Needs needs, const char* tuning,
             const char* archs) {
  const std::string step = step_folder(step_name);  // a step built alone passes its __FILE__
  step_name = step.c_str();
  const std::string program = argc > 0 ? argv[0] : step_name;
  try {
    Options o = parse_args(argc, argv);
    if (o.help) {
      std::cout << step_name << ": one step of sgemm-steps\n" << usage(program);
      return kExitOk;
    }
    if (o.requirements) {  // one line, key=value, read by the class test and scripts/tune.sh
      std::printf("%s shared_bytes=%d compute_capability=%d arch=%s tuning=%s\n", step_name, needs.shared_bytes,
                  needs.compute_capability, arch_list(archs).c_str(), tuning);
      return kExitOk;
    }
    if (const char* tf32 = std::getenv("NVIDIA_TF32_OVERRIDE"); tf32 && std::string(tf32) != "0")
      throw UsageError("NVIDIA_TF32_OVERRIDE is set: the FP32 baseline must not use TF32; unset it");

    // Every input file is read and judged, and every output path opened, before the GPU
    // is touched: a bad file costs no CUDA start-up, needs no GPU, and loses no result.
    std::vector<HostInputs> loaded;
    if (!o.load_a.empty()) {
      loaded.push_back(load_inputs(o));
      o.shapes = {loaded.front().shape};
    }
    Outputs outputs = open_outputs(o, o.shapes.back());

    select_device(o.device);
    const int sms = o.sms > 0 ? make_green_context(o.device, o.sms) : 0;
    g_gpu = read_gpu(o.device, sms);
    Provenance prov = read_provenance(o.device);
    prov.sm_count = g_gpu.sm_count;
    prov.tuning = tuning;
    prov.arch = arch_list(archs);
    // What this build needs against what the GPU has: a step that cannot run here is skipped.
    if (const std::string unmet = unmet_need(step_name, needs, g_gpu, prov.gpu, tuning); !unmet.empty())
      throw NoGpu(unmet);
    create_cublas_handle();
    int l2_bytes = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, o.device));
    const std::size_t flush_floats = 2 * std::size_t(l2_bytes) / sizeof(float);

    print_header(step_name, prov, o);
    bool all_ok = true;
    for (std::size_t si = 0; si < o.shapes.size(); ++si) {
      const Shape& s = o.shapes[si];
      std::size_t free_bytes = 0, total_bytes = 0;
      CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      if (const std::size_t need = bytes_needed(o, s, flush_floats); need > free_bytes) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "size %dx%dx%d needs %.2f GiB of GPU memory, %.2f GiB are free", s.m, s.n,
                      s.k, need / 1073741824.0, free_bytes / 1073741824.0);
        throw UsageError(msg);
      }
      const HostInputs in = loaded.empty() ? make_inputs(o, s) : std::move(loaded.front());
      // Loaded data may be adversarial: only the worst-case bound is a fair rule for it.
      const Rule rule = loaded.empty() ? Rule::RandomInputs : Rule::WorstCase;
      ShapeRun run(o, in, flush_floats, rule);

      ResultRow row;
      row.step = step_name;
      row.variant = o.variant;
      row.m = s.m, row.n = s.n, row.k = s.k;
      row.alpha = o.alpha, row.beta = o.beta;
      row.inputs = inputs_label(o);
      row.prov = prov;
      auto record = [&row](const VerifyReport& r) {  // the worse of this shape's checks
        row.max_err_over_bound = std::max(row.max_err_over_bound, r.max_err_over_bound);
        row.err_max_u = std::isnan(row.err_max_u) ? r.accuracy.max_u : std::max(row.err_max_u, r.accuracy.max_u);
        row.err_rms_u = std::isnan(row.err_rms_u) ? r.accuracy.rms_u : std::max(row.err_rms_u, r.accuracy.rms_u);
        row.err_rms_vs_cublas = row.err_rms_u / row.cublas_err_rms_u;
      };

      std::vector<float> got;
      std::string check = "-";
      char accuracy[64] = "";
      // --specials: how the non-finite outputs fared, printed under the shape's line, and a
      // note where cuBLAS SGEMM itself got a class wrong (not held against the step).
      std::vector<std::string> notes;
      auto print_notes = [&notes] {
        for (const std::string& n : notes) std::printf("%25s%s\n", "", n.c_str());
      };
      if (o.exponents)  // what the scaling made of the inputs (C matters only when beta != 0)
        notes.push_back("exponents: A " + census_line(census(in.A)) + "; B " + census_line(census(in.B)) +
                        (o.beta != 0.0f ? "; C " + census_line(census(in.C)) : ""));
      if (o.mode != Mode::TimeOnly) {
        const auto start = std::chrono::steady_clock::now();
        run.poison_c();
        g_path = nullptr;
        run.launch_step(launch);
        const VerifyReport first = run.check_result(got);
        const std::string path = g_path ? g_path : "";
        const double seconds = run.reference_seconds() +
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        row.cublas_err_max_u = run.cublas_accuracy().max_u;
        row.cublas_err_rms_u = run.cublas_accuracy().rms_u;
        record(first);
        // A second run on the same inputs must give the same bits (a fixed order of sums).
        const bool same_bits = !first.ok || run.same_bits_again(launch, got);
        if (o.specials) {
          notes.push_back("specials: " + std::to_string(in.planted.size()) + " planted; " + first.specials.line());
          if (const SpecialsReport& c = run.cublas_specials(); c.wrong_class != 0)
            notes.push_back("note: cuBLAS SGEMM on the same inputs: " + c.line() +
                            " (not held against the step; its error statistics leave them out)");
        }
        std::snprintf(accuracy, sizeof accuracy, "%8.3g %8.3g %8.3g %6.2f", row.err_max_u, row.err_rms_u,
                      row.cublas_err_rms_u, seconds);
        if (!path.empty()) notes.push_back("path: " + path + " (" + std::to_string(g_path_count) + ")");
        const bool path_ok = o.expect_path.empty() || path == o.expect_path;
        row.verified = first.ok && same_bits && path_ok;
        check = row.verified ? "ok" : "FAILED";
        if (!row.verified) {
          if (first.ok && !same_bits)
            std::printf("%7d %7d %7d  FAILED: a second run on the same inputs gave different bits\n", s.m, s.n, s.k);
          else if (first.ok)
            std::printf("%7d %7d %7d  FAILED: the step took path '%s', --expect-path says '%s'\n", s.m, s.n, s.k,
                        path.empty() ? "(none reported)" : path.c_str(), o.expect_path.c_str());
          else
            std::printf("%7d %7d %7d  %s\n", s.m, s.n, s.k, first.summary().c_str());
          print_notes();
          notes.clear();
          all_ok = false;
          if (!o.record_failures) continue;  // a wrong result is not worth timing
        }
      }
      if (o.mode == Mode::CheckOnly) {
        std::printf("%7d %7d %7d  %-6s %s\n", s.m, s.n, s.k, check.c_str(), accuracy);
        print_notes();
        if (outputs.csv.is_open() && o.record_failures) outputs.csv.append(row);
      } else {
        const ShapeRun::Times t = run.time(launch);
        if (row.verified) {  // the result left by the last timed run must hold too
          const VerifyReport again = run.check_result(got);
          record(again);
          if (!again.ok) {
            std::printf("%7d %7d %7d  after timing: %s\n", s.m, s.n, s.k, again.summary().c_str());
            if (o.specials && !notes.empty()) notes.front() = "specials after timing: " + again.specials.line();
            print_notes();
            notes.clear();
            all_ok = false;
            row.verified = false;
            check = "FAILED";
            if (!o.record_failures) continue;
          }
        }
        row.reps = int(t.step.size());
        row.ms_median = median(t.step);
        row.ms_min = *std::min_element(t.step.begin(), t.step.end());
        row.gflops = gflops(s, row.ms_median);
        row.gflops_best = gflops(s, row.ms_min);
        if (!t.cublas.empty()) {
          row.cublas_ms_median = median(t.cublas);
          row.cublas_gflops = gflops(s, row.cublas_ms_median);
          row.ratio_to_cublas = row.cublas_ms_median / row.ms_median;
        }
        row.timestamp = now_utc();
        std::printf("%7d %7d %7d  %-6s %33s %5d %10.4f %10.4f %10.1f %10.1f %7.3f\n", s.m, s.n, s.k, check.c_str(),
                    accuracy, row.reps, row.ms_median, row.ms_min, row.gflops, row.cublas_gflops,
                    row.ratio_to_cublas);
        print_notes();
        if (outputs.csv.is_open()) outputs.csv.append(row);
      }
      std::fflush(stdout);
      if (outputs.save_c.is_open() && si + 1 == o.shapes.size()) {
        const CLayout& L = run.layout();
        outputs.save_c.write(got.data() + L.front, L.M, L.N, L.ldc);
      }
    }
    destroy_cublas_handle();
    return all_ok ? kExitOk : kExitVerifyFailed;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s (see --help)\n", program.c_str(), e.what());
    return kExitUsage;
  } catch (const NoGpu& e) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
    return kExitNoGpu;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
    return kExitRuntime;
  }
}

}  // namespace sgemm
