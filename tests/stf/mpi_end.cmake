# MPI ended before weft (included by CMakeLists.txt): MPI_Finalize by the
# application, on some ranks, from a body, with two contexts or no
# weft_fini; MPI started without MPI_THREAD_MULTIPLE.

# MPI_Finalize by the application before weft_fini (MPI aborted every rank
# in the comm thread): named on every rank, later calls fail without MPI,
# weft_fini returns WEFT_ERR_MPI; MPI started by the application or by
# weft, 1 and 2 ranks, and on emu devices.
weft_test_exe(test_mpi_end test_mpi_end.c)
target_link_libraries(test_mpi_end PRIVATE MPI::MPI_C)
foreach(v user weft)
  foreach(n 1 2)
    weft_expect_test(stf_mpi_end_${v}_r${n} TIMEOUT 60 RANKS ${n}
      CHECKS --status 0 --within 30 --match "^test_mpi_end rank %r: ok"
      RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_mpi_end> ${v} --weft-cores=1)
  endforeach()
endforeach()
foreach(n 1 2)
  weft_expect_test(stf_mpi_end_inflight_r${n} TIMEOUT 60 RANKS ${n}
    CHECKS --status 0 --within 30 --match "^test_mpi_end rank %r: ok"
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_mpi_end> user inflight --weft-cores=1
        --weft-device_emu_enabled=1)
endforeach()
# One rank only calls MPI_Finalize before weft_fini: its hook joins the
# others' next agreement, failed, so their wait and weft_fini fail naming it
# (they waited for ever in the wait's agreement, the rank in MPI_Finalize).
foreach(v user weft)
  weft_expect_test(stf_mpi_end_one_${v}_r3 TIMEOUT 60 RANKS 3
    CHECKS --status 0 --within 30 --match "^test_mpi_end rank %r: .*ok$"
      --match "^test_mpi_end rank [01]: wait -[0-9]+, fini -[0-9]+: ok$"
    RUN ${WEFT_MPIRUN} -n 3 $<TARGET_FILE:test_mpi_end> ${v} one --weft-cores=1)
endforeach()
# Two live contexts: the last rank's hook begins both contexts' agreements
# and ends each as it completes, while the others wait in the second
# context's taskpool and then end the second before the first (taken one
# after another in the order the contexts were made, the hook waited for
# ever in the first's).
weft_expect_test(stf_mpi_end_two_contexts_r3 TIMEOUT 60 RANKS 3
  CHECKS --status 0 --within 30 --match "^test_mpi_end rank %r: two contexts: .*ok$"
    --match "^test_mpi_end rank [01]: two contexts: wait -[0-9]+, fini -[0-9]+ -[0-9]+: ok$"
  RUN ${WEFT_MPIRUN} -n 3 $<TARGET_FILE:test_mpi_end> user two --weft-cores=1)
# ... and leaves main without weft_fini (a stranger's program): every
# rank exits 1, saying so (it exited 0, its tasks dropped). One rank: the
# status itself. Two: mpiexec kills the other rank as soon as one exits
# non-zero (it was killed before its line in one CI run of 883 tests), so
# that rank's own end is waited for (Open MPI's abort_on_non_zero_status
# off, under which mpiexec answers 0) and tests/rank_status.sh around
# each rank prints its exit status.
weft_expect_test(stf_mpi_end_nofini_r1 TIMEOUT 60 RANKS 1
  CHECKS --status nonzero --within 30
  --match "^test_mpi_end rank 0: leaving without weft_fini"
  --match "^weft\\[0\\] error: the process is exiting with 1 weft context that MPI_Finalize ended and weft_fini never did"
  RUN ${WEFT_MPIRUN} -n 1 $<TARGET_FILE:test_mpi_end> user nofini --weft-cores=1)
weft_expect_test(stf_mpi_end_nofini_r2 TIMEOUT 60 RANKS 2
  ENV OMPI_MCA_orte_abort_on_non_zero_status=0
  CHECKS --status any --within 30
  --match "^test_mpi_end rank %r: leaving without weft_fini"
  --match "^weft\\[%r\\] error: the process is exiting with 1 weft context that MPI_Finalize ended and weft_fini never did"
  --match "^test_mpi_end rank %r: exit status 1$"
  RUN ${WEFT_MPIRUN} -n 2 sh ${CMAKE_CURRENT_SOURCE_DIR}/../rank_status.sh test_mpi_end
      $<TARGET_FILE:test_mpi_end> user nofini --weft-cores=1)
weft_expect_test(stf_mpi_end_emu_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0 --within 30 --match "^test_mpi_end rank %r: ok"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_mpi_end> user --weft-cores=1
      --weft-device_emu_enabled=1)
# MPI_Finalize from a body while the main thread waits: the wait hung for
# ever (the threads that would end the task were stopped under it).
weft_expect_test(stf_mpi_end_in_body TIMEOUT 60
  CHECKS --status 0 --within 20 --match "MPI_Finalize was called before weft_fini"
    --match "^test_mpi_end rank 0: body: wait -[0-9]+, fini -[0-9]+: ok$"
  RUN $<TARGET_FILE:test_mpi_end> body --weft-cores=1)
# The same on 2 ranks: the body's rank joined the agreement off step (the
# other rank, in the wait's collectives, was killed by MPI's handler,
# MPI_ERR_TRUNCATE, or both waited for ever). Now it says why and ends the
# run: no rank can be told in step.
weft_expect_test(stf_mpi_end_in_body_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero --within 30
    --match "^weft\\[0\\] error: MPI_Finalize was called from a task body, not by the thread that called weft_init, with weft running on 2 ranks: .* ending the run [(]MPI_Abort[)]"
    --reject "MPI Error in NBC"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_mpi_end> body --weft-cores=1)
# MPI started by the application without MPI_THREAD_MULTIPLE: weft_init
# refuses on every rank, naming the lowest such rank and the cause (each
# rank named itself); with it on rank 1 only, rank 0 said "MPI error".
weft_expect_test(stf_mpi_single_refused TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error: weft_init failed on rank 0: MPI was initialised without MPI_THREAD_MULTIPLE"
    --match "^test_mpi_end rank %r: single: weft_init refused$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_mpi_end> single --weft-cores=1)
weft_expect_test(stf_mpi_single_refused_one_rank TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error: weft_init failed on rank 1: MPI was initialised without MPI_THREAD_MULTIPLE"
    --match "^test_mpi_end rank %r: (multiple|single): weft_init refused$"
  RUN ${WEFT_MPIRUN} -n 1 $<TARGET_FILE:test_mpi_end> multiple --weft-cores=1
      : -n 1 $<TARGET_FILE:test_mpi_end> single --weft-cores=1)
# The same on one rank, which needs no comm thread, was accepted: the
# program then failed only once run on two.
weft_expect_test(stf_mpi_single_refused_r1 TIMEOUT 60
  CHECKS --status 0
    --match "^weft\\[0\\] error: weft_init failed on rank 0: MPI was initialised without MPI_THREAD_MULTIPLE"
    --match "^test_mpi_end rank 0: single: weft_init refused$"
  RUN $<TARGET_FILE:test_mpi_end> single --weft-cores=1)
