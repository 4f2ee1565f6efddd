# The application's memory and devices (included by CMakeLists.txt): user
# device memory registered as a MANAGED copy, stage-in/stage-out functions
# on one rank and across ranks, and user memory between taskpools.

# User device memory as a MANAGED copy: used in place, never evicted.
weft_device_test(register SRC test_device_register.c ENV WEFT_DEVICE_MEMORY_LIMIT=64K VARIANTS emu2)
# current=1 on a rank that does not own the data is refused there (it
# replaced the owner's version silently); current=0 is taken.
weft_test_exe(test_device_register_stale test_device_register_stale.c)
weft_test(device_register_owner_r2 SRC test_device_register_owner.c RANKS 2 TIMEOUT 60
  ARGS --weft-cores=1 --weft-device_emu_enabled=1)
set_tests_properties(device_register_owner_r2 PROPERTIES
  PASS_REGULAR_EXPRESSION "rank 0: host 6: PASSED"
  FAIL_REGULAR_EXPRESSION "FAILED")
# Current contents given there reach the user's registered host memory at
# once (they waited for a wait of a taskpool using the data).
weft_test_exe(test_device_register_current test_device_register_current.c)
weft_expect_test(device_register_current TIMEOUT 60
  CHECKS --match "^test_device_register_current: .*PASSED$"
  RUN $<TARGET_FILE:test_device_register_current> --weft-cores=1 --weft-device_emu_enabled=1)
# The same with that copy into the user's memory failing (fault_inject): the
# registration returns the error, named, and the next wait copies again.
weft_expect_test(device_register_current_fail TIMEOUT 60
  CHECKS --match "^test_device_register_current: registration -[0-9]+, host 1 at once .*PASSED$"
  --match "^weft\\[0\\] error: weft_data_register_device: data [0-9]+: registered, but copying its contents into the user's host memory failed [(].*[)]: retried at the next wait"
  RUN $<TARGET_FILE:test_device_register_current> fail --weft-cores=1
      --weft-device_emu_enabled=1 --weft-fault_inject=device_copy:1)
# Keeping device copies turned off again: the user's next write is read.
weft_test_exe(test_device_keep_off test_device_keep_off.c)
weft_expect_test(device_keep_off TIMEOUT 60
  CHECKS --status 0 --match "^test_device_keep_off: .*PASSED$"
  RUN $<TARGET_FILE:test_device_keep_off> --weft-cores=1 --weft-device_emu_enabled=1)
# Such memory on a non-owner no longer holds the data after the wait: the
# owner's host write in between was hidden by it (a device task read the
# old version).
weft_expect_test(device_register_stale_r2 TIMEOUT 60 RANKS 2
  CHECKS --match "^test_device_register_stale rank %r: .* 101 [(]101 wanted[)]: PASSED$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_device_register_stale> --weft-cores=1
      --weft-device_emu_enabled=1)
# Custom stage-in/stage-out functions of a tile (a row-major host layout
# transposed on the way to and from the device).
weft_device_test(stage_fn SRC test_device_stage_fn.c VARIANTS emu1)
# A stage function that calls what belongs to the main thread (a wait):
# refused, the copy and its task fail, the wait returns, no hang.
weft_test(device_stage_fn_misuse EXE test_device_stage_fn ARGS --misuse TIMEOUT 60
  ENV "${WEFT_DEVICE_ENV_emu1}")
# A stage-out function that returns -7: the wait fails, the log names the
# function, the data and the value (it said only "a task body failed").
weft_expect_test(device_stage_fn_fails TIMEOUT 60 ENV "${WEFT_DEVICE_ENV_emu1}"
  CHECKS --status 0
  --match "error: the stage-out function of data 0 [(]weft_data_set_stage[)] returned -7: the copy from device 1 to device 0 fails"
  --match "^test_device_stage_fn: stage-in [0-9]+, stage-out [0-9]+ calls: PASSED$"
  RUN $<TARGET_FILE:test_device_stage_fn> --fails)
# The same functions across ranks: a data with stage functions travels in its host layout,
# through host copies (a task on another rank's device, and a CPU task there reading what
# the owner's device wrote); weft moved device copies straight between ranks, skipping
# both functions. Again with the staged transport asked for.
weft_test(device_stage_fn_r2 SRC test_device_stage_fn_ranks.c RANKS 2 TIMEOUT 60
  ENV "${WEFT_DEVICE_ENV_emu1}")
weft_test(device_stage_fn_r2_staged EXE test_device_stage_fn_ranks RANKS 2 TIMEOUT 60
  ENV "${WEFT_DEVICE_ENV_emu1};WEFT_COMM_TRANSPORT=staged")
# Functions set on the owner only: named at the next wait on both ranks.
weft_expect_test(device_stage_fn_one_sided TIMEOUT 60 ENV "${WEFT_DEVICE_ENV_emu1}" RANKS 2
  CHECKS --count "^weft\\[[01]\\] error:   rank 1 made #[0-9]+ as 'weft_data_set_stage\\(data 0, stage_in set, stage_out set\\)'" 2
         --count "^test_device_stage_fn_ranks rank [01]: wait=-8" 2
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_device_stage_fn_ranks> --one-sided)
# User memory between taskpools (issue 13 item 1): user writes to registered
# and wrapped memory reach the next device task; acquire/release and
# weft_data_host_ptr on runtime tiles; H2D counts show each stage-in.
weft_device_test(acquire SRC test_device_acquire.c VARIANTS emu1 emu2 cuda)
