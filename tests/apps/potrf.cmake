# weft-potrf: a run that should succeed must print its check's PASSED line
# (a run that prints nothing, crashes after the line, or fails the check
# fails the test); one that should fail (FAIL) must exit non-zero without
# being killed by a signal and print the message given.
set(POTRF_PASSED "^residual = .* : PASSED$")

# weft-potrf --check on CPU: one element, partial tiles, a tile larger than
# the matrix, several runs, and a 2 x 2 grid of ranks.
weft_app_test(potrf_check_n1 EXE weft-potrf EXPECT "${POTRF_PASSED}"
  ARGS -N 1 -t 1 --check)
weft_app_test(potrf_check_n100 EXE weft-potrf EXPECT "${POTRF_PASSED}"
  ARGS -N 100 -t 32 -c 1 --check)
weft_app_test(potrf_check_n257 EXE weft-potrf EXPECT "${POTRF_PASSED}"
  ARGS -N 257 -t 64 -c 2 --check)
weft_app_test(potrf_check_n1000 EXE weft-potrf EXPECT "${POTRF_PASSED}"
  ARGS -N 1000 -t 128 -c 2 --check)
weft_app_test(potrf_check_tile_gt_n EXE weft-potrf EXPECT "${POTRF_PASSED}"
  ARGS -N 513 -t 1024 --check)
weft_app_test(potrf_check_n2000 EXE weft-potrf TIMEOUT 300 EXPECT "${POTRF_PASSED}"
  ARGS -N 2000 -t 200 -c 2 --check)
weft_app_test(potrf_check_nruns EXE weft-potrf EXPECT "${POTRF_PASSED}"
  ARGS -N 300 -t 64 -c 2 --nruns 2 --seed 7 --check)
weft_app_test(potrf_check_2x1 EXE weft-potrf RANKS 2 EXPECT "${POTRF_PASSED}"
  ARGS -N 300 -t 64 -P 2 -Q 1 -c 1 --check)
weft_app_test(potrf_check_2x2 EXE weft-potrf RANKS 4 TIMEOUT 300
  EXPECT "${POTRF_PASSED}"
  ARGS -N 500 -t 64 -P 2 -Q 2 -c 1 --check)
# --trsm-inv 1 and 2 on CPU (the default there is 0): each diagonal factor
# inverted once into a NEW tile that the panel's multiplications read (2:
# all but the first tile below the diagonal); partial tiles, and a 1 x 2
# grid where the inverses travel between ranks.
weft_app_test(potrf_check_trsm_inv EXE weft-potrf EXPECT "${POTRF_PASSED}"
  ARGS -N 257 -t 64 -c 2 --trsm-inv 1 --check)
weft_app_test(potrf_check_trsm_inv2 EXE weft-potrf EXPECT "${POTRF_PASSED}"
  ARGS -N 257 -t 32 -c 2 --trsm-inv 2 --check)
weft_app_test(potrf_check_trsm_inv_1x2 EXE weft-potrf RANKS 2 EXPECT "${POTRF_PASSED}"
  ARGS -N 300 -t 64 -P 1 -Q 2 -c 1 --nruns 2 --trsm-inv 1 --check)
weft_app_test(potrf_bad_trsm_inv FAIL EXE weft-potrf
  EXPECT "--trsm-inv expects a non-negative integer <= 2, got '3'" ARGS -N 10 --trsm-inv 3)

# Bad input: a clear message naming the problem and a non-zero exit.
weft_app_test(potrf_bad_tile FAIL EXE weft-potrf EXPECT "-t expects a positive integer" ARGS -t 0)
weft_app_test(potrf_bad_n FAIL EXE weft-potrf EXPECT "-N expects a positive integer" ARGS -N -5)
weft_app_test(potrf_bad_number FAIL EXE weft-potrf
  EXPECT "-N expects a positive integer <= 2147483647, got 'abc'" ARGS -N abc)
# A number past the bound names the bound (it read "expects a positive
# integer, got '99999999999'").
weft_app_test(potrf_bad_n_huge FAIL EXE weft-potrf
  EXPECT "-N expects a positive integer <= 2147483647, got '99999999999'" ARGS -N 99999999999)
