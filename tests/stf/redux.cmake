# Reductions (WEFT_REDUX; included by CMakeLists.txt): exact sums, released
# and NEW reduced data, init contents and init tasks that fail, failed
# contributions and lanes, stage functions, lanes that differ between ranks.

# Reductions (WEFT_REDUX): accumulating tasks overlap (RW serialises them),
# the sum is exact, misuse is refused; on the owner of 1 and 2 ranks.
weft_test(stf_redux SRC test_redux.c ARGS --weft-cores=4 TIMEOUT 60)
weft_test(stf_redux_r2 EXE test_redux RANKS 2 ARGS --weft-cores=2 TIMEOUT 60)
# A reduced data released before the wait still gets its partials
# combined (the wait refused weft's own combine tasks on the released handle).
weft_test(stf_redux_release SRC test_redux_release.c ARGS --weft-cores=2 TIMEOUT 60)
weft_test(stf_redux_release_emu_r2 EXE test_redux_release RANKS 2
  ARGS --weft-cores=1 --weft-device_emu_enabled=1 TIMEOUT 60)
weft_test(stf_redux_release_r3 EXE test_redux_release RANKS 3 ARGS --weft-cores=1 TIMEOUT 90)
# A reduced NEW data with contents before its first task (weft_data_set_init,
# a host write on its owner): the partials fold into them, and every rank
# inserts the same tasks (the init replaced set_init's contents; the
# owner's host access made the ranks' tasks differ: WEFT_ERR_MISMATCH).
weft_test(stf_redux_init SRC test_redux_init.c ARGS --weft-cores=2 TIMEOUT 60)
weft_test_exe(test_redux_nomem test_redux_nomem.c)
# No memory for a reduction's tables (injected): refused, and a second
# call builds it whole (a half-built one crashed the first insertion).
weft_expect_test(stf_redux_nomem TIMEOUT 60 RANKS 1
  CHECKS --status 0
    --match "^weft\\[0\\] error: weft_data_set_reduction: data 0: no memory for its partial results"
  RUN ${WEFT_MPIRUN} -n 1 $<TARGET_FILE:test_redux_nomem> --weft-cores=2
      --weft-fault_inject=redux_alloc:1)
weft_test(stf_redux_init_r2 EXE test_redux_init RANKS 2 ARGS --weft-cores=1 TIMEOUT 60)
# The refusing rank's reason reaches every rank whole (it was cut at 150
# characters, mid-word).
weft_expect_test(stf_redux_init_read_first_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error:   rank 1 refused task combine: insert combine: reads NEW data 0, .* reduce into it or write it in a task first$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_redux_init> read_first --weft-cores=1)
weft_test(stf_redux_init_emu_r2 EXE test_redux_init RANKS 2
  ARGS --weft-cores=1 --weft-device_emu_enabled=1 TIMEOUT 60)
# A contribution of a reduction that fails: the data keeps its value from
# before the reduction on 1-4 ranks (it kept a partial sum that depended on
# the number of ranks), and the next reduction folds into it; emu devices.
weft_test_exe(test_redux_fail test_redux_fail.c)
foreach(n 1 2 3 4)
  weft_test(stf_redux_fail_r${n} EXE test_redux_fail RANKS ${n} ARGS 1 --weft-cores=1 TIMEOUT 60)
