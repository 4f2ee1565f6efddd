# What weft says of its devices (included by CMakeLists.txt): leak reports,
# an absent device type, show_stats lines and device names, leaks at
# weft_fini with two taskpools open, and the tasks counted as run.

# Readers exact and no leak; a planted leak is reported.
weft_device_test(leak SRC test_device_leak.c INTERNAL VARIANTS emu2 tile cuda)
# A device type asked for and absent: weft_init fails and says so.
weft_test(device_absent SRC test_device_absent.c ENV "WEFT_DEVICE_CUDA_ENABLED=16")
set_tests_properties(device_absent PROPERTIES PASS_REGULAR_EXPRESSION
  "device_cuda_enabled=16 asks for.*CUDA.*\n(.*\n)*device_absent: PASSED")
# show_stats: one line per device at weft_fini.
weft_device_test(stats EXE test_device_peer ENV WEFT_SHOW_STATS=1 VARIANTS emu2)
set_tests_properties(device_stats PROPERTIES PASS_REGULAR_EXPRESSION
  "weft\\[0\\.1\\] stats: emu1: [0-9]+ tasks \\(busy [0-9.]+ s\\), H2D [0-9.]+ MiB, D2H [0-9.]+ MiB, D2D [0-9.]+ MiB, [0-9]+ evictions \\([0-9]+ write-backs\\), peak [0-9.]+ of [0-9.]+ MiB")
# A device capped at 4 KiB: its figures keep two digits ("peak 0.0 of 0.0
# MiB" before), still plain digits for the patterns above.
weft_expect_test(device_stats_small_cap TIMEOUT 60
  CHECKS --match "emu1: [1-9][0-9]* tasks .* [1-9][0-9]* evictions .*peak 0[.]0039 of 0[.]0039 MiB"
  RUN $<TARGET_FILE:weft-potrf> -N 256 -t 8 -c 1 --weft-device_emu_enabled=1
      --weft-device_memory_limit=4K --weft-show_stats --check)
# One name a device (issue 15 item 12): emu device 2 of the API is "emu2" in
# the log prefix (weft[0.2]), in show_stats and in the trace's tracks.
set(potrf_names $<TARGET_FILE:weft-potrf> -N 400 -t 100 -c 2 -g 2 --weft-device_type=emu
  --weft-show_stats=1 --weft-trace=device_names)
weft_expect_test(device_names TIMEOUT 60
  CHECKS --remove "device_names.rank*.json" --match "weft\\[0\\.1\\] stats: emu1: [1-9]"
         --match "weft\\[0\\.2\\] stats: emu2: [1-9]" --reject "emu0" --match "^emu1 manager$"
         --match "^emu2 manager$"
  RUN ${potrf_names} --then grep -o "emu[0-9] manager" device_names.rank0.json)
# Two taskpools open at once on an emu device over registered data never
# released: weft_fini reported their stale device copies as leaks (-1).
weft_test(device_two_pools_fini SRC test_device_two_pools_fini.c ARGS --weft-cores=1
  --weft-device_emu_enabled=1 TIMEOUT 60)
# A task whose stage-in failed, or whose failure was injected, is not
# counted as run (tasks_run, the device's tasks); one whose body failed is,
# on both.
weft_test(device_run_count SRC test_device_run_count.c ARGS --weft-cores=1
  --weft-device_emu_enabled=1 --weft-device_streams=1 --weft-fault_inject=device_copy:1
  TIMEOUT 60)
weft_test(device_run_count_injected EXE test_device_run_count ARGS injected --weft-cores=1
  --weft-device_emu_enabled=1 --weft-device_streams=1 --weft-fault_inject=task:inc:1 TIMEOUT 60)
weft_test(device_run_count_body EXE test_device_run_count ARGS body --weft-cores=1
  --weft-device_emu_enabled=1 --weft-device_streams=1 TIMEOUT 60)
