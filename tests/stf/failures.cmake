# Failed tasks and what follows (included by CMakeLists.txt): dependents
# cancelled on every rank, the failure's words, good versions brought home
# or restored, bytes a failed body changed, a NEW data whose first writer
# failed, and the recovery's collectives failing in MPI.

# A failed task cancels its dependents on every rank; every rank's wait
# returns WEFT_ERR_TASK and logs the failed task's line (counted: one per
# rank); the next taskpool runs. The body fails, or fault_inject fails it;
# on the host and on an emulated device; eager and rendezvous tiles.
set(fail_line "taskpool chain failed: rank 0: task bump #[0-9]+ returned -42 [(]data 0 written[)]")
function(weft_fail_test name ranks)
  weft_expect_test(${name} TIMEOUT 60 CHECKS --count "${fail_line}" ${ranks}
    RUN ${WEFT_MPIRUN} -n ${ranks} $<TARGET_FILE:test_fail_chain> ${ARGN})
endfunction()
weft_test_exe(test_fail_chain test_fail_chain.c)
weft_fail_test(stf_fail_chain_r2 2 body 4 --weft-cores=1)
weft_fail_test(stf_fail_chain_r3_rdv 3 body 20000 --weft-cores=1)
weft_fail_test(stf_fail_inject_r4 4 inject 4 --weft-cores=1 --weft-fault_inject=task:bump:1@0)
weft_fail_test(stf_fail_emu_r2 2 body 4 --weft-cores=1 --weft-device_emu_enabled=1)
weft_fail_test(stf_fail_emu_inject_r3 3 inject 20000 --weft-cores=1 --weft-device_emu_enabled=1 --weft-fault_inject=task:bump:1@0)
# The line counts the user's tasks cancelled and the transfers weft added
# apart: on each of 2 ranks one task (b += a, a += b) and two transfers
# (a's receive and b's send, or the reverse); it said "3 tasks".
weft_expect_test(stf_fail_chain_counts_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error: ${fail_line}. 1 task cancelled here [(]and 2 transfers[)]$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_fail_chain> body 4 --weft-cores=1)

# The next taskpool after a failure starts from the newest good version
# made on a third rank (it started from the owner's older one).
weft_test_exe(test_fail_good_version test_fail_good_version.c)
foreach(v IN ITEMS "host;1;" "rdv;100;" "emu;1;--weft-device_emu_enabled=1")
  list(GET v 0 name)
  list(GET v 1 nb)
  list(GET v 2 extra)
  weft_test(stf_fail_good_version_${name} EXE test_fail_good_version RANKS 3
    ARGS ${nb} --weft-cores=1 ${extra} TIMEOUT 60)
endforeach()
# A data released before the wait of its failing task still gets its
# good version in its memory (it got the failed body's bytes).
weft_test(stf_fail_released_r2 SRC test_fail_released.c RANKS 2 ARGS 2 --weft-cores=1 TIMEOUT 60)
weft_test(stf_fail_released_emu EXE test_fail_released
  ARGS 0 --weft-cores=1 --weft-device_emu_enabled=1 TIMEOUT 60)
# A good version made away from the owner comes home although a later
# write of it on that rank was cancelled (it was lost silently), with the
# cancelled write on each rank, and on emu devices; a version a failed body
# overwrote is named as gone on every rank.
weft_test_exe(test_fail_cancel_home test_fail_cancel_home.c)
foreach(r 0 1 2)
  weft_test(stf_fail_cancel_home_${r} EXE test_fail_cancel_home RANKS 3 ARGS ${r} --weft-cores=1
    TIMEOUT 60)
endforeach()
weft_test(stf_fail_cancel_home_emu EXE test_fail_cancel_home RANKS 3 ARGS 0 --weft-cores=1
  --weft-device_emu_enabled=1 TIMEOUT 60)
weft_test(stf_fail_cancel_home_destroyed EXE test_fail_cancel_home RANKS 2 ARGS destroyed
  --weft-cores=1 TIMEOUT 60)

