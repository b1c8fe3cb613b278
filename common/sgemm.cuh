// The harness as a step sees it: the problem, the launch signature, a few helpers.
// Everything else (inputs, verification, timing, output) lives in common/ and stays out
// of the step files, so a step file holds its idea and nothing else.
#pragma once
#include <cuda_runtime.h>

#include "check.cuh"

namespace sgemm {

// Row-major FP32, BLAS semantics:  C = alpha * A * B + beta * C.
// Leading dimensions are row strides in elements. The harness passes lda = K and ldb = N,
// and ldc > N: the extra columns of C are guard cells that catch writes past a row's end.
// When beta == 0, C is write-only: the harness fills it with NaN before the run.
struct Problem {
  int M, N, K;
  float alpha, beta;
  const float* A;  int lda;  // [M][lda], lda >= K
  const float* B;  int ldb;  // [K][ldb], ldb >= N
  float* C;        int ldc;  // [M][ldc], ldc >= N
};

// A step's host side: enqueue the whole SGEMM on `stream` (no synchronisation needed).
using LaunchFn = void (*)(const Problem& problem, cudaStream_t stream);

// What a step needs of the GPU, as built (its knobs decide the shared memory). The harness
// compares it with the GPU before the first launch: a GPU that cannot run the step gets one
// line naming the need and the limit, and the no-GPU exit code, so the GPU suite and
// scripts/bench.sh report the step as skipped there. `--requirements` prints it, no GPU needed.
struct Needs {
  int shared_bytes = 0;        // shared memory per block of the step's largest kernel (bytes)
  int compute_capability = 0;  // 0: any GPU the build covers; else exactly this one (90: sm_90a code)
};

// The facts of the GPU the step runs on, read once by the harness before the first launch.
// A step asks here rather than the device: with --sms N the harness runs every kernel on N
// of the GPU's SMs (a green context) while the device still reports all of them.
struct Gpu {
  int sm_count = 0;               // SMs this run may use (fewer than the device's with --sms)
  int shared_per_block = 0;       // bytes a block may have (dynamic, opted in)
  int compute_capability = 0;     // e.g. 90
  int fp32_lanes_per_sm = 0;      // FP32 FMA lanes per SM: 64 on sm_80, 128 on sm_86, 89, 90
  int clock_mhz = 0;              // the SMs' maximum clock
  double dram_bytes_per_us = 0;   // device memory's peak bandwidth, bytes per microsecond
  int l2_bytes = 0;               // the L2 cache's size
};
const Gpu& gpu();

// The way a step that chooses one computed the shape it launched last ("whole-tiles",
// "split-K", "stream-K", ...: one word, for --expect-path) and a count (pieces of K; stream-K's tiles). The harness prints
// it under the shape's check line, and --expect-path makes it part of the check.
void took_path(const char* path, int count = 0);

// The name of the tuning the step was built with (CMake passes SGEMM_TUNING; see tunings/).
#ifndef SGEMM_TUNING
#define SGEMM_TUNING "defaults"
#endif
#ifdef SGEMM_KNOBS
#define SGEMM_TUNING_LABEL SGEMM_TUNING " + " SGEMM_KNOBS
#else
#define SGEMM_TUNING_LABEL SGEMM_TUNING
#endif

// The architectures the step's kernels were compiled for, e.g. "800,900" (nvcc's list).
#define SGEMM_STRINGIFY_(...) #__VA_ARGS__
#define SGEMM_STRINGIFY(...) SGEMM_STRINGIFY_(__VA_ARGS__)
#ifdef __CUDA_ARCH_LIST__
#define SGEMM_ARCH_LIST SGEMM_STRINGIFY(__CUDA_ARCH_LIST__)
#else
#define SGEMM_ARCH_LIST ""
#endif

// The whole program: parses the command line, makes inputs, verifies against cuBLAS,
// times, prints and writes results. Returns the process exit code (see ExitCode).
// `tuning` and `archs` describe the step's own build, for --requirements and the CSV rows.
int run_step(int argc, char** argv, const char* step_name, LaunchFn launch, Needs needs = {},
             const char* tuning = SGEMM_TUNING_LABEL, const char* archs = SGEMM_ARCH_LIST);

// The cuBLAS reference, FP32 with default math (no TF32), on the harness's handle.
// Step 00 times it as a program of its own; the harness verifies every step against it.
void cublas_sgemm(const Problem& problem, cudaStream_t stream);

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Knobs. A step's tunables are written `constexpr int STAGES = SGEMM_KNOB(STAGES, 3);`: the
// value after the name is the step's default, and a build may replace it, the way the blog
// series' macro tunables let a reader tune for their own card. Lists of NAME=VALUE (spaces or
// commas between them; VALUE an integer, true or false) are read in this order, later wins:
//   SGEMM_TUNING_KNOBS   the tuning CMake chose for the GPU (tunings/*.txt, by name or class)
//   SGEMM_KNOBS          a reader's own, for one build: -DSGEMM_KNOBS='"STAGES=2"'
//   SGEMM_VARIANT_KNOBS  a variant of scripts/sweep.py (written into the variant's file)
namespace knobs {
consteval bool is_space(char c) { return c == ' ' || c == ',' || c == '\t'; }
consteval bool is_name(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }
// The value of `name` in `list`, if it is there; a malformed list stops the build.
consteval bool find(const char* list, const char* name, int& value) {
  bool found = false;
  for (int i = 0; list[i];) {
    if (is_space(list[i])) { ++i; continue; }
    const int start = i;
    while (is_name(list[i])) ++i;
    if (i == start || list[i] != '=') throw "a knob list is NAME=VALUE NAME=VALUE ...";
    bool same = true;
    int j = 0;
    for (; name[j] && start + j < i; ++j) same = same && name[j] == list[start + j];
    same = same && name[j] == 0 && start + j == i;
    ++i;  // '='
    int v = 0;
    bool digits = false, negative = list[i] == '-';
    if (negative) ++i;
    if (list[i] == 't' && list[i + 1] == 'r' && list[i + 2] == 'u' && list[i + 3] == 'e') v = 1, i += 4, digits = true;
    else if (list[i] == 'f' && list[i + 1] == 'a' && list[i + 2] == 'l' && list[i + 3] == 's' && list[i + 4] == 'e')
      v = 0, i += 5, digits = true;
    else
      for (; list[i] >= '0' && list[i] <= '9'; ++i) v = v * 10 + (list[i] - '0'), digits = true;
    if (!digits || (list[i] && !is_space(list[i]))) throw "a knob's VALUE is an integer, true or false";
    if (same) value = negative ? -v : v, found = true;
  }
  return found;
}
}  // namespace knobs

consteval int knob([[maybe_unused]] const char* name, int fallback) {
  int value = fallback;
#ifdef SGEMM_TUNING_KNOBS
  knobs::find(SGEMM_TUNING_KNOBS, name, value);
#endif
#ifdef SGEMM_KNOBS
  knobs::find(SGEMM_KNOBS, name, value);
#endif
#ifdef SGEMM_VARIANT_KNOBS
  knobs::find(SGEMM_VARIANT_KNOBS, name, value);
#endif
  return value;
}

// Shared memory a block may have on the GPU class this device pass compiles for (in the
// host pass, the largest of any class: the harness checks the GPU itself before launching).
// sm_80 and sm_87: 163 KB; sm_86 and sm_89: 99 KB; sm_90: 227 KB.
constexpr int shared_limit() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890)
  return 101376;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && __CUDA_ARCH__ < 900
  return 166912;
#else
  return 232448;
#endif
}

}  // namespace sgemm

#ifndef SGEMM_STEP
#define SGEMM_STEP __FILE__  // CMake names each step after its folder; built alone, run_step() does
#endif

// A tunable: the default `value`, unless the build's tuning or overrides name it (see knob).
#define SGEMM_KNOB(name, value) (::sgemm::knob(#name, (value)))
