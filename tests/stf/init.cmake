# weft_init and contexts (included by CMakeLists.txt): parameters and
# devices that differ between ranks or fail, cores past the machine's,
# argument vectors, weft_init_comm, two contexts in a process, and what
# contexts made and ended in a loop keep.

weft_test_exe(test_init_fail test_init_fail.c)
set(init $<TARGET_FILE:test_init_fail> --weft-cores=1)
weft_expect(stf_init_ok pass 2 LINES "^test_init_fail rank %r: weft_init returned a context, weft_fini 0"
  RUN ${mpirun} -n 1 ${init} : -n 1 ${init})
weft_expect(stf_init_bad_param fail 2
  LINES "^weft\\[%r\\] error: weft_init failed on rank 1: parameter device_alloc: .*'bogus'"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 1 ${init} : -n 1 ${init} --weft-device_alloc=bogus)
# 16 CUDA devices asked on rank 1: absent here and on the GPU machines too.
weft_expect(stf_init_device_absent fail 2
  LINES "^weft\\[%r\\] error: weft_init failed on rank 1: .*(CUDA|cuda)"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 1 ${init} : -n 1 ${init} --weft-device_cuda_enabled=16)
# A parameter both ends of a transfer size by (comm_eager_limit) differs
# between ranks: named at init, not a truncated message later.
weft_expect(stf_init_param_differs fail 2
  LINES "^weft\\[%r\\] error: weft_init failed: the ranks were given different values of parameters"
        "^weft\\[%r\\] error: weft_init: comm_eager_limit differs between ranks [(]from 65536 to 1048576; here (65536|1048576)[)]"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 1 ${init} : -n 1 ${init} --weft-comm_eager_limit=1M)
# comm_mpi_piece, by which both ends cut a large tile into messages, alike.
weft_expect(stf_init_mpi_piece_differs fail 2
  LINES "^weft\\[%r\\] error: weft_init: comm_mpi_piece differs between ranks [(]from 4096 to 1073741824; here (4096|1073741824)[)]"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 1 ${init} : -n 1 ${init} --weft-comm_mpi_piece=4K)
# Ranks sharing an emu device given different device_emu_memory: refused
# on every rank (the smallest silently won: 1G asked, a 30 MiB zone).
# Only the size asked counts: what each measures also follows /dev/shm's
# free space and its count of emu devices (stf_init_emu_counts_differ).
weft_expect(stf_init_emu_memory_differs fail 2
  LINES "^weft\\[%r\\] error: weft_init failed on rank 0: emu1 is shared with another rank of this node given device_emu_memory=8388608, 16777216 here: give the ranks that share an emu device the same device_emu_memory"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 1 ${init} --weft-device_emu_enabled=1 --weft-device_emu_memory=16M
      : -n 1 ${init} --weft-device_emu_enabled=1 --weft-device_emu_memory=8M)
weft_expect(stf_init_emu_counts_differ pass 2
  LINES "^test_init_fail rank %r: weft_init returned a context, weft_fini 0"
  RUN ${mpirun} -n 1 ${init} --weft-device_emu_enabled=2 --weft-device_emu_memory=1T
      : -n 1 ${init} --weft-device_emu_enabled=1 --weft-device_emu_memory=1T)
# seqcheck_detail shapes a mismatch report's collectives: on one rank only,
# the first mismatch would leave the other ranks in a gather.
weft_expect(stf_init_detail_differs fail 2
  LINES "^weft\\[%r\\] error: weft_init failed: the ranks were given different values of parameters.*seqcheck_detail"
        "^weft\\[%r\\] error: weft_init: seqcheck_detail differs between ranks"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 1 ${init} : -n 1 ${init} --weft-seqcheck_detail=1)
