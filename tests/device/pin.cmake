# Pinned host memory (included by CMakeLists.txt): host copies from pinned
# slabs (host_pin auto, off, on, a pinning that fails, in core) and the
# application's own weft_host_pin / weft_host_unpin.

# Host copies from pinned slabs (host_pin=auto, the default, pins them once
# they outgrow the device zone) and from slabs never pinned (host_pin=off):
# out of core on an emu device, the
# write-back targets and the matrix's tiles come from the pool, the factor
# checks out either way, and show_stats says what was pinned.
set(PIN_POTRF -N 1024 -t 64 -c 2 -g 1 --weft-device_type=emu --weft-show_stats=1 --check
  --weft-device_memory_limit=2M)
weft_app_test(device_host_pin EXE weft-potrf TIMEOUT 180 ENV WEFT_DEVICE_CUDA_ENABLED=0
  EXPECT "residual = .*PASSED" "stats: host copies: [1-9][0-9.]* MiB chosen for pinning of [1-9][0-9.]* MiB in slabs \\([1-9][0-9]* slabs made\\); emulated devices only: no page is locked"
  ARGS ${PIN_POTRF})
weft_expect_test(device_host_pin_off TIMEOUT 180 ENV WEFT_DEVICE_CUDA_ENABLED=0
  CHECKS --match "residual = .*PASSED" --match "host copies: 0.0 MiB (pinned|chosen for pinning) of [1-9]"
  RUN $<TARGET_FILE:weft-potrf> ${PIN_POTRF} --weft-host_pin=off)
# A pinning that fails (fault_inject host_pin:2, the second slab): one
# warning, that slab and the later ones stay pageable, the run goes on and
# its factor checks out.
weft_app_test(device_host_pin_fault EXE weft-potrf TIMEOUT 180 ENV WEFT_DEVICE_CUDA_ENABLED=0
  EXPECT "residual = .*PASSED" "fault_inject: pinning [0-9]* bytes of host copies fails"
         "host_pin: pinning [0-9]* MiB of host memory for emu1 failed"
  ARGS ${PIN_POTRF} --weft-host_pin=on --weft-fault_inject=host_pin:2)
# In core (no limit) auto pins nothing: pinning would cost more than the
# one copy in of each tile gains.
weft_app_test(device_host_pin_incore EXE weft-potrf TIMEOUT 180 ENV WEFT_DEVICE_CUDA_ENABLED=0
  EXPECT "residual = .*PASSED" "stats: host copies: 0.0 MiB (pinned|chosen for pinning) of [1-9][0-9.]* MiB in slabs"
  ARGS -N 1024 -t 64 -c 2 -g 1 --weft-device_type=emu --weft-show_stats=1 --check)
# weft_host_pin / weft_host_unpin: bad arguments, overlaps and unknown
# unpins refused and named; pinned user memory through the devices and back;
# a range left pinned undone at fini; without devices the same rules.
weft_device_test(user_pin SRC test_user_pin.c VARIANTS emu1 emu2 cuda)
weft_test(device_user_pin_nodev EXE test_user_pin ENV DEVTEST_NODEV=1 WEFT_DEVICE_CUDA_ENABLED=0
  ARGS --weft-cores=2)