# Two failed bodies, no good version left: the line names the bytes the
# data keeps, the owner's, changed by the earlier failed body (it named the
# later body, whose bytes are on rank 0). On the host and on emu devices.
weft_test_exe(test_fail_two_bodies test_fail_two_bodies.c)
foreach(v "host;" "emu;--weft-device_emu_enabled=1")
  list(GET v 0 name)
  list(GET v 1 extra)
  weft_expect_test(stf_fail_two_bodies_${name} TIMEOUT 60 RANKS 2
    CHECKS --status 0
      --match "^weft\\[%r\\] warning: data 0: its version v3 was held only where the task that wrote it next failed, which may have changed its bytes, and the owner's copy [(]rank 1[)] holds what an earlier failed task left in place of v1: no good version is left, the next taskpool starts from that copy [(]the user's memory given to weft for it on rank 1[)]$"
      --match "^test_fail_two_bodies rank 1: insert 0 wait -9 fini -9, X = 13 13 13 13$"
      --match "^test_fail_two_bodies rank 0: insert 0 wait -9 fini -9,"
    RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_fail_two_bodies> --weft-cores=1 ${extra})
endforeach()
# A later write failing on the owner too: the owner's copy holds its bytes,
# not those of the body that wrote v1 next, which the line named; and a
# tile of weft_matrix_new is no user's memory, which the line said.
foreach(v "later_r1;1;later" "later_r2;2;later" "matrix_r2;2;matrix")
  list(GET v 0 name)
  list(GET v 1 n)
  list(GET v 2 mode)
  set(at "rank 0")
  set(mem "")
  if(mode STREQUAL "later")
    math(EXPR last "${n} - 1")
    set(at "rank ${last}")
    set(mem " [(]the user's memory given to weft for it on rank ${last}[)]")
  endif()
  weft_expect_test(stf_fail_two_bodies_${name} TIMEOUT 60 RANKS ${n}
    CHECKS --status 0
      --match "^weft\\[%r\\] warning: data 0: its version v1 was held only where the task that wrote it next failed, which may have changed its bytes: no good version is left, the next taskpool starts from the owner's copy as the failed tasks there left it${mem}$"
      --match "^test_fail_two_bodies ${at}: insert 0 wait -9 fini -9, X = 5 5 5 5$"
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_fail_two_bodies> ${mode} --weft-cores=1)
endforeach()

