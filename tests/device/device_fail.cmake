# Devices that fail mid-run (fault_inject device_fail; included by
# CMakeLists.txt): failed bodies on a stream, the dead device's tasks and
# lost versions, versions that come home from another rank, a body still
# running on the device.

# Several bodies failing on an emu device before their events are asked:
# each task fails and its successor is cancelled (earlier failures were
# lost behind a later one on the same stream).
weft_test_exe(test_device_fail_many test_device_fail_many.c)
weft_expect_test(device_fail_many TIMEOUT 60
  CHECKS --status 0 --match "^test_device_fail_many: .*PASSED$"
  RUN $<TARGET_FILE:test_device_fail_many> --weft-cores=1 --weft-device_emu_enabled=1)

# An accelerator that fails in the middle of a run, as a GPU after a kernel
# faults (fault_inject device_fail:N, test_device_fail.c): the failing
# task and its device named, every wait (also of later taskpools) fails
# fast, the later tasks meant for the dead device run on the host (tiles 2
# and 3, which lost nothing, are bumped there in the second wave), the tiles whose newest version only the dead device held are named
# lost (at the write-back, and at a send to another rank: the send used to
# read the dead device's memory), weft_fini fails on every rank and returns.
# On 2 ranks only rank 0's device dies (tiles from rank 1 land in its host
# memory then: they used to fail landing on the dead device, and each was
# pulled through it by ipc first, failing with a warning); when rank 1
# received tile 0's newest version before the device died, it comes home
# and the later waves succeed (it was said lost for good); the 4th
# completion of a bump there
# (bump #2 or #3: two chains complete in either order).
weft_test_exe(test_device_fail test_device_fail.c)
# One execution stream: tasks complete in the order they start, so the
# N-th completion (device_fail:N) is the same task in every run (with
# several streams a loaded machine reordered them and another tile was lost).
set(devfail $<TARGET_FILE:test_device_fail> --weft-cores=1 --weft-device_emu_enabled=1
    --weft-device_cuda_enabled=0 --weft-device_streams=1)
weft_expect_test(device_fail_r1 TIMEOUT 60 RANKS 1
  CHECKS --status 2 --rank-within 10
    --match "^weft\\[0\\.1\\] error: device emu1 failed: the completion event of task bump #[0-9]+ reported an error \\(injected"
    --match "^weft\\[0\\] error: taskpool first failed: rank 0: task bump #[0-9]+ failed on device emu1"
    --match "^weft\\[0\\] error: data [0-9]+: its newest version v[0-9]+ is only on device emu1, which failed: the version is lost"
    --match "^weft\\[0\\] error: taskpool first: the write-back of data [0-9]+ into user memory failed: its newest version v[0-9]+ is lost with the device"
    --reject "written back at the next wait"
    --match "^test_device_fail rank 0: wait of first returned -9"
    --match "^test_device_fail rank 0: wait of second returned -9"
    --match "^test_device_fail rank 0: wait of moves returned -9"
    --match "^weft\\[0\\.1\\] warning: task bump #10 and the later tasks meant for emu1, which failed, run on the host instead"
    --match "^test_device_fail rank 0: tile [0-9] holds [0-9]+$"
    --match "^weft\\[0\\] error: weft_fini: device emu1 failed during the run"
    --match "^test_device_fail rank 0: weft_fini returned -9"
    --match "^device_fail: [0-9]+ checks, 0 failures: PASSED"
  RUN ${devfail} --weft-fault_inject=device_fail:3)
# Two devices, the first dies: a task on the second that reads a tile
# whose newest version only the dead one held fails naming it (a peer copy
# out of the dead device's memory used to bump it silently), the other
# tiles are bumped there.
weft_expect_test(device_fail_g2 TIMEOUT 60 RANKS 1
  CHECKS --status 2 --rank-within 10
    --match "^weft\\[0\\.1\\] error: device emu1 failed: the completion event of task bump #[0-9]+ reported an error"
    --match "^weft\\[0\\.2\\] error: task bump #[0-9]+ failed: an input of it was lost with another device that failed"
    --match "^test_device_fail rank 0: wait of other returned -9"
    --match "^test_device_fail rank 0: tile [0-9] holds [0-9]+$"
    --reject "failed on device emu2"
    --match "^device_fail: [0-9]+ checks, 0 failures: PASSED"
  RUN $<TARGET_FILE:test_device_fail> --weft-cores=1 --weft-device_emu_enabled=2
      --weft-device_cuda_enabled=0 --weft-device_streams=1 --weft-fault_inject=device_fail:3)
