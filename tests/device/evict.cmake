# Device memory past its limit (included by CMakeLists.txt): eviction
# policies (next_use, lru) and their rules, out-of-core Cholesky, prefetch
# ahead, and eviction write-backs that fail.

# Oversubscription: each device holds ~10% of the matrix (320K of 3.2M);
# with device_alloc=tile each copy is freed the way it was allocated and
# evictions still happen within the memory limit.
weft_device_test(oversub SRC test_device_oversub.c TIMEOUT 180 ENV WEFT_DEVICE_MEMORY_LIMIT=320K
  VARIANTS emu2 tile cuda)
# The same with device_evict=lru (the default is next_use).
weft_device_test(oversub_lru EXE test_device_oversub TIMEOUT 180
  ENV WEFT_DEVICE_MEMORY_LIMIT=320K WEFT_DEVICE_EVICT=lru VARIANTS emu2 tile)
# Which copy goes (device_evict): a chain reading 4 tiles in a cycle through
# a zone of 4 tiles (one the chain's token); H2D bytes and evictions exactly
# as simulated for each policy. One task in flight, so that nothing but the
# policy decides.
set(EVICT_ENV WEFT_DEVICE_MEMORY_LIMIT=128K WEFT_DEVICE_INFLIGHT=1 WEFT_DEVICE_STREAMS=1
  WEFT_DEVICE_URGENT_STREAM=0 WEFT_DEVICE_BATCH=1)
weft_device_test(evict SRC test_device_evict.c INTERNAL ENV ${EVICT_ENV} VARIANTS emu1)
weft_device_test(evict_lru EXE test_device_evict ENV ${EVICT_ENV} WEFT_DEVICE_EVICT=lru
  VARIANTS emu1)
# Clean before dirty at equal distance, no use left first (DEVTEST_EVICT_RULES);
# then the comm thread's room for a receive: a clean victim or none, never a
# write-back.
weft_device_test(evict_rules EXE test_device_evict ENV ${EVICT_ENV} DEVTEST_EVICT_RULES=1
  VARIANTS emu1)
weft_device_test(evict_rules_lru EXE test_device_evict ENV ${EVICT_ENV} DEVTEST_EVICT_RULES=1
  WEFT_DEVICE_EVICT=lru VARIANTS emu1)
# Out-of-core Cholesky (weft-potrf, a quarter of the matrix fits; 1 and 2 emu
# devices, 2 ranks): right under both policies, and next_use moves at most
# 0.75 (0.9 across ranks, where sends add their own pushouts) of the bytes
# lru moves, with fewer evictions (evict_potrf.sh).
set(EVICT_POTRF sh ${CMAKE_CURRENT_SOURCE_DIR}/evict_potrf.sh)
set(EVICT_ARGS -N 1024 -t 64 --weft-device_type=emu --weft-show_stats=1)
add_test(NAME device_evict_potrf COMMAND ${EVICT_POTRF} 0.75 $<TARGET_FILE:weft-potrf>
  ${EVICT_ARGS} -g 1 -c 2 --weft-device_memory_limit=2M)
add_test(NAME device_evict_potrf_2 COMMAND ${EVICT_POTRF} 0.75 $<TARGET_FILE:weft-potrf>
  ${EVICT_ARGS} -g 2 -c 2 --weft-device_memory_limit=1M)
add_test(NAME device_evict_potrf_2ranks COMMAND ${EVICT_POTRF} 0.9 ${WEFT_MPIRUN}
  ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:weft-potrf> ${EVICT_ARGS} -P 2 -Q 1 -g 1 -c 1
  --weft-device_memory_limit=1M)
foreach(t device_evict_potrf device_evict_potrf_2 device_evict_potrf_2ranks)
  weft_test_limits(${t} 180 "" WEFT_DEVICE_CUDA_ENABLED=0)
endforeach()
set_tests_properties(device_evict_potrf_2ranks PROPERTIES PROCESSORS 2)
# Prefetch ahead (device_prefetch_ahead): inputs of tasks not ready yet come
# in while a gate holds them, final versions only, no more than the window,
# and a tile prefetched then written on the other device is read at its new
# version; off with 0.
weft_device_test(ahead SRC test_device_ahead.c ENV WEFT_DEVICE_PREFETCH_AHEAD=8 VARIANTS emu2)
weft_device_test(ahead_window EXE test_device_ahead ENV WEFT_DEVICE_PREFETCH_AHEAD=2 VARIANTS emu2)
weft_device_test(ahead_off EXE test_device_ahead ENV WEFT_DEVICE_PREFETCH_AHEAD=0 VARIANTS emu2)
# A copy ahead for a task cancelled while the manager's scan made room for
# it (a dirty victim written back): the wait's drain waits for the scan,
# so no copy starts after the wait (the device copy was made current again
# after the host's: the user's write was lost, and a reader reported a leak).
weft_test_exe(test_device_ahead_drain test_device_ahead_drain.c)
weft_expect_test(device_ahead_drain TIMEOUT 60
  ENV WEFT_DEVICE_CUDA_ENABLED=0
  CHECKS --status 0 --within 30 --count "^test_device_ahead_drain round [0-9]: ok" 3
  --match "^test_device_ahead_drain: ok$" --reject "leak"
  RUN $<TARGET_FILE:test_device_ahead_drain> --weft-device_emu_enabled=1 --weft-cores=1
      --weft-device_emu_memory=160K --weft-device_prefetch_ahead=8 --weft-device_prefetch_share=1
      --weft-device_emu_copy_delay_us=100000)
