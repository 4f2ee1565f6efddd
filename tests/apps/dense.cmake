# Tests of weft-gemm and weft-posv (issue 16 items 1 and 4), through
# weft_app_dev_test as weft-potrf's: odd sizes and partial tiles on 1, 2
# (2x1), 3 (3x1) and 4 (2x2) ranks, 1 and 2 emu devices, an emu device too
# small for the matrices (evictions counted by show_stats), and CUDA runs
# that skip (77) without a GPU. Small N: CI runs the suite twice on 2 cores.
set(DENSE_PASSED "^residual = .* : PASSED$")
set(GEMM_COUNTED "weft-gemm: rank 0: activations sent [0-9]+, expected [0-9]+ : as computed")
set(GEMM_ODD -N 300 -M 257 -K 130 -t 64)
set(POSV_ODD -N 300 --nrhs 70 -t 64)

# ---- weft-gemm ---------------------------------------------------------------
weft_app_test(gemm_check_1 EXE weft-gemm EXPECT "${DENSE_PASSED}" "dgemm PxQxg= 1 1 0 NB= 64 N= 300 M= 257 K= 130 :"
  ARGS ${GEMM_ODD} -c 2 --nruns 2 --check)
weft_app_test(gemm_check_tile_gt_n EXE weft-gemm EXPECT "${DENSE_PASSED}"
  ARGS -N 33 -M 1 -K 17 -t 64 --check)
weft_app_test(gemm_check_2x1 EXE weft-gemm RANKS 2 EXPECT "${DENSE_PASSED}" "${GEMM_COUNTED}"
  ARGS ${GEMM_ODD} -P 2 -Q 1 -c 1 --check)
# 3 x 1, rows dealt 0 1 2 2 1: rank 0 holds row 0 of B's 4 x 3 tiles
# (cyclic: rows 0 and 3) and sends each of its 3 tiles to the 2 others.
weft_app_test(gemm_check_3x1 EXE weft-gemm RANKS 3 TIMEOUT 180
  EXPECT "${DENSE_PASSED}" "weft-gemm: rank 0: activations sent 6, expected 6 : as computed"
  ARGS -N 130 -M 257 -K 200 -t 64 -P 3 -Q 1 -c 1 --check)
weft_app_test(gemm_check_2x2 EXE weft-gemm RANKS 4 TIMEOUT 300 EXPECT "${DENSE_PASSED}" "${GEMM_COUNTED}"
  ARGS ${GEMM_ODD} -P 2 -Q 2 -c 1 --check)
# One activation per tile version per destination rank, as show_stats counts
# them (no --check, so the product is all that travels): on the 2 x 2 grid
# with 5 x 3 tiles of A and 3 x 5 of B, rank (p, q) sends each tile of A it
# holds to the other column and each tile of B to the other row. Dealt
# cyclically (A's rows 0 1 0 1 0 and columns 0 1 0, B's rows 0 1 0 and
# columns 0 1 0 1 0): rank 0: 6 + 6, rank 1: 3 + 4, rank 2: 4 + 3, rank 3:
# 2 + 2. Reflected (rows 0 1 1 0 0 and columns 0 1 1, B's rows 0 1 1 and
# columns 0 1 1 0 0): rank 0: 3 + 3, rank 1: 6 + 2, rank 2: 2 + 6, rank 3:
# 4 + 4.
weft_app_test(gemm_count_2x2 EXE weft-gemm RANKS 4 TIMEOUT 300
  EXPECT "${GEMM_COUNTED}" "weft\\[0\\] stats: rank 0: network: 12 activations"
         "weft\\[1\\] stats: rank 1: network: 7 activations" "weft\\[2\\] stats: rank 2: network: 7 activations"
         "weft\\[3\\] stats: rank 3: network: 4 activations"
  ARGS ${GEMM_ODD} -P 2 -Q 2 -c 1 --dist cyclic --weft-show_stats=1)
weft_app_test(gemm_count_2x2_reflected EXE weft-gemm RANKS 4 TIMEOUT 300
  EXPECT "${GEMM_COUNTED}" "weft\\[0\\] stats: rank 0: network: 6 activations"
         "weft\\[1\\] stats: rank 1: network: 8 activations" "weft\\[2\\] stats: rank 2: network: 8 activations"
         "weft\\[3\\] stats: rank 3: network: 8 activations"
  ARGS ${GEMM_ODD} -P 2 -Q 2 -c 1 --weft-show_stats=1)
