// run_step(): everything a step program does besides its kernel. Per shape:
//   1. inputs: seeded random in [-1, 1] or loaded from .npy
//   2. the reference C and the error scale |A||B| from cuBLAS (FP32, default math)
//   3. check: C poisoned (NaN when beta == 0) and fenced by guard cells, one launch, verify
//   4. time: warm-up, then repetitions of step and cuBLAS interleaved, each after an L2
//      flush, timed with CUDA events; median and minimum
//   5. check again: the result left by the last timed repetition must verify too
//   6. report: a table row on stdout, a CSV row with provenance, optionally C as .npy
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "cli.hpp"
#include "csv.hpp"
#include "inputs.hpp"
#include "npy.hpp"
#include "reference.cuh"
#include "sgemm.cuh"
#include "sgemm_build_info.h"
#include "verify.hpp"

namespace sgemm {

namespace {

struct NoGpu : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A device allocation that frees itself.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    CUDA_CHECK(cudaMalloc(&ptr_, std::max<std::size_t>(count, 1) * sizeof(float)));
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* get() const { return ptr_; }
  std::size_t bytes() const { return count_ * sizeof(float); }
  void upload(const std::vector<float>& h) {
    CUDA_CHECK(cudaMemcpy(ptr_, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  void download(std::vector<float>& h) const {
    h.resize(count_);
    CUDA_CHECK(cudaMemcpy(h.data(), ptr_, count_ * sizeof(float), cudaMemcpyDeviceToHost));
  }

 private:
  float* ptr_ = nullptr;
  std::size_t count_;
};

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
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver || (err == cudaSuccess && count == 0)) {
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
  p.arch = SGEMM_CUDA_ARCHS;
  if (p.arch == "native") p.arch += "=" + std::to_string(prop.major) + std::to_string(prop.minor);
  p.build_type = SGEMM_BUILD_FLAGS;
  p.git_rev = SGEMM_GIT_REV;
  return p;
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
  return in;
}

// A bad input file is bad input: a usage error, not a run-time failure.
Matrix read_input(const std::string& path) {
  try {
    return read_npy(path);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

HostInputs load_inputs(const Options& o) {
  Matrix a = read_input(o.load_a), b = read_input(o.load_b);
  if (a.cols != b.rows)
    throw UsageError(o.load_a + " is " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + " but " +
                     o.load_b + " has " + std::to_string(b.rows) + " rows (A's columns and B's rows must match)");
  HostInputs in;
  in.shape = {a.rows, b.cols, a.cols};
  check_indexable(in.shape);
  in.A = std::move(a.data);
  in.B = std::move(b.data);
  if (!o.load_c.empty()) {
    Matrix c = read_input(o.load_c);
    if (c.rows != in.shape.m || c.cols != in.shape.n)
      throw UsageError(o.load_c + " must be " + std::to_string(in.shape.m) + "x" + std::to_string(in.shape.n));
    in.C = std::move(c.data);
  } else {
    in.C.resize(std::size_t(in.shape.m) * in.shape.n);
    fill_uniform(in.C, o.seed, 3);
  }
  return in;
}

class ShapeRun {
 public:
  ShapeRun(const Options& o, const HostInputs& in, std::size_t flush_floats)
      : o_(o),
        s_(in.shape),
        L_(make_c_layout(s_.m, s_.n)),
        a_(in.A.size()),
        b_(in.B.size()),
        c_in_(in.C.size()),
        c_(L_.total()),
        c_cublas_(in.C.size()),
        flush_(flush_floats),
        h_c_in_(in.C) {
    a_.upload(in.A);
    b_.upload(in.B);
    c_in_.upload(in.C);
    CUDA_CHECK(cudaStreamCreate(&stream_));
    if (o.mode != Mode::TimeOnly) make_reference(in);
  }
  ~ShapeRun() { cudaStreamDestroy(stream_); }

  Problem step_problem() const {
    return {s_.m, s_.n, s_.k, o_.alpha, o_.beta, a_.get(), s_.k, b_.get(), s_.n,
            c_.get() + L_.front, L_.ldc};
  }
  Problem cublas_problem() const {
    return {s_.m, s_.n, s_.k, o_.alpha, o_.beta, a_.get(), s_.k, b_.get(), s_.n, c_cublas_.get(), s_.n};
  }

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
    return verify(L_, got.data(), ref_.data(), abs_ab_.data(), h_c_in_.data(), s_.k, o_.alpha, o_.beta);
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
      restore(c_.get() + L_.front, L_.ldc);
      run_step_once();
      if (o_.compare_cublas) {
        restore(c_cublas_.get(), s_.n);
        run_cublas_once();
      }
    }
    int reps = o_.reps;
    if (reps == 0) {  // about one second of the step, at least 5 and at most 200 repetitions
      restore(c_.get() + L_.front, L_.ldc);
      flush_l2(0);
      const float estimate = timed(run_step_once);
      reps = std::clamp(int(std::ceil(1000.0f / std::max(estimate, 1e-3f))), 5, 200);
    }
    Times t;
    for (int rep = 0; rep < reps; ++rep) {  // interleaved, so both see the same clocks
      restore(c_.get() + L_.front, L_.ldc);
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
  void make_reference(const HostInputs& in) {
    // C_ref = alpha A B + beta C_in, computed in the step's own output buffer layout-free
    // (row stride N); then |A||B| for the error bound, from absolute copies.
    DeviceBuffer ref(in.C.size());
    ref.upload(in.C);
    cublas_sgemm({s_.m, s_.n, s_.k, o_.alpha, o_.beta, a_.get(), s_.k, b_.get(), s_.n, ref.get(), s_.n}, stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    ref.download(ref_);
    std::vector<float> abs_a(in.A.size()), abs_b(in.B.size());
    std::transform(in.A.begin(), in.A.end(), abs_a.begin(), [](float x) { return std::fabs(x); });
    std::transform(in.B.begin(), in.B.end(), abs_b.begin(), [](float x) { return std::fabs(x); });
    DeviceBuffer d_abs_a(abs_a.size()), d_abs_b(abs_b.size());
    d_abs_a.upload(abs_a);
    d_abs_b.upload(abs_b);
    cublas_sgemm({s_.m, s_.n, s_.k, 1.0f, 0.0f, d_abs_a.get(), s_.k, d_abs_b.get(), s_.n, ref.get(), s_.n},
                 stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    ref.download(abs_ab_);
  }

  const Options& o_;
  Shape s_;
  CLayout L_;
  DeviceBuffer a_, b_, c_in_, c_, c_cublas_, flush_;
  std::vector<float> h_c_in_, ref_, abs_ab_;
  cudaStream_t stream_{};
  Event start_, stop_;  // around each timed run; created once per shape
};

// Bytes a shape needs on the GPU at its peak (inputs, C with guards, cuBLAS's C, C_in,
// the reference and |A|, |B| while |A||B| is computed), plus the L2 flush buffer.
std::size_t bytes_needed(const Shape& s, std::size_t flush_floats) {
  const std::size_t mk = std::size_t(s.m) * s.k, kn = std::size_t(s.k) * s.n, mn = std::size_t(s.m) * s.n;
  const CLayout L = make_c_layout(s.m, s.n);
  return sizeof(float) * (2 * (mk + kn) + L.total() + 3 * mn + flush_floats);
}

void print_header(const char* step, const Provenance& p) {
  std::printf("%s on %s (%d SMs, %d MHz max), driver %s, runtime %s, cuBLAS %s, %s\n", step, p.gpu.c_str(),
              p.sm_count, p.sm_clock_mhz, p.driver.c_str(), p.runtime.c_str(), p.cublas.c_str(), p.git_rev.c_str());
  std::printf("%7s %7s %7s  %-12s %5s %10s %10s %10s %10s %7s\n", "M", "N", "K", "check", "reps", "ms med",
              "ms min", "GFLOPS", "cuBLAS", "ratio");
}

}  // namespace

int run_step(int argc, char** argv, const char* step_name, LaunchFn launch, int required_sm) {
  const std::string program = argc > 0 ? argv[0] : step_name;
  try {
    Options o = parse_args(argc, argv);
    if (o.help) {
      std::cout << step_name << ": one step of sgemm-steps\n" << usage(program);
      return kExitOk;
    }
    if (const char* tf32 = std::getenv("NVIDIA_TF32_OVERRIDE"); tf32 && std::string(tf32) != "0")
      throw UsageError("NVIDIA_TF32_OVERRIDE is set: the FP32 baseline must not use TF32; unset it");

    select_device(o.device);
    if (required_sm != 0) {
      cudaDeviceProp prop{};
      CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));
      if (prop.major * 10 + prop.minor != required_sm)
        throw NoGpu(std::string(step_name) + " needs a GPU of compute capability " + std::to_string(required_sm / 10) +
                    "." + std::to_string(required_sm % 10) + " (its kernel is built for sm_" +
                    std::to_string(required_sm) + "a); this one (" + prop.name + ") is " +
                    std::to_string(prop.major) + "." + std::to_string(prop.minor));
    }
    create_cublas_handle();
    const Provenance prov = read_provenance(o.device);
    int l2_bytes = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, o.device));
    const std::size_t flush_floats = 2 * std::size_t(l2_bytes) / sizeof(float);

    std::vector<HostInputs> loaded;
    if (!o.load_a.empty()) {
      loaded.push_back(load_inputs(o));
      o.shapes = {loaded.front().shape};
    }
    print_header(step_name, prov);
    bool all_ok = true;
    for (std::size_t si = 0; si < o.shapes.size(); ++si) {
      const Shape& s = o.shapes[si];
      std::size_t free_bytes = 0, total_bytes = 0;
      CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      if (const std::size_t need = bytes_needed(s, flush_floats); need > free_bytes) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "size %dx%dx%d needs %.2f GiB of GPU memory, %.2f GiB are free", s.m, s.n,
                      s.k, need / 1073741824.0, free_bytes / 1073741824.0);
        throw UsageError(msg);
      }
      const HostInputs in = loaded.empty() ? make_inputs(o, s) : std::move(loaded.front());
      ShapeRun run(o, in, flush_floats);

      ResultRow row;
      row.step = step_name;
      row.variant = o.variant;
      row.m = s.m, row.n = s.n, row.k = s.k;
      row.alpha = o.alpha, row.beta = o.beta;
      row.prov = prov;

      std::vector<float> got;
      std::string check = "not checked";
      if (o.mode != Mode::TimeOnly) {
        run.poison_c();
        run.launch_step(launch);
        const VerifyReport first = run.check_result(got);
        row.max_err_over_bound = first.max_err_over_bound;
        if (!first.ok) {
          std::printf("%7d %7d %7d  %s\n", s.m, s.n, s.k, first.summary().c_str());
          all_ok = false;
          continue;  // a wrong result is not worth timing
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "ok %.3f", first.max_err_over_bound);
        check = buf;
        row.verified = true;
      }
      if (o.mode == Mode::CheckOnly) {
        std::printf("%7d %7d %7d  %-12s\n", s.m, s.n, s.k, check.c_str());
      } else {
        const ShapeRun::Times t = run.time(launch);
        if (o.mode != Mode::TimeOnly) {  // the result left by the last timed run must hold too
          const VerifyReport again = run.check_result(got);
          if (!again.ok) {
            std::printf("%7d %7d %7d  after timing: %s\n", s.m, s.n, s.k, again.summary().c_str());
            all_ok = false;
            continue;
          }
          row.max_err_over_bound = std::max(row.max_err_over_bound, again.max_err_over_bound);
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
        std::printf("%7d %7d %7d  %-12s %5d %10.4f %10.4f %10.1f %10.1f %7.3f\n", s.m, s.n, s.k, check.c_str(),
                    row.reps, row.ms_median, row.ms_min, row.gflops, row.cublas_gflops, row.ratio_to_cublas);
        if (!o.csv_path.empty()) append_csv(o.csv_path, row);
      }
      std::fflush(stdout);
      if (!o.save_c.empty() && si + 1 == o.shapes.size()) {
        const CLayout& L = run.layout();
        write_npy(o.save_c, got.data() + L.front, L.M, L.N, L.ldc);
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
