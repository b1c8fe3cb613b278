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

// The whole program: parses the command line, makes inputs, verifies against cuBLAS,
// times, prints and writes results. Returns the process exit code (see ExitCode).
// required_sm: 0 for a step that runs on any GPU it was built for; otherwise the one compute
// capability (e.g. 90 for sm_90a code) it needs. On another GPU the step says so in one line
// and exits with the no-GPU code, so the GPU suite reports it as skipped there.
int run_step(int argc, char** argv, const char* step_name, LaunchFn launch, int required_sm = 0);

// The cuBLAS reference, FP32 with default math (no TF32), on the harness's handle.
// Step 00 times it as a program of its own; the harness verifies every step against it.
void cublas_sgemm(const Problem& problem, cudaStream_t stream);

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace sgemm

#ifndef SGEMM_STEP
#define SGEMM_STEP "unnamed_step"  // CMake's add_step() names each step after its folder
#endif