# Out-of-core Cholesky with prefetch ahead under a small limit (1 and 2 emu
# devices, 2 ranks): the factor checks out and tiles were prefetched.
set(AHEAD_POTRF -t 64 --weft-device_type=emu --weft-show_stats=1 --check
  --weft-device_evict=next_use --weft-device_prefetch_ahead=8)
set(AHEAD_EXPECT "residual = .*PASSED" "stats: emu1: .* [1-9][0-9]* prefetches ahead")
weft_app_test(device_ahead_potrf EXE weft-potrf TIMEOUT 180 ENV WEFT_DEVICE_CUDA_ENABLED=0 EXPECT ${AHEAD_EXPECT}
  ARGS ${AHEAD_POTRF} -N 1024 -c 2 -g 1 --weft-device_memory_limit=2M)
weft_app_test(device_ahead_potrf_2 EXE weft-potrf TIMEOUT 180 ENV WEFT_DEVICE_CUDA_ENABLED=0 EXPECT ${AHEAD_EXPECT}
  "stats: emu2: .* [1-9][0-9]* prefetches ahead" ARGS ${AHEAD_POTRF} -N 1024 -c 2 -g 2 --weft-device_memory_limit=1M)
weft_app_test(device_ahead_potrf_2ranks EXE weft-potrf RANKS 2 TIMEOUT 180 ENV WEFT_DEVICE_CUDA_ENABLED=0 EXPECT ${AHEAD_EXPECT}
  ARGS ${AHEAD_POTRF} -N 1024 -P 2 -Q 1 -g 1 -c 1 --weft-device_memory_limit=1M)
# A zone of three tiles, a task of three, eight tiles ahead asked: the copies
# ahead give way to a task waiting for memory (no livelock, no DEVMEM).
weft_app_test(device_ahead_potrf_tiny EXE weft-potrf TIMEOUT 180 ENV WEFT_DEVICE_CUDA_ENABLED=0
  EXPECT ${AHEAD_EXPECT} ARGS ${AHEAD_POTRF} -N 512 -c 2 -g 1 --weft-device_memory_limit=96K)
# An eviction's write-back that fails (fault_inject device_copy:3, the
# first write-back of weft-potrf out of core on 2 emu devices): the victim
# keeps its newest version on the device and another copy goes instead;
# the run passes, with warnings only (the copy's line was an error). The
# task that wanted the room failed, and the run with it.
set(EVICT_WB_POTRF -N 768 -t 128 -g 2 --check -c 1 --weft-device_type=emu
  --weft-device_emu_memory=600K --weft-device_prefetch_ahead=8 --weft-fault_inject=device_copy:3)
set(EVICT_WB_CHECKS --status 0 --match "residual = .*PASSED" --reject "weft\\[[0-9.]+\\] error:"
  --match "warning: data [0-9]+: the write-back of its newest version v[0-9]+ to host memory, to make room on emu[12], failed .* another copy is evicted instead")
weft_expect_test(device_evict_writeback_fault TIMEOUT 60 ENV WEFT_DEVICE_CUDA_ENABLED=0
  CHECKS ${EVICT_WB_CHECKS} RUN $<TARGET_FILE:weft-potrf> ${EVICT_WB_POTRF})
weft_expect_test(device_evict_writeback_fault_lru TIMEOUT 60 ENV WEFT_DEVICE_CUDA_ENABLED=0
  CHECKS ${EVICT_WB_CHECKS} RUN $<TARGET_FILE:weft-potrf> ${EVICT_WB_POTRF} --weft-device_evict=lru)
# The same on 1 emu device, where copy 20 is the write-back of a victim
# evicted for a prefetch ahead of its task: recovered, a warning (it was an
# error line in a run that passed).
weft_app_test(device_evict_writeback_fault_ahead EXE weft-potrf TIMEOUT 60
  ENV WEFT_DEVICE_CUDA_ENABLED=0
  EXPECT "residual = .*PASSED" "warning: fault_inject: the copy of data [0-9]+ from device 1 to device 0 fails"
  ARGS -N 768 -t 128 -g 1 --check -c 1 --weft-device_type=emu --weft-device_emu_memory=600K
       --weft-device_prefetch_ahead=8 --weft-fault_inject=device_copy:20)
# No other copy can go (a zone of two tiles, one task in flight, both
# dirty victims' write-backs fail): the task that wanted the room fails,
# named as such, and the victims' versions come home at an acquire after
# the wait (test_device_evict_stuck.c).
weft_test_exe(test_device_evict_stuck test_device_evict_stuck.c)
weft_expect_test(device_evict_writeback_stuck TIMEOUT 60
  ENV WEFT_DEVICE_CUDA_ENABLED=0 WEFT_DEVICE_EMU_ENABLED=1 WEFT_CORES=1
      WEFT_DEVICE_MEMORY_LIMIT=64K WEFT_DEVICE_INFLIGHT=1 WEFT_DEVICE_PREFETCH_AHEAD=0
  CHECKS --status 0
    --count "warning: data [01]: the write-back of its newest version v1 to host memory, to make room on emu1, failed" 2
    --match "taskpool stuck failed: rank 0: task fill #2 failed: .*no room on emu1 for data 2: the copies that could be evicted hold the newest version of their data, and writing it back to host memory failed \\(data [01] first"
    --match "^test_device_evict_stuck: wait -[0-9]+$"
    --match "test_device_evict_stuck: [0-9]+ checks, 0 failures: PASSED"
  RUN $<TARGET_FILE:test_device_evict_stuck> --weft-fault_inject=device_copy:1,device_copy:2)
