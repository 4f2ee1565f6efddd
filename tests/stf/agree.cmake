# Ranks that disagree (included by CMakeLists.txt): the agreement at a wait
# and its collectives failing in MPI, the mismatch reports (tasks, data
# creations, points reached), refusals on some ranks only and their words.

# An agreement's collective that MPI fails on one rank only (Open MPI
# could not build its schedule under a memory limit): that rank said so
# and went on to weft_fini while the others waited in the collective for
# ever. Now it ends the job, saying why; the others say they were ended.
# The failure comes from fail_preload.c in rank 1 alone: the first
# MPI_Iallreduce after the test arms it, the first wait's agreement.
add_library(fail_preload MODULE fail_preload.c)
target_link_libraries(fail_preload PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
set(preload_env LD_PRELOAD=$<TARGET_FILE:fail_preload>)
if(WEFT_SANITIZE)
  # The sanitizer's runtime is not the first library once another is
  # preloaded; it would refuse to start.
  list(APPEND preload_env ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:verify_asan_link_order=0)
endif()
# _exit: MPI_Abort itself exits (Open MPI out of memory), and the end was
# blamed on the application ("weft_fini was not called").
foreach(v abort exit)
weft_expect_test(stf_agree_mpi_one_rank_${v}_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero --within 30
  --match "^weft\\[1\\] error: weft_taskpool_wait of taskpool 'next'.*: the collective between ranks failed in MPI on this rank [(].*[)]: the other ranks may wait in it for ever and cannot be told: ending the run"
  --reject "weft_fini was not called"
  RUN ${WEFT_MPIRUN} -n 1 $<TARGET_FILE:test_agree_mpi> none --weft-cores=1
      : -n 1 env ${preload_env} WEFT_TEST_IALLREDUCE_FAIL=1
        WEFT_TEST_ABORT_EXITS=$<STREQUAL:${v},exit> $<TARGET_FILE:test_agree_mpi> none --weft-cores=1)
endforeach()
# weft_data_new and weft_data_register out of host memory on one rank
# (every aligned_alloc fails there): each said nothing and returned NULL;
# now the call names it, and the next wait names the refusal on every rank.
weft_expect_test(stf_data_nomem_one_rank_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0 --within 30
  --count "^weft\\[1\\] error: weft_data_new: out of host memory for the data's record" 1
  --count "^weft\\[1\\] error: weft_data_register: out of host memory for the data's record" 1
  --match "^weft\\[%r\\] error: .*rank 1 refused weft_data_new.*out of host memory for the data's record"
  --match "^test_agree_mpi rank %r: .*next=-[0-9]+ fini=-?[0-9]+$"
  RUN ${WEFT_MPIRUN} -n 1 $<TARGET_FILE:test_agree_mpi> data --weft-cores=1
      : -n 1 env ${preload_env} WEFT_TEST_ALIGNED_ALLOC_FAIL=1
        $<TARGET_FILE:test_agree_mpi> data --weft-cores=1)

# The collective an agreement adds when the ranks disagree fails in MPI
# (test_agree_mpi.c): the broadcast of a refusing rank's words, the gather
# of the points the ranks reached. Every rank names it and its context
# diverges (both returned WEFT_ERR_MPI unnamed, the context left usable).
weft_test_exe(test_agree_mpi test_agree_mpi.c)
target_link_libraries(test_agree_mpi PRIVATE ${CMAKE_DL_LIBS})
set(agree_mpi_failed "weft_matrix_gather [(]root 0[)]" "-6 next=-8")
set(agree_mpi_points "[^:]+" "(-6|1) next=-[68]")
foreach(mode failed points)
  list(GET agree_mpi_${mode} 0 where)
  list(GET agree_mpi_${mode} 1 ends)
  weft_expect_test(stf_agree_mpi_${mode} TIMEOUT 60 RANKS 2
    CHECKS --status 0
    --match "^weft\\[%r\\] error: ${where}: the collective between ranks failed in MPI [(]injected: fault_inject mpi_coll[)]"
    --match "^test_agree_mpi rank %r: gather=${ends} fini=-6$"
    --match "^weft\\[[01]\\] error: taskpool next: its tasks are not waited for [(]no more of them start, weft_fini drops them[)]: a collective between the ranks failed in MPI earlier"
    --reject "earlier disagreement"
    RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_agree_mpi> ${mode} --weft-cores=1
    --weft-fault_inject=mpi_coll:1)
endforeach()
# A task class whose memory holds another class later (a helper's class
# on its stack): the check took it for the one before.
weft_test_exe(test_seq_class_reuse test_seq_class_reuse.c)
set(classreuse $<TARGET_FILE:test_seq_class_reuse> --weft-cores=1)
foreach(c diverge inwave)
  weft_expect(stf_seq_class_reuse_${c} pass 2
    LINES "^weft\\[%r\\] error: .*first divergent task is #"
          "^test_seq_class_reuse rank %r: ${c} waits 0 -8 fini -8$"
    RUN ${mpirun} -n 2 ${classreuse} ${c})
endforeach()
weft_expect(stf_seq_class_reuse_same pass 2
  LINES "^test_seq_class_reuse rank %r: same waits 0 0 fini 0$"
  RUN ${mpirun} -n 2 ${classreuse} same)
weft_test_exe(test_agree_diverge test_agree_diverge.c)
set(div $<TARGET_FILE:test_agree_diverge> --weft-cores=1)
weft_expect(stf_agree_same pass 2 LINES "^test_agree_diverge rank %r: wait=0 fini=0$"
  RUN ${mpirun} -n 2 ${div} --runs 3 --extra 1)
weft_expect(stf_agree_grid_r2 fail 2
  LINES "^weft\\[%r\\] error: .*first divergent data creation is #0, which this rank made as 'weft_matrix_wrap\\(type 0, 32 x 32, tiles 8 x 8, grid [12] x [12]\\)' \\(ranks differing there from rank 0: 1\\)"
        "^test_agree_diverge rank %r: wait=-8 fini=-8"
  RUN ${mpirun} -n 1 ${div} --grid 1x2 : -n 1 ${div} --grid 2x1)
# A collective of that report fails in MPI (fault_inject mpi_coll:1): the
# task sequences' report that followed made its collectives all the same,
# on a context the failure had diverged.
weft_expect_test(stf_agree_grid_mpi_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero --reject "first divergent task is #"
  --match "^weft\\[%r\\] error: comparing the ranks' sequences: the collective between ranks failed in MPI [(]injected: fault_inject mpi_coll[)]"
  --match "^weft\\[%r\\] error: .*ranks made different data creations. the first divergent one is not known$"
  --match "^test_agree_diverge rank %r: wait=-8 fini=-8"
  RUN ${mpirun} -n 1 ${div} --grid 1x2 --weft-fault_inject=mpi_coll:1 : -n 1 ${div} --grid 2x1
  --weft-fault_inject=mpi_coll:1)
weft_expect(stf_agree_grid_r4 fail 4
  LINES "^weft\\[%r\\] error: .*first divergent data creation is #0, .*grid [12] x [24]\\)' \\(ranks differing there from rank 0: 2,3\\)"
        "^test_agree_diverge rank %r: wait=-8 fini=-8"
  RUN ${mpirun} -n 2 ${div} --grid 2x2 : -n 2 ${div} --grid 1x4)
weft_expect(stf_agree_runs fail 2
  LINES "^weft\\[%r\\] error: ranks are out of step"
        "^weft\\[%r\\] error:   rank 0: in weft_taskpool_wait of taskpool 'run 3'"
        "^weft\\[%r\\] error:   rank 1: in weft_fini"
        "^test_agree_diverge rank 0: wait=-8 fini=-8" "^test_agree_diverge rank 1: wait=0 fini=-8"
  RUN ${mpirun} -n 1 ${div} --runs 3 : -n 1 ${div} --runs 2)
# One rank made (and freed) one more taskpool before the first run: both
# stand at the wait of 'run 1', which they numbered otherwise; the report
# said so only by the numbers (a stranger's).
weft_expect(stf_agree_pool_count fail 2
  LINES "^weft\\[%r\\] error:   rank 1: in weft_taskpool_wait of taskpool 'run 1' [(]taskpool #2[)]"
        "^weft\\[%r\\] error:   the same call in taskpools the ranks numbered otherwise: they created different numbers of taskpools before it"
        "^test_agree_diverge rank %r: wait=-8 fini=-8"
  RUN ${mpirun} -n 1 ${div} : -n 1 ${div} --pools 1)
# ... and after the last wait: weft_fini compares the taskpools made (that
# slip went unseen, fini 0 on every rank).
weft_expect(stf_agree_pool_count_late fail 2
  LINES "^weft\\[%r\\] error:   rank 0: in weft_fini [(]1 taskpool made[)]"
        "^weft\\[%r\\] error:   rank 1: in weft_fini [(]2 taskpools made[)]"
        "^test_agree_diverge rank %r: wait=0 fini=-8"
  RUN ${mpirun} -n 1 ${div} : -n 1 ${div} --late-pools 1)
# The same with an emu device a rank: weft_fini closed the devices before
# the comm engine, whose ipc transport then unmapped the peers' zones
# through freed devices (a segfault on every rank).
weft_expect(stf_agree_runs_emu fail 2
  LINES "^weft\\[%r\\] error: ranks are out of step"
        "^test_agree_diverge rank 0: wait=-8 fini=-8" "^test_agree_diverge rank 1: wait=0 fini=-8"
  RUN ${mpirun} -n 1 ${div} --runs 3 --weft-device_emu_enabled=1 --weft-device_emu_memory=8M
      : -n 1 ${div} --runs 2 --weft-device_emu_enabled=1 --weft-device_emu_memory=8M)
# A task failed on rank 1, then the ranks disagree at the same wait:
# weft_fini returned the failure on rank 1 and the disagreement on rank 0
# (SEMANTICS 4: the disagreement, on every rank alike).
weft_expect(stf_agree_after_failure fail 2
  LINES "^weft\\[%r\\] error: .*first divergent task is #"
        "^test_agree_diverge rank %r: wait=-8 fini=-8"
  RUN ${mpirun} -n 1 ${div} --fail 1 --extra 1 : -n 1 ${div} --fail 1)
# A creation whose arguments differ (binary in the log, described only for
# the report): named on every rank, with each rank's own arguments.
weft_expect(stf_agree_new_owner fail 2
  LINES "^weft\\[%r\\] error: .*first divergent data creation is #1, which this rank made as 'weft_data_new\\(data [0-9]+: type 0, 4 x 4, owner rank %r\\)' \\(ranks differing there from rank 0: 1\\)"
        "^weft\\[%r\\] error:   rank 0 made #1 as 'weft_data_new\\(data [0-9]+: type 0, 4 x 4, owner rank 0\\)'"
        "^weft\\[%r\\] error:   rank 1 made #1 as 'weft_data_new\\(data [0-9]+: type 0, 4 x 4, owner rank 1\\)'"
        "^test_agree_diverge rank %r: wait=-8 fini=-8"
  RUN ${mpirun} -n 1 ${div} --scratch 0 : -n 1 ${div} --scratch 1)
# The same class with its data swapped on rank 1: the class alone names
# nothing; seqcheck_detail prints each rank's task #3 whole, on every rank.
set(mis $<TARGET_FILE:test_dist_mismatch> swap --weft-cores=1)
weft_expect_test(stf_dist_mismatch_detail TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error:   rank 0 inserted #3 as 'alpha\\(on rank 1, hint -1: data [0-9]+ RW 64x64 owner 1 type [0-9]+. data [0-9]+ R 64x64 owner 0 type [0-9]+\\)'"
    --match "^weft\\[%r\\] error:   rank 1 inserted #3 as 'alpha\\(on rank 0, hint -1: data [0-9]+ RW 64x64 owner 0 type [0-9]+. data [0-9]+ R 64x64 owner 1 type [0-9]+\\)'"
    --match "^test_dist_mismatch rank %r: wait returned .*PASSED"
  RUN ${mpirun} -n 2 ${mis} --weft-seqcheck_detail=1)
# Where one rank's reader of a reduced data made weft add the reduction's
# tasks, the report says that task is weft's: it has the user's class
# (the reduction's init or combine), which the user never inserted there.
weft_expect_test(stf_dist_mismatch_redux TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error:   rank 0 inserted #[0-9]+ as '(zero|plus)\\(on rank 0, .*\\), a task weft added for a WEFT_REDUX with the reduction's class \\(a partial's init or a combine\\), not the program's'"
    --match "^weft\\[%r\\] error:   rank 1 inserted #[0-9]+ as 'alpha\\(on rank 0, hint -1: data [0-9]+ RW 64x64 owner 0 type [0-9]+\\)'"
    --match "^test_dist_mismatch rank %r: wait returned .*PASSED"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_dist_mismatch> redux --weft-cores=1
    --weft-seqcheck_detail=1)
weft_expect_test(stf_dist_mismatch_hint TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error:   a task is compared by .*differs at #3 \\(--weft-seqcheck_detail=1 prints each rank's task there whole\\)"
    --match "^test_dist_mismatch rank %r: wait returned .*PASSED"
  RUN ${mpirun} -n 2 ${mis})
# A collective of the mismatch's report fails in MPI (fault_inject
# mpi_coll: 1 the longest sequence, 3 a step of the bisection, 5 the
# broadcast of rank 0's entry, 6 the gather of who differs): it ignored
# MPI's return code and named an entry from what MPI left in the buffer.
# Now every rank says so, and that the first divergent task is not known;
# the wait still returns the mismatch.
foreach(n 1 3 5 6)
  weft_expect_test(stf_dist_mismatch_mpi_${n} TIMEOUT 60 RANKS 2
    CHECKS --status 0 --reject "first divergent task is #"
    --match "^weft\\[%r\\] error: comparing the ranks' sequences: the collective between ranks failed in MPI [(]injected: fault_inject mpi_coll[)]"
    --match "^weft\\[%r\\] error: taskpool mismatch: ranks inserted different tasks. the first divergent one is not known$"
    --match "^test_dist_mismatch rank %r: wait returned .*PASSED"
    RUN ${mpirun} -n 2 ${mis} --weft-fault_inject=mpi_coll:${n})
endforeach()
weft_expect(stf_agree_flag fail 2
  LINES "^weft\\[%r\\] error: taskpool run 1: .*first divergent task is #1, which this rank inserted as '(add|twice)' \\(ranks differing there from rank 0: 1\\)"
        "^test_agree_diverge rank %r: wait=-8 fini=-8"
  RUN ${mpirun} -n 1 ${div} : -n 1 ${div} --extra 1)
# A refusal of the owner only is named with its reason at the wait, after
# six creations every rank refused alike (they spent the notes before), or
# after 70 insertions every rank refused alike (past the 64 notes).
weft_test_exe(test_refused_words test_refused_words.c)
weft_expect_test(stf_refused_words_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0
  --match "^weft\\[%r\\] error:   rank 0 refused weft_data_register[(]data [0-9]+: type 0, 1 x 1, owner rank 0[)]: weft_data_register: ld is smaller than rows"
  --match "^weft\\[%r\\] error:   rank 1 made #[0-9]+ as 'weft_data_register[(].*[)]' [(]it accepted the call refused there[)]|^weft\\[%r\\] error:   rank 1 accepted the call refused there, so it logged no entry #[0-9]+$"
  --reject "its reason not kept"
  --match "^test_refused_words rank %r: 6 alike refusals, wait=-8 fini=-8$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_refused_words> --weft-cores=1)
# The same with no memory for rank 0's words (fault_inject refusal_note):
# the refusal still fails the wait on every rank, named by its call.
weft_expect_test(stf_refused_words_oom_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0
  --match "^weft\\[%r\\] error:   rank 0 refused weft_data_register[(]data [0-9]+: type 0, 1 x 1, owner rank 0[)] [(]its reason not kept: out of host memory"
  --match "^test_refused_words rank %r: 6 alike refusals, wait=-8 fini=-8$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_refused_words> --weft-cores=1
      --weft-fault_inject=refusal_note:1@0)
weft_expect_test(stf_refused_words_tasks_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0
  --match "^weft\\[%r\\] error:   rank 0 refused task touch: insert touch: data [0-9]+ is acquired by the host"
  --match "^weft\\[%r\\] error:   rank 1 inserted #70 as 'touch'"
  --reject "words were not kept"
  --match "^test_refused_words rank 0: 70 alike refusals, insert=-1 wait=-8 fini=-8$"
  --match "^test_refused_words rank 1: 70 alike refusals, insert=0 wait=-8 fini=-8$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_refused_words> --tasks --weft-cores=1)
# The same with seqcheck_detail: rank 1's task whole beside rank 0's refusal
# (a refusal keeps no record, its words say it).
weft_expect_test(stf_refused_words_tasks_detail_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0
  --match "^weft\\[%r\\] error:   rank 0 refused task touch: insert touch: data [0-9]+ is acquired by the host"
  --match "^weft\\[%r\\] error:   rank 1 inserted #70 as 'touch\\(on rank 0, hint -1: data [0-9]+ W 2x2 owner 0 type 0\\)'"
  --match "^test_refused_words rank 1: 70 alike refusals, insert=0 wait=-8 fini=-8$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_refused_words> --tasks --weft-cores=1
      --weft-seqcheck_detail=1)
# An insertion refused on rank 0 only (its data acquired by its host) is
# named with its reason on every rank (test_insert_refused.c).
weft_test_exe(test_insert_refused test_insert_refused.c)
weft_expect(stf_insert_refused_one_rank fail 2
  LINES "^weft\\[%r\\] error: taskpool refusing: ranks inserted different tasks; first divergent task is #0"
        "^weft\\[%r\\] error:   rank 0 refused task touch: insert touch: data 0 is acquired by the host"
        "^weft\\[%r\\] error:   rank 1 inserted #0 as 'touch'$"
        "^test_insert_refused rank %r: acquired insert=(-1|0) graph=0 wait=-8 fini=-8$"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_insert_refused> acquired --weft-cores=1)
weft_expect(stf_insert_refused_control pass 2
  LINES "^test_insert_refused rank %r: same insert=0 graph=0 wait=0 fini=0$"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_insert_refused> same --weft-cores=1)
# The same refusal followed directly by a graph, a free without a wait or
# weft_fini: every rank names it there (the ranks parted ways before: one
# refused the graph or made an implicit wait, the other did not, and both
# logged "ranks are out of step" without the reason).
set(refused_task "^weft\\[%r\\] error:   rank 0 refused task touch: insert touch: data 0 is acquired by the host")
# Each case: test name, test_insert_refused's case, the graph's and the
# wait's status.
foreach(c graph:ptg:-8:-8 free:free:0:0 fini:fini:0:0)
  string(REPLACE ":" ";" c "${c}")
  list(GET c 0 name)
  list(GET c 1 mode)
  list(GET c 2 graph)
  list(GET c 3 wait)
  weft_expect_test(stf_insert_refused_${name} TIMEOUT 90 RANKS 2
    CHECKS --status nonzero --rank-within 10 --within 60 --reject "out of step: they reached"
           --match "${refused_task}"
           --match "^test_insert_refused rank %r: ${mode} insert=(-1|0) graph=${graph} wait=${wait} fini=-8$"
    RUN ${mpirun} -n 2 $<TARGET_FILE:test_insert_refused> ${mode} --weft-cores=1)
endforeach()
