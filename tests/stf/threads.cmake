# Calls from the wrong thread (included by CMakeLists.txt): a body, a
# callback, a signal handler or another thread of the application calling
# what belongs to the thread of weft_init; two threads making contexts.

# A body that calls what belongs to the main thread (a wait, an insertion,
# a release, weft_fini, ...) is refused and its task fails on every rank,
# instead of a hang (a wait inside a body) or a race: on a worker, on an
# emulated device's thread, and on 2 ranks.
weft_test(stf_body_calls SRC test_body_calls.c ARGS --weft-cores=1 TIMEOUT 60)
weft_test(stf_body_calls_emu EXE test_body_calls ARGS --weft-cores=1 --weft-device_emu_enabled=1
  TIMEOUT 60)
weft_test(stf_body_calls_r2 EXE test_body_calls RANKS 2 ARGS --weft-cores=1 TIMEOUT 60)
# A signal handler's weft_fini and wait inside the main thread's wait:
# refused by name (it hung); the wait and weft_fini after it go on.
weft_test_exe(test_signal_fini test_signal_fini.c)
target_link_libraries(test_signal_fini PRIVATE Threads::Threads)
weft_expect_test(stf_signal_fini TIMEOUT 60
  CHECKS --status 0 --match "weft_fini called while this thread is inside weft_taskpool_wait"
  --match "weft_taskpool_wait called while this thread is inside weft_taskpool_wait"
  --match "^signal: fini rc -1, wait rc -1$"
  RUN $<TARGET_FILE:test_signal_fini> --weft-cores=1)
# The same inside the main thread's weft_insert_task (held by the bound of
# pending tasks): the handler's insertion hung in malloc's lock.
weft_test_exe(test_signal_insert test_signal_insert.c)
target_link_libraries(test_signal_insert PRIVATE Threads::Threads)
weft_expect_test(stf_signal_insert TIMEOUT 60
  CHECKS --status 0 --within 40
  --match "weft_insert_task called while this thread is inside weft_insert_task"
  --match "weft_taskpool_wait called while this thread is inside weft_insert_task"
  --match "^signal: insert rc -1, wait rc -1$"
  RUN $<TARGET_FILE:test_signal_insert> --weft-cores=1 --weft-sched_pending_max=2)
# Two threads each make a context at the same instant (weft started MPI
# twice: Open MPI aborted; or duplicated MPI_COMM_WORLD twice at once).
weft_test_exe(test_init_threads test_init_threads.c)
target_link_libraries(test_init_threads PRIVATE MPI::MPI_C)
weft_test(stf_init_threads EXE test_init_threads ARGS --weft-cores=1 TIMEOUT 60)
weft_test(stf_init_threads_r2 EXE test_init_threads RANKS 2 ARGS --weft-cores=1 TIMEOUT 60)
weft_test(stf_init_threads_app_r2 EXE test_init_threads RANKS 2 ARGS app --weft-cores=1
  TIMEOUT 60)
# The calls of the thread of weft_init made from another thread of the
# application are refused, named, and change nothing (they raced with the
# main thread's, and on 2 ranks garbled the waits' agreement).
weft_test(stf_other_thread SRC test_other_thread.c ARGS --weft-cores=1 TIMEOUT 60)
weft_test(stf_other_thread_r2 EXE test_other_thread RANKS 2 ARGS --weft-cores=1 TIMEOUT 60)
# The same rule for a data's init function and a distribution's rank
# function (they run on the main thread inside an insertion or a matrix's
# creation): the call is refused, what ran the function fails on every
# rank, the next taskpool runs; on 1 and 2 ranks.
weft_test(stf_callback_calls SRC test_callback_calls.c ARGS --weft-cores=1 TIMEOUT 60)
weft_test(stf_callback_calls_r2 EXE test_callback_calls RANKS 2 ARGS --weft-cores=1 TIMEOUT 60)