weft_app_test(potrf_bad_missing_value FAIL EXE weft-potrf EXPECT "-t needs a value" ARGS -N 10 -t)
weft_app_test(potrf_bad_flag FAIL EXE weft-potrf EXPECT "unknown option '--bogus'" ARGS --bogus)
# "-N=40" read as an unknown option with no hint ("--nrhs=3" is accepted:
# "=" is for the long flags).
weft_app_test(potrf_short_flag_eq FAIL EXE weft-potrf
  EXPECT "unknown option '-N=40': -N takes its value as the next word [(]-N 40[)]" ARGS -N=40)
weft_app_test(potrf_bad_cores FAIL EXE weft-potrf EXPECT "-c expects a positive integer" ARGS -c x)
weft_app_test(potrf_bad_weft_param FAIL EXE weft-potrf EXPECT "nonexistent"
  ARGS --weft-nonexistent=1 -N 10)
weft_app_test(potrf_bad_grid FAIL EXE weft-potrf EXPECT "P\\*Q must equal the number of ranks"
  ARGS -N 10 -P 2 -Q 1)
weft_app_test(potrf_bad_devices FAIL EXE weft-potrf
  EXPECT "asked for -g 1 accelerators but this rank has 0"
  ARGS -N 10 -g 1 --weft-device_cuda_enabled=0)

# ---- accelerators: -g N of the type device_type names --------------------
# -g 2 on emu devices: the factorization runs there (g = 2 devices used,
# both emu devices ran tasks), the result passes the check; on one rank and
# on a 1 x 2 grid, the type from argv or from the environment.
weft_app_test(potrf_emu_g2 EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 2 NB= 64 N= 600 :"
         "weft\\[0\\.1\\] stats: emu1: [1-9][0-9]* tasks" "weft\\[0\\.2\\] stats: emu2: [1-9][0-9]* tasks"
  ARGS -N 600 -t 64 -c 2 -g 2 --weft-device_type=emu --weft-show_stats=1 --check)
weft_app_test(potrf_emu_g2_1x2 EXE weft-potrf RANKS 2 TIMEOUT 180
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 2 2 NB= 64 N= 600 :"
         "weft\\[1\\.1\\] stats: emu1: [1-9][0-9]* tasks" "weft\\[1\\.2\\] stats: emu2: [1-9][0-9]* tasks"
  ARGS -N 600 -t 64 -P 1 -Q 2 -c 1 -g 2 --weft-device_type=emu --weft-show_stats=1 --check)
weft_app_test(potrf_emu_g2_env EXE weft-potrf ENV WEFT_DEVICE_TYPE=emu
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 2 "
  ARGS -N 300 -t 64 -c 2 -g 2 --check)
# The device managers' two ways of staging inputs and choosing streams:
# copies on the execution streams and no urgent stream (the defaults put
# copies on the stage-in stream and use an urgent stream), 4 streams, 1
# task in flight each; and --check-first: two runs, the first checked.
weft_app_test(potrf_emu_g2_plain_streams EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 2 NB= 64 N= 600 :"
  ARGS -N 600 -t 64 -c 2 -g 2 --weft-device_type=emu --weft-device_prefetch=0
       --weft-device_urgent_stream=0 --weft-device_streams=4 --weft-device_inflight=1 --check)
# With devices the panel is multiplied by inverted factors by default
# (--trsm-inv 2); --trsm-inv 0 keeps a TRSM a tile, 1 multiplies every one.
weft_app_test(potrf_emu_g2_trsm_solve EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 2 NB= 64 N= 600 :"
  ARGS -N 600 -t 64 -c 2 -g 2 --weft-device_type=emu --trsm-inv 0 --check)
weft_app_test(potrf_emu_g2_trsm_inv1 EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 2 NB= 64 N= 600 :"
  ARGS -N 600 -t 64 -c 2 -g 2 --weft-device_type=emu --trsm-inv 1 --check)
# Small GEMMs go out in batches by the class's batch body (device_batch,
# device_batch_elems; 64 x 64 tiles qualify), each device counting its
# batches; device_batch=1 turns batching off.
weft_app_test(potrf_emu_g2_batch EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "weft\\[0\\.1\\] stats: emu1: .* [1-9][0-9]* batches \\([1-9][0-9]* tasks\\)"
         "weft\\[0\\.2\\] stats: emu2: .* [1-9][0-9]* batches \\([1-9][0-9]* tasks\\)"
  ARGS -N 600 -t 64 -c 2 -g 2 --weft-device_type=emu --weft-device_batch=8 --weft-show_stats=1 --check)
