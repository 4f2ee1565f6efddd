# weft-geqrf (tile QR, issue 16 item 3), included by tests/apps/CMakeLists.txt.
# A run that should succeed must print the check's PASSED line: both the
# factorization residual ||A - Q R|| and the orthogonality ||X - Q^T Q X||.
set(GEQRF_PASSED "^residual = .* orthogonality = .* : PASSED$")

# CPU: one element, square and tall, odd sizes with partial tiles in both
# directions, a tile larger than the matrix, -b = -t, several runs.
weft_app_test(geqrf_check_n1 EXE weft-geqrf EXPECT "${GEQRF_PASSED}" ARGS -N 1 -t 1 -b 1 --check)
weft_app_test(geqrf_check_square EXE weft-geqrf EXPECT "${GEQRF_PASSED}"
  "dgeqrf PxQxg= 1 1 0 NB= 64 N= 300 :" ARGS -N 300 -t 64 -b 16 -c 2 --check)
weft_app_test(geqrf_check_tall_odd EXE weft-geqrf EXPECT "${GEQRF_PASSED}"
  ARGS -M 517 -N 263 -t 48 -b 12 -c 2 --check)
weft_app_test(geqrf_check_tile_gt_n EXE weft-geqrf EXPECT "${GEQRF_PASSED}"
  ARGS -M 130 -N 77 -t 200 -b 32 --check)
weft_app_test(geqrf_check_ib_nb_nruns EXE weft-geqrf EXPECT "${GEQRF_PASSED}"
  ARGS -M 400 -N 250 -t 50 -b 50 -c 2 --nruns 2 --seed 9 --check)
# Without -b the inner block is -t / 4 with -g (min(32, -t) on CPUs:
# geqrf_check_default_ib_small_tile below).
weft_app_test(geqrf_default_ib_emu EXE weft-geqrf EXPECT "${GEQRF_PASSED}" "(M= 300 IB= 25)"
  ARGS -N 300 -t 100 -c 2 -g 1 --weft-device_type=emu --check)
# Ranks: 2 (2x1 and 1x2), 3 (3x1) and 4 (2x2); T tiles and diagonal copies
# travel between ranks. With P > 1 the default tree is hier (apps/qr_tree.h):
# each grid row's tiles reduced into its first, the P heads merged by TTQRT.
# M > N with partial tiles both ways: the last tile row is a short head (13
# rows against 40 columns on 2x1, its GEQRT T capped at 13 rows with -b 16)
# and the last tile column's heads are tall (only their top rows merge).
weft_app_test(geqrf_check_2x1 EXE weft-geqrf RANKS 2 EXPECT "${GEQRF_PASSED}" "TREE= hier\\)"
  ARGS -M 333 -N 257 -t 40 -b 8 -P 2 -Q 1 -c 1 --check)
weft_app_test(geqrf_check_1x2 EXE weft-geqrf RANKS 2 EXPECT "${GEQRF_PASSED}" "TREE= flat\\)"
  ARGS -N 301 -t 48 -b 16 -P 1 -Q 2 -c 1 --check)
weft_app_test(geqrf_check_3x1 EXE weft-geqrf RANKS 3 TIMEOUT 180 EXPECT "${GEQRF_PASSED}"
  "TREE= hier\\)" ARGS -M 401 -N 199 -t 40 -b 10 -P 3 -Q 1 -c 1 --check)
weft_app_test(geqrf_check_2x2 EXE weft-geqrf RANKS 4 TIMEOUT 180 EXPECT "${GEQRF_PASSED}"
  "TREE= hier\\)" ARGS -N 257 -t 40 -b 8 -P 2 -Q 2 -c 1 --check)
# The flat tree across ranks stays available (--tree flat; a word in any
# case, as weft's enumerated parameters: "FLAT" was refused).
weft_app_test(geqrf_check_2x1_flat EXE weft-geqrf RANKS 2 EXPECT "${GEQRF_PASSED}"
  "TREE= flat\\)" ARGS -M 333 -N 257 -t 40 -b 16 -P 2 -Q 1 -c 1 --tree FLAT --check)
# hier on 4 x 1 (6 x 4 tiles): 4 heads (two levels of the binary tree), then
# 3 in the last panel; a short head (13 rows) with an inner block above its
# rows, tall heads (17 columns). 3 x 1 on a tall matrix (11 x 3 tiles):
# domain chains of 3 tiles, a 20-row last tile, a 10-column last panel.
weft_app_test(geqrf_hier_4x1 EXE weft-geqrf RANKS 4 TIMEOUT 180 EXPECT "${GEQRF_PASSED}"
  ARGS -M 213 -N 137 -t 40 -b 16 -P 4 -Q 1 -c 1 --tree hier --check)
weft_app_test(geqrf_hier_3x1_tall EXE weft-geqrf RANKS 3 TIMEOUT 180 EXPECT "${GEQRF_PASSED}"
  ARGS -M 320 -N 70 -t 30 -b 7 -P 3 -Q 1 -c 1 --tree=hier --check)
