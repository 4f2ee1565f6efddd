# weft-gemm-stress: a run that should succeed must exit 0 and print the
# line given; one that should fail (FAIL) must exit non-zero without being
# killed by a signal and print the message given.
# ---- weft-gemm-stress --check: every final C recomputed by its owner -----
set(GS_PASSED "^weft-gemm-stress: max relative error .* : PASSED$")
weft_app_test(gemm_stress_check_r1 EXE weft-gemm-stress EXPECT "${GS_PASSED}"
  ARGS -t 64 --depth 8 --width 3 -c 1 --check)
foreach(n 2 3 4)
  weft_app_test(gemm_stress_check_r${n} EXE weft-gemm-stress RANKS ${n} EXPECT "${GS_PASSED}"
    ARGS -t 64 --depth 8 --width 3 -c 1 --check)
endforeach()
# Tiles above comm_eager_limit (rendezvous), a 2 x 2 grid for A and B, one
# transfer in flight at a time, and tiles that are not a power of two.
weft_app_test(gemm_stress_check_rendezvous_r2 EXE weft-gemm-stress RANKS 2
  EXPECT "${GS_PASSED}" ARGS -t 128 --depth 6 --width 3 -c 1 --check)
weft_app_test(gemm_stress_check_2x2 EXE weft-gemm-stress RANKS 4 EXPECT "${GS_PASSED}"
  ARGS -t 100 --depth 7 --width 5 -P 2 -Q 2 -c 1 --check)
weft_app_test(gemm_stress_check_one_request_r3 EXE weft-gemm-stress RANKS 3
  EXPECT "${GS_PASSED}" ARGS -t 97 --depth 5 --width 4 -c 1 --check
  --weft-comm_max_requests=1 --weft-comm_eager_limit=8K)

# ---- bad input: a clear message naming the problem and a non-zero exit ---
weft_app_test(gemm_stress_bad_tile FAIL EXE weft-gemm-stress
  EXPECT "-t expects a positive integer" ARGS -t 0)
weft_app_test(gemm_stress_bad_depth FAIL EXE weft-gemm-stress
  EXPECT "--depth expects a positive integer .*got 'x'" ARGS --depth x)
weft_app_test(gemm_stress_bad_flag FAIL EXE weft-gemm-stress
  EXPECT "unknown option '--bogus'" ARGS --bogus)
weft_app_test(gemm_stress_bad_grid FAIL EXE weft-gemm-stress
  EXPECT "P\\*Q must equal the number of ranks" ARGS -P 2 -Q 1)
weft_app_test(gemm_stress_bad_devices FAIL EXE weft-gemm-stress
  EXPECT "asked for -g 1 accelerators but this rank has 0"
  ARGS -t 8 -g 1 --weft-device_cuda_enabled=0)
weft_app_test(gemm_stress_g0_other_type_env FAIL EXE weft-gemm-stress ENV WEFT_DEVICE_EMU_ENABLED=1
  EXPECT "-g 0 asks for 0 CUDA device\\(s\\) .* but device_emu_enabled opened emu devices"
  ARGS -t 8 -g 0 --check)
weft_app_test(gemm_stress_bad_weft_param FAIL EXE weft-gemm-stress
  EXPECT "nonexistent" ARGS --weft-nonexistent=1)

# ---- accelerators: the GEMM steps on the -g N devices only ---------------
# emu: NEW C tiles created in device memory, passed device to device and
# rank to rank; g = 2 devices ran steps.
weft_app_test(gemm_stress_emu_g2 EXE weft-gemm-stress
  EXPECT "${GS_PASSED}" "gemm-stress PxQxg= 1 1 2 NB= 64 "
         "weft\\[0\\.1\\] stats: emu1: [1-9][0-9]* tasks" "weft\\[0\\.2\\] stats: emu2: [1-9][0-9]* tasks"
  ARGS -t 64 --depth 8 --width 4 -c 1 -g 2 --weft-device_type=emu --weft-show_stats=1 --check)
