# Tasks and their insertion (included by CMakeLists.txt): handles and
# accessors, the array form, placement, flops estimates, class bodies,
# repeated flows, two taskpools on one data, insertion's error words, a
# body's stack.

# Handles of the wrong kind, NULL or released: a clear error, no crash, no
# hang (issue 13 item 4).
weft_test(stf_handles SRC test_handles.c ARGS --weft-cores=2 TIMEOUT 60)
# Checked task accessors (issue 13 item 5): an index or size out of range
# fails the task even when its body returns 0; on the host and on an emu
# device.
foreach(c good flow value size)
  weft_test(stf_accessors_${c} SRC test_accessors.c ARGS ${c} --weft-cores=2 TIMEOUT 60)
endforeach()
weft_test(stf_accessors_flow_device EXE test_accessors ARGS flow_device --weft-cores=2 TIMEOUT 60
  ENV "WEFT_DEVICE_EMU_ENABLED=1;WEFT_DEVICE_CUDA_ENABLED=0")
# The array form of insertion (issue 15 item 2): a stencil whose tasks have
# 2 or 3 flows, inserted as arrays and with the variadic form: same values
# (against a sequential loop), same per-rank task and activation counts.
weft_test_exe(test_insert_array test_insert_array.c)
foreach(n 1 2 4)
  weft_passed_test(stf_insert_array_r${n} test_insert_array ${n})
