# Steps 23 and on use wgmma (and 24 on TMA, 25 on setmaxnreg): instructions of sm_90a, the arch-specific
# variant of Hopper, which no other GPU runs (not even a later one). Wherever sm_90 is built
# (an explicit list naming 90, or native / all / all-major) this step is built for sm_90a
# alone; the harness (run_step(..., 90)) exits with the no-GPU code 3 on any GPU that is not
# compute capability 9.0, so CTest reports SKIPPED there. CUDA_ARCHITECTURES OFF plus an
# explicit -gencode works with every CMake this project accepts.
set(_sm90a_archs "${CMAKE_CUDA_ARCHITECTURES}")
if(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 12.0)
  message(STATUS "${SGEMM_STEP_TARGET}: nvcc ${CMAKE_CUDA_COMPILER_VERSION} has no sm_90a; the step is built without its kernel")
elseif(_sm90a_archs MATCHES "(^|;)90" OR _sm90a_archs MATCHES "^(native|all|all-major)$")
  set_target_properties(${SGEMM_STEP_TARGET} PROPERTIES CUDA_ARCHITECTURES OFF)
  target_compile_options(${SGEMM_STEP_TARGET} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a>)
else()
  # Not built for Hopper: the kernel body is compiled out and traps if it is ever reached.
  message(STATUS "${SGEMM_STEP_TARGET}: CMAKE_CUDA_ARCHITECTURES (${_sm90a_archs}) has no 90; built without its sm_90a kernel")
endif()