# An mpi_coll rule of fault_inject on one rank only (a per-rank value, which
# the rule parser's refusal of mpi_coll:N@RANK does not see): that rank's
# collective failed alone and the other waited in the next one for ever (a
# helper's fault sweep: weft-potrf hung until killed). weft_init compares
# the ranks' mpi_coll rules and names them; the rank holding the rule sees
# its naming collective fail (the rule fires there), so only rank 1 names
# them.
weft_expect(stf_init_coll_rules_differ fail 2
  LINES "^weft\\[%r\\] error: weft_init failed: the ranks were given different values of parameters.*fault_inject's mpi_coll rules="
        "^weft\\[1\\] error: weft_init: fault_inject's mpi_coll rules differ between ranks [(]here ''[)]"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 1 ${init} --weft-fault_inject=mpi_coll:1 : -n 1 ${init})
# A device that fails to open on one rank only (fault_inject device_open):
# the other ranks have opened theirs and must still leave weft_init.
weft_expect(stf_init_device_open_fails fail 3
  LINES "^weft\\[%r\\] error: weft_init failed on rank 2: could not open emu1 [(]the emu runtime.s device 0[)]"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 3 ${init} --weft-device_emu_enabled=1 --weft-device_emu_memory=8M
      --weft-fault_inject=device_open:1@2)
# A fault rule for a rank the run does not have would never fire (a test
# relying on it would pass without a failure): weft_init fails on every rank.
weft_expect(stf_init_fault_rank_range fail 2
  LINES "^weft\\[%r\\] error: weft_init failed on rank 0: fault_inject: rule 'task:1@2' names rank 2, but the run has 2 ranks"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 2 ${init} --weft-fault_inject=comm_post:1@1,task:1@2)
weft_expect(stf_init_trace_unwritable fail 2
  LINES "^weft\\[%r\\] error: weft_init failed on rank 0: trace: cannot open '/nonexistent-weft-dir/t.rank0.json.part' for writing: No such file or directory"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 2 ${init} --weft-trace=/nonexistent-weft-dir/t)
# A trace path naming a directory (trailing '/'): the files were hidden
# ones inside it, .rank0.json, without a word.
weft_expect(stf_init_trace_directory fail 2
  LINES "^weft\\[%r\\] error: weft_init failed on rank 0: trace: '[.]/' names a directory [(]parameter trace is the files' prefix, PREFIX[.]rankN[.]json[)]: give a name in it, e[.]g[.] '[.]/run'"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 2 ${init} --weft-trace=./)
# A path longer than a log line: its start is shown, the reason kept (the
# line was cut before the reason).
string(REPEAT "x" 5000 long_name)
weft_expect(stf_init_trace_long_path fail 2
  LINES "^weft\\[%r\\] error: weft_init failed on rank 0: trace: cannot open '/nonexistent-weft-dir/x+' [(]the path's start[)] for writing: File name too long"
        "^test_init_fail rank %r: weft_init returned NULL"
  RUN ${mpirun} -n 2 ${init} --weft-trace=/nonexistent-weft-dir/${long_name})
# More workers than the rank's cores are run, with a warning that says so,
# bound or not (with bind=0 it was silent). Unbound, they are confined to
# the rank's cores only where mpiexec bound the process.
cmake_host_system_information(RESULT weft_host_pus QUERY NUMBER_OF_LOGICAL_CORES)
math(EXPR weft_over_cores "${weft_host_pus} + 1")
set(cores_over_1 "${weft_over_cores} workers share [0-9]+ cores$")
set(cores_over_0 "${weft_over_cores} workers for [0-9]+ cores, not pinned to them [(]bind=0[)]$")
foreach(b 0 1)
  weft_expect_test(stf_cores_over_bind${b} TIMEOUT 60
    CHECKS --match "^weft\\[0\\] warning: cores=${weft_over_cores} exceeds the [0-9]+ cores of this rank: ${cores_over_${b}}"
    --match "^test_fini_leak rank 0: insert[+]wait=0 fini=0$"
    RUN $<TARGET_FILE:test_fini_leak> --release --weft-cores=${weft_over_cores} --weft-bind=${b})
