# weft_app_dev_test(NAME EXE target [RANKS n] [TIMEOUT s] [GPUS n|none] [FAIL]
#                   [ENV var=value ...] [EXPECT regex ...] ARGS ...)
# Runs the program (through mpiexec with RANKS) under tests/apps/app_test.sh:
# - without FAIL the run must exit 0, with FAIL it must exit non-zero
#   without being killed by a signal;
# - every EXPECT extended regex must match a line of its output;
# - GPUS n: the test needs n CUDA devices and is skipped (77) where the
#   program's --probe-gpus finds fewer; GPUS none: it needs a machine
#   without CUDA device and is skipped on GPU machines. Tests with GPUS get
#   the label "cuda" and run one at a time (RESOURCE_LOCK weft_gpu, as the
#   device_cuda_* tests): each takes most of a GPU's memory.
set(WEFT_APP_TEST_SH ${CMAKE_CURRENT_LIST_DIR}/app_test.sh)

function(weft_app_dev_test name)
  cmake_parse_arguments(T "FAIL" "EXE;RANKS;TIMEOUT;GPUS" "ENV;EXPECT;ARGS" ${ARGN})
  set(exe $<TARGET_FILE:${T_EXE}>)
  set(cmd ${exe})
  if(T_RANKS)
    set(cmd ${MPIEXEC_EXECUTABLE} ${WEFT_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} ${exe})
  endif()
  set(mode pass)
  if(T_FAIL)
    set(mode fail)
  endif()
  if(NOT DEFINED T_GPUS)
    set(T_GPUS 0)
  endif()
  add_test(NAME ${name}
    COMMAND sh ${WEFT_APP_TEST_SH} ${mode} ${T_GPUS} ${exe} ${T_EXPECT} -- ${cmd} ${T_ARGS})
  weft_test_limits(${name} "${T_TIMEOUT}" "${T_RANKS}" ${T_ENV})
  if(NOT T_GPUS STREQUAL "0")
    set_tests_properties(${name} PROPERTIES LABELS cuda RESOURCE_LOCK weft_gpu)
  endif()
endfunction()
