# Device copies that fail (fault_inject device_copy; included by
# CMakeLists.txt): a stage-in, a device-to-device copy, a write-back into the
# user's memory retried until one succeeds, and registration over a copy
# whose write-back fails.

# An injected failure of a device copy (fault_inject device_copy:N): the
# stage-in of the first task (N=1: its round loses every increment), a
# device-to-device copy (N=3: the last task of round 0 fails), the
# write-back into the user's memory at the wait (N=4 and N=8: the wait
# returns the write-back's status, the tile continues from its device copy).
# Arguments: the round that fails, its wait's status, the final value.
weft_test_exe(test_device_copy_fault test_device_copy_fault.c)
foreach(c "1;0;-9;6" "3;0;-9;8" "4;0;-10;9" "8;1;-10;9")
  list(GET c 0 n)
  list(GET c 1 round)
  list(GET c 2 status)
  list(GET c 3 final)
  weft_test(device_copy_fault_${n} EXE test_device_copy_fault TIMEOUT 60
    ARGS ${round} ${status} ${final} --weft-cores=1 --weft-device_emu_enabled=2
         --weft-fault_inject=device_copy:${n})
endforeach()
# Registering user device memory over a runtime copy that holds the only
# newest version, whose write-back fails: refused, named as such, nothing
# lost (test_device_register_lost.c).
weft_test(device_register_lost SRC test_device_register_lost.c TIMEOUT 60
  ARGS --weft-cores=1 --weft-device_emu_enabled=1 --weft-fault_inject=device_copy:1)
# A write-back into the user's memory that fails (copy 4) is tried again
# at the next wait, acquire, release or weft_fini until one succeeds
# (test_device_writeback_retry.c); "lost": every try fails, the release,
# the last try for a released data, says so.
# "acquire_write": the acquire that settles it leaves the host copy the
# only current one, so what the user writes next reaches the next task.
weft_test_exe(test_device_writeback_retry test_device_writeback_retry.c)
set(wb_args --weft-cores=1 --weft-device_emu_enabled=2)
foreach(mode wait acquire acquire_write release fini)
  weft_test(device_writeback_retry_${mode} EXE test_device_writeback_retry TIMEOUT 60
    ARGS ${mode} ${wb_args} --weft-fault_inject=device_copy:4)
endforeach()
# Settled at weft_fini, the version's device copy goes as at a wait (it
# was reported a leak of the unreleased data, which a run without the
# failure does not report).
set_tests_properties(device_writeback_retry_fini PROPERTIES
  FAIL_REGULAR_EXPRESSION "leak at weft_fini|runtime-owned copies|check failed")
weft_test(device_writeback_retry_again EXE test_device_writeback_retry TIMEOUT 60
  ARGS again ${wb_args} --weft-fault_inject=device_copy:4,device_copy:5)
# On 2 ranks (x is rank 0's): both ranks' waits fail, then both succeed.
weft_test(device_writeback_retry_wait_r2 EXE test_device_writeback_retry TIMEOUT 60 RANKS 2
  ARGS wait ${wb_args} --weft-fault_inject=device_copy:4@0)
weft_test(device_writeback_retry_again_r2 EXE test_device_writeback_retry TIMEOUT 60 RANKS 2
  ARGS again ${wb_args} --weft-fault_inject=device_copy:4@0,device_copy:5@0)
weft_expect_test(device_writeback_retry_lost TIMEOUT 60
  CHECKS --status 0
         --match "taskpool round: the write-back of data 0 into user memory failed: .*. the memory does not hold its newest version v3, which stays on device 1"
         --match "weft_data_release: the write-back of data 0 into user memory failed again .*: its newest version v3 is lost, the memory the release gives back does not hold it"
         --reject "weft_fini: the write-back"
  RUN $<TARGET_FILE:test_device_writeback_retry> lost ${wb_args}
      --weft-fault_inject=device_copy:4,device_copy:5,device_copy:6)
weft_expect_test(device_writeback_retry_acquire_w TIMEOUT 60
  CHECKS --status 0
    --match "^weft\\[0\\] warning: data 0: the host acquire with WEFT_W gives up its pending write-back [(]version v3[)]"
    --reject "is settled"
    --match "^test_device_writeback_retry acquire_w: x = 101$"
  RUN $<TARGET_FILE:test_device_writeback_retry> acquire_w ${wb_args}
      --weft-fault_inject=device_copy:4)
# The release is the last try: memory registered anew after it keeps what
# the user and the new data's tasks wrote through later waits.
weft_test(device_writeback_retry_reregister EXE test_device_writeback_retry TIMEOUT 60
  ARGS reregister ${wb_args} --weft-fault_inject=device_copy:4,device_copy:5)
