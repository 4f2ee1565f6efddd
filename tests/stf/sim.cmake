# Simulation mode (sim_nranks, sim_rank; included by CMakeLists.txt): host
# access after a simulated taskpool, simulated against real transfers, the
# refusals, and a rank's cost at scale.

# Host access after a simulated taskpool: the scratch stands for versions
# the kept tasks wrote (test_sim_acquire.c); run real, the values are read.
weft_test_exe(test_sim_acquire test_sim_acquire.c)
weft_expect_test(stf_sim_acquire TIMEOUT 60
  CHECKS --status 0 --match "^test_sim_acquire: rw acquire 0 value" --match "^test_sim_acquire: redux acquire 0 value"
         --match "^test_sim_acquire: two sizes written$"
  RUN $<TARGET_FILE:test_sim_acquire> --weft-cores=1 --weft-sim_nranks=2 --weft-sim_rank=0)
weft_expect_test(stf_sim_acquire_real TIMEOUT 60 RANKS 2
  CHECKS --status 0 --match "^test_sim_acquire: rw acquire 0 value 3$" --match "^test_sim_acquire: redux acquire 0 value 3$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_sim_acquire> --weft-cores=1)

# Simulation mode (sim_nranks, sim_rank; docs/SCALE.md): each rank of a real
# 2 x 2 run sends and receives exactly what the simulation of that rank
# infers (weft-potrf with inverted diagonal factors, whose NEW tiles travel
# too; weft-gemm-stress, whose C tiles go from rank to rank).
set(sim_line "^rank %r: real sends [1-9][0-9]* recvs [1-9][0-9]*, simulated .*: same$")
weft_expect_test(stf_sim_vs_real_potrf TIMEOUT 180 RANKS 4
  CHECKS --match "${sim_line}" --match "^sim_vs_real: PASSED$"
  RUN sh ${CMAKE_CURRENT_SOURCE_DIR}/sim_vs_real.sh 4 $<TARGET_FILE:weft-potrf>
      -N 1000 -t 100 -P 2 -Q 2 -c 1 --trsm-inv 1 -- ${WEFT_MPIRUN})
weft_expect_test(stf_sim_vs_real_gemm_stress TIMEOUT 180 RANKS 4
  CHECKS --match "${sim_line}" --match "^sim_vs_real: PASSED$"
  RUN sh ${CMAKE_CURRENT_SOURCE_DIR}/sim_vs_real.sh 4 $<TARGET_FILE:weft-gemm-stress>
      -t 64 --depth 8 --width 6 -P 2 -Q 2 -c 1 -- ${WEFT_MPIRUN})
# One rank of 1 x 1 keeps every task it walks; a simulation refuses to run
# on several MPI processes and a rank outside the simulated ones.
weft_expect_test(stf_sim_one_rank TIMEOUT 60
  CHECKS --match "^weft sim: rank 0 of 1: walked 275 tasks, kept 275, sends 0, recvs 0, insert [0-9.]+ s, metadata [1-9][0-9]* bytes$"
  RUN $<TARGET_FILE:weft-potrf> -N 1000 -t 100 --weft-sim_nranks=1)
weft_expect_test(stf_sim_rank_range TIMEOUT 60
  CHECKS --status clean --match "sim_rank=4 is not a rank of sim_nranks=4"
  RUN $<TARGET_FILE:weft-potrf> -N 1000 -t 100 -P 2 -Q 2 --weft-sim_nranks=4 --weft-sim_rank=4)
# sim_rank alone was ignored (a real run, not the simulation asked for).
weft_expect_test(stf_sim_rank_alone TIMEOUT 60
  CHECKS --status clean --match "weft_init failed on rank 0: sim_rank=3 without sim_nranks"
  RUN $<TARGET_FILE:weft-potrf> -N 100 -t 50 --weft-sim_rank=3)
# A check in a simulation judged results no body made: it failed, with no
# line at all on a simulated rank other than 0. Refused, named; weft-gemm's
# count of activations (nothing is sent in a simulation) is not compared.
foreach(app potrf getrf geqrf gemm posv gemm-stress)
  weft_expect_test(stf_sim_check_${app} TIMEOUT 60
    CHECKS --status clean
    --match "^weft-${app}: --check needs the task bodies to run, and a simulation \\(sim_nranks\\) runs none"
    RUN $<TARGET_FILE:weft-${app}> -t 16 -c 1 -Q 2 --weft-sim_nranks=2 --weft-sim_rank=1 --check)
endforeach()
weft_expect_test(stf_sim_gemm TIMEOUT 60
  CHECKS --status 0 --match "^weft sim: rank 1 of 2: walked"
  RUN $<TARGET_FILE:weft-gemm> -N 64 -t 16 -c 1 -Q 2 --weft-sim_nranks=2 --weft-sim_rank=1)
weft_expect_test(stf_sim_one_process TIMEOUT 60
  CHECKS --status clean --match "a simulation is one process, but MPI started 2"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:weft-potrf> -N 100 -t 50 --weft-sim_nranks=4)
# A rank's cost follows its own work (docs/SCALE.md): simulated as rank 136
# of 16 x 16, weft-potrf walks the same 47840 tasks as alone, keeps about its
# share and holds at most 1/40 of the metadata of the rank that keeps them
# all (1/50 measured; 1/29 when every rank kept an n-bit holder set and an
# STF record for every tile, and 16 bytes a walked task for the check).
weft_expect_test(stf_sim_scale_potrf TIMEOUT 120
  CHECKS --match "^weft sim: rank 136 of 256: walked 47840 tasks" --match "^sim_scale: PASSED$"
  RUN sh ${CMAKE_CURRENT_SOURCE_DIR}/sim_scale_check.sh $<TARGET_FILE:weft-potrf> 16 136 40
      -N 8192 -t 128 -c 1)
