# Room on a device (included by CMakeLists.txt): a task waiting for copies
# that sends hold (device_room_wait_ms), a device too small for a task's
# tiles, tasks bouncing between full devices, room let go gradually.

# Room on a device kept by a send that waits for a task which needs what
# the device is to make: that task runs on the host after device_room_wait_ms
# (0.5 s here; named once), where it used to fail with WEFT_ERR_DEVMEM on
# both ranks.
weft_test(device_held_r2 SRC test_device_held.c RANKS 2 TIMEOUT 60
  ENV "WEFT_DEVICE_CUDA_ENABLED=0;WEFT_DEVICE_EMU_ENABLED=1;WEFT_CORES=1;WEFT_DEVICE_MEMORY_LIMIT=200K;WEFT_DEVICE_ROOM_WAIT_MS=500")
set_tests_properties(device_held_r2 PROPERTIES
  PASS_REGULAR_EXPRESSION "task make_y #[0-9]+ waited 0.5 s .device_room_wait_ms. for room on emu1 .* it runs on the host instead"
  FAIL_REGULAR_EXPRESSION "check failed|FAILED")
# ---- a device too small for one task's tiles (issue 13, item 10) ----------
weft_device_test(small SRC test_device_small.c TIMEOUT 30 ENV WEFT_DEVICE_EMU_MEMORY=64K
  VARIANTS emu1)
set_tests_properties(device_small PROPERTIES PASS_REGULAR_EXPRESSION
  "task add_dev #[0-9]+ needs 65536 bytes of device memory for its 2 tiles, but the zone of emu1 holds 58880 bytes(.*\n)*device_small: [0-9]+ checks, 0 failures: PASSED")
# Two full emu devices a rank, device-only tasks, tiles moving between two
# ranks: a task that waited for room on each device in turn bounced between
# them for ever; it ends now, right or with the out-of-memory failure named
# (test_devmem_bounce.c). Each wait for room is device_room_wait_ms, 0.3 s
# here (at its 2 s default the run took 10 s).
weft_test_exe(test_devmem_bounce test_devmem_bounce.c)
weft_expect_test(devmem_bounce_r2 TIMEOUT 90 RANKS 2
  CHECKS --status any --within 60
    --match "test_devmem_bounce rank %r: wait returned (0|-9)"
    --count "^devmem_bounce: [0-9]+ checks, 0 failures: PASSED" 2
  RUN ${WEFT_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:test_devmem_bounce> --weft-cores=1
      --weft-device_emu_enabled=2 --weft-device_cuda_enabled=0 --weft-device_memory_limit=1536
      --weft-device_room_wait_ms=300)
# Room on a device held by sends that a slow peer fetches one after
# another (test_device_room_gradual.c: rank 1's ipc pulls, 300 ms each,
# slowed on rank 1 alone): the releases come 300 ms apart, the last about
# 1.2 s after the wait began, with device_room_wait_ms at 600 (300 ms to
# spare for a loaded machine between two releases). The wait
# counts from the last release, and the device-only task runs once all
# are let go; with a fixed 600 ms from the wait's start it failed while
# copies were still being let go. "fail": one copy held 0.6 s, a wait of
# 200 ms: it still ends, naming the parameter.
set(room_exe $<TARGET_FILE:test_device_room_gradual>)
set(room_args --weft-cores=1 --weft-device_emu_enabled=1 --weft-device_cuda_enabled=0
  --weft-device_memory_limit=576K --weft-comm_transport=ipc)
weft_test_exe(test_device_room_gradual test_device_room_gradual.c)
weft_expect_test(device_room_gradual_r2 TIMEOUT 60 RANKS 2 ENV WEFT_DEVICE_EMU_MEMORY=64M
  CHECKS --status 0 --within 30 --reject "error:"
    --match "^test_device_room_gradual: big ran on device 1, [0-9]+ ms after the gate"
    --match "^device_room_gradual rank %r: [0-9]+ checks, 0 failures: PASSED"
  RUN ${WEFT_MPIRUN} -n 1 ${room_exe} 4 ok 600 ${room_args} --weft-device_room_wait_ms=600
    : -n 1 ${room_exe} 4 ok 600 ${room_args} --weft-device_room_wait_ms=600
      --weft-device_emu_copy_delay_us=300000)
weft_expect_test(device_room_stuck_r2 TIMEOUT 60 RANKS 2 ENV WEFT_DEVICE_EMU_MEMORY=64M
  CHECKS --status 0 --within 30
    --match "^weft\\[0\\.1\\] error: task big #[0-9]+: its tiles do not fit in the free part of emu1's zone .* nothing more can be evicted: its copies stayed in use for 0.2 s [(]device_room_wait_ms[)], none let go"
    --match "^device_room_gradual rank %r: [0-9]+ checks, 0 failures: PASSED"
  RUN ${WEFT_MPIRUN} -n 1 ${room_exe} 1 fail 200 ${room_args} --weft-device_room_wait_ms=200
    : -n 1 ${room_exe} 1 fail 200 ${room_args} --weft-device_room_wait_ms=200
      --weft-device_emu_copy_delay_us=600000)
# A task's own copies from its last try, all the zone holds, split its
# free space once the send that held another tile let go
# (test_device_room_split.c): the zone is emptied once more and the task
# runs on the device. It waited device_room_wait_ms for holders that were
# gone, then failed (no host body). The wait (1.5 s) outlasts the send's
# hold (rank 1's pull, 0.3 s) with room to spare on a loaded machine: the
# code before waited it all out and failed whatever its length.
weft_test_exe(test_device_room_split test_device_room_split.c)
set(split_exe $<TARGET_FILE:test_device_room_split>)
set(split_args --weft-cores=1 --weft-device_emu_enabled=1 --weft-device_cuda_enabled=0
  --weft-device_memory_limit=2048 --weft-comm_transport=ipc --weft-device_room_wait_ms=1500)
weft_expect_test(device_room_split_r2 TIMEOUT 60 RANKS 2 ENV WEFT_DEVICE_EMU_MEMORY=64M
  CHECKS --status 0 --within 30 --reject "error:"
    --match "^test_device_room_split: big ran on device 1"
    --match "^device_room_split rank %r: [0-9]+ checks, 0 failures: PASSED"
  RUN ${WEFT_MPIRUN} -n 1 ${split_exe} ${split_args}
    : -n 1 ${split_exe} ${split_args} --weft-device_emu_copy_delay_us=300000)