weft_app_test(potrf_emu_g2_no_batch EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "weft\\[0\\.1\\] stats: emu1: .* 0 batches \\(0 tasks\\)"
         "weft\\[0\\.2\\] stats: emu2: .* 0 batches \\(0 tasks\\)"
  ARGS -N 600 -t 64 -c 2 -g 2 --weft-device_type=emu --weft-device_batch=1 --weft-show_stats=1 --check)
weft_app_test(potrf_emu_check_first EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 2 NB= 100 N= 700 :"
  ARGS -N 700 -t 100 -c 2 -g 2 --nruns 2 --weft-device_type=emu --check-first)
# -g 0 opens no device (CUDA not even probed) and runs on the host.
weft_app_test(potrf_g0 EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 0 "
  ARGS -N 300 -t 64 -c 2 -g 0 --check)
# A count the user set is not overridden by -g: too few is a clear error.
weft_app_test(potrf_emu_g2_user_count EXE weft-potrf FAIL
  EXPECT "asked for -g 2 accelerators but this rank has 1 emu device.*device_emu_enabled=1 set by --weft-device_emu_enabled"
  ARGS -N 300 -t 64 -g 2 --weft-device_type=emu --weft-device_emu_enabled=1)
# ... and too many contradicts -g: refused on every rank, not run on more devices.
weft_app_test(potrf_emu_g1_user_more EXE weft-potrf FAIL RANKS 2
  EXPECT "rank 0: -g 1 and device_emu_enabled=2 set by --weft-device_emu_enabled disagree"
         "rank 1: -g 1 and device_emu_enabled=2 set by --weft-device_emu_enabled disagree"
  ARGS -N 300 -t 64 -P 1 -Q 2 -c 1 -g 1 --weft-device_type=emu --weft-device_emu_enabled=2)
# -g 0 ("CPU only") is a count too: it ran on the two emu devices the user's
# count opened, and printed g = 2; and on devices of a type other than
# device_type (-g sets only its type's count), opened by the environment.
weft_app_test(potrf_emu_g0_user_more EXE weft-potrf FAIL
  EXPECT "rank 0: -g 0 and device_emu_enabled=2 set by --weft-device_emu_enabled disagree"
  ARGS -N 100 -t 16 -g 0 --weft-device_type=emu --weft-device_emu_enabled=2 --check)
weft_app_test(potrf_g0_other_type_env EXE weft-potrf FAIL RANKS 2 ENV WEFT_DEVICE_EMU_ENABLED=2
  EXPECT "rank %r: -g 0 asks for 0 CUDA device\\(s\\) \\(device_type=cuda\\) and no other, but device_emu_enabled opened emu devices"
  ARGS -N 100 -t 16 -c 1 -g 0 --check)
weft_app_test(potrf_emu_g2_user_env EXE weft-potrf FAIL ENV WEFT_DEVICE_EMU_ENABLED=1
  EXPECT "asked for -g 2 accelerators but this rank has 1 emu device.*set by env WEFT_DEVICE_EMU_ENABLED"
  ARGS -N 300 -t 64 -g 2 --weft-device_type=emu)
# A tile larger than the matrix on an accelerator: the workspace follows
# the tile as it will be (N), not -t (weft_init refused a 200 GB workspace,
# naming an environment variable the app had set); -c and --weft-cores
# that disagree are refused (--weft-cores won silently).
weft_app_test(potrf_emu_huge_t EXE weft-potrf EXPECT "${POTRF_PASSED}"
  ARGS -N 50 -t 100000 -c 1 -g 1 --weft-device_type=emu --check)
weft_app_test(potrf_cores_disagree EXE weft-potrf FAIL
  EXPECT "weft-potrf: -c 1 and --weft-cores=2 disagree: give one of them"
  ARGS -N 64 -c 1 --weft-cores=2)
# A device too small for one tile: the prefetch (device bodies only) failed
# the run where every compute class falls back to the host; it falls back
# too now.
foreach(app potrf gemm geqrf)
  weft_app_test(${app}_emu_tiny_device EXE weft-${app} EXPECT ": PASSED$"
    ARGS -N 200 -t 160 --check -c 1 -g 1 --weft-device_type=emu --weft-device_memory_limit=64K)
endforeach()
# Ranks given different -g: named on every rank before any creation (they
# stopped at the first wait with a mismatch of data creations).
set(potrf_mixed $<TARGET_FILE:weft-potrf> -N 256 -t 64 -c 1 --check --weft-device_type=emu)
weft_expect_test(potrf_mixed_g_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-potrf: rank %r: -g [01] here, but the ranks were given -g from 0 to 1"
  --reject "divergent"
  RUN ${WEFT_MPIRUN} -n 1 ${potrf_mixed} -g 1 : -n 1 ${potrf_mixed} -g 0)