weft_app_test(gemm_emu_g1 EXE weft-gemm EXPECT "${DENSE_PASSED}" "dgemm PxQxg= 1 1 1 NB= 64 N= 300 M= 257 K= 130 :"
  ARGS ${GEMM_ODD} -c 2 -g 1 --weft-device_type=emu --check)
weft_app_test(gemm_emu_g2_batch EXE weft-gemm
  EXPECT "${DENSE_PASSED}" "dgemm PxQxg= 1 1 2 NB= 64 N= 300 M= 257 K= 130 :"
         "weft\\[0\\.1\\] stats: emu1: .* [1-9][0-9]* batches \\([1-9][0-9]* tasks\\)"
  ARGS ${GEMM_ODD} -c 2 -g 2 --weft-device_type=emu --weft-device_batch=8 --weft-show_stats=1 --check)
weft_app_test(gemm_emu_g2_1x2 EXE weft-gemm RANKS 2 TIMEOUT 180 EXPECT "${DENSE_PASSED}" "${GEMM_COUNTED}"
  ARGS ${GEMM_ODD} -P 1 -Q 2 -c 1 -g 2 --weft-device_type=emu --check)
# 4 ranks of 6 emu devices each: a device maps up to the 18 zones of the
# other ranks (an emu device once kept 16 mappings, and the pulls past
# them went staged with a warning that did not say why).
weft_app_test(gemm_emu_many_peers_r4 EXE weft-gemm RANKS 4 TIMEOUT 300
  EXPECT "${DENSE_PASSED}" "weft\\[0\\] stats: .* mpi 0\\.0, ipc [0-9.]+, staged 0\\.0, nccl"
  ARGS -N 600 -t 50 -P 2 -Q 2 -c 1 -g 6 --weft-device_type=emu
       --weft-comm_transport=ipc --weft-show_stats=1 --check)
set_tests_properties(gemm_emu_many_peers_r4 PROPERTIES FAIL_REGULAR_EXPRESSION "staging it instead")
weft_app_test(posv_emu_g1_1x2 EXE weft-posv RANKS 2 TIMEOUT 180 EXPECT "${DENSE_PASSED}"
  ARGS ${POSV_ODD} -P 1 -Q 2 -c 1 -g 1 --weft-device_type=emu --check)
# 256 KiB of device memory for 768 KiB of matrices: tiles are evicted.
weft_app_test(gemm_emu_evict EXE weft-gemm
  EXPECT "${DENSE_PASSED}" "weft\\[0\\.1\\] stats: emu1: .* [1-9][0-9]* evictions"
  ARGS -N 256 -t 64 -c 2 -g 1 --weft-device_type=emu --weft-device_emu_memory=256K --weft-show_stats=1 --check)
# The same with partial tiles.
weft_app_test(gemm_emu_evict_partial EXE weft-gemm
  EXPECT "${DENSE_PASSED}" "weft\\[0\\.1\\] stats: emu1: .* [1-9][0-9]* evictions"
  ARGS -N 100 -M 64 -K 64 -t 64 -c 1 -g 1 --weft-device_type=emu --weft-device_emu_memory=128K --weft-show_stats=1 --check)
weft_app_test(gemm_bad_grid FAIL EXE weft-gemm EXPECT "P\\*Q must equal the number of ranks"
  ARGS -N 10 -P 2 -Q 1)
# weft-geqrf says it as the others do (it said "P*Q must equal the number of
# ranks" alone, without the grid's product and how -P and -Q combine).
weft_app_test(geqrf_bad_grid FAIL EXE weft-geqrf
  EXPECT "^weft-geqrf: the grid P 2 x Q 1 = 2 ranks, but running on 1 [(]P[*]Q must equal"
  ARGS -N 10 -P 2 -Q 1)
weft_app_test(gemm_bad_k FAIL EXE weft-gemm
  EXPECT "-K expects a positive integer <= 2147483647, got '0'" ARGS -K 0)