# On 3 x 1 with the rows dealt 0 1 2 2 1 0 0 1 (8 x 8 tiles), the tree's
# chains stay on their ranks only if a domain is a rank's rows (not every
# P-th row): 35, 35 and 26 tiles sent (the flat chain: 43, 69, 26).
weft_app_test(geqrf_hier_3x1_sends EXE weft-geqrf RANKS 3 TIMEOUT 180 EXPECT
  "weft\\[0\\] stats: rank 0: transfers: 35 sends" "weft\\[1\\] stats: rank 1: transfers: 35 sends"
  "weft\\[2\\] stats: rank 2: transfers: 26 sends"
  ARGS -N 480 -t 60 -P 3 -Q 1 -c 1 --weft-show_stats=1)
# The hierarchical tree on the plain deal (domains every P-th row), 3 x 1.
weft_app_test(geqrf_hier_3x1_cyclic EXE weft-geqrf RANKS 3 TIMEOUT 180 EXPECT "${GEQRF_PASSED}"
  ARGS -M 320 -N 200 -t 30 -b 8 -P 3 -Q 1 -c 1 --tree hier --dist cyclic --check)
# What hier is for: on 2 x 1 at 8 x 8 tiles the flat chain sends 94 tiles a
# rank, the tree 35 (per panel k, the 8 - k tiles of row k go to the other
# rank for the merge and come back).
weft_app_test(geqrf_hier_2x1_sends EXE weft-geqrf RANKS 2 EXPECT
  "weft\\[0\\] stats: rank 0: transfers: 35 sends" "weft\\[1\\] stats: rank 1: transfers: 35 sends"
  ARGS -N 512 -t 64 -P 2 -Q 1 -c 1 --weft-show_stats=1)
# Bad input: a message naming the problem and a non-zero exit.
# Without -b, a tile smaller than the default inner block (32) takes the
# tile's size: the command line names no -b, so none may be refused.
weft_app_test(geqrf_check_default_ib_small_tile EXE weft-geqrf
  EXPECT "^residual = .* orthogonality = .* \\(M= 20 IB= 4 TREE= flat\\) : PASSED$"
  ARGS -M 20 -N 10 -t 4 --check)
weft_app_test(geqrf_bad_shape FAIL EXE weft-geqrf EXPECT "-M must be >= -N" ARGS -M 10 -N 20)
weft_app_test(geqrf_bad_ib FAIL EXE weft-geqrf EXPECT "-b \\(inner block size\\) must be <= -t"
  ARGS -N 100 -t 32 -b 64)
