# The GPU suite: every step, in check mode, on adversarial shapes. Each set gpu.NAME of
# tests/shapes.txt is one CTest test per step (label "gpu"); a step exits with code 3 when
# there is no GPU, which CTest reports as SKIPPED, never as passed.
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/shapes.txt" SGEMM_GPU_GROUPS REGEX "^gpu\\.")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/shapes.txt")

function(sgemm_add_gpu_tests step)
  foreach(group IN LISTS SGEMM_GPU_GROUPS)
    string(REGEX MATCHALL "[^ \t]+" fields "${group}")  # SET SIZES ALPHA BETA
    list(LENGTH fields n)
    if(NOT n EQUAL 4)
      message(FATAL_ERROR "tests/shapes.txt: a gpu.* set needs SET SIZES ALPHA BETA: ${group}")
    endif()
    list(GET fields 0 set)
    list(GET fields 1 sizes)
    list(GET fields 2 alpha)
    list(GET fields 3 beta)
    string(REGEX REPLACE "^gpu\\." "" name "${set}")
    add_test(NAME gpu.${step}.${name}
             COMMAND ${step} --check --sizes ${sizes} --alpha ${alpha} --beta ${beta})
    set_tests_properties(gpu.${step}.${name} PROPERTIES
      LABELS gpu SKIP_RETURN_CODE 3 TIMEOUT 600)
  endforeach()
endfunction()