# ... and different --seed (each rank generates its tiles from it: a mix of
# two matrices was factorized and the check passed).
weft_expect_test(potrf_mixed_seed_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-potrf: rank %r: --seed (5|42) here, but the ranks were given --seed from 5 to 42"
  --reject "PASSED"
  RUN ${WEFT_MPIRUN} -n 1 ${potrf_mixed} --seed 5 : -n 1 ${potrf_mixed})
# A matrix larger than the node's memory (32 TB) is refused at its
# creation on every rank, named (host_memory_use), where its tiles were
# mapped and the run slid toward the kernel's OOM killer, silent. Refused
# before any tile is allocated, naming the call, the matrix, the rank's
# bytes and its share: each rank zeroed its share first (11.8 GiB a rank
# for 98 s), then refused a tile. host_memory_use=1: the share, and a run
# of the old library, stay small whatever the node.
foreach(n 1 2)
  weft_expect_test(potrf_too_big_for_node_r${n} TIMEOUT 60 RANKS ${n}
    CHECKS --status nonzero --within 20
    --match "^weft\\[%r\\] error: weft_matrix_new(_dist)?: the 2000000 x 2000000 matrix [(]tiles 1000 x 1000[)] needs [0-9]+ bytes [(][0-9.]+ GiB[)] for its tiles on rank %r, past the rank's share of the node's memory for weft's host copies: [0-9]+ bytes [(][0-9.]+ GiB[)], 0 [(]0[.]00 GiB[)] in use [(]parameter host_memory_use, 0 = no limit[)]: refused before any tile was allocated"
    --match "^weft-potrf: cannot create the 2000000 x 2000000 matrix"
    --reject "a tile of"
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:weft-potrf> -N 2000000 -t 1000 -c 1
        --weft-host_memory_use=1)
endforeach()
# ... and a different -t on one rank (named as "different task sequences"
# in the matrix's generation, where the first difference showed).
set(mixed_t $<TARGET_FILE:weft-getrf> -N 256 -c 1)
weft_expect_test(getrf_mixed_t_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-getrf: rank %r: -t (32|[(]not given[)]) here, but the ranks were given -t from [(]not given[)] to 32"
  --reject "task sequences"
  RUN ${WEFT_MPIRUN} -n 1 ${mixed_t} -t 32 : -n 1 ${mixed_t})
# ... and --dist (a common flag no table of the app's lists: not compared,
# the ranks were told only that they made different data creations).
weft_expect_test(getrf_mixed_dist_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-getrf: rank %r: --dist (cyclic|reflected) here, but the ranks were given --dist from cyclic to reflected: give every rank the same --dist"
  --reject "data creations"
  RUN ${WEFT_MPIRUN} -n 1 ${mixed_t} --dist cyclic : -n 1 ${mixed_t})
# ... and the app's own flags (gemm's -M, potrf's --trsm-inv, posv's
# --nrhs, geqrf's --tree): named, where the ranks were told only that they
# "made different data creations".
set(mixed_own_cases "gemm#-M#-M 100#-M (100|[(]not given[)])" "potrf#--trsm-inv#--trsm-inv 1#--trsm-inv (1|[(]not given[)])"
    "posv#--nrhs#--nrhs 3#--nrhs (3|256)" "geqrf#--tree#--tree flat#--tree (flat|[(]not given[)])")
foreach(c IN LISTS mixed_own_cases)
  string(REPLACE "#" ";" f "${c}")
  list(GET f 0 app)
  list(GET f 1 flag)
  list(GET f 2 given)
  list(GET f 3 said)
  separate_arguments(given UNIX_COMMAND "${given}")
  set(mixed_own $<TARGET_FILE:weft-${app}> -N 128 -t 32 -c 1)
  weft_expect_test(${app}_mixed_own_flag_r2 TIMEOUT 60 RANKS 2
    CHECKS --status nonzero
    --match "^weft-${app}: rank %r: ${said} here, but the ranks were given ${flag} from"
    --reject "data creations|task sequences|PASSED"
    RUN ${WEFT_MPIRUN} -n 1 ${mixed_own} ${given} : -n 1 ${mixed_own})
