// Step 00 - cuBLAS                                                   previous: (none)
// Change: no kernel of ours: the baseline, cuBLAS SGEMM in FP32 with default math (no TF32).
// Why:    every later step is measured against it, in the same run; timing it as a step of
//         its own shows the spread of the measurement (its ratio to itself should be ~1.0).
// Watch:  the ratio column: how far from 1.0 two timings of the same thing can land.
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -arch=sm_80 -Icommon common/*.cpp common/*.cu steps/00_cublas/cublas.cu -lcublas -o build-alone/cublas
#include "sgemm.cuh"

// The row-major -> column-major operand swap is explained in common/reference.cu.
void launch(const sgemm::Problem& p, cudaStream_t stream) { sgemm::cublas_sgemm(p, stream); }

int main(int argc, char** argv) { return sgemm::run_step(argc, argv, SGEMM_STEP, launch); }