weft_app_test(gemm_cuda_absent EXE weft-gemm GPUS none FAIL
  EXPECT "weft-gemm: weft_init failed .*-g 1 asked weft for 1 CUDA device" ARGS -N 1024 -t 256 -g 1 --check)
weft_app_test(gemm_cuda_g1 EXE weft-gemm GPUS 1 TIMEOUT 300
  EXPECT "${DENSE_PASSED}" "dgemm PxQxg= 1 1 1 NB= 1024 N= 8000 :" ARGS -g 1 --check -N 8000 -t 1024)
weft_app_test(gemm_cuda_g1_batch EXE weft-gemm GPUS 1 TIMEOUT 300
  EXPECT "${DENSE_PASSED}" "weft\\[0\\.1\\] stats: cuda1: .* [1-9][0-9]* batches \\([1-9][0-9]* tasks\\)"
  ARGS -g 1 --check -N 3000 -t 256 --weft-show_stats=1)

# ---- weft-posv ---------------------------------------------------------------
weft_app_test(posv_check_n1 EXE weft-posv EXPECT "${DENSE_PASSED}" ARGS -N 1 --nrhs 1 -t 1 --check)
weft_app_test(posv_check_1 EXE weft-posv
  EXPECT "${DENSE_PASSED}" "dposv PxQxg= 1 1 0 NB= 64 N= 300 NRHS= 70 :"
  ARGS ${POSV_ODD} -c 2 --nruns 2 --check)
weft_app_test(posv_check_trsm_inv EXE weft-posv EXPECT "${DENSE_PASSED}"
  ARGS -N 257 --nrhs 3 -t 32 -c 2 --trsm-inv 2 --check)
weft_app_test(posv_check_2x1 EXE weft-posv RANKS 2 EXPECT "${DENSE_PASSED}"
  ARGS ${POSV_ODD} -P 2 -Q 1 -c 1 --check)
weft_app_test(posv_check_3x1 EXE weft-posv RANKS 3 TIMEOUT 180 EXPECT "${DENSE_PASSED}"
  ARGS ${POSV_ODD} -P 3 -Q 1 -c 1 --check)
weft_app_test(posv_check_2x2 EXE weft-posv RANKS 4 TIMEOUT 300 EXPECT "${DENSE_PASSED}"
  ARGS ${POSV_ODD} -P 2 -Q 2 -c 1 --check)
weft_app_test(posv_emu_g1 EXE weft-posv
  EXPECT "${DENSE_PASSED}" "dposv PxQxg= 1 1 1 NB= 64 N= 300 NRHS= 70 :"
  ARGS ${POSV_ODD} -c 2 -g 1 --weft-device_type=emu --check)
weft_app_test(posv_emu_g2 EXE weft-posv
  EXPECT "${DENSE_PASSED}" "dposv PxQxg= 1 1 2 NB= 64 N= 300 NRHS= 70 :"
  ARGS ${POSV_ODD} -c 2 -g 2 --weft-device_type=emu --check)
weft_app_test(posv_emu_evict EXE weft-posv
  EXPECT "${DENSE_PASSED}" "weft\\[0\\.1\\] stats: emu1: .* [1-9][0-9]* evictions"
  ARGS ${POSV_ODD} -c 2 -g 2 --weft-device_type=emu --weft-device_emu_memory=256K --weft-show_stats=1 --check)
weft_app_test(posv_bad_nrhs FAIL EXE weft-posv EXPECT "--nrhs expects a positive integer" ARGS --nrhs 0)
# Too many tiles in one dimension: the line names the dimension.
weft_app_test(posv_nrhs_tiles FAIL EXE weft-posv
  EXPECT "weft-posv: --nrhs 100000000 in tiles of -t 100 makes 1000000 tiles, more than [0-9]+: use a larger -t"
  ARGS -N 100 -t 100 --nrhs 100000000)
weft_app_test(gemm_k_tiles FAIL EXE weft-gemm
  EXPECT "weft-gemm: -K 70000 in tiles of -t 1 makes 70000 tiles, more than [0-9]+: use a larger -t"
  ARGS -N 10 -M 10 -K 70000 -t 1)