endforeach()
# Placement options (issue 15 item 5): WEFT_ON_RANK (a chain across the
# ranks: values, per-rank task and activation counts) and WEFT_DEVICE_HINT
# (2 emu devices a rank: the device each task ran on, device counters);
# ranks that give one task different ranks are named at the wait.
# A task with a repeated flow runs on its first written data's owner, in
# the order given, with or without a WEFT_REDUX flow (test_place_repeated.c).
weft_test_exe(test_place_repeated test_place_repeated.c)
weft_expect_test(stf_place_repeated_r2 TIMEOUT 60 RANKS 2
  CHECKS --match "^test_place_repeated rank 0: .*ranks 0 0 0 .*PASSED$"
    --match "^test_place_repeated rank 1: r = 2 .*PASSED$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_place_repeated> --weft-cores=1)
weft_test_exe(test_placement test_placement.c)
foreach(n 1 2 4)
  weft_passed_test(stf_placement_r${n} test_placement ${n})
endforeach()
foreach(n 1 2)
  weft_passed_test(stf_placement_emu_r${n} test_placement ${n}
    ARGS --weft-device_emu_enabled=2 --weft-device_emu_memory=16M)
endforeach()
weft_expect(stf_placement_disagree fail 2
  LINES "^weft\\[%r\\] error: taskpool chain: .*first divergent task is #0, which this rank inserted as 'chain' \\(ranks differing there from rank 0: 1\\)"
        "^test_placement rank %r: wait=-8 fini=-8"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_placement> --disagree 1 --weft-cores=1)
# The same with insertions held back from 8 pending tasks: rank 1's chain
# waits for a transfer rank 0 never sets up, and the hold waited for ever
# (a timeout) before it gave up after a second of nothing moving (twice
# here: at 8, then at 16).
weft_expect(stf_placement_disagree_held fail 2
  LINES "^weft\\[%r\\] error: taskpool chain: .*first divergent task is #0, which this rank inserted as 'chain' \\(ranks differing there from rank 0: 1\\)"
        "^test_placement rank %r: wait=-8 fini=-8"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_placement> --disagree 1 --weft-cores=1
      --weft-sched_pending_max=8)
# A flops estimate that is no finite number >= 0 fails its task, said.
weft_test(stf_flops_check SRC test_flops_check.c ARGS --weft-cores=1 TIMEOUT 60)
weft_test(stf_flops_check_emu EXE test_flops_check ARGS --weft-cores=1 --weft-device_emu_enabled=2
  TIMEOUT 60)
# Every rank's failure line carries the reason (logged in the task's span).
weft_expect_test(stf_flops_check_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[1\\] error: taskpool flops failed: rank 0: task one #0 failed: invalid argument [(]data 0 written[)]: its class's flops function returned nan"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_flops_check> --weft-cores=1)
# A class with no body is refused at insertion on every rank; one with a
# CUDA body only, run on a host, fails as a task (not an internal error).
weft_test(stf_class_bodies SRC test_class_bodies.c ARGS --weft-cores=1 TIMEOUT 60)
weft_test(stf_class_bodies_r2 EXE test_class_bodies RANKS 2 ARGS --weft-cores=1 TIMEOUT 60)
# Two taskpools alive at once on the same data (docs/SEMANTICS.md section
# 1): the second's task is refused on every rank until the first is waited
# for; its result was lost silently on emu devices before.
weft_test(stf_two_pools_emu SRC test_two_pools.c
  ARGS --weft-cores=1 --weft-device_emu_enabled=1 --weft-device_emu_memory=8M TIMEOUT 60)
weft_test(stf_two_pools_emu_r3 EXE test_two_pools RANKS 3
  ARGS --weft-cores=1 --weft-device_emu_enabled=1 --weft-device_emu_memory=8M TIMEOUT 60)
# One tile named in two flows of one task (W then R, R then W, RW twice):
# the task reads it when any flow reads and writes it when any writes, on
# the host, on emu devices (a W flow first skipped the stage-in, an R flow
# first dropped the write) and across ranks (eager and rendezvous tiles).
weft_test(stf_repeated_flows_r1 SRC test_repeated_flows.c ARGS --weft-cores=1 TIMEOUT 60)
weft_test(stf_repeated_flows_emu_r1 EXE test_repeated_flows
  ARGS --weft-cores=1 --weft-device_emu_enabled=1 TIMEOUT 60)
weft_test(stf_repeated_flows_emu_r2 EXE test_repeated_flows RANKS 2
  ARGS --weft-cores=1 --weft-device_emu_enabled=2 TIMEOUT 60)
weft_test(stf_repeated_flows_emu_r3_rdv EXE test_repeated_flows RANKS 3
  ARGS 100 --weft-cores=1 --weft-device_emu_enabled=1 TIMEOUT 60)
# The words of two insertion errors and of a failed task without data.
weft_test_exe(test_insert_messages test_insert_messages.c)
weft_expect_test(stf_insert_messages TIMEOUT 60 RANKS 2
  CHECKS --status 0 --match "^test_insert_messages rank %r: done$"
         --count "insert nothing: value argument 1: a NULL pointer for 8 bytes: pass the address of the value" 2
         --count "insert nothing: value argument 1 [(]65 bytes, value 1 of the task[)]: at most 8 values of at most 64 bytes" 2
         --count "insert nothing: value argument 9 [(]8 bytes, value 9 of the task[)]: at most 8 values" 2
         --count "insert nothing: more than 64 arguments before the 0 that ends them" 2
         --count "insert nothing: arguments 1 and 2 both give WEFT_ON_RANK: a task takes it once" 2
         --count "insert nothing: arguments 1 and 3 both give WEFT_DEVICE_HINT: a task takes it once" 2
         --count "insert nothing: arguments 1 and 2 both give WEFT_AFFINITY: a task takes it once [(]it runs where one data lives: mark that one[)]" 2
         --count "taskpool messages failed: rank 0: task fails #[0-9]+ returned -7 [(]no data[)]" 2
         --reject "[(][)]"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_insert_messages> --weft-cores=1)
# A rank out of memory for a task it keeps (fault_inject task_keep): the
# task is refused and named there and in every rank's report (they said
# only that the ranks had inserted different tasks; a task whose receives
# were not set up ran into "internal error"). Dealt cyclically, rank 1's
# third task is a TRSM, which receives.
weft_expect_test(stf_insert_keep_fail_r2 TIMEOUT 60 RANKS 2
  CHECKS --status nonzero
  --match "^weft\\[1\\] error: insert trsm: keeping it: out of host memory. the task is refused"
  --match "^weft\\[%r\\] error:   rank 1 refused task trsm: out of host memory"
  --reject "internal error"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:weft-potrf> -N 600 -t 200 -c 1 --check --dist cyclic
    --weft-fault_inject=task_keep:3@1)
weft_expect_test(stf_insert_keep_fail_r1 TIMEOUT 60
  CHECKS --status nonzero
  --match "^weft\\[0\\] error: insert fill: keeping it: out of host memory. the task is refused"
  RUN $<TARGET_FILE:weft-potrf> -N 600 -t 200 -c 1 --check --weft-fault_inject=task_keep:3)
# A body with 6 MiB on its stack under `ulimit -s unlimited` (glibc's
# threads then get 2 MiB: SIGSEGV without a word), on a worker and on an emu
# device's thread; skipped where the hard limit is lower.
weft_test_exe(test_body_stack test_body_stack.c)
foreach(v host emu)
  set(extra --weft-cores=1)
  if(v STREQUAL "emu")
    list(APPEND extra --weft-device_emu_enabled=1)
  endif()
  add_test(NAME stf_body_stack_${v} COMMAND sh -c "ulimit -s unlimited 2>/dev/null || exit 77; exec \"$@\"" sh $<TARGET_FILE:test_body_stack> ${extra})
  weft_test_limits(stf_body_stack_${v} 60 "")
endforeach()
