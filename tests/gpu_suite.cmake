# The GPU suite: every step, in check mode, on adversarial shapes. Each set gpu.NAME of
# tests/shapes.txt is one CTest test per step (label "gpu"); a step exits with code 3 when
# there is no GPU, which CTest reports as SKIPPED, never as passed.
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/shapes.txt" SGEMM_GPU_GROUPS REGEX "^gpu\\.")
# SGEMM_SUITE_SMS=N runs the whole suite on N of the GPU's SMs (--sms: green contexts), to
# test the choices a smaller GPU's SM count makes (e.g. 88 for the sm_86 class on an H100).
set(SGEMM_SUITE_SMS "" CACHE STRING "run the GPU suite on this many SMs (empty: all)")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/shapes.txt")

# sgemm_add_gpu_tests(TARGET [EXPECT_FAILURE]): EXPECT_FAILURE registers a control that the
# check must reject (exit code 1) in every group whose result depends on the product A B.
function(sgemm_add_gpu_tests step)
  set(expect_failure "${ARGN}")
  foreach(group IN LISTS SGEMM_GPU_GROUPS)
    string(REGEX MATCHALL "[^ \t]+" fields "${group}")  # SET SIZES ALPHA BETA [OPTIONS...]
    list(LENGTH fields nfields)
    if(nfields LESS 4)
      message(FATAL_ERROR "tests/shapes.txt: a gpu.* set needs SET SIZES ALPHA BETA [OPTIONS...]: ${group}")
    endif()
    list(GET fields 0 set)
    list(GET fields 1 sizes)
    list(GET fields 2 alpha)
    list(GET fields 3 beta)
    string(REGEX REPLACE "^gpu\\." "" name "${set}")
    set(extra "")
    if(nfields GREATER 4)
      list(SUBLIST fields 4 -1 extra)  # further options ("--ld-pad;3,5,1")
    endif()
    if(SGEMM_SUITE_SMS)
      list(APPEND extra --sms ${SGEMM_SUITE_SMS})
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

# The paths (tests/shapes.txt, sets path.SMS.PATH): step 20 on SMS SMs must report PATH for
# every shape, besides passing the check. Its choices depend on its knobs, so only a build
# whose tuning leaves them at the defaults registers these (a GPU with fewer SMs skips them).
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/shapes.txt" SGEMM_PATH_SETS REGEX "^path\\.")
function(sgemm_add_path_tests step)
  if(DEFINED SGEMM_TUNED_${step})
    return()
  endif()
  foreach(line IN LISTS SGEMM_PATH_SETS)
    string(REGEX MATCHALL "[^ \t]+" fields "${line}")
    list(GET fields 0 set)
    list(GET fields 1 sizes)
    string(REGEX REPLACE "^path\\.([0-9]+)\\.(.*)$" "\\1" sms "${set}")
    string(REGEX REPLACE "^path\\.([0-9]+)\\.(.*)$" "\\2" path "${set}")
    add_test(NAME gpu.${step}.path.${sms}.${path}
             COMMAND $<TARGET_FILE:${step}> --check --sizes ${sizes} --alpha 1.25 --beta -0.75 --sms ${sms}
                     --expect-path ${path})
    set_tests_properties(gpu.${step}.path.${sms}.${path} PROPERTIES LABELS gpu SKIP_RETURN_CODE 3 TIMEOUT 600)
  endforeach()
endfunction()