weft_app_test(gemm_stress_emu_g2_r2 EXE weft-gemm-stress RANKS 2
  EXPECT "${GS_PASSED}" "gemm-stress PxQxg= 1 2 2 NB= 64 "
  ARGS -t 64 --depth 8 --width 4 -c 1 -g 2 --weft-device_type=emu --check)
# On GPUs (skipped where weft finds too few CUDA devices).
weft_app_test(gemm_stress_cuda_g1 EXE weft-gemm-stress GPUS 1 TIMEOUT 300
  EXPECT "${GS_PASSED}" "gemm-stress PxQxg= 1 1 1 NB= 512 "
  ARGS -t 512 --depth 16 --width 8 -g 1 --check)
weft_app_test(gemm_stress_cuda_g2 EXE weft-gemm-stress GPUS 2 TIMEOUT 300
  EXPECT "${GS_PASSED}" "gemm-stress PxQxg= 1 1 2 NB= 512 "
  ARGS -t 512 --depth 16 --width 8 -g 2 --check)

# ---- ranks given different options (MPMD): named on every rank -----------
# weft-gemm-stress compared none: different --seed ran on a mix of two
# operands and exited 0 without --check (with it, a "relative error"
# blamed the computation); a different --depth, -t, -P or --ptg met as
# "ranks inserted different task sequences", no flag named.
set(gs_mixed $<TARGET_FILE:weft-gemm-stress> -t 8 --width 2 -c 1)
weft_expect_test(gemm_stress_mixed_seed_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-gemm-stress: rank %r: --seed [12] here, but the ranks were given --seed from 1 to 2"
  --reject "PASSED|relative error|task sequences"
  RUN ${WEFT_MPIRUN} -n 1 ${gs_mixed} --seed 1 : -n 1 ${gs_mixed} --seed 2)
weft_expect_test(gemm_stress_mixed_depth_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-gemm-stress: rank %r: --depth [34] here, but the ranks were given --depth from 3 to 4"
  --reject "PASSED|relative error|task sequences"
  RUN ${WEFT_MPIRUN} -n 1 ${gs_mixed} --depth 3 --check : -n 1 ${gs_mixed} --depth 4 --check)
# A rank that refuses its command line stops every rank (the others went
# on alone and met its absence as "ranks inserted different task
# sequences"); the dense apps' case is in potrf.cmake.
weft_expect_test(gemm_stress_refused_one_rank_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-gemm-stress: unknown option '--bogus'"
  --match "^weft-gemm-stress: rank 1: another rank refused its command line [(]see its message[)]: stopping"
  --reject "task sequences"
  RUN ${WEFT_MPIRUN} -n 1 ${gs_mixed} --bogus : -n 1 ${gs_mixed})
# A flag given twice with two values (the last one won silently: "--depth 2
# --depth 3" ran depth 3, "-t 64 -t 32" NB 32); the same value twice passes.
weft_expect_test(gemm_stress_flag_twice TIMEOUT 60
  CHECKS --status nonzero --match "^weft-gemm-stress: -t given twice, as '64' and then '32': give it once"
  RUN $<TARGET_FILE:weft-gemm-stress> -t 64 --depth 2 -c 1 -t 32 --check)
weft_expect_test(gemm_stress_flag_twice_same TIMEOUT 60
  CHECKS --status 0 --reject "given twice" --match "PASSED"
  RUN $<TARGET_FILE:weft-gemm-stress> -t 64 --depth 2 -c 1 --depth 2 --check)
# -c and --weft-cores that disagree are refused (--weft-cores won silently
# here, as in weft-pingpong, where the other apps refused).
weft_app_test(gemm_stress_cores_disagree EXE weft-gemm-stress FAIL
  EXPECT "weft-gemm-stress: -c 2 and --weft-cores=1 disagree: give one of them"
  ARGS -t 64 -c 2 --weft-cores=1)
