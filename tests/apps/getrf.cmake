# ---- weft-getrf: LU without pivoting -------------------------------------
# CPU: one element, odd N with partial tiles, a tile larger than the matrix,
# several runs; 2 (2x1), 3 (3x1) and 4 (2x2) ranks.
set(GETRF_PASSED "^residual = .* : PASSED$")
weft_app_test(getrf_check_n1 EXE weft-getrf EXPECT "${GETRF_PASSED}" ARGS -N 1 -t 1 --check)
weft_app_test(getrf_check_n257 EXE weft-getrf EXPECT "${GETRF_PASSED}"
  "dgetrf PxQxg= 1 1 0 NB= 64 N= 257 :" ARGS -N 257 -t 64 -c 2 --check)
weft_app_test(getrf_check_tile_gt_n EXE weft-getrf EXPECT "${GETRF_PASSED}"
  ARGS -N 101 -t 128 --check)
weft_app_test(getrf_check_nruns EXE weft-getrf EXPECT "${GETRF_PASSED}"
  ARGS -N 301 -t 48 -c 2 --nruns 2 --seed 7 --check)
weft_app_test(getrf_check_2x1 EXE weft-getrf RANKS 2 EXPECT "${GETRF_PASSED}"
  ARGS -N 301 -t 64 -P 2 -Q 1 -c 1 --check)
weft_app_test(getrf_check_3x1 EXE weft-getrf RANKS 3 TIMEOUT 180 EXPECT "${GETRF_PASSED}"
  ARGS -N 333 -t 50 -P 3 -Q 1 -c 1 --check)
weft_app_test(getrf_check_2x2 EXE weft-getrf RANKS 4 TIMEOUT 300 EXPECT "${GETRF_PASSED}"
  ARGS -N 389 -t 64 -P 2 -Q 2 -c 1 --check)
# The plain deal (the default is reflected, as in the tests above).
weft_app_test(getrf_check_2x2_cyclic EXE weft-getrf RANKS 4 TIMEOUT 300 EXPECT "${GETRF_PASSED}"
  ARGS -N 389 -t 64 -P 2 -Q 2 -c 1 --dist cyclic --check)
weft_app_test(getrf_dist_twice FAIL EXE weft-getrf
  EXPECT "--dist given twice, as 'cyclic' and then 'reflected': give it once"
  ARGS -N 100 --dist cyclic --dist reflected)
