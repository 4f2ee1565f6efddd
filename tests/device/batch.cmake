# Batches (included by CMakeLists.txt): small tasks of a class with a batch
# body go out several a call; turned off, faults and misuse inside a batch,
# and each input staged once.

# Batches: small tasks of a class with a batch body go out several a call;
# off with device_batch=1 or tiles above device_batch_elems.
weft_device_test(batch SRC test_device_batch.c VARIANTS emu1 cuda)
weft_device_test(batch_off EXE test_device_batch ENV WEFT_DEVICE_BATCH=1 VARIANTS emu1 cuda)
weft_device_test(batch_large EXE test_device_batch ENV WEFT_DEVICE_BATCH_ELEMS=1000
  VARIANTS emu1 cuda)
# fault_inject task_skip reaches a task run by a batch body: the third
# task started is skipped, and a batch formed (test_device_batch_skip.c).
weft_device_test(batch_skip SRC test_device_batch_skip.c
  ENV WEFT_DEVICE_BATCH=8 WEFT_FAULT_INJECT=task_skip:axpy:3 VARIANTS emu1)
# A batch body that makes a call only the main thread may make fails every
# task of its batch, not only the first (test_device_batch_misuse.c).
weft_device_test(batch_misuse SRC test_device_batch_misuse.c ENV WEFT_DEVICE_BATCH=8 VARIANTS emu1)
# A batch stages each input tile once: weft-potrf on 2 emu devices moves the
# same device-to-device bytes with and without batches.
set(potrf_emu2 $<TARGET_FILE:weft-potrf> -N 600 -t 64 -c 2 -g 2 --weft-device_type=emu --weft-show_stats=1 --check)
weft_expect_test(device_batch_copies_once CHECKS --status any --same "D2D [0-9.]* MiB"
  RUN ${potrf_emu2} --weft-device_batch=1 --then ${potrf_emu2} --weft-device_batch=8)