# A body that fails on the data's owner after changing its bytes: a good
# version held elsewhere comes home; with none left every rank says so and
# the data keeps the body's bytes (the next taskpool started from them
# silently), but for a NEW data whose first write failed (its initial
# contents are made again). Arguments: kind owner good-writer (-1: none)
# failing-writer flags.
weft_test_exe(test_fail_owner_bytes test_fail_owner_bytes.c)
# After a body failed on the owner's device, the owner's host copy holding
# an older version intact (test_fail_restore.c says the script): a chain of
# versions on the device (the data goes back to the host's v1); a write-back
# that failed at the wait before (a first version of the change said the
# user's memory held the destroyed v2 again, and tried a write-back twice in
# one wait: a reviewer's findings); the good version on another rank that
# cannot come home (the owner said it kept the older version it holds, and
# kept the failed body's bytes); a NEW data, whose runtime host copy kept v1
# across the wait that ended at v2 (going back to it went back past that
# wait: the words fuzzer; the user's memory alone is taken back). chain,
# settled and move_fails fail on the library before the change, new_past on
# its first version.
weft_test_exe(test_fail_restore test_fail_restore.c)
foreach(c "chain 1 - A0h,A01,A01,F01,|,A0h,| 1 14"
          "settled 1 device_copy:2 A01,|,R0h,A01,F01,| 0 1"
          "once 1 device_copy:2+ A01,|,A01,F01,| 0 0"
          "move_fails 2 recover:1@1 A1h,A01,F01,|,A0h,| 0 3"
          "new_past 1 - N,A0h,A01,|,A01,F01,| unread -999")
  separate_arguments(c UNIX_COMMAND "${c}")
  list(GET c 0 name)
  list(GET c 1 n)
  list(GET c 2 fault)
  list(GET c 3 script)
  list(GET c 4 want1)
  list(GET c 5 want2)
  string(REPLACE "," ";" script "${script}")
  set(args --weft-cores=1 --weft-device_emu_enabled=1)
  if(NOT fault STREQUAL "-")
    list(APPEND args --weft-fault_inject=${fault})
  endif()
  set(say "")
  if(name STREQUAL "chain")
    set(say --match "^weft\\[0\\] warning: data 0: its version v3 was held only where the task that wrote it next failed, which may have changed its bytes: the next taskpool starts from v1$")
  elseif(name STREQUAL "settled")
    set(say --reject "holds its newest version v2 again")
  elseif(name STREQUAL "new_past")
    set(say --match "^weft\\[0\\] warning: data 0: its version v3 was held only where the task that wrote it next failed, which may have changed its bytes: no good version is left")
  elseif(name STREQUAL "once")
    set(say --count "^weft\\[0\\] error: taskpool restore: the write-back of data 0 into user memory failed again" 1)
  endif()
  set(wants --match "^test_fail_restore rank 0: wait 1 x=${want1} "
    --match "^test_fail_restore rank 0: wait 2 x=${want2} ")
  weft_expect_test(stf_fail_restore_${name} TIMEOUT 60 RANKS ${n}
    CHECKS --status 0 --within 30 --match "^test_fail_restore rank %r: ok$" ${wants} ${say}
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_fail_restore> ${script} ${args})
endforeach()
# Flags (5th argument): c, a task after the failed one, cancelled (it made
# the scribble pass for good again); d, the body fails on the device with
# the host's copy intact (that version lives on: X = 2, no warning); D, the
# +1 and the failing body on the device, the owner's host copy holding v0
# intact: the data goes back to v0 (X = 1), said on every rank.
foreach(c "new_home 2 new 1 0 1 - x=2" "reg_home 2 reg 1 0 1 - x=2"
          "new_home_emu 2 new 1 0 1 - x=2" "new_none 2 new 0 0 0 - x=-998"
          "reg_none 2 reg 1 1 1 - x=-998" "new_alone 1 new 0 0 0 - x=-998"
          "reg_alone 1 reg 0 0 0 - x=-998" "reg_home_next 2 reg 1 0 1 c x=2"
          "new_home_next 2 new 1 0 1 c x=2" "reg_alone_next 1 reg 0 0 0 c x=-998"
          "new_alone_next 1 new 0 0 0 c x=-998" "new_alone_first 1 new 0 -1 0 - x=1"
          "reg_alone_dev 1 reg 0 0 0 d x=2" "new_alone_dev 1 new 0 0 0 d x=2"
          "reg_home_dev 2 reg 0 0 0 d x=2" "reg_alone_devboth 1 reg 0 0 0 D x=1"
          "reg_home_devboth 2 reg 0 0 0 D x=1" "reg_home_devboth_r1 2 reg 1 1 1 D x=1"
          "new_alone_devboth 1 new 0 0 0 D x=-998")
  separate_arguments(c UNIX_COMMAND "${c}")
  list(GET c 0 name)
  list(GET c 1 n)
  list(SUBLIST c 2 4 args)
  list(GET c 3 owner)
  list(GET c 6 flags)
  list(GET c 7 want)
  if(NOT flags STREQUAL "-")
    list(APPEND args ${flags})
  endif()
  set(say "")
  set(dev "")
  if(name MATCHES "none|alone" AND NOT name MATCHES "first|dev")
    set(say --match "^weft\\[%r\\] warning: data 0: its version v1 was held only where the task that wrote it next failed|^weft\\[%r\\] warning: data 0: its only version v1 was held where the task that wrote it next failed")
  endif()
  if(name MATCHES "^reg_(none|alone)$")
    list(APPEND say --match "^weft\\[%r\\] warning: data 0: .*the owner's copy as the failed tasks there left it [(]the user's memory given to weft for it on rank ${owner}[)]$")
  endif()
  if(name MATCHES "devboth")
    set(say --match "^weft\\[%r\\] warning: data 0: its version v1 was held only where the task that wrote it next failed, which may have changed its bytes: the next taskpool starts from v0$")
    if(name MATCHES "^new")
      set(say --match "^weft\\[%r\\] warning: data 0: .*the owner's copy as the failed tasks there left it$")
    endif()
  elseif(name MATCHES "dev")
    set(say --reject "held only where|held where the task")
  endif()
  if(name MATCHES "emu|dev")
    set(dev --weft-device_emu_enabled=1)
  endif()
  weft_expect_test(stf_fail_owner_bytes_${name} TIMEOUT 60 RANKS ${n}
    CHECKS --status 0 --within 30 --match "^test_fail_owner_bytes rank %r: ok$"
      --match "^test_fail_owner_bytes rank [0-9]: ${want}$" ${say}
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_fail_owner_bytes> ${args} --weft-cores=1 ${dev})
endforeach()
# A note of the wait on a lower rank (the good version that could not come
# home) no longer hides the task that failed on a higher one.
weft_test(stf_fail_note_order SRC test_fail_note_order.c RANKS 2
  ARGS --weft-cores=1 --weft-fault_inject=recover:1@1 TIMEOUT 60)
