# The watchdog and the progress line (included by CMakeLists.txt): a rank
# starved of a tile, a long task that is no stall, stalls in a wait's
# agreement, a stalled chain's report, progress while inserting.

# The run must fail (watchdog_abort) and name the tile the receive waits
# for; rank 0, ended by the launcher, says so.
weft_test_exe(test_watchdog test_watchdog.c)
weft_expect_test(stf_watchdog_starved TIMEOUT 60 ENV ${WEFT_SIGKILL_LATE}
  CHECKS --status nonzero --match "waiting for data 0 v1 from rank 0"
    --match "^weft\\[0\\] error: ended by SIGTERM"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_watchdog> --weft-cores=1)
# The watchdog (section 6): a long task is not a stall (watchdog_abort
# would end the run); a rank kept waiting for another says what for.
weft_test(stf_watchdog_long_task SRC test_watchdog_long.c ARGS --weft-cores=1 TIMEOUT 30)
# The progress line comes while the inserting thread runs the tasks, not
# only in the wait: a line counting fewer than the 3000 tasks inserted.
weft_test_exe(test_progress_insert test_progress_insert.c)
weft_expect_test(stf_progress_insert TIMEOUT 60
  CHECKS --match "^weft\\[0\\] progress: tiles: [0-9]+ / ([0-9]{1,3}|[12][0-9]{3}) tasks of this rank ended"
    --match "^test_progress_insert: PASSED"
  RUN $<TARGET_FILE:test_progress_insert> --weft-cores=1 --weft-sched_window=2 --weft-progress=1)
# The same with the application slow between insertions, its tasks empty.
weft_expect_test(stf_progress_insert_slow TIMEOUT 60
  CHECKS --match "^weft\\[0\\] progress: tiles: [0-9]+ / ([0-9]{1,3}|[12][0-9]{3}) tasks of this rank ended"
    --match "^test_progress_insert: PASSED"
  RUN $<TARGET_FILE:test_progress_insert> slow --weft-cores=1 --weft-progress=1)
weft_test(stf_watchdog_long_task_emu SRC test_watchdog_long.c
  ARGS --weft-cores=1 --weft-device_emu_enabled=1 TIMEOUT 30)
set_tests_properties(stf_watchdog_long_task stf_watchdog_long_task_emu PROPERTIES
  FAIL_REGULAR_EXPRESSION "stall:")
weft_test_exe(test_watchdog_late test_watchdog_late.c)
weft_expect(stf_watchdog_late pass 2
  LINES "^weft\\[1\\] warning: stall: weft_taskpool_wait of taskpool 'late' \\(taskpool #1\\): waited [12] s for every rank"
        "^test_watchdog_late rank %r: PASSED"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_watchdog_late> --weft-cores=1 --weft-watchdog_s=1)
# The same after the tasks: rank 0 has run its tasks and waits in the
# wait's collectives (any failure?) for rank 1's task of 3 s.
weft_expect(stf_watchdog_late_body pass 2
  LINES "^weft\\[0\\] warning: stall: weft_taskpool_wait of taskpool 'late' \\(its tasks done here\\): waited [12] s for every rank"
        "^test_watchdog_late rank %r: PASSED"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_watchdog_late> body --weft-cores=1 --weft-watchdog_s=1)
# With watchdog_abort the stall in the agreement ends the run (it only
# logged, and a rank stuck elsewhere for good left it waiting for ever).
weft_expect_test(stf_watchdog_late_abort TIMEOUT 60
  CHECKS --status nonzero
    --match "^weft\\[1\\] error: stall: weft_taskpool_wait of taskpool 'late' \\(taskpool #1\\): waited [12] s for every rank"
    --match "^weft\\[1\\] error: stall: watchdog_abort is set: ending the run"
    --reject "PASSED"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_watchdog_late> 6 --weft-cores=1 --weft-watchdog_s=1
      --weft-watchdog_abort=1)
# The stall report of a chain of writers whose input never comes (rank 1's
# posts all fail): a task names the writer it waits for, never a later one
# of its chain (the record keeps the last writer), and one whose
# predecessors are not done is not "ready or running" (a fault sweep's
# report: both were printed for most of weft-gemm's chain).
weft_expect_test(stf_watchdog_chain_named TIMEOUT 90
  CHECKS --status nonzero --within 80
    --match "^weft\\[0\\] error: stall: task gemm #[0-9]+ waits for "
    --reject "stall: task gemm #[0-9]+ is ready or running"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:weft-gemm> -N 205 -t 51 -P 1 -Q 2 -c 1 --check
      --weft-watchdog_s=3 --weft-watchdog_abort=1 --weft-fault_inject=comm_post:1+@1)