weft_expect_test(getrf_bad_dist_2ranks TIMEOUT 60 RANKS 2
  CHECKS --status nonzero --count "--dist expects cyclic or reflected, got 'snake'" 2
  RUN ${WEFT_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:weft-getrf> -c 1 -N 100 --dist snake)
weft_app_test(getrf_bad_grid FAIL EXE weft-getrf EXPECT "P\\*Q must equal the number of ranks"
  ARGS -N 10 -P 2 -Q 1)
weft_app_test(getrf_bad_tile FAIL EXE weft-getrf EXPECT "-t expects a positive integer" ARGS -t 0)
# Emu devices run the CPU bodies through the device paths: 1 and 2 devices,
# on one rank and on a 1 x 2 grid; a device memory limit far below the
# matrix (25 tiles of 32 KiB each) forces evictions, counted in the stats.
weft_app_test(getrf_emu_g1 EXE weft-getrf EXPECT "${GETRF_PASSED}"
  "dgetrf PxQxg= 1 1 1 NB= 64 N= 300 :" "weft\\[0\\.1\\] stats: emu1: [1-9][0-9]* tasks"
  ARGS -N 300 -t 64 -c 2 -g 1 --weft-device_type=emu --weft-show_stats=1 --check)
weft_app_test(getrf_emu_g2 EXE weft-getrf EXPECT "${GETRF_PASSED}"
  "dgetrf PxQxg= 1 1 2 NB= 64 N= 449 :" "weft\\[0\\.2\\] stats: emu2: [1-9][0-9]* tasks"
  ARGS -N 449 -t 64 -c 2 -g 2 --nruns 2 --weft-device_type=emu --weft-show_stats=1 --check-first)
weft_app_test(getrf_emu_g2_1x2 EXE weft-getrf RANKS 2 TIMEOUT 180 EXPECT "${GETRF_PASSED}"
  "dgetrf PxQxg= 1 2 2 NB= 64 N= 400 :"
  ARGS -N 400 -t 64 -P 1 -Q 2 -c 1 -g 2 --weft-device_type=emu --check)
weft_app_test(getrf_emu_evict EXE weft-getrf EXPECT "${GETRF_PASSED}"
  "weft\\[0\\.1\\] stats: emu1: .*, [1-9][0-9]* evictions"
  ARGS -N 320 -t 64 -c 2 -g 1 --weft-device_type=emu --weft-device_emu_memory=256K
       --weft-show_stats=1 --check)
# Panels by inverted diagonal factors (--trsm-inv; 1 is the default with
# -g, so the emu tests above take it): on CPUs on a 2 x 2 grid with partial
# tiles (the inverses are NEW tiles that travel), mode 2 on emu; and the
# TRSM panels on emu devices (--trsm-inv 0), which -g no longer takes.
weft_app_test(getrf_inv_2x2 EXE weft-getrf RANKS 4 TIMEOUT 300 EXPECT "${GETRF_PASSED}"
  ARGS -N 333 -t 40 -P 2 -Q 2 -c 1 --trsm-inv 1 --check)
weft_app_test(getrf_inv_emu_mode2 EXE weft-getrf EXPECT "${GETRF_PASSED}"
  ARGS -N 517 -t 50 -c 2 -g 2 --weft-device_type=emu --trsm-inv 2 --check)
weft_app_test(getrf_emu_trsm EXE weft-getrf EXPECT "${GETRF_PASSED}"
  ARGS -N 300 -t 64 -c 2 -g 1 --weft-device_type=emu --trsm-inv 0 --check)
weft_app_test(getrf_bad_trsm_inv FAIL EXE weft-getrf
  EXPECT "--trsm-inv expects a non-negative integer <= 2, got '3'" ARGS --trsm-inv 3)
# CUDA: without a GPU weft_init names the missing device (skipped on GPU
# machines); with one, cuSOLVER/cuBLAS bodies and a partial last tile.
weft_app_test(getrf_cuda_absent EXE weft-getrf GPUS none FAIL
  EXPECT "weft-getrf: weft_init failed .*-g 1 asked weft for 1 CUDA device" ARGS -N 512 -t 128 -g 1 --check)
weft_app_test(getrf_cuda_g1 EXE weft-getrf GPUS 1 TIMEOUT 300
  EXPECT "${GETRF_PASSED}" "dgetrf PxQxg= 1 1 1 NB= 1024 N= 7000 :"
  ARGS -g 1 --check -N 7000 -t 1024)
weft_app_test(getrf_cuda_inv2 EXE weft-getrf GPUS 1 TIMEOUT 300 EXPECT "${GETRF_PASSED}"
  ARGS -g 1 --check -N 5000 -t 768 --trsm-inv 2)
weft_app_test(getrf_cuda_trsm EXE weft-getrf GPUS 1 TIMEOUT 300 EXPECT "${GETRF_PASSED}"
  ARGS -g 1 --check -N 5000 -t 768 --trsm-inv 0)
# Without -t on a GPU the tile follows N (1024 above N=4096).
weft_app_test(getrf_cuda_auto_nb EXE weft-getrf GPUS 1 TIMEOUT 300 EXPECT "${GETRF_PASSED}"
  "dgetrf PxQxg= 1 1 1 NB= 1024 N= 5000 :" ARGS -g 1 --check -N 5000)
# --preload (the default with CUDA devices): the taskpool that generates the
# first matrix also factorizes a small one of 3 x 3 tiles on the device (36
# tasks beside the run's 1200); the run's factor checks out, on one rank and
# on two.
weft_app_test(getrf_emu_preload EXE weft-getrf
  EXPECT "${GETRF_PASSED}" "stats: rank 0: 1236 tasks"
  ARGS -N 600 -t 64 -c 2 -g 1 --weft-device_type=emu --weft-show_stats=1 --check --preload 1)
weft_app_test(getrf_emu_preload_2ranks EXE weft-getrf RANKS 2 TIMEOUT 180
  EXPECT "${GETRF_PASSED}"
  ARGS -N 600 -t 64 -P 1 -Q 2 -c 1 -g 1 --weft-device_type=emu --check --preload 1 --nruns 2)
