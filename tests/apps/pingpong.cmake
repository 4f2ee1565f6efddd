# weft-pingpong: a run that should succeed must exit 0 and print the line
# given; one that should fail (FAIL) must exit non-zero without being killed
# by a signal and print the message given.
# ---- weft-pingpong: the table down to the largest size, counters checked -
weft_app_test(pingpong_r2 EXE weft-pingpong RANKS 2
  EXPECT "^ +1048576 +[0-9]+ +[0-9.]+ +[0-9.e+-]+ +[0-9.]+ +[0-9.e+-]+ +[0-9.]+ +[0-9.]+$"
  ARGS --max-size 1M --iters 10 --reps 1 -c 1)
weft_app_test(pingpong_r3 EXE weft-pingpong RANKS 3
  EXPECT "^weft-pingpong: tile counters and message counts verified$"
  ARGS --min-size 1K --max-size 256K --iters 5 --reps 1 -c 1)

# ---- bad input: a clear message naming the problem and a non-zero exit ---
weft_app_test(pingpong_one_rank FAIL EXE weft-pingpong
  EXPECT "needs at least 2 ranks, running on 1" ARGS --max-size 1K)
weft_app_test(pingpong_bad_size FAIL EXE weft-pingpong RANKS 2
  EXPECT "--max-size expects a size in bytes" ARGS --max-size 3)
# -c and --weft-cores that disagree are refused (--weft-cores won silently).
weft_app_test(pingpong_cores_disagree FAIL EXE weft-pingpong RANKS 2
  EXPECT "weft-pingpong: -c 2 and --weft-cores=1 disagree: give one of them"
  ARGS --max-size 8 -c 2 --weft-cores=1)
# A simulation (sim_nranks) is one process: the bare MPI ping-pong sent to a
# rank 1 that was not there, and MPI aborted the run (MPI_ERR_RANK).
weft_app_test(pingpong_bad_sim FAIL EXE weft-pingpong
  EXPECT "a simulation \\(sim_nranks\\) runs one: drop sim_nranks" ARGS --weft-sim_nranks=2)

# ---- copies per move, counted (not timed): a tile in device memory moves
# with exactly one copy of its bytes by the devices, whatever the size: ipc,
# one D2D pull into the receiver's copy; staged, one D2H on the sender and
# one H2D on the receiver (the bounce buffers); mpi, none (MPI reads and
# writes the device memory itself). A receive that lands in a temporary and
# is copied again into the consumer's copy reads 2.00 here, and the app
# fails on its own when more than one tile a move goes into (or out of) a
# device (weft-pingpong's pp_copies_check).
if(WEFT_GPU_AWARE_COMM)
  set(pp_copies_ipc "H2D 0.00 D2H 0.00 D2D 1.00")
  set(pp_copies_staged "H2D 1.00 D2H 1.00 D2D 0.00")
  set(pp_copies_mpi "H2D 0.00 D2H 0.00 D2D 0.00")
  foreach(tp ipc staged mpi)
    set(want "${pp_copies_${tp}}")
    weft_app_test(pingpong_copies_emu_${tp} EXE weft-pingpong RANKS 2 TIMEOUT 120
      EXPECT "^# 4096 B: device copies a move, in tiles: rank 0 ${want}, rank 1 ${want}$"
             "^# 1048576 B: device copies a move, in tiles: rank 0 ${want}, rank 1 ${want}$"
             "^weft-pingpong: tile counters and message counts verified$"
      ARGS --min-size 4K --max-size 1M --iters 5 --reps 2 -c 1 -g 1 --weft-device_type=emu
           --weft-comm_transport=${tp})
  endforeach()
endif()

# Ranks given different options: each names the difference and every rank
# stops (the two ends timed different moves and waited on each other for
# ever, in the app's own MPI calls where weft cannot see them).
set(pp_mixed $<TARGET_FILE:weft-pingpong> --max-size 64K --iters 5 -c 1)
weft_expect_test(pingpong_mixed_reps_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-pingpong: rank %r: --reps (1|2) here, but the ranks were given --reps from 1 to 2"
  RUN ${WEFT_MPIRUN} -n 1 ${pp_mixed} --reps 1 : -n 1 ${pp_mixed} --reps 2)
weft_expect_test(pingpong_mixed_g_r3 TIMEOUT 60 RANKS 3
  CHECKS --status nonzero
  --match "^weft-pingpong: rank %r: -g (0|1) here, but the ranks were given -g from 0 to 1"
  RUN ${WEFT_MPIRUN} -n 2 ${pp_mixed} --reps 1 -g 1 --weft-device_type=emu
      : -n 1 ${pp_mixed} --reps 1)
weft_expect_test(pingpong_one_refused_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-pingpong: (--iters expects a positive integer|rank 0: another rank refused its command line)"
  RUN ${WEFT_MPIRUN} -n 1 ${pp_mixed} : -n 1 ${pp_mixed} --iters x)
# A flag given twice with two values (the last one won silently: "--iters 5
# --iters 6" ran 6, "-c 1 -c 2" two workers), said on every rank; the same
# value twice passes.
weft_expect_test(pingpong_flag_twice_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero --count "^weft-pingpong: --iters given twice, as '5' and then '6': give it once" 2
  RUN ${WEFT_MPIRUN} -n 2 ${pp_mixed} --reps 1 --iters 6)
weft_expect_test(pingpong_flag_twice_c_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero --count "^weft-pingpong: -c given twice, as '1' and then '2': give it once" 2
  RUN ${WEFT_MPIRUN} -n 2 ${pp_mixed} --reps 1 -c 2)
weft_expect_test(pingpong_flag_twice_same_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0 --reject "given twice"
  RUN ${WEFT_MPIRUN} -n 2 ${pp_mixed} --reps 1 --iters 5)