weft_app_test(geqrf_bad_flag FAIL EXE weft-geqrf EXPECT "unknown option '--bogus'" ARGS --bogus)
weft_expect_test(geqrf_bad_tree_2ranks TIMEOUT 60 RANKS 2
  CHECKS --status clean --count "--tree expects flat or hier, got 'binary'" 2
  RUN ${WEFT_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:weft-geqrf> -c 1 -P 2 -Q 1 -N 100
  --tree binary)
# emu devices: the updates and factorizations run there (both devices ran
# tasks), on one rank and on a 1 x 2 grid.
weft_app_test(geqrf_emu_g1 EXE weft-geqrf EXPECT "${GEQRF_PASSED}"
  "dgeqrf PxQxg= 1 1 1 NB= 48 N= 250 M= 390 :" "weft\\[0\\.1\\] stats: emu1: [1-9][0-9]* tasks"
  ARGS -M 390 -N 250 -t 48 -b 16 -c 2 -g 1 --weft-device_type=emu --weft-show_stats=1 --check)
weft_app_test(geqrf_emu_g2 EXE weft-geqrf EXPECT "${GEQRF_PASSED}"
  "dgeqrf PxQxg= 1 1 2 NB= 48 N= 300 :" "weft\\[0\\.1\\] stats: emu1: [1-9][0-9]* tasks"
  "weft\\[0\\.2\\] stats: emu2: [1-9][0-9]* tasks"
  ARGS -N 300 -t 48 -b 16 -c 2 -g 2 --weft-device_type=emu --weft-show_stats=1 --check)
weft_app_test(geqrf_emu_g2_1x2 EXE weft-geqrf RANKS 2 TIMEOUT 180 EXPECT "${GEQRF_PASSED}"
  "dgeqrf PxQxg= 1 2 2 " ARGS -M 350 -N 300 -t 48 -b 16 -P 1 -Q 2 -c 1 -g 2
  --weft-device_type=emu --check)
# hier with devices (not the default there): the TT tasks run on the host
# (their device hint) on tiles that live on the emu devices, as on CUDA.
weft_app_test(geqrf_emu_hier_2x1 EXE weft-geqrf RANKS 2 TIMEOUT 180 EXPECT "${GEQRF_PASSED}"
  "dgeqrf PxQxg= 2 1 1 " "TREE= hier\\)" ARGS -M 350 -N 300 -t 48 -b 16 -P 2 -Q 1 -c 1 -g 1
  --weft-device_type=emu --tree hier --check)
# A device zone of a few tiles: copies are evicted (and written back) to
# make room, and the result still passes.
weft_app_test(geqrf_emu_evict EXE weft-geqrf EXPECT "${GEQRF_PASSED}"
  "weft\\[0\\.1\\] stats: emu1: .* MiB, [1-9][0-9]* evictions"
  ARGS -M 400 -N 320 -t 64 -b 16 -c 2 -g 1 --weft-device_type=emu
  --weft-device_emu_memory=1M --weft-show_stats=1 --check)
# CUDA: fails cleanly without a GPU (skipped on GPU machines), runs every
# class there with one (skipped without): partial tiles both ways with an
# inner block that does not divide the tile, -b = -t over two runs, and 2
# ranks sharing the GPU (factors made on one rank, updated on the other).
weft_app_test(geqrf_cuda_absent EXE weft-geqrf GPUS none FAIL
  EXPECT "weft-geqrf: weft_init failed .*-g 1 asked weft for 1 CUDA device" ARGS -N 512 -t 128 -g 1 --check)
weft_app_test(geqrf_cuda_g1 EXE weft-geqrf GPUS 1 TIMEOUT 300 EXPECT "${GEQRF_PASSED}"
  "dgeqrf PxQxg= 1 1 1 NB= 512 N= 4000 M= 5000 :" ARGS -g 1 -M 5000 -N 4000 -t 512 -b 64 --check)
weft_app_test(geqrf_cuda_odd EXE weft-geqrf GPUS 1 TIMEOUT 300 EXPECT "${GEQRF_PASSED}"
  "weft\\[0\\.1\\] stats: cuda1: [1-9][0-9]* tasks"
  ARGS -g 1 -M 1030 -N 777 -t 256 -b 48 --weft-show_stats=1 --check)
weft_app_test(geqrf_cuda_ib_nb EXE weft-geqrf GPUS 1 TIMEOUT 300 EXPECT "${GEQRF_PASSED}"
  ARGS -g 1 -N 2048 -t 512 -b 512 --nruns 2 --check)
weft_app_test(geqrf_cuda_2x1 EXE weft-geqrf RANKS 2 GPUS 1 TIMEOUT 300 EXPECT "${GEQRF_PASSED}"
  ARGS -g 1 -M 1500 -N 1200 -t 256 -b 64 -P 2 -Q 1 -c 1 --check)
# Without -t and -b on a GPU: weft-geqrf's own tile rule and IB = NB / 4.
weft_app_test(geqrf_cuda_auto_nb EXE weft-geqrf GPUS 1 TIMEOUT 300 EXPECT "${GEQRF_PASSED}"
  "dgeqrf PxQxg= 1 1 1 NB= 1024 N= 5000 :" "(M= 5000 IB= 256)" ARGS -g 1 --check -N 5000)
# --preload (the default with CUDA devices): the taskpool that generates the
# first matrix also factorizes a small one of 3 x 3 tiles on the device (32
# tasks beside the run's 1302: 1467 before the check's B := Q^T A0 left the
# zero blocks left of each panel alone, sum over k of k (10 - k) = 165 fewer);
# the run's factors check out, on one rank and on two.
weft_app_test(geqrf_emu_preload EXE weft-geqrf
  EXPECT "${GEQRF_PASSED}" "stats: rank 0: 1334 tasks"
  ARGS -N 600 -t 64 -c 2 -g 1 --weft-device_type=emu --weft-show_stats=1 --check --preload 1)
weft_app_test(geqrf_emu_preload_2ranks EXE weft-geqrf RANKS 2 TIMEOUT 180
  EXPECT "${GEQRF_PASSED}"
  ARGS -N 600 -t 64 -P 2 -Q 1 -c 1 -g 1 --weft-device_type=emu --check --preload 1 --nruns 2)
# Rendezvous tiles (eager limit 4K < 32K tiles) landing on small emu
# devices (384K: 12 tiles) on 2 ranks: the comm thread, making room on a
# device for a receive, evicted a dirty tile whose host copy was busy (its
# bytes arriving, or a send reading it) and waited for it, but only the
# comm thread moves those bytes: both ranks stalled for ever. The receive
# now lands on the host instead (the comm thread evicts clean copies only,
# never writing one back: device_evict_rules counts that); the watchdog
# (2 s, abort) fails a stall.
weft_app_test(geqrf_emu_evict_recv_r2 EXE weft-geqrf RANKS 2 TIMEOUT 60
  EXPECT "${GEQRF_PASSED}"
  ARGS -N 480 -t 64 -P 2 -Q 1 -c 1 -g 2 --weft-device_type=emu --check --nruns 2
       --weft-comm_transport=mpi --weft-comm_node_split=rank --weft-comm_eager_limit=4K
       --weft-device_memory_limit=384K --weft-watchdog_s=2 --weft-watchdog_abort=1)