endforeach()
# A rank that refuses its command line stops every rank (app_driver.h;
# the others went on alone and met its absence as "ranks inserted
# different task sequences").
set(potrf_refused $<TARGET_FILE:weft-potrf> -N 100 -t 20 -c 1)
weft_expect_test(potrf_refused_one_rank_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-potrf: unknown option '--bogus'"
  --match "^weft-potrf: rank 1: another rank refused its command line [(]see its message[)]: stopping"
  --reject "task sequences|data creations"
  RUN ${WEFT_MPIRUN} -n 1 ${potrf_refused} --bogus : -n 1 ${potrf_refused})
# A bare switch before an app flag: the apps' scan before weft_init took the
# flag for the switch's value ("--weft-show_stats -g 1" ran on no device,
# "--weft-show_stats -c 1" on every core, both silently).
weft_app_test(potrf_switch_before_g EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 1 " "stats: rank 0: [0-9]+ tasks on 1 cores \\+ 1 devices"
  ARGS -N 200 -t 64 --check --weft-device_type=emu --weft-show_stats -c 1 --weft-show_stats -g 1)
# --check and --check-first together (the last one won silently); a
# malformed --weft-cores beside -c is named as malformed, not as a
# disagreement.
weft_app_test(potrf_check_both EXE weft-potrf FAIL
  EXPECT "weft-potrf: --check and --check-first: give one of them"
  ARGS -N 64 --check --check-first)
# A flag given twice with two values (the last one won silently: "-N 256
# -N 128" ran N=128), said on every rank; the same value twice passes.
weft_expect_test(potrf_flag_twice_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero --count "^weft-potrf: -N given twice, as '256' and then '128': give it once" 2
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:weft-potrf> -N 256 -t 64 -c 1 -N 128 --check)
# --probe-gpus reads nothing else: other words, malformed ones included,
# passed silently.
# The probe's own settings are not the user's: no warning of them (a GPU-less
# machine heard that device_memory_limit=16M does nothing).
weft_expect_test(potrf_probe_quiet TIMEOUT 60
  CHECKS --status 0 --match "^cuda_devices= [0-9]+$" --reject "warning"
  RUN $<TARGET_FILE:weft-potrf> --probe-gpus)
weft_expect_test(potrf_probe_extra_args TIMEOUT 60
  CHECKS --status 1 --match "^weft-potrf: --probe-gpus takes no other argument [(]'-N' given[)]"
  RUN $<TARGET_FILE:weft-potrf> --probe-gpus -N abc)
weft_app_test(potrf_flag_twice_same EXE weft-potrf EXPECT "${POTRF_PASSED}" "N= 256 :"
  ARGS -N 256 -t 64 -c 1 -N 256 --check)
weft_app_test(potrf_cores_malformed EXE weft-potrf FAIL
  EXPECT "parameter cores: 'abc' is not an integer"
  ARGS -N 64 -c 1 --weft-cores=abc)
# -g 1 of the default type (cuda) where there is no GPU: weft_init names
# the missing devices and the program what -g asked for. Skipped on GPU
# machines, where the same run succeeds (potrf_cuda_g1).
weft_app_test(potrf_cuda_absent EXE weft-potrf GPUS none FAIL
  EXPECT "device_cuda_enabled=1 asks for" "weft-potrf: weft_init failed .*-g 1 asked weft for 1 CUDA device"
  ARGS -N 1024 -t 256 -g 1 --check)
# On GPUs (skipped where weft finds too few CUDA devices).
weft_app_test(potrf_cuda_g1 EXE weft-potrf GPUS 1 TIMEOUT 300
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 1 NB= 1024 N= 8192 :"
  ARGS -g 1 --check -N 8192 -t 1024)
# Without -t on a GPU the tile follows N (app_cli_auto_nb): one rank with
# one GPU takes N up to 16384 as one tile (odd N too), 1024 above; two
# ranks sharing the GPU keep 1024 at 8192; on emu devices and CPUs it stays
# the default (potrf_emu_*).
weft_app_test(potrf_cuda_auto_nb_4096 EXE weft-potrf GPUS 1 TIMEOUT 300
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 1 NB= 4096 N= 4096 :"
  ARGS -g 1 --check -N 4096)
weft_app_test(potrf_cuda_auto_nb_5001 EXE weft-potrf GPUS 1 TIMEOUT 300
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 1 NB= 5001 N= 5001 :"
  ARGS -g 1 --check -N 5001 --nruns 2)