# Both ranks print long error lines at once: mpiexec may splice one
# rank's line into the other's, so the per-rank lines are not anchored.
weft_expect_test(device_fail_r2 TIMEOUT 90 RANKS 2
  CHECKS --status nonzero --rank-within 10
    --match "^weft\\[0\\.1\\] error: device emu1 failed: the completion event of task bump #[23] reported an error"
    --match "weft\\[%r\\] error: taskpool first failed: rank 0: (task bump #[23] failed on device emu1|send of data [0-9]+ v[0-9]+ to rank 1 failed)"
    --match "^weft\\[0\\] error: data 0: its newest version v[12] is only on device emu1, which failed: the version is lost"
    --match "(weft\\[0\\] warning: data 0: its version v[0-9]+, lost here with the device that failed, comes home from rank 1|weft\\[%r\\] error: taskpool moves failed: rank 0: send of data 0 v[0-9]+ to rank 1 failed)"
    --match "test_device_fail rank %r: wait of first returned -9"
    --match "test_device_fail rank %r: wait of second returned (-9|0)"
    --match "test_device_fail rank %r: wait of moves returned (-9|0)"
    --match "test_device_fail rank %r: weft_fini returned -9"
    --match "weft\\[1\\] error: weft_fini: rank 0 failed at weft_fini [(].*[)]: weft_fini: device emu1 failed during the run.* weft_fini returns -9 [(].*[)], the run's first error$"
    --reject "receive of data [0-9]+ v[0-9]+ from rank 1: the device copy"
    --reject "ipc pull"
  RUN ${WEFT_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 ${devfail} --weft-fault_inject=device_fail:bump:4@0)

weft_test_exe(test_device_fail_home test_device_fail_home.c)
# A version its device lost, held by another rank, comes home at the wait
# (it was said lost, and every later task on it failed).
weft_expect_test(device_fail_home_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[0\\] warning: data 0: its version v1, lost here with the device that failed, comes home from rank 1$"
    --match "^test_device_fail_home rank 0: x = 3$"
    --match "^test_device_fail_home: [0-9]+ checks, 0 failures: PASSED"
  RUN ${WEFT_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:test_device_fail_home> --weft-cores=1
      --weft-device_emu_enabled=1 --weft-device_cuda_enabled=0 --weft-device_streams=1
      --weft-fault_inject=device_fail:2@0)

# A NEW data's only version lost with the device: said so (it was said the
# next taskpool starts from the owner's copy, which was on that device).
weft_test_exe(test_device_fail_none test_device_fail_none.c)
weft_expect_test(device_fail_none TIMEOUT 60
  CHECKS --status 0
    --match "^weft\\[0\\] warning: data 0: its version v1 was held only where the task that wrote it next failed, on a device that failed with it: no version is left, the data has no contents until a task or a host acquire writes it with WEFT_W$"
    --reject "starts from the owner's copy"
    --match "^test_device_fail_none: out = 7$"
    --match "^test_device_fail_none: [0-9]+ checks, 0 failures: PASSED"
  RUN $<TARGET_FILE:test_device_fail_none> --weft-cores=1 --weft-device_emu_enabled=1
      --weft-device_cuda_enabled=0 --weft-device_streams=1 --weft-fault_inject=device_fail:2)
# The device fails (the quick task's completion) while the slow task's body
# runs on it: the wait returns once that body ended (it returned while the
# body ran, and weft_fini unmapped the zone under it).
weft_expect_test(device_fail_inflight TIMEOUT 60
  CHECKS --status 0 --match "wait returned -9 .*, the slow body (had ended|never started)"
    --match "^device_fail_inflight: [0-9]+ checks, 0 failures: PASSED"
  RUN $<TARGET_FILE:test_device_fail_inflight> --weft-cores=1 --weft-device_emu_enabled=1
      --weft-device_cuda_enabled=0 --weft-device_streams=1 --weft-fault_inject=device_fail:quick:1)
weft_test_exe(test_device_fail_inflight test_device_fail_inflight.c)
