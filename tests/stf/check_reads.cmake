# check_reads and check_writes (included by CMakeLists.txt): a body or a
# host read acquire that writes what it was given to read fails, named on
# every rank; a body that reads what it was given to write only computes
# from NaNs; without the parameters both go unnoticed.

# check_reads (test_check_reads.c): a body writing through its WEFT_R flow
# fails, named on every rank, on the host and on an emu device, on 1 and 2
# ranks, the parameter given on the command line or set after weft_init;
# without it the write goes unnoticed (the control: wait=0, the third task
# read the changed copy), and
# a body that only reads passes under it.
weft_test_exe(test_check_reads test_check_reads.c)
set(reads_line "^weft\\[%r\\] error: taskpool reads failed: rank [0-9]+: task add #[0-9]+ failed: invalid argument [(][^)]*[)]: wrote its flow 0 [(]data [0-9]+[)], which it was given to read [(]WEFT_R. check_reads[)]: the task fails")

# check_writes (test_check_writes.c): a body that reads the flow it was
# given to write only (WEFT_W where WEFT_RW was meant) computes from NaNs
# on the host and on an emu device, on 1 and 2 ranks, so the program's own
# check fails everywhere; a body leaving elements of such a flow unwritten
# is warned of, one writing all of them never. Without the parameter the
# host run reads the old contents (y0 = 2).
weft_test_exe(test_check_writes test_check_writes.c)
set(writes_tail "of the 6 elements of its flow 0 [(]data [0-9]+[)], which it was given to write only [(]WEFT_W. check_writes[)], still hold the NaNs")
set(acc_line "^weft\\[[0-9][.0-9]*\\] warning: task acc #[0-9]+: 6 ${writes_tail}")
set(half_line "^weft\\[[0-9][.0-9]*\\] warning: task half #[0-9]+: 3 ${writes_tail}")
foreach(n 1 2)
  foreach(where host emu)
    set(args --weft-cores=1)
    if(where STREQUAL "emu")
      list(APPEND args --weft-device_emu_enabled=1)
    endif()
    weft_expect_test(stf_check_reads_${where}_r${n} TIMEOUT 60 RANKS ${n}
      CHECKS --status 0 --match "${reads_line}"
      --match "^test_check_reads rank %r: wait=-9 "
      RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_check_reads> bad --weft-check_reads=1 ${args})
    weft_expect_test(stf_check_writes_${where}_r${n} TIMEOUT 60 RANKS ${n}
      CHECKS --status 0 --match "${acc_line}" --match "${half_line}"
      --reject "task full .*check_writes"
      --match "^test_check_writes rank [0-9]+: wait=0 y0=NaN nan=6$"
      RUN ${WEFT_MPIRUN} -n ${n} $<TARGET_FILE:test_check_writes> --weft-check_writes=1 ${args})
  endforeach()
endforeach()
weft_expect_test(stf_check_writes_off TIMEOUT 60
  CHECKS --status 0 --reject "WEFT_W. check_writes" --match "^test_check_writes rank 0: wait=0 y0=2 nan=0$"
  RUN $<TARGET_FILE:test_check_writes> --weft-cores=1)
weft_expect_test(stf_check_reads_batch TIMEOUT 60
  CHECKS --status 0 --match "^weft\\[0\\] error: task addb #3: its flow 0 [(]data 0[)], which it was given to read [(]WEFT_R. check_reads[)], changed during the batch call of [0-9]+ tasks it ran in [(]one of them wrote it[)]: the task fails"
  --match "^weft\\[0\\] error: taskpool reads failed: rank 0: task addb #[0-9]+ failed: invalid argument"
  --match "^weft\\[0.1\\] stats: emu1: .* [1-9][0-9]* batches [(][1-9]" --match "^test_check_reads rank 0: wait=-9$"
  RUN $<TARGET_FILE:test_check_reads> batch --weft-check_reads=1 --weft-cores=1
  --weft-device_emu_enabled=1 --weft-show_stats=1)
# Two elements negated (two sign bits): the tile's hash let them cancel.
weft_expect_test(stf_check_reads_negate TIMEOUT 60
  CHECKS --status 0 --match "${reads_line}" --match "^test_check_reads rank %r: wait=-9 "
  RUN $<TARGET_FILE:test_check_reads> negate --weft-check_reads=1 --weft-cores=1)
weft_expect_test(stf_check_reads_set_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0 --match "${reads_line}" --match "^test_check_reads rank %r: wait=-9 "
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_check_reads> bad set --weft-cores=1)
weft_expect_test(stf_check_reads_off_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0 --reject "WEFT_R. check_reads" --match "^test_check_reads rank 1: wait=0 y=1003 x=-1$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_check_reads> bad --weft-cores=1)
# The host's read acquires (weft_data_host_acquire, weft_matrix_host_acquire
# with WEFT_R) written through: refused at the release under check_reads
# (the release returned 0 and the write reached the host copy only, a
# device task then read the old bytes); without it, unnoticed.
weft_expect_test(stf_check_reads_acquire TIMEOUT 60
  CHECKS --status 0 --match "^test_check_reads rank 0: acquire release=-1 matrix=-1$"
  --match "^weft\\[0\\] error: weft_data_host_release: data [0-9]+ was written through the pointer of a read acquire [(]WEFT_R. check_reads[)]"
  --match "^weft\\[0\\] error: weft_matrix_host_release: data [0-9]+ was written through"
  RUN $<TARGET_FILE:test_check_reads> acquire --weft-check_reads=1 --weft-cores=1
  --weft-device_emu_enabled=1)
weft_expect_test(stf_check_reads_acquire_off TIMEOUT 60
  CHECKS --status 0 --match "^test_check_reads rank 0: acquire release=0 matrix=0$"
  RUN $<TARGET_FILE:test_check_reads> acquire --weft-cores=1 --weft-device_emu_enabled=1)
weft_expect_test(stf_check_reads_good_r2 TIMEOUT 60 RANKS 2
  CHECKS --status 0 --match "^test_check_reads rank 1: wait=0 y=3 x=-1$"
  RUN ${WEFT_MPIRUN} -n 2 $<TARGET_FILE:test_check_reads> good --weft-check_reads=1
  --weft-cores=1 --weft-device_emu_enabled=1)