weft_app_test(posv_cuda_absent EXE weft-posv GPUS none FAIL
  EXPECT "weft-posv: weft_init failed .*-g 1 asked weft for 1 CUDA device" ARGS -N 1024 -t 256 -g 1 --check)
weft_app_test(posv_cuda_g1 EXE weft-posv GPUS 1 TIMEOUT 300
  EXPECT "${DENSE_PASSED}" "dposv PxQxg= 1 1 1 NB= 1024 N= 7000 NRHS= 1000 :"
  ARGS -g 1 --check -N 7000 --nrhs 1000 -t 1024)

# A silently wrong result must not pass a check: fault_inject task_skip
# makes one task report success without running (a write the runtime would
# have lost), and each app's --check must print FAILED and exit non-zero.
# weft-gemm's check used to read the stored A and B (a lost write of an
# operand went unseen, PASSED): it regenerates them now. Fill 2 is a tile
# of A, fill 18 one of B (4 x 4 tiles each).
set(LOST_WRITE "(residual|max relative error) .*FAILED")
weft_app_test(gemm_check_lost_a FAIL EXE weft-gemm EXPECT "${LOST_WRITE}"
  ARGS -N 120 -t 30 -c 1 --check --weft-fault_inject=task_skip:fill:2)
weft_app_test(gemm_check_lost_b FAIL EXE weft-gemm EXPECT "${LOST_WRITE}"
  ARGS -N 120 -t 30 -c 1 --check --weft-fault_inject=task_skip:fill:18)
weft_app_test(gemm_check_lost_gemm FAIL EXE weft-gemm EXPECT "${LOST_WRITE}"
  ARGS -N 120 -t 30 -c 1 --check --weft-fault_inject=task_skip:gemm:5)
weft_app_test(potrf_check_lost_gemm FAIL EXE weft-potrf EXPECT "${LOST_WRITE}"
  ARGS -N 120 -t 30 -c 1 --check --weft-fault_inject=task_skip:gemm:1)
weft_app_test(getrf_check_lost_gemm FAIL EXE weft-getrf EXPECT "${LOST_WRITE}"
  ARGS -N 120 -t 30 -c 1 --check --weft-fault_inject=task_skip:gemm:3)
weft_app_test(posv_check_lost_solve FAIL EXE weft-posv EXPECT "${LOST_WRITE}"
  ARGS -N 120 -t 30 -c 1 --nrhs 10 --check --weft-fault_inject=task_skip:solve_trsm_lt:1)
weft_app_test(geqrf_check_lost_tsmqr FAIL EXE weft-geqrf EXPECT "${LOST_WRITE}"
  ARGS -M 150 -N 120 -t 30 -b 10 -c 1 --check --weft-fault_inject=task_skip:tsmqr:2)
# gemqrt 12 (on 5 x 5 tiles, the first of the check's B := Q^T A0 that a
# panel applied to a block left of it, made zero by an earlier panel):
# skipped, it changed the residual by rounding only, PASSED (an app fault
# sweep); the check leaves those blocks alone now, so every gemqrt counts.
weft_app_test(geqrf_check_lost_check_gemqrt FAIL EXE weft-geqrf EXPECT "${LOST_WRITE}"
  ARGS -N 150 -t 30 -c 1 --check --weft-fault_inject=task_skip:gemqrt:12)
# The check's own all-reduce: an add of one rank's sums skipped left the
# totals short (a smaller residual, PASSED); each rank's totals now come
# out through a task that counts the ranks' parts, and the check fails on
# every rank.
set(LOST_PART "taskpool [a-z]+ failed: rank [01]: task sums_out #[0-9]+ returned -2 .*: the check's totals hold 1 of the 2 ranks' parts")
weft_app_test(gemm_check_lost_sums FAIL EXE weft-gemm RANKS 2 EXPECT "${LOST_PART}"
  ARGS -N 120 -t 30 -c 1 --check --weft-fault_inject=task_skip:sums_add:1)
weft_app_test(potrf_check_lost_sums FAIL EXE weft-potrf RANKS 2 EXPECT "${LOST_PART}"
  ARGS -N 120 -t 30 -c 1 --check --weft-fault_inject=task_skip:sums_add:1)
