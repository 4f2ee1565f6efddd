# Distributed task graphs (included by CMakeLists.txt): dependencies and
# random graphs over ranks and emu devices, transfer counts, ranks that part
# ways (halted, mismatched sequences), a tile written away from its owner,
# and a stranger's random graph generator.

foreach(cores 1 2 4)
  weft_test(stf_deps_c${cores} SRC test_deps.c ARGS --weft-cores=${cores} TIMEOUT 120)
endforeach()
foreach(n 2 3 4)
  weft_test(stf_dist_dag_r${n} SRC test_dist_dag.c RANKS ${n} ARGS --weft-cores=1 TIMEOUT 180)
endforeach()
# The same random graphs over host and emu devices (dev=1: classes with
# host and device bodies, device only and CPU only, random home devices
# and device hints), with reductions (redux=1) and random affinity, rank
# and priority (place=1), over zones that force evictions, cut into two
# taskpools; one case a transport. tests/stf/test_dist_dag.c says how to
# run many seeds.
weft_test(stf_dist_dag_emu2_r2 EXE test_dist_dag RANKS 2 TIMEOUT 120
  ARGS --weft-cores=1 --weft-device_emu_enabled=2 --weft-device_memory_limit=400K
       tasks=600 waves=2 dev=1 redux=1 place=1)
weft_test(stf_dist_dag_emu1_r3_staged EXE test_dist_dag RANKS 3 TIMEOUT 120
  ARGS --weft-cores=1 --weft-device_emu_enabled=1 --weft-device_memory_limit=300K
       --weft-comm_transport=staged tasks=600 waves=2 dev=1 redux=1 place=1 seed=11)
set_tests_properties(stf_dist_dag_emu2_r2 stf_dist_dag_emu1_r3_staged PROPERTIES
  PASS_REGULAR_EXPRESSION "[(][1-9][0-9]* on devices, [1-9][0-9]* evictions[)]"
  FAIL_REGULAR_EXPRESSION "FAILED|differs")
foreach(n 2 3 4)
  weft_test(stf_dist_counts_r${n} SRC test_dist_counts.c RANKS ${n} ARGS --weft-cores=1)
endforeach()
# Apart ranks: no body starts once the wait said so, later insertions are
# refused (host workers, then an emu device's bodies).
weft_test(stf_diverged_halt SRC test_diverged_halt.c RANKS 2 ARGS --weft-cores=1 TIMEOUT 60)
weft_test(stf_diverged_halt_emu EXE test_diverged_halt RANKS 3
  ARGS --weft-cores=1 --weft-device_emu_enabled=1 TIMEOUT 60)
weft_test(stf_diverged_halt_spread EXE test_diverged_halt RANKS 2
  ARGS spread --weft-cores=2 --weft-device_emu_enabled=2 TIMEOUT 60)
weft_expect_test(stf_diverged_halt_stuck TIMEOUT 60 RANKS 2
  CHECKS --count "test_diverged_halt stuck rank [01]: wait -8, fini -8: PASSED" 2
    --match "^weft\\[0\\] warning: the ranks were found apart: waiting for 1 task body still running"
    --match "^weft\\[0\\] warning: .* [(]at most 3 s, halt_wait_s[)]"
    --match "^weft\\[0\\] error: 1 task body is still running after 3 s since the ranks were found apart"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_diverged_halt> stuck --weft-cores=1
      --weft-halt_wait_s=3)
# Asleep most of its time (a body held until the halt's bound): one core,
# so that ctest runs another test beside it (the CI's 30 minutes).
set_tests_properties(stf_diverged_halt_stuck PROPERTIES PROCESSORS 1)
weft_test(stf_dist_mismatch SRC test_dist_mismatch.c RANKS 2 ARGS --weft-cores=1 TIMEOUT 60)
set_tests_properties(stf_dist_mismatch PROPERTIES
  PASS_REGULAR_EXPRESSION "first divergent task is #3, which this rank inserted as 'beta'")
# Transfer counts of a small distributed Cholesky against the closed form:
# on a 1 x 2 grid each off-diagonal tile (m,k) is sent once, by the rank of
# column k % 2, after its TRSM; for 6 x 6 tiles rank 0 sends 5+3+1 = 9
# activations and rank 1 sends 4+2 = 6; final versions are already home.
# (The apps' default deal, reflected, has no such closed form.)
weft_expect_test(stf_potrf_counts TIMEOUT 60
  CHECKS --status any --match "rank 0: network: 9 activations" --match "rank 1: network: 6 activations"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:weft-potrf> -N 600 -t 100 -P 1 -Q 2 -c 1 --dist cyclic --weft-show_stats=1)
# A tile written away from its owner is sourced by its owner after the wait
# that sent it home (the writer's copy is freed then): activations counted
# per rank, the value read everywhere.
weft_test_exe(test_dist_away test_dist_away.c)
weft_expect_test(stf_dist_away_r3 TIMEOUT 60 RANKS 3
  CHECKS --match "^rank %r: sent [0-9]+ activations [(]expected [0-9]+[)], read 12 [(]expected 12[)]$"
  RUN ${WEFT_MPIRUN} -n 3 $<TARGET_FILE:test_dist_away> --weft-cores=1)
# A stranger's random graph generator (test_stf_random.c): the run that
# crashed in weft_fini (a disagreeing taskpool freed after the devices
# closed) ends with a clean non-zero status on every rank.
weft_test_exe(test_stf_random test_stf_random.c)
target_link_libraries(test_stf_random PRIVATE MPI::MPI_C)
weft_expect_test(stf_random_fini_after_mismatch_r4 TIMEOUT 120 RANKS 4
  CHECKS --status clean --within 90 --reject "Segmentation fault|Signal: "
  RUN ${WEFT_MPIRUN} -n 4 $<TARGET_FILE:test_stf_random> seed=43 --weft-cores=1
      --weft-device_emu_enabled=2 --weft-comm_eager_limit=0 --weft-fault_inject=comm_post:7
      lenient=1 cont=1 ntp=5 ntasks=30 maxf=5 ndata=10)
# The same generator checked strictly (every value against its model) on a
# few seeds: 30 tasks a taskpool over 4 taskpools, 30% of them failing by
# fault_inject (which runs no code, so the model knows what every data
# holds), reductions, 1-4 ranks, 0-2 emu devices, eager limit 0 on some.
foreach(c "5;2;1;" "7;4;1;" "10;3;2;" "11;4;2;" "15;4;0;--weft-comm_eager_limit=0" "20;1;2;")
  list(GET c 0 seed)
  list(GET c 1 n)
  list(GET c 2 emu)
  list(GET c 3 extra)
  weft_expect_test(stf_random_seed${seed}_r${n} TIMEOUT 90 RANKS ${n}
    CHECKS --status 0 --within 60 --match "^OK seed ${seed}$" --reject "ERROR|FAIL"
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_stf_random> seed=${seed} ntp=4 ntasks=30
        ndata=10 maxf=4 boom=30 inj=1 redux=1 --weft-cores=1 --weft-device_emu_enabled=${emu}
        --weft-fault_inject=task:inj:1+ ${extra})
endforeach()