# The giving rank cannot read its copy (fault_inject recover): named on
# every rank, the owner keeps its older version, nothing hangs.
weft_test(stf_fail_good_version_broken EXE test_fail_good_version RANKS 3
  ARGS 1 broken --weft-cores=1 --weft-fault_inject=recover:1@1 TIMEOUT 60)
weft_test(stf_fail_good_version_broken_emu EXE test_fail_good_version RANKS 3
  ARGS 100 broken --weft-cores=1 --weft-device_emu_enabled=1 --weft-fault_inject=recover:1@1
  TIMEOUT 60)
# A collective of that recovery fails in MPI on every rank (fault_inject
# mpi_coll, counted over the wait's collectives after its agreement: 2 the
# gather of the lost keys, 7 the offers, 10 the broadcast of the good
# version): every rank names it, its wait and weft_fini fail, the next wait
# returns WEFT_ERR_MISMATCH at once (no collective follows), nothing hangs.
# The recovery ignored MPI's return codes. 11, the failure exchange's own
# collective: a rank without a failure of its own named rank 2 with no
# words (what MPI left in the buffer was read as the answer). 12, its
# broadcast of rank 2's words and status (one, so that a rank's own MPI
# error cannot leave the others in a second): it bypassed the check (not
# counted: the next wait's collective failed instead) and a status MPI
# left would have become the wait's return; now every rank's wait returns
# WEFT_ERR_MPI (-6), and ranks 0 and 1 say the words were lost. At every
# point, the wait and weft_fini return WEFT_ERR_MPI on every rank: rank 2,
# whose task failed, returned WEFT_ERR_TASK from both (a stranger's).
weft_test_exe(test_recover_mpi test_recover_mpi.c)
set(recover_mpi_12 --count "^weft\\[[01]\\] error: taskpool chain failed: rank 2: [(]MPI failed passing the first failure on[)]" 2)
foreach(n 2 7 10 11 12)
  set(wait "-6")
  if(n GREATER_EQUAL 11)
    set(where "weft_taskpool_wait of taskpool 'chain' [(]its failures[)]")
  else()
    set(where "weft_taskpool_wait: bringing the good versions home after a failure")
  endif()
  weft_expect_test(stf_recover_mpi_${n} TIMEOUT 60 RANKS 3
    CHECKS --status clean --reject "failed: rank [0-9]+: .? [0-9]+ tasks? cancelled"
    --match "^weft\\[%r\\] error: ${where}: the collective between ranks failed in MPI [(]injected: fault_inject mpi_coll[)]"
    --match "^test_recover_mpi rank %r: wait=${wait} next=-8 fini=-6$" ${recover_mpi_${n}}
    RUN ${WEFT_MPIRUN} -n 3 $<TARGET_FILE:test_recover_mpi> --weft-cores=1
    --weft-fault_inject=mpi_coll:${n})