endforeach()
# The failure line names the user's data beside the partial (weft's own
# data, whose number alone the user cannot place).
weft_expect_test(stf_redux_fail_named_r2 TIMEOUT 60 RANKS 2
  CHECKS --match "weft\\[%r\\] error: taskpool reduce failed: rank 1: task add #1 returned -5 \\(data [0-9]+ \\[a partial of data 0's reduction\\] written\\)"
    --match "^stf_redux_fail: [0-9]+ checks, 0 failures: PASSED"
  RUN ${WEFT_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:test_redux_fail> 1 --weft-cores=1)
weft_test(stf_redux_fail_none_r3 EXE test_redux_fail RANKS 3 ARGS -1 --weft-cores=1 TIMEOUT 60)
# A reduction's init task failing (injected, on the last rank: the owner's
# on 1 rank, another's on 2): its partial never had contents, and each
# contribution dealt it failed, a line apiece ("data N has no contents",
# "no host copy"); they are cancelled, the data keeps its value.
foreach(n 1 2)
  math(EXPR last "${n} - 1")
  weft_expect_test(stf_redux_init_fails_r${n} TIMEOUT 60 RANKS ${n}
    CHECKS --status 0 --match "^stf_redux_fail: [0-9]+ checks, 0 failures: PASSED"
      --match "^weft\\[%r\\] error: taskpool reduce failed: rank ${last}: task zero #[0-9]+ returned -42"
      --reject "no contents|no host copy"
    RUN ${WEFT_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} ${n} $<TARGET_FILE:test_redux_fail> init
        --weft-cores=1 --weft-fault_inject=task:zero:1@${last})
endforeach()
weft_test(stf_redux_fail_emu_r3 EXE test_redux_fail RANKS 3 ARGS 5 --weft-cores=1
  --weft-device_emu_enabled=1 TIMEOUT 60)
# redux_lanes set after weft_init on one rank: the reductions' lanes differ,
# named on every rank (it was named by the partial tasks only).
weft_expect(stf_redux_lanes_skew fail 2
  LINES "^weft\\[%r\\] error:   rank 0 made #1 as 'weft_data_set_reduction\\(data 0\\) with redux_lanes=4'"
        "^weft\\[%r\\] error:   rank 1 made #1 as 'weft_data_set_reduction\\(data 0\\) with redux_lanes=1'"
        "^test_repeated_flows rank %r: wait=-8"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_repeated_flows> --lanes-skew --weft-cores=1)
# A reduction's init failing in a later taskpool (its partial holds the
# last sum): the task dealt it is cancelled, its other write with it.
weft_test_exe(test_redux_init_later test_redux_init_later.c)
foreach(n 1 2)
  weft_expect_test(stf_redux_init_later_r${n} TIMEOUT 60 RANKS ${n}
    CHECKS --status 0 --within 40 --match "^test_redux_init_later rank %r: ok$"
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_redux_init_later> --weft-cores=1
        --weft-redux_lanes=1 --weft-fault_inject=task:zero:2@0)
endforeach()
# A reduction into a data with stage functions: its partials move by them
# too (a device's partial was made and folded in the device layout: 172
# or 154 for 136, no error; a stage stranger's finding).
weft_test_exe(test_redux_stage test_redux_stage.c)
foreach(c "device_r1;1;device" "device_r2;2;device" "mixed_r3;3;mixed")
  list(GET c 0 k)
  list(GET c 1 n)
  list(GET c 2 a)
  weft_test(stf_redux_stage_${k} EXE test_redux_stage RANKS ${n} ARGS ${a} --weft-cores=1
    --weft-device_emu_enabled=1 --weft-redux_lanes=1)
endforeach()
# A failed REDUX contribution voids its partial; the next task dealt that
# partial still runs for its other flows, and the reduced data keeps its
# value (test_redux_lane_fail.c). 3 fills put PUT on BOOM's lane with the
# default 4 lanes; with 1 lane every task shares it; PUT on rank 1 of 2.
# "again": a later reduction in the same taskpool, after a W, comes whole.
weft_test_exe(test_redux_lane_fail test_redux_lane_fail.c)
foreach(c "r1_lane;1;0 0 3;" "r1_one_lane;1;0 0 0;--weft-redux_lanes=1"
    "r2_remote;2;1 1 3;" "r2_cross;2;1 0 0;--weft-redux_lanes=1"
    "r2_emu;2;1 1 3;--weft-device_emu_enabled=1"
    "r1_again;1;0 0 0 again;" "r1_again_one_lane;1;0 0 0 again;--weft-redux_lanes=1"
    "r2_again;2;1 0 2 again;--weft-device_emu_enabled=1")
  list(GET c 0 k)
  list(GET c 1 n)
  list(GET c 2 a)
  list(GET c 3 extra)
  separate_arguments(a UNIX_COMMAND "${a}")
  weft_expect_test(stf_redux_lane_fail_${k} TIMEOUT 60 RANKS ${n}
    CHECKS --status 0 --within 40 --match "^test_redux_lane_fail rank %r: ok$"
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_redux_lane_fail> ${a} --weft-cores=1 ${extra})
endforeach()