endforeach()
# The largest cores (4096) on one core under mpiexec starts in seconds:
# each new worker spun and yielded while weft_init created the next ones,
# and the creations grew with the square of the count (weft-potrf took
# 48 s here, 4.6 s now). Not under the sanitizers (4096 threads' shadow
# stacks).
if(NOT WEFT_SANITIZE)
  weft_expect_test(stf_cores_max TIMEOUT 90
    CHECKS --within 25 --match "residual = .* PASSED"
    RUN ${WEFT_MPIRUN} -n 1 $<TARGET_FILE:weft-potrf> -N 512 -t 64 --check --weft-cores=4096)
endif()
# Two contexts in one process, the one that started MPI ended first; then
# a weft_init once MPI is finalized: refused with a message, no MPI abort.
weft_test(stf_two_contexts SRC test_two_contexts.c ARGS --weft-cores=1 TIMEOUT 60)
weft_test(stf_two_contexts_r2 EXE test_two_contexts RANKS 2 ARGS --weft-cores=1 TIMEOUT 60)
# weft_init_comm: two groups of the world's ranks, a context each at once
# (one group's task fails, the other's run is untouched), each process's
# trace named by its world rank, MPI_COMM_SELF, and the refusals.
weft_test(stf_init_comm_r4 SRC test_init_comm.c RANKS 4 TIMEOUT 90
  ARGS --weft-cores=1 --weft-trace=${CMAKE_CURRENT_BINARY_DIR}/init_comm_trace)
target_link_libraries(test_init_comm PRIVATE MPI::MPI_C)
# Two threads a rank, each weft_init_comm on a duplicate of the world, in
# opposite orders on the two ranks (both hung inside weft's lock before).
weft_test(stf_init_comm_threads_r2 SRC test_init_comm_threads.c RANKS 2 TIMEOUT 60
  ARGS --weft-cores=1)
target_link_libraries(test_init_comm_threads PRIVATE MPI::MPI_C Threads::Threads)
# Both given the same trace prefix: each context's trace in a file of its own.
weft_test(stf_two_contexts_trace_r2 EXE test_two_contexts RANKS 2 ARGS --weft-cores=1 TIMEOUT 60)
set_tests_properties(stf_two_contexts_trace_r2 PROPERTIES
  ENVIRONMENT "WEFT_TRACE=${CMAKE_CURRENT_BINARY_DIR}/two_contexts_trace")
# weft_init given argument vectors that are not main's (argv NULL under a
# count of 4 crashed inside MPI_Init; NULL for argv, or for both, crashed
# in the check of the words that look meant for weft).
weft_test_exe(test_init_argv test_init_argv.c)
foreach(c argv_null count_past argc_null both_null argv_ptr_null)
  weft_test(stf_init_argv_${c} EXE test_init_argv ARGS ${c} TIMEOUT 60)
endforeach()
# Contexts made and ended in a loop: what each ended context keeps stays
# small (the quarantine's ring of 384 KiB was kept with each). It reads the
# heap with glibc's mallinfo2 (2.33 and later), which sanitizers' own
# allocators do not fill: registered only where it can fail.
include(CheckSymbolExists)
check_symbol_exists(mallinfo2 "malloc.h" WEFT_HAVE_MALLINFO2)
if(WEFT_HAVE_MALLINFO2 AND NOT WEFT_SANITIZE)
  weft_test(stf_init_cycles_memory SRC test_init_cycles.c ARGS --weft-cores=1 TIMEOUT 60)
  target_link_libraries(test_init_cycles PRIVATE MPI::MPI_C)
  # The task structures cached past a wait: a window's worth, not the
  # largest number ever alive at once (test_task_cache.c).
  weft_test(stf_task_cache_trimmed SRC test_task_cache.c
            ARGS --weft-cores=1 --weft-sched_window=256 TIMEOUT 60)
endif()