weft_app_test(potrf_cuda_auto_nb_16384 EXE weft-potrf GPUS 1 TIMEOUT 300
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 1 NB= 16384 N= 16384 :"
  ARGS -g 1 --check -N 16384)
weft_app_test(potrf_cuda_auto_nb_20000 EXE weft-potrf GPUS 1 TIMEOUT 300
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 1 NB= 1024 N= 20000 :"
  ARGS -g 1 --check -N 20000)
weft_app_test(potrf_cuda_auto_nb_2ranks EXE weft-potrf RANKS 2 GPUS 1 TIMEOUT 300
  ENV CUDA_VISIBLE_DEVICES=0
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 2 1 1 NB= 1024 N= 8192 :"
  ARGS -g 1 --check -N 8192 -P 2 -Q 1)
weft_app_test(potrf_emu_default_nb EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 1 NB= 256 N= 1100 :"
  ARGS -g 1 --weft-device_type=emu --check -N 1100 -c 1)
weft_app_test(potrf_cuda_g2 EXE weft-potrf GPUS 2 TIMEOUT 300
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 2 NB= 1024 N= 8192 :"
  ARGS -g 2 --check -N 8192 -t 1024)
# Two ranks on one GPU without MPS (a pipe directory where no daemon
# listens): the first of them says that their kernels take turns.
weft_app_test(potrf_cuda_share_time_sliced EXE weft-potrf RANKS 2 GPUS 1 TIMEOUT 300
  ENV CUDA_VISIBLE_DEVICES=0 CUDA_MPS_PIPE_DIRECTORY=/nonexistent/weft-test-mps
  EXPECT "${POTRF_PASSED}" "cuda1 is shared by 2 ranks of this node and runs one process's kernels at a time"
  ARGS -g 1 --check -N 3000 -t 512 -P 2 -Q 1)
# 512 x 512 tiles: the GEMMs go out in batches (cublasDgemmBatched).
weft_app_test(potrf_cuda_g1_batch EXE weft-potrf GPUS 1 TIMEOUT 300
  EXPECT "${POTRF_PASSED}" "weft\\[0\\.1\\] stats: cuda1: .* [1-9][0-9]* batches \\([1-9][0-9]* tasks\\)"
  ARGS -g 1 --check -N 6000 -t 512 --weft-show_stats=1)
# cuBLAS's TRSM a tile (--trsm-inv 0), and the inverted factors with a
# partial last tile, on GPUs.
weft_app_test(potrf_cuda_g1_trsm_solve EXE weft-potrf GPUS 1 TIMEOUT 300
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 1 NB= 1024 N= 7000 :"
  ARGS -g 1 --check -N 7000 -t 1024 --trsm-inv 0)
weft_app_test(potrf_cuda_g2_partial EXE weft-potrf GPUS 2 TIMEOUT 300
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 1 2 NB= 1024 N= 7000 :"
  ARGS -g 2 --check -N 7000 -t 1024)
# --preload (the default with CUDA devices): the taskpool that generates the
# first matrix also factorizes a small one of 2 max(P,Q) + 1 tiles a side on
# the devices (3 x 3 here: 6 fills and 12 factorization tasks with
# --trsm-inv 1 beside the 671 of the run); the run's factor still checks out,
# on one rank and on two.
weft_app_test(potrf_emu_preload EXE weft-potrf
  EXPECT "${POTRF_PASSED}" "stats: rank 0: 689 tasks"
  ARGS -N 600 -t 64 -c 2 -g 1 --weft-device_type=emu --weft-show_stats=1 --check --preload 1)
weft_app_test(potrf_emu_preload_2ranks EXE weft-potrf RANKS 2 TIMEOUT 180
  EXPECT "${POTRF_PASSED}"
  ARGS -N 600 -t 64 -P 2 -Q 1 -c 1 -g 1 --weft-device_type=emu --check --preload 1 --nruns 2)
