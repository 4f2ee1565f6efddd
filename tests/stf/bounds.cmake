# What a rank holds while inserting (included by CMakeLists.txt): insertion
# held to sched_pending_max, ended writers let go, copies reclaimed at a
# wait, and leaks found at a taskpool's end.

weft_test(stf_taskpool_leak SRC test_tp_leak.c INTERNAL)
weft_test(stf_seq_bounded SRC test_seq_bounded.c INTERNAL)
# The reclaim at a wait leaves a copy that a transfer writes into (an
# eviction's write-back into a non-owned tile's host copy): it freed it.
weft_test(stf_remote_reclaim SRC test_remote_reclaim.c INTERNAL)
weft_test(stf_seq_bounded_r2 EXE test_seq_bounded RANKS 2 ARGS --weft-cores=1)
# Insertion far ahead of execution (a chain, across ranks) holds at most
# about sched_pending_max tasks a rank (65536 by default, some 100 MiB).
# Without it (sched_pending_max=0): 38.7 MiB on one rank, 44.6 MiB a rank
# on two, 13.2 MiB on three; with it 12.1, 1.7 and 0.1.
weft_test(stf_insert_bounded SRC test_insert_bounded.c INTERNAL ARGS 60000 16 20 --weft-cores=1
  --weft-sched_pending_max=8192)
weft_test(stf_insert_bounded_r2 EXE test_insert_bounded RANKS 2 ARGS 20000 6 0 --weft-cores=1
  --weft-sched_pending_max=1024)
# Task 5000 sleeps 2 s: the holds see nothing move for a second and give
# up, going on to twice the bound (4096 tasks at most, 6.5 MiB), where a
# hold that gave up let every task left in (78 MiB).
weft_expect_test(stf_insert_bounded_slow_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0 --match "^test_insert_bounded rank %r: 40000 tasks run of 40000, .*: PASSED$"
  --match "^weft\\[[01]\\] stats: rank [01]: insertion held back [0-9]+ times, .* [1-9][0-9]* given up"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_insert_bounded> 40000 12 0 5000 2 --weft-cores=1
      --weft-sched_pending_max=1024 --weft-show_stats=1)
weft_test(stf_insert_bounded_r3 EXE test_insert_bounded RANKS 3 ARGS 6000 6 0 --weft-cores=1
  --weft-sched_pending_max=16 --weft-device_emu_enabled=1)
# Each of many tiles written once in one taskpool: the ended writers are let
# go while inserting (a record held its last one until the wait: 100,000
# tiles, about 160 MiB a rank).
weft_test(stf_writers_bounded SRC test_writers_bounded.c INTERNAL ARGS 100000 24 5 --weft-cores=1
  --weft-sched_pending_max=1024)
weft_test(stf_writers_bounded_r2 EXE test_writers_bounded RANKS 2 ARGS 100000 24 5 --weft-cores=1
  --weft-sched_pending_max=1024)
weft_test(stf_taskpool_leak_off EXE test_tp_leak ARGS off --weft-leak_report=0)
# A leak found at a taskpool's end on rank 0 only fails every rank's wait,
# each naming it (rank 1's wait returned 0 before).
weft_expect_test(stf_taskpool_leak_r2 TIMEOUT 60 RANKS 2
  CHECKS --count "taskpool leaky failed: rank 0: 1 leaked copy [(]weft's broken invariant[)]. the last: leak at the end of taskpool leaky: data 0" 2
         --match "^test_tp_leak rank %r: .* leaky wait -10, fini -10: PASSED$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_tp_leak> --weft-cores=1)
