# The GPU suite: every step, in check mode, on adversarial shapes. Each group is one CTest
# test per step (label "gpu"); a step exits with code 3 when there is no GPU, which CTest
# reports as SKIPPED, never as passed.
#
# Tile dimensions in the steps are powers of two from 8 to 128, so the shapes sit on and
# next to them (+-1), below one tile in K, and at primes that divide nothing.
set(SGEMM_GPU_GROUPS
  "tiny|1x1x1,1x1x2,2x1x1,1x2x1,1x1x17,3x5x7,7x3x5,2x3x4|1.5|-0.75"
  "primes|13x17x19,31x37x41,97x89x83,127x131x137,251x257x263,509x521x523|-1.25|0.5"
  "rectangular|300x200x100,64x1024x3,1024x64x513,1x1000x100,1000x1x100,100x100x1000,96x2000x40|1|1"
  "tile_edges|15x16x17,31x32x33,63x64x65,127x128x129,129x127x128,128x128x128,255x256x257,257x255x256,384x384x8,383x385x9,1023x1025x1027|0.75|0.25"
  "k_below_tile|128x128x1,200x300x1,129x257x2,256x256x3,256x128x7,100x130x15,130x126x31|1|-1"
  "large_k|64x64x20000,33x65x16385,128x128x8191|1|0.5"
  "beta0_nan_in_c|1x1x1,129x131x67,256x256x256,333x222x111,1024x1024x1024|2|0"
  "aligned_large|512x512x512,1024x768x256,2048x2048x64|1|0.5"
  # Padded rows (lda = K + 3, ldb = N + 5, ldc = N + 4 + 1: not multiples of 4 floats, so the
  # vector copies take their unaligned path), then padding that keeps 16-byte alignment. The
  # padding holds NaN: a step that strides by K where it means lda, or reads past a row, fails.
  "padded_ld|1x1x1,17x31x13,127x129x131,128x128x128,255x257x33,300x300x200,384x256x160|1.25|0.5|--ld-pad|3,5,1"
  "padded_ld_aligned|1x1x1,33x65x17,128x128x128,300x300x200,384x256x160|0.5|0|--ld-pad|4,8,4"
  # alpha == 0: C = beta C (and exactly zero with beta == 0 too).
  "alpha0|1x1x1,129x131x67,300x300x200|0|-0.5"
  "alpha0_beta0|1x1x1,129x131x67|0|0"
)

# sgemm_add_gpu_tests(TARGET [EXPECT_FAILURE]): EXPECT_FAILURE registers a control that the
# check must reject (exit code 1) in every group whose result depends on the product A B.
function(sgemm_add_gpu_tests step)
  set(expect_failure "${ARGN}")
  foreach(group IN LISTS SGEMM_GPU_GROUPS)
    string(REPLACE "|" ";" fields "${group}")
    list(GET fields 0 name)
    list(GET fields 1 sizes)
    list(GET fields 2 alpha)
    list(GET fields 3 beta)
    set(extra "")
    list(LENGTH fields nfields)
    if(nfields GREATER 4)
      list(SUBLIST fields 4 -1 extra)  # further options ("--ld-pad;3,5,1")
    endif()
    set(command $<TARGET_FILE:${step}> --check --sizes ${sizes} --alpha ${alpha} --beta ${beta} ${extra})
    if(expect_failure)
      if(alpha STREQUAL "0")
        continue()  # C = beta C involves no product: nothing for the control to get wrong
      endif()
      set(command sh ${PROJECT_SOURCE_DIR}/tests/expect_exit.sh 1 ${command})
    endif()
    # With beta == 0 the harness fills C with NaN before the run: none may survive.
    add_test(NAME gpu.${step}.${name} COMMAND ${command})
    set_tests_properties(gpu.${step}.${name} PROPERTIES
      LABELS gpu SKIP_RETURN_CODE 3 TIMEOUT 600)
  endforeach()
endfunction()