# A norm task of the check skipped left its tile out of the sums (a
# smaller residual, PASSED: weft-potrf 2.140e-3 against 2.252e-3): the sums
# now count the tasks that added into them against the number inserted.
# Each rank skips its first norm task, so two are missing.
set(LOST_NORM "taskpool [a-z]+ failed: rank [01]: task sums_out #[0-9]+ returned -2 .*: the check's totals hold ([0-9]+) of the ([0-9]+) tiles' norms")
foreach(case "gemm;sqnorm;" "potrf;resid_norm;" "getrf;resid_norm;" "posv;check_anorm;--nrhs;10"
             "geqrf;orth_norm;-M;150;-b;10")
  list(POP_FRONT case app class)
  weft_app_test(${app}_check_lost_norm FAIL EXE weft-${app} RANKS 2
    EXPECT "weft\\[0\\] error: ${LOST_NORM}" "weft\\[1\\] error: ${LOST_NORM}"
    ARGS -N 120 -t 30 -c 1 ${case} --check --weft-fault_inject=task_skip:${class}:1)
endforeach()
# The task that brings a rank's totals to its host skipped on rank 2 only:
# that rank failed its check while rank 0 printed PASSED and exited 0. The
# verdict is every rank's now (the totals start as NaN).
weft_app_test(potrf_check_lost_out_r3 FAIL EXE weft-potrf RANKS 3
  EXPECT "^residual = .* : FAILED [(]another rank's check failed[)]$"
         "^weft-potrf: rank 2: the check FAILED here"
         "^weft-potrf: rank 1: the check FAILED on another rank$"
  ARGS -N 120 -t 30 -c 1 --check --weft-fault_inject=task_skip:sums_out:1@2)
weft_app_test(gemm_stress_check_lost_step FAIL EXE weft-gemm-stress EXPECT "${LOST_WRITE}"
  ARGS -t 20 --depth 4 --width 3 -c 1 --check --weft-fault_inject=task_skip:gs_step:3)
# A step and the check task skipped: the error tile stayed 0 and the run
# PASSED; the tile counts the chains checked into it now.
weft_app_test(gemm_stress_check_lost_check FAIL EXE weft-gemm-stress
  EXPECT "rank 0: its error tile holds 0 of the 1 chains' errors: a task of the check did not run"
         "^weft-gemm-stress: max relative error .* : FAILED$"
  ARGS -t 64 --depth 2 --width 1 -c 1 --check
       --weft-fault_inject=task_skip:gs_step:1,task_skip:gs_check:1+)
# Rank 1 fails its own part of the check (its error tile's copy skipped):
# rank 0 printed PASSED and exited 0, rank 1 exited 1 without a line.
weft_app_test(gemm_stress_check_lost_copy_r2 FAIL EXE weft-gemm-stress RANKS 2
  EXPECT "^weft-gemm-stress: max relative error .* : FAILED [(]another rank's check failed[)]$"
         "^weft-gemm-stress: rank 1: the check FAILED here"
  ARGS -t 32 --depth 4 --width 2 -c 1 --check --weft-fault_inject=task_skip:gs_err_copy:1@1)

# A body's own words reach every rank (weft_task_error): a matrix made
# non-SPD (one fill skipped) fails dpotrf on rank 0, and all three ranks'
# failure lines say why (they said "returned -1"; the reason went to rank
# 0's stderr alone, under weft-potrf's name even in weft-posv).
weft_app_test(posv_task_error_words_r3 FAIL EXE weft-posv RANKS 3
  EXPECT "weft\\[0\\] error: taskpool posv failed: rank 0: task potrf #[0-9]+ returned -1 [(][^)]*[)]: dpotrf of a diagonal tile returned info=[0-9]+ [(]the matrix is not positive definite[)]"
         "weft\\[1\\] error: taskpool posv failed: rank 0: task potrf #[0-9]+ returned -1 [(][^)]*[)]: dpotrf of a diagonal tile"
         "weft\\[2\\] error: taskpool posv failed: rank 0: task potrf #[0-9]+ returned -1 [(][^)]*[)]: dpotrf of a diagonal tile"
  ARGS -N 100 -t 16 -c 1 --check --weft-fault_inject=task_skip:fill:1@0)
