# The GPU suite: every step, in check mode, on adversarial shapes. Each set gpu.NAME of
# tests/shapes.txt is one CTest test per step (label "gpu"); a step exits with code 3 when
# there is no GPU, which CTest reports as SKIPPED, never as passed.
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/shapes.txt" SGEMM_GPU_GROUPS REGEX "^gpu\\.")
# SGEMM_SUITE_SMS=N runs the whole suite on N of the GPU's SMs (--sms: green contexts), to
# test the choices a smaller GPU's SM count makes (e.g. 88 for the sm_86 class on an H100).
set(SGEMM_SUITE_SMS "" CACHE STRING "run the GPU suite on this many SMs (empty: all)")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/shapes.txt")

# Expected failures (tests/shapes.txt, lines "expect_fail.SET STEP [STEP...]"): the named steps
# are known to fail gpu.SET, a lesson of the chapter (3xTF32 without scaling loses the small
# part of subnormal inputs). Their test of that set passes only if the step exits with 1, the
# check's own failure (tests/expect_exit.sh: a crash, a usage error or a pass fails it, and no
# GPU still skips), and carries the label "expected_failure". So the suite records the failure,
# and flags the day it stops ("expected exit code 1, got 0"). Not CTest's WILL_FAIL: that
# passes any non-zero exit, a crash included. Every name is checked here: a set that is no
# gpu.* set, or a name that is no step, stops the configure; a step whose folder is not in
# this tree (yet) gets a warning.
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/shapes.txt" _sgemm_expect_fail_lines REGEX "^expect_fail\\.")
set(_sgemm_gpu_set_names "")
foreach(group IN LISTS SGEMM_GPU_GROUPS)
  string(REGEX MATCH "^gpu\\.[^ \t]+" set "${group}")
  string(REGEX REPLACE "^gpu\\." "" set "${set}")
  list(APPEND _sgemm_gpu_set_names "${set}")
endforeach()
foreach(line IN LISTS _sgemm_expect_fail_lines)
  string(REGEX MATCHALL "[^ \t]+" fields "${line}")  # expect_fail.SET STEP [STEP...]
  list(LENGTH fields nfields)
  list(GET fields 0 set)
  string(REGEX REPLACE "^expect_fail\\." "" set "${set}")
  if(nfields LESS 2 OR NOT set IN_LIST _sgemm_gpu_set_names)
    message(FATAL_ERROR "tests/shapes.txt: an expect_fail line needs a gpu.* set and at least one step: ${line}")
  endif()
  list(SUBLIST fields 1 -1 steps)
  foreach(step IN LISTS steps)
    if(NOT step MATCHES "^([0-9][0-9]_[a-z0-9_]+|control_[a-z0-9_]+)$")
      message(FATAL_ERROR "tests/shapes.txt: '${step}' in '${line}' is no step name (NN_slug)")
    elseif(step MATCHES "^[0-9]" AND NOT IS_DIRECTORY "${PROJECT_SOURCE_DIR}/steps/${step}")
      message(WARNING "tests/shapes.txt: ${line}: no steps/${step} in this tree")
    endif()
  endforeach()
  set(SGEMM_EXPECT_FAIL_${set} ${steps})
endforeach()

# sgemm_add_gpu_tests(TARGET [EXPECT_FAILURE] [TILE NAME] [SPLIT PLACE]): EXPECT_FAILURE
# registers a control that the check must reject (exit code 1) in every group whose result
# depends on the product A B. TILE runs every set with the environment variable
# SGEMM_TILE=NAME, tests gpu.TARGET.NAME.SET: a step that chooses its tile from the shape
# (step 21) has each tile tested on every set, not only on the shapes its rule gives that
# tile. SPLIT does the same with SGEMM_SPLIT=PLACE (step 30: where A is split). Both together
# (step 37: a tile at each place) name the tests gpu.TARGET.NAME.PLACE.SET and set both.
# EDGES runs every set with SGEMM_EDGES=EDGES, tests gpu.TARGET.edges-EDGES.SET (step 21: C
# cut into rectangles wherever it can be, not only where the rule cuts it). B runs every set
# with SGEMM_B=B, tests gpu.TARGET.b-B.SET (step 21: B copied aligned first wherever it is not
# aligned, not only where the rule copies it).
function(sgemm_add_gpu_tests step)
  cmake_parse_arguments(arg "EXPECT_FAILURE" "TILE;SPLIT;EDGES;B" "" ${ARGN})
  set(expect_failure ${arg_EXPECT_FAILURE})
  set(prefix gpu.${step})
  if(arg_EDGES)
    set(prefix gpu.${step}.edges-${arg_EDGES})
  elseif(arg_B)
    set(prefix gpu.${step}.b-${arg_B})
  elseif(arg_TILE AND arg_SPLIT)
    set(prefix gpu.${step}.${arg_TILE}.${arg_SPLIT})
  elseif(arg_TILE)
    set(prefix gpu.${step}.${arg_TILE})
  elseif(arg_SPLIT)
    set(prefix gpu.${step}.${arg_SPLIT})
  endif()
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
    set(labels gpu)
    if(expect_failure)
      if(alpha STREQUAL "0")
        continue()  # C = beta C involves no product: nothing for the control to get wrong
      endif()
      set(command sh ${PROJECT_SOURCE_DIR}/tests/expect_exit.sh 1 ${command})
    elseif(step IN_LIST SGEMM_EXPECT_FAIL_${name})  # an expected failure (above)
      set(command sh ${PROJECT_SOURCE_DIR}/tests/expect_exit.sh 1 ${command})
      list(APPEND labels expected_failure)
    endif()
    # With beta == 0 the harness fills C with NaN before the run: none may survive.
    add_test(NAME ${prefix}.${name} COMMAND ${command})
    set_tests_properties(${prefix}.${name} PROPERTIES
      LABELS "${labels}" SKIP_RETURN_CODE 3 TIMEOUT 600)
    if(arg_EDGES)
      set_tests_properties(${prefix}.${name} PROPERTIES ENVIRONMENT "SGEMM_EDGES=${arg_EDGES}")
    elseif(arg_B)
      set_tests_properties(${prefix}.${name} PROPERTIES ENVIRONMENT "SGEMM_B=${arg_B}")
    elseif(arg_TILE AND arg_SPLIT)
      set_tests_properties(${prefix}.${name} PROPERTIES ENVIRONMENT "SGEMM_TILE=${arg_TILE};SGEMM_SPLIT=${arg_SPLIT}")
    elseif(arg_TILE)
      set_tests_properties(${prefix}.${name} PROPERTIES ENVIRONMENT "SGEMM_TILE=${arg_TILE}")
    elseif(arg_SPLIT)
      set_tests_properties(${prefix}.${name} PROPERTIES ENVIRONMENT "SGEMM_SPLIT=${arg_SPLIT}")
    endif()
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