endforeach()
# The failure line names the cause that only the failing rank logged (the
# other ranks said "internal error" or "invalid argument" alone): the
# first error line logged while its task was staged, ran or completed
# (test_fail_words.c). A device copy injected to fail on rank 1 while it
# stages the task's input; a body on rank 1 that asks for a flow its task
# lacks, on the host and on an emu device (the body on the device's
# thread, the task ended by its manager).
weft_test_exe(test_fail_words test_fail_words.c)
set(words_run ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_fail_words>)
set(words_emu --weft-cores=1 --weft-device_emu_enabled=1)
weft_expect_test(stf_fail_words_copy TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error: taskpool copy failed: rank 1: task add #[0-9]+ failed: internal error [(]data [0-9]+ written, data [0-9]+ read[)]: fault_inject: the copy of data [0-9]+ from device 0 to device 1 fails [(]injected[)]. 0 tasks cancelled here$"
    --match "^test_fail_words copy rank %r: [0-9]+ checks, 0 failed: PASSED$"
  RUN ${words_run} copy ${words_emu} --weft-fault_inject=device_copy:1@1)
set(misuse_words "weft_task_ptr[(]5[)]: no such data flow [(]the task has 2[)]: the task fails")
weft_expect_test(stf_fail_words_misuse TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error: taskpool host failed: rank 1: task misuse #[0-9]+ failed: invalid argument [(][^)]*[)]: ${misuse_words}. 0 tasks"
    --match "^weft\\[%r\\] error: taskpool dev failed: rank 1: task misuse #[0-9]+ failed: invalid argument [(][^)]*[)]: ${misuse_words}. 0 tasks"
    --match "^test_fail_words misuse rank %r: [0-9]+ checks, 0 failed: PASSED$"
  RUN ${words_run} misuse ${words_emu})
# The body's own words make a task failure, not "invalid argument" (it read
# so, sending its user looking for a misuse; a stranger's report). Words
# longer than a task keeps keep the parenthesis they end with, where weft
# names what to change (lost on every rank but the failing one's).
weft_expect_test(stf_fail_words_said TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error: taskpool said failed: rank 1: task said #[0-9]+ failed by weft_task_error [(][^)]*[)]: the input is out of range. 0 tasks"
    --match "^weft\\[%r\\] error: taskpool saidlong failed: rank 1: task saidlong #[0-9]+ failed by weft_task_error [(][^)]*[)]: (the input is out of range[;] )+the input is out of range [(]raise the_limit, or lower the_size[)]. 0 tasks"
    --match "^test_fail_words said rank %r: [0-9]+ checks, 0 failed: PASSED$"
  RUN ${words_run} said --weft-cores=1)
# The same said, and a flow asked for out of range, by a thread the body
# started: the first was refused and the run exited 0, the second's line
# lost the call's words.
weft_expect_test(stf_fail_words_thread TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error: taskpool said failed: rank 1: task thread #[0-9]+ failed by weft_task_error [(][^)]*[)]: a thread of the body found the input out of range. 0 tasks"
    --match "^weft\\[%r\\] error: taskpool misuse failed: rank 1: task thread #[0-9]+ failed: invalid argument [(][^)]*[)]: ${misuse_words}. 0 tasks"
    --match "^test_fail_words thread rank %r: [0-9]+ checks, 0 failed: PASSED$"
  RUN ${words_run} thread --weft-cores=1)
