# weft_fini and the process's end (included by CMakeLists.txt): leaving
# main without it, calls refused on the way, data and taskpools left at it
# (leaks, unwaited insertions), its collectives failing, its trace, and
# calls made after it.

# Leaving main without weft_fini: each rank's line and a non-zero exit.
weft_test_exe(test_no_fini test_no_fini.c)
# (On 2 ranks the launcher may end the later rank first: its SIGTERM line.)
weft_expect_test(stf_no_fini_r1 TIMEOUT 60 RANKS 1
  CHECKS --status nonzero
  --match "^weft\\[0\\] error: the process is exiting with 1 weft context live: weft_fini was not called"
  RUN ${WEFT_MPIRUN} -n 1 $<TARGET_FILE:test_no_fini> --weft-cores=1)
weft_expect_test(stf_no_fini_r2 TIMEOUT 60 RANKS 2 ENV ${WEFT_SIGKILL_LATE}
  CHECKS --status nonzero
  --match "^weft\\[%r\\] error: (the process is exiting with 1 weft context live: weft_fini was not called|ended by SIGTERM)"
  --match "^weft\\[[01]\\] error: the process is exiting with 1 weft context live"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_no_fini> --weft-cores=1)
# Asleep most of its time (the launcher's delay before SIGKILL): one core,
# so that ctest runs another test beside it (the CI's 30 minutes).
set_tests_properties(stf_no_fini_r2 PROPERTIES PROCESSORS 1)
weft_test(stf_no_fini_control EXE test_no_fini RANKS 2 ARGS fini --weft-cores=1)
weft_expect_test(stf_no_fini_exit3 TIMEOUT 60 RANKS 1
  CHECKS --status 3
  --match "^weft\\[0\\] error: the process is exiting with 1 weft context live: .* [(]exit status 3[)]$"
  RUN ${WEFT_MPIRUN} -n 1 $<TARGET_FILE:test_no_fini> exit3 --weft-cores=1)
# A refusal by a call that returns nothing fails weft_fini on every rank.
weft_test_exe(test_void_refused test_void_refused.c)
foreach(m release free matrix tile null)
  weft_expect_test(stf_void_refused_${m}_r2 TIMEOUT 60 RANKS 2
    CHECKS --status nonzero
    --match "^weft\\[%r\\] error: weft_fini returns -1 \\(WEFT_ERR_INVALID\\): 1 call that returns nothing refused .*. the last: "
    --match "^test_void_refused rank %r: ${m}: weft_fini -1$"
    RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_void_refused> ${m} --weft-cores=1)
