# The emulated device itself (included by CMakeLists.txt): its module and
# stream, its memory in a small or full /dev/shm, and its files removed
# when the ranks end without weft_fini or by a signal.

# The emulated device module itself, without a context.
weft_test(device_emu SRC test_emu.c INTERNAL)
# Its stream's failed ops: the newest 4096 kept (each was kept for the
# device's life: 8 bytes a failed task), exact for recent events.
weft_test(device_emu_fails SRC test_emu_fails.c INTERNAL)
# Two emu devices on a 64 MiB /dev/shm: each sized its memory from all of
# it, and the run died of SIGBUS (exit 135, no line); now each takes its
# part (emu_small_shm.sh; skipped without a mount namespace).
add_test(NAME device_emu_small_shm COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/emu_small_shm.sh
  $<TARGET_FILE:weft-potrf> -N 4096 -t 256 --check -c 1 -g 2 --weft-device_type=emu)
weft_test_limits(device_emu_small_shm 120 "" WEFT_DEVICE_CUDA_ENABLED=0)
# /dev/shm full under an emu zone (fault_inject emu_shm: its file cut to
# nothing under the mapping): the first touch ends the rank by SIGBUS,
# which said nothing of why; a line names it first, on one rank and on
# the rank of two that the rule names (under ASan, its handler reports the
# SIGBUS it passes on).
set(EMU_SHM_ASAN --sanitizer-ok "ERROR: AddressSanitizer: BUS on unknown address")
weft_expect_test(device_emu_shm_full TIMEOUT 60
  CHECKS --status nonzero ${EMU_SHM_ASAN} --match "^weft\\[0\\] error: SIGBUS in emulated device memory: a page of its file in /dev/shm could not be backed"
  RUN $<TARGET_FILE:weft-potrf> -N 256 -t 64 -c 1 -g 1 --weft-device_type=emu --weft-fault_inject=emu_shm:1)
weft_expect_test(device_emu_shm_full_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero ${EMU_SHM_ASAN} --match "^weft\\[1\\] error: SIGBUS in emulated device memory"
  --reject "^weft\\[0\\] error: SIGBUS"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:weft-potrf> -N 256 -t 64 -c 1 -g 1 --weft-device_type=emu
    --weft-fault_inject=emu_shm:1@1)
# ---- emulated device memory of a killed process (issue 13, item 11) -------
weft_test(emu_shm_sweep SRC test_emu_shm_sweep.c INTERNAL TIMEOUT 30)
# A job whose ranks end without weft_fini (watchdog_abort: MPI_Abort, and
# the launcher's SIGTERM for a rank that had not got there) left its emu
# files in /dev/shm, holding the node's memory until another job's sweep:
# they are removed as the ranks end. So are the trace files begun at
# weft_init (an empty PATH.rankN.json was left, passing for a trace).
weft_expect_test(device_emu_abort_leaves_nothing TIMEOUT 90 ENV ${WEFT_SIGKILL_LATE}
  CHECKS --status nonzero --within 80 --match "stall: watchdog_abort is set: ending the run"
    --match "^emu files left by its ranks: 0$" --match "^trace files left: 0$" --reject "PASSED"
  RUN sh ${CMAKE_CURRENT_SOURCE_DIR}/emu_leftover.sh --trace ${CMAKE_CURRENT_BINARY_DIR}/abort_trace
    2 ${WEFT_MPIRUN} -- $<TARGET_FILE:weft-gemm>
    -N 205 -t 51 -P 1 -Q 2 -c 1 -g 1 --weft-device_type=emu --check --weft-watchdog_s=3
    --weft-watchdog_abort=1 --weft-fault_inject=comm_post:1+@1)
# Ended by a signal other than SIGTERM (Ctrl-C, a hang-up, a closed pipe,
# SIGQUIT alike, untested: its core would hold the zone): the emu zone
# files go with the process (they stayed).
foreach(sig IN ITEMS INT:130 HUP:129 PIPE:141)
  string(REPLACE ":" ";" pair ${sig})
  list(GET pair 0 name)
  list(GET pair 1 code)
  weft_expect_test(device_emu_sig${name}_leaves_nothing TIMEOUT 90
    CHECKS --status 0 --match "^status ${code}$" --match "^emu files left: 0$"
    RUN sh ${CMAKE_CURRENT_SOURCE_DIR}/emu_signal.sh ${name} $<TARGET_FILE:weft-potrf>
      -N 3000 -t 200 -c 1 -g 1 --weft-device_type=emu --nruns 20)
endforeach()
# The emu SIGBUS handler stays in front of the application's, which gets
# each signal's own details (a sent SIGBUS it survives leaves the next
# fault still named).
weft_test(emu_sigbus_chain SRC test_emu_sigbus_chain.c INTERNAL TIMEOUT 30)