# A body naming another task (ended, its pointer kept) in weft_task_error:
# nothing failed; now the calling task does.
weft_expect_test(stf_fail_words_other TIMEOUT 60 RANKS 2
  CHECKS --status 0
    --match "^weft\\[%r\\] error: taskpool other failed: rank 1: task other #[0-9]+ failed: invalid argument [(][^)]*[)]: weft_task_error called from a body with another task, whose body does not run"
    --match "^test_fail_words other rank %r: [0-9]+ checks, 0 failed: PASSED$"
  RUN ${words_run} other --weft-cores=1)
# A NEW data whose first writer failed is never written on every rank
# alike (test_new_first_fail.c): the writer on the owner or on another rank.
weft_test_exe(test_new_first_fail test_new_first_fail.c)
foreach(c "1 owner" "2 owner" "2 away" "3 away")
  separate_arguments(c UNIX_COMMAND "${c}")
  list(GET c 0 n)
  list(GET c 1 where)
  weft_test(stf_new_first_fail_${where}_r${n} EXE test_new_first_fail RANKS ${n} TIMEOUT 60
            ARGS ${where} --weft-cores=1 --weft-fault_inject=task:wr:1)
endforeach()
# The same failed from the writer's body, which wrote and returned 0: by
# weft_task_error, or by a refused accessor call (on an emu device).
weft_test(stf_new_first_fail_error_r1 EXE test_new_first_fail RANKS 1 TIMEOUT 60
          ARGS owner error --weft-cores=1)
weft_test(stf_new_first_fail_misuse_emu_r2 EXE test_new_first_fail RANKS 2 TIMEOUT 60
          ARGS away misuse --weft-cores=1 --weft-device_emu_enabled=1)
# The only version, made away from the owner, overwritten there by a task
# that fails: none is left, said and refused alike.
weft_test(stf_new_first_fail_lost_r2 EXE test_new_first_fail RANKS 2 TIMEOUT 60
          ARGS lost --weft-cores=1)
weft_test(stf_new_first_fail_lost_r3 EXE test_new_first_fail RANKS 3 TIMEOUT 60
          ARGS lost --weft-cores=1)
# A data with initial contents whose task away from its owner is
# cancelled: the next taskpool starts from the initial contents (its task
# on the owner failed, "no contents"). Cancelled task on rank 0 of 2 or 3,
# with and without a reader of them on the owner first.
weft_test_exe(test_init_cancelled test_init_cancelled.c)
foreach(c "r2;2;0 0" "r2_owner_reads;2;0 1" "r3;3;1 0")
  list(GET c 0 k)
  list(GET c 1 n)
  list(GET c 2 a)
  separate_arguments(a UNIX_COMMAND "${a}")
  weft_expect_test(stf_init_cancelled_${k} TIMEOUT 60 RANKS ${n}
    CHECKS --status 0 --within 40 --match "^test_init_cancelled rank %r: ok$"
    RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_init_cancelled> ${a} --weft-cores=1)
endforeach()
# A receive that failed before its bytes came left the copy it was to
# replace whole: rank 1's receive of v1 fails, then the owner's of v2 (its
# activation not kept), and every rank said v1 was "held only where the
# task that wrote it next failed ... no good version is left", though the
# owner's memory held v1 whole and the data kept its right value (a
# stranger's comm_alloc:2). X is 128 x 128 doubles: past the eager limit.
weft_test_exe(test_fail_recv_untouched test_fail_recv_untouched.c)
weft_expect_test(stf_fail_recv_untouched TIMEOUT 60 RANKS 2
  CHECKS --status 0 --reject "held only where"
  --match "^weft\\[%r\\] error: taskpool untouched failed: rank 0: receive of data 0 v2 from rank 1 failed"
  --match "^test_fail_recv_untouched rank 0: wait 1 status -9 x=1 wait 2 status 0 x=1001: ok$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_fail_recv_untouched> --weft-cores=1
      --weft-fault_inject=comm_alloc:2)