endforeach()
weft_test(stf_void_refused_none_r2 EXE test_void_refused RANKS 2 ARGS none --weft-cores=1)
# After a misuse of its own (a taskpool freed before its wait) the refusal
# is still said (its line was lost).
weft_expect_test(stf_void_refused_unwaited_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft\\[%r\\] error: taskpool tp freed with insertions not waited for"
  --match "^weft\\[%r\\] error: weft_fini returns -1 \\(WEFT_ERR_INVALID\\): 1 call that returns nothing refused .*. the last: argument 1 of weft_matrix_free"
  --match "^test_void_refused rank %r: unwaited: weft_fini -1$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_void_refused> unwaited --weft-cores=1)
weft_expect_test(stf_void_refused_failed_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft\\[%r\\] error: weft_fini: 1 call that returns nothing refused .* [(]it returns -9 [(]a task failed .*[)], the run's first error[)]$"
  --match "^test_void_refused rank %r: failed: weft_fini -9$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_void_refused> failed --weft-cores=1)
# Data never released at weft_fini (a NEW tile held by rank 0 only): the
# leak report names it on rank 0 and fini returns WEFT_ERR_INVALID (-1) on
# every rank; leak_report=0 turns both off; releasing it is the control.
weft_test_exe(test_fini_leak test_fini_leak.c)
set(fini_leak_line "^weft\\[0\\] error: leak at weft_fini: data 0 [(]4 x 4[)] copy on device 0")
foreach(n 1 2)
  weft_expect_test(stf_fini_leak_r${n} TIMEOUT 60 RANKS ${n}
    CHECKS --status clean --match "${fini_leak_line}" --match "^test_fini_leak rank %r: insert[+]wait=0 fini=-1$"
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_fini_leak> --weft-cores=1)
endforeach()
# Rank 1 has an error of its own at weft_fini (a refused release): each
# rank names the other's, rank 1 rank 0's leak (it said only its own).
weft_expect_test(stf_fini_leak_both_r2 TIMEOUT 60 RANKS 2
  CHECKS --status clean --match "${fini_leak_line}"
  --match "^weft\\[1\\] error: weft_fini: rank 0 failed at weft_fini too [(]invalid argument[)]: .*runtime-owned cop(y|ies) of [0-9]+ unreleased data (is|are) still alive at weft_fini$"
  --match "^weft\\[0\\] error: weft_fini: rank 1 failed at weft_fini too [(]invalid argument[)]: 1 call that returns nothing refused"
  --match "^test_fini_leak rank %r: insert[+]wait=0 fini=-1$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_fini_leak> --refuse1 --weft-cores=1)
# A collective of that exchange fails in MPI (fault_inject mpi_coll: 5
# finds the second lowest-rank reduction, 6 and 7 the broadcasts of each
# rank's words; 3 is weft_fini's barrier): weft_fini returns WEFT_ERR_MPI,
# and the lines of rank 0's leak and rank 1's refusal name that status
# (they said -1, read before the exchange).
foreach(n 5 6 7)
  weft_expect_test(stf_fini_leak_mpi_${n} TIMEOUT 60 RANKS 2
    CHECKS --status clean --reject "returns -1"
    --match "^weft\\[%r\\] error: weft_fini: .*the collective between ranks failed in MPI [(]injected: fault_inject mpi_coll[)]"
    --match "^weft\\[0\\] error: weft_fini: these leaks are an error .* it returns -6 [(]MPI error[)], the run's first error$"
    --match "^weft\\[1\\] error: weft_fini: 1 call that returns nothing refused .*[(]it returns -6 [(]MPI error[)], the run's first error[)]$"
    --match "^test_fini_leak rank %r: insert[+]wait=0 fini=-6$"
    RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_fini_leak> --refuse1 --weft-cores=1
    --weft-fault_inject=mpi_coll:${n})
endforeach()
# weft_fini's barrier (every rank's transfers over) fails in MPI: it
# returned 0 on every rank; now each names it and returns WEFT_ERR_MPI.
weft_expect_test(stf_fini_barrier_mpi TIMEOUT 60 RANKS 2
  CHECKS --status clean
  --match "^weft\\[%r\\] error: weft_fini: the barrier after every rank's transfers: the collective between ranks failed in MPI [(]injected: fault_inject mpi_coll[)]"
  --match "^test_fini_leak rank %r: insert[+]wait=0 fini=-6$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_fini_leak> --release --weft-cores=1
  --weft-fault_inject=mpi_coll:3)
weft_expect_test(stf_fini_leak_off TIMEOUT 60 RANKS 2
  CHECKS --reject "leak at" --match "^test_fini_leak rank %r: insert[+]wait=0 fini=0$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_fini_leak> --weft-cores=1 --weft-leak_report=0)
weft_expect_test(stf_fini_leak_released TIMEOUT 60 RANKS 2
  CHECKS --reject "leak at" --match "^test_fini_leak rank %r: insert[+]wait=0 fini=0$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_fini_leak> --release --weft-cores=1)
# weft_fini with a taskpool not waited for: named on every rank, every task
# run, WEFT_ERR_INVALID (the program checks values and status).
weft_test_exe(test_fini_unwaited test_fini_unwaited.c)
foreach(n 1 2)
  weft_expect(stf_fini_unwaited_r${n} pass ${n}
    LINES "^weft\\[%r\\] error: weft_fini: taskpool forgotten has insertions not waited for"
          "^test_fini_unwaited rank %r: fini=-1, 0 local tiles wrong: PASSED"
    RUN ${mpirun} -n ${n} $<TARGET_FILE:test_fini_unwaited> --weft-cores=1)
endforeach()
# Rank 0 waits and frees the taskpool, rank 1 forgets it (fini waits) or
# frees it unwaited: rank 0's weft_fini fails too, naming rank 1's line
# (it returned 0 while rank 1 returned -1).
weft_expect(stf_fini_unwaited_one_rank pass 2
  LINES "^weft\\[0\\] error: weft_fini returns -1 [(].*[)]: rank 1 failed at weft_fini: weft_fini: taskpool forgotten has insertions not waited for"
        "^test_fini_unwaited rank %r: fini=-1, 0 local tiles wrong: PASSED"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_fini_unwaited> --weft-cores=1 --waits 0)
weft_expect(stf_fini_unwaited_one_rank_free pass 2
  LINES "^weft\\[0\\] error: weft_fini returns -1 [(].*[)]: rank 1 failed at weft_fini: taskpool forgotten freed with insertions not waited for"
        "^test_fini_unwaited rank %r: fini=-1, 0 local tiles wrong: PASSED"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_fini_unwaited> --weft-cores=1 --waits 0 --free)
# A taskpool whose only insertion was refused, freed or left to weft_fini
# unwaited: named and waited for, weft_fini -1 on every rank. On one rank,
# and for a class every rank refuses, weft_fini returned 0 without a word.
weft_test_exe(test_refused_unwaited test_refused_unwaited.c)
foreach(c "free;nobody;1;taskpool refusing freed with insertions not waited for"
          "fini;onrank;1;weft_fini: taskpool refusing has insertions not waited for"
          "fini;nobody;2;weft_fini: taskpool refusing has insertions not waited for")
  list(GET c 0 how)
  list(GET c 1 what)
  list(GET c 2 n)
  list(GET c 3 line)
  weft_expect(stf_refused_unwaited_${how}_${what}_r${n} pass ${n}
    LINES "^weft\\[%r\\] error: ${line}"
          "^test_refused_unwaited rank %r: insert=-1 fini=-1$"
    RUN ${mpirun} -n ${n} $<TARGET_FILE:test_refused_unwaited> ${how} ${what} --weft-cores=1)
endforeach()
weft_test(stf_fini_trace SRC test_fini_trace.c TIMEOUT 30)
set_tests_properties(stf_fini_trace PROPERTIES
  PASS_REGULAR_EXPRESSION "trace: writing '.*t.rank0.json' failed: No space left on device.*PASSED")
# Rank 1's trace only cannot be written: every rank's weft_fini fails,
# rank 0 naming rank 1's line (it returned 0 before).
weft_expect_test(stf_fini_trace_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0
  --match "^weft\\[0\\] error: weft_fini returns -1 [(].*[)]: rank 1 failed at weft_fini: trace: writing '.*t.rank1.json' failed: No space left on device$"
  --match "^test_fini_trace rank %r: init and wait 0, weft_fini -1: PASSED$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_fini_trace> --weft-cores=1)
# A monitor thread reads the counters while weft_fini runs (it crashed in
# a closing device).
weft_test(stf_counters_fini SRC test_counters_fini.c TIMEOUT 120)
target_link_libraries(test_counters_fini PRIVATE MPI::MPI_C Threads::Threads)
set_tests_properties(stf_counters_fini PROPERTIES
  ENVIRONMENT "WEFT_CORES=1;WEFT_DEVICE_EMU_ENABLED=1")
# Calls with a context and its handles after weft_fini (a second fini, the
# frees of an application's cleanup, an insertion, a wait, an acquire): each
# refused naming a handle of an ended context, none reading freed memory
# (they crashed under AddressSanitizer; the second fini called MPI after
# MPI_Finalize).
weft_test_exe(test_after_fini test_after_fini.c)
foreach(n 1 2)
  weft_expect_test(stf_after_fini_r${n} TIMEOUT 60 RANKS ${n}
    CHECKS --status 0 --match "^test_after_fini: [0-9]+ checks, 0 failures: PASSED$"
           --match "^test_after_fini rank %r: done$"
           --match "argument 1 of weft_fini is an ended weft_context_t"
           --match "argument 1 of weft_matrix_free is a weft_matrix_t of an ended context"
           --match "argument 1 of weft_taskpool_free is a weft_taskpool_t of an ended context"
           --match "argument 1 of weft_data_release is a weft_data_t of an ended context"
           --reject "MPI_FINALIZE"
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_after_fini> --weft-cores=1)
endforeach()