# A refused command line is named on every rank, each exiting non-zero
# (before, ranks other than 0 exited without a line): an unknown flag and a
# grid that does not match the ranks, on 2 ranks.
weft_expect_test(potrf_bad_flag_2ranks TIMEOUT 60 RANKS 2
  CHECKS --status clean --count "unknown option '--bogus'" 2
  RUN ${WEFT_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:weft-potrf> -c 1 --bogus)
# Without -P and -Q the grid follows the rank count (2 ranks: 2 x 1); with
# one of them the other is its cofactor.
weft_app_test(potrf_default_grid_2ranks EXE weft-potrf RANKS 2
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 2 1 0 NB= 64 N= 300 :"
  ARGS -N 300 -t 64 -c 1 --check)
weft_app_test(potrf_default_grid_q EXE weft-potrf RANKS 3
  EXPECT "${POTRF_PASSED}" "dpotrf PxQxg= 1 3 0 NB= 64 N= 300 :"
  ARGS -N 300 -t 64 -c 1 -Q 3 --check)
# --help of every dense app says so (all five said "default 1 x 1").
foreach(app potrf getrf geqrf gemm posv)
  weft_app_test(${app}_help_grid EXE weft-${app}
    EXPECT "^  -P <p>, -Q <q> process grid, P\\*Q = ranks \\(default: from the rank count" ARGS --help)
endforeach()
weft_expect_test(potrf_bad_grid_2ranks TIMEOUT 60 RANKS 2
  CHECKS --status clean --count "P\\*Q must equal the number of ranks" 2
  RUN ${WEFT_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:weft-potrf> -c 1 -P 3 -Q 1 -N 100)

# An accelerator that fails in the middle of the factorization, as a GPU
# after a kernel faults (fault_inject device_fail, docs/SEMANTICS.md
# section 3): on 2 ranks the device of rank 1 only, on 1 rank one of two
# devices. Every rank names the task and the device, the run ends (no
# hang, no crash in weft_fini) and exits non-zero.
weft_app_test(potrf_emu_device_fail_r2 FAIL EXE weft-potrf RANKS 2 TIMEOUT 90
  EXPECT "^weft\\[%r\\] error: taskpool potrf failed: rank 1: (task gemm #[0-9]+ failed on device emu1|send of data)"
         "^weft\\[1\\.1\\] error: device emu1 failed: the completion event of task gemm #[0-9]+ reported an error"
         "^weft-potrf: dpotrf failed"
  ARGS -N 512 -t 64 -P 2 -Q 1 -g 1 -c 1 --check --weft-device_type=emu
       --weft-fault_inject=device_fail:gemm:3@1)
# A staged receive whose copy of a chunk into the device fails: every rank's
# failure line says what failed (it said "internal error" alone on the
# ranks that did not see it). Which of rank 1's copies is the second
# depends on timing (a task's stage-in, whose failure is then named, or a
# chunk), so the line may name either; it names the copy.
weft_app_test(potrf_emu_staged_copy_fault_r2 FAIL EXE weft-potrf RANKS 2 TIMEOUT 90
  EXPECT "^weft\\[%r\\] error: taskpool potrf failed: rank 1: .*failed.*: (fault_inject: the copy of data [0-9]+ from device [0-9] to device [0-9] fails|the device copy of a chunk failed)"
  ARGS -N 300 -t 64 -P 2 -Q 1 -g 1 -c 1 --check --weft-device_type=emu --weft-comm_transport=staged
       --weft-fault_inject=device_copy:2@1)
# A staged send that fails part-way through its chunks (a post of rank 0
# fails, many chunks of 4 KiB a tile): the receiver cancels the receives
# still posted. One of them could have completed in the same MPI_Testsome
# as the sender's ABORT, its request already MPI_REQUEST_NULL: MPI_Cancel
# of it aborted the job (MPI_ERR_REQUEST, 9 runs in 10). Every rank now
# names the failed send (or, where that post was a receive's, the receive).
weft_expect_test(potrf_emu_staged_abort_mid_r2 TIMEOUT 90 RANKS 2
  CHECKS --status clean
    --match "^weft\\[%r\\] error: taskpool potrf failed: rank 0: (send of data [0-9]+ v[0-9]+ to|receive of data [0-9]+ v[0-9]+ from) rank 1 failed: posting "
    --reject "MPI_Cancel|MPI_ERR"
  RUN ${WEFT_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:weft-potrf> -N 700 -t 96 -P 2 -Q 1
      -g 1 -c 1 --check --weft-device_type=emu --weft-comm_node_split=rank
      --weft-comm_transport=staged --weft-comm_staged_chunk=4K --weft-fault_inject=comm_post:50@0)
# A device_memory_limit below the zone's unit is named as the cause (the
# line said the device had 1 GiB free, and to raise the limit or the use).
weft_app_test(potrf_emu_limit_below_unit FAIL EXE weft-potrf RANKS 2 TIMEOUT 60
  EXPECT "^weft\\[%r\\] error: emu1: no memory for its zone: device_memory_limit=8 is below the 256 bytes of the zone's smallest unit"
  ARGS -N 600 -t 96 -g 1 -c 1 --check --weft-device_type=emu --weft-device_memory_limit=8)
# A share too small for the zone's unit: the line gives the share's
# parameter and the remedies that apply (it told one rank to run fewer ranks
# and to raise an unset limit, and left out device_emu_memory).
weft_app_test(potrf_emu_share_below_unit FAIL EXE weft-potrf TIMEOUT 60
  EXPECT "^weft\\[0\\] error: emu1: no memory for its zone: .*its share [(]device_memory_use=6%[)] is below the 256 bytes of the zone's smallest unit [(]raise device_memory_use or device_emu_memory; an emu device's memory is a file in /dev/shm, as large as its free space at most: free space there[)]$"
  ARGS -N 31 -t 4 -g 1 -c 1 --check --weft-device_type=emu --weft-device_emu_memory=4K
    --weft-device_memory_use=6)
weft_app_test(potrf_emu_device_fail_g2 FAIL EXE weft-potrf TIMEOUT 60
  EXPECT "^weft\\[0\\] error: taskpool potrf failed: rank 0: task [a-z]+ #[0-9]+ failed"
         "^weft\\[0\\] error: weft_fini: device emu[12] failed during the run"
         "^weft-potrf: dpotrf failed"
  ARGS -N 512 -t 64 -g 2 -c 1 --check --weft-device_type=emu
       --weft-fault_inject=device_fail:syrk:2)
# A dead device fails every task in flight or queued on it (about 90 here): the
# first 8 are named, the others counted and their number said at weft_fini.
weft_expect_test(potrf_emu_device_fail_many TIMEOUT 60
  CHECKS --status 1
    --count "^weft\\[0\\.1\\] error: task [a-z]+ #[0-9]+ failed on device emu1: " 8
    --match "failed on device emu1: .*. the later tasks failing there are counted, not named"
    --match "^weft\\[0\\] error: weft_fini: device emu1 failed during the run .its errors are above.: [0-9]+ tasks failed on it in all, the first 8 named above"
  RUN $<TARGET_FILE:weft-potrf> -N 1200 -t 64 -g 1 -c 2 --check --weft-device_type=emu
      --weft-fault_inject=device_fail:100)
# The watchdog counts device work in flight (tasks staging in, eviction
# write-backs) as running: copies held 1.2 s each, with watchdog_s=1 and
# watchdog_abort, were called a stall and ended a correct run.
# (No --check: its tasks' copies doubled the test's time, 22 s, at 1.2 s each.)
weft_app_test(potrf_emu_watchdog_slow_copies EXE weft-potrf TIMEOUT 120
  EXPECT "^\\[[*]+\\] TIME[(]s[)] .* dpotrf"
  ARGS -N 256 -t 128 -g 1 -c 1 --weft-device_type=emu --weft-device_memory_limit=200K
       --weft-device_emu_copy_delay_us=1200000 --weft-watchdog_s=1 --weft-watchdog_abort=1)
# A taskpool holds its tasks in proportion to those in flight and its
# data, not to all it ran: each tile's record kept every task that read it
# until the wait (a finished panel tile is read by a whole row of updates
# and never written again), and -N 150 -t 1 (560,000 tasks, 1552 bytes
# each) held 870 MB; now about 50 MB. show_stats says the peak.
weft_expect_test(potrf_metadata_bounded TIMEOUT 120
  CHECKS --status 0 --match "residual = .* : PASSED"
  --match "^weft\\[0\\] stats: rank 0: runtime metadata: peak ([0-9]|[1-9][0-9])[.][0-9] MiB [(][0-9]+ bytes a task[)]"
  RUN $<TARGET_FILE:weft-potrf> -N 150 -t 1 -c 1 --check --weft-show_stats=1)
# --check on one rank, --check-first on another: named by the flags (the
# line read "--check 2 here, but the ranks were given --check from 1 to 2").
weft_expect_test(potrf_check_kinds_differ_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft-potrf: rank %r: check --check(-first)? here, but the ranks were given check from --check to --check-first: give every rank the same check"
  RUN ${WEFT_MPIRUN} -n 1 $<TARGET_FILE:weft-potrf> -N 64 -c 1 --check
      : -n 1 $<TARGET_FILE:weft-potrf> -N 64 -c 1 --check-first)
