# Data and matrices (included by CMakeLists.txt): owners of registered data,
# initial contents, collections and distributions, zeroed matrices,
# creations refused on some ranks, overlapping registrations, local tiles
# and gather/scatter.

# Registered data has one owner (issue 15 item 1): the ranks run 255 tasks
# between them, each rank the tasks writing its data (counts and values
# checked in the program against references); a registration made on rank
# 0 only is named on every rank at the wait.
weft_test_exe(test_register_owner test_register_owner.c)
# (No 10 s limit on the passing runs: a chain of 255 tasks over 4
# oversubscribed ranks takes longer under the sanitizers.)
foreach(n 1 2 4)
  weft_expect_test(stf_register_owner_r${n} TIMEOUT 90 RANKS ${n}
    CHECKS --match "^test_register_owner rank %r: wait=0 fini=0 tasks_run=([0-9]+) [(]expected \\1[)] activations_sent=([0-9]+) [(]expected \\2[)]$"
           --count "^test_register_owner: [0-9]+ checks, 0 failures: PASSED" ${n}
    RUN ${mpirun} -n ${n} $<TARGET_FILE:test_register_owner> --weft-cores=1)
endforeach()
weft_expect(stf_register_partial fail 2
  LINES "^weft\\[%r\\] error:   rank 0 made #4 as 'weft_data_register[(]data 4: type 0, 1 x 1, owner rank 0[)]'"
        "^weft\\[%r\\] error:   rank 1 made no data creation #4 [(]a creation made on some ranks only"
        "^test_register_owner rank %r: wait=-8 fini=-8"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_register_owner> --partial --weft-cores=1)
# Initial contents of NEW accumulators (issue 15 item 7): zeros or a user
# function, made by the rank that reads first; on the host and staged to
# an emulated device; values, task and activation counts in the program.
weft_test_exe(test_data_init test_data_init.c)
foreach(n 1 2 4)
  weft_passed_test(stf_data_init_r${n} test_data_init ${n})
endforeach()
foreach(n 1 2)
  weft_passed_test(stf_data_init_emu_r${n} test_data_init ${n} ARGS --weft-device_emu_enabled=1)
endforeach()
# Collections (issue 15 item 3): vectors, user distributions (block-cyclic
# as one, a skewed one with home devices on 2 emu devices), struct tiles
# whose type and size a body sees; a distribution that differs on rank 1
# is named at the wait.
weft_test_exe(test_collections test_collections.c)
foreach(n 1 2 4)
  weft_passed_test(stf_collections_r${n} test_collections ${n})
endforeach()
foreach(n 1 2)
  weft_passed_test(stf_collections_emu_r${n} test_collections ${n}
    ARGS --weft-device_emu_enabled=2 --weft-device_emu_memory=16M)
endforeach()
# A new matrix holds zeros until written, also where a freed one's tiles
# were (test_matrix_zero.c).
weft_test_exe(test_matrix_zero test_matrix_zero.c)
foreach(c "1 0" "2 0" "3 0" "2 1")
  separate_arguments(c UNIX_COMMAND "${c}")
  list(GET c 0 n)
  list(GET c 1 emu)
  weft_passed_test(stf_matrix_zero_r${n}_emu${emu} test_matrix_zero ${n} ARGS --weft-device_emu_enabled=${emu})
endforeach()
weft_expect(stf_collections_skew fail 2
  LINES "^weft\\[%r\\] error: .*first divergent data creation is #0, .*'weft_matrix_wrap_dist\\(type 0, 20 x 12, tiles 4 x 4, owners [0-9a-f]+\\)'"
        "^weft\\[%r\\] error:   rank 1 made #0 as 'weft_matrix_wrap_dist"
        "^test_collections rank %r: wait=-8"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_collections> --skew 1 --weft-cores=1)
# A matrix refused on some ranks only is named at the next wait on every
# rank; a home device valid on its owner but beyond another rank's devices
# is no divergence (test_matrix_refused.c).
weft_test_exe(test_matrix_refused test_matrix_refused.c)
set(refused $<TARGET_FILE:test_matrix_refused> --weft-cores=1)
weft_expect(stf_matrix_hetero_devices pass 2
  LINES "^test_matrix_refused rank %r: hetero wait=0 fini=0$"
  RUN ${mpirun} -n 1 ${refused} hetero --weft-device_emu_enabled=1 : -n 1 ${refused} hetero)
# Every rank names the call the other rank refused and its reason.
# A home device valid on the data's owner is not refused by a rank with
# fewer devices (rank 1 returned an error of its own).
weft_expect_test(stf_data_set_device_hetero TIMEOUT 60 RANKS 2
  CHECKS --status 0 --reject "set=|error" --match "^test_matrix_refused rank %r: sethome wait=0 fini=0$"
  RUN ${mpirun} -n 1 ${refused} sethome --weft-device_emu_enabled=1 : -n 1 ${refused} sethome)
# A home device past the owner's devices is refused there and named on
# every rank at the next wait, whatever devices the other ranks have (rank
# 1 has three, so device 2 is one of its own; it returned 0 before); rank
# 1's next creation is not said to follow "the entry before". Each case
# runs test_matrix_refused in `mode` with 1 emu device on rank 0 and 3 on
# rank 1; every case expects rank 0's refusal of device 2 on every rank.
function(weft_sethome_expect name mode)
  weft_expect(${name} fail 2
    LINES "^weft\\[%r\\] error:   rank 0 refused weft_data_set_device[(]data 0, device 2[)]: weft_data_set_device: device 2 is not in [[]0, 1[]] on data 0's owner rank 0$"
          "^test_matrix_refused rank %r: ${mode} wait=-8 fini=-8$" ${ARGN}
    RUN ${mpirun} -n 1 ${refused} ${mode} --weft-device_emu_enabled=1 --weft-device_emu_memory=8M
        : -n 1 ${refused} ${mode} --weft-device_emu_enabled=3 --weft-device_emu_memory=8M)
endfunction()
weft_sethome_expect(stf_data_set_device_refused_owner sethomebad
  "^weft\\[%r\\] error:   rank 1 made #1 as 'weft_data_new[(]data 1: .*[)]' [(]it accepted the call refused there, which makes no creation, and made this one next[)]$"
  "^test_matrix_refused rank 0: sethomebad set=-1$")
weft_sethome_expect(stf_data_set_device_refused_twice sethometwice
  "^weft\\[%r\\] error:   rank 1 refused weft_data_set_device[(]data 0, device -1[)]: weft_data_set_device: device -1 of data 0 is negative"
  "^test_matrix_refused rank %r: sethometwice set -1=-1$")
weft_expect(stf_matrix_refused_one_rank fail 2
  LINES "^weft\\[%r\\] error: .*ranks made different data creations; first divergent data creation is #[0-9]+"
        "^weft\\[%r\\] error:   rank 1 refused weft_matrix_wrap[(]type 0, 12 x 12, tiles 4 x 4, grid 2 x 1[)]: weft_matrix_wrap: NULL pointer"
        "^test_matrix_refused rank %r: nullone wait=-8 fini=-8$"
  RUN ${mpirun} -n 2 ${refused} nullone)
# A NULL pointer on a rank that holds no tile of a wrapped matrix is no
# refusal (it references no element): made on every rank, each tile bumped.
weft_expect(stf_matrix_wrap_null_notile pass 3
  LINES "^test_matrix_refused rank %r: nullnotile wait=0 fini=0$"
  RUN ${mpirun} -n 3 ${refused} nullnotile)
# The same refusal, then a gather of that matrix: rank 1 (NULL handle)
# skips it and reaches the wait; every rank names the refusal as well as
# the points (every agreement compares the creations).
weft_expect(stf_matrix_refused_gather fail 2
  LINES "^weft\\[%r\\] error: ranks are out of step"
        "^weft\\[%r\\] error:   rank 1 refused weft_matrix_wrap[(]type 0, 12 x 12, tiles 4 x 4, grid 2 x 1[)]: weft_matrix_wrap: NULL pointer"
        "^test_matrix_refused rank %r: gathernull gather=-[0-9]+$"
  RUN ${mpirun} -n 2 ${refused} gathernull)
# A matrix every rank refuses for host memory, each at its own tile, spends
# the same data keys everywhere: the next matrix's tasks agree (the wait
# returned WEFT_ERR_MISMATCH).
weft_expect(stf_matrix_refused_hostmem pass 2
  LINES "^test_matrix_refused rank %r: hostmem big=refused$"
        "^test_matrix_refused rank %r: hostmem wait=0 fini=0$"
  RUN ${mpirun} -n 2 ${refused} hostmem --weft-host_memory_use=1)
# A matrix whose tiles all go to rank 0, past its share (host_memory_use=1):
# rank 0 refuses it before allocating a tile, naming the call, the matrix,
# its bytes and the limit (it zeroed its share first, then refused a tile);
# rank 1 makes it, and the wait names the refusal on every rank (no hang).
weft_expect(stf_matrix_refused_hostone fail 2
  LINES "^weft\\[0\\] error: weft_matrix_new_dist: the 1048576 x 1048576 matrix [(]tiles 4096 x 4096[)] needs 8796093022208 bytes [(]8192[.]00 GiB[)] for its tiles on rank 0, past the rank's share of the node's memory for weft's host copies: [0-9]+ bytes .* refused before any tile was allocated"
        "^weft\\[%r\\] error:   rank 0 refused weft_matrix_new_dist[(].*[)]: weft_matrix_new_dist: the 1048576 x 1048576 matrix"
        "^test_matrix_refused rank 0: hostone big=refused$"
        "^test_matrix_refused rank 1: hostone big=made$"
        "^test_matrix_refused rank %r: hostone wait=-8 fini=-8$"
  RUN ${mpirun} -n 2 ${refused} hostone --weft-host_memory_use=1)
# Received copies, never refused, took rank 1 past its share; a vector
# with no block there is made on both ranks (rank 1 refused it, "needs 0
# bytes", and the wait failed on both). The test sizes what rank 1
# receives from the node's memory.
weft_test(stf_matrix_room_received SRC test_matrix_room_received.c RANKS 2
  ARGS --weft-cores=1 --weft-host_memory_use=1 TIMEOUT 120)
weft_expect(stf_matrix_refused_keysteps pass 2
  LINES "^test_matrix_refused rank %r: keysteps big=refused$"
        "^test_matrix_refused rank %r: keysteps wait=0 fini=0$"
  RUN ${mpirun} -n 1 ${refused} keysteps : -n 1 ${refused} keysteps --weft-device_emu_enabled=1)
weft_expect(stf_data_register_refused_owner fail 2
  LINES "^weft\\[%r\\] error:   rank 1 refused weft_data_register[(]data 0: .*[)]: weft_data_register: NULL pointer: pass the address of the user's memory on the owner rank 1$"
        "^test_matrix_refused rank %r: regnull wait=-8 fini=-8$"
  RUN ${mpirun} -n 2 ${refused} regnull)
# Two live registrations of the same bytes (weft_data_register,
# weft_matrix_wrap) are refused on the rank that holds the memory, naming
# both data, and named on every rank at the next wait (they were taken
# silently: their tasks raced); the control takes adjacent memory and
# memory registered again after its release.
weft_test_exe(test_register_overlap test_register_overlap.c)
set(overlap $<TARGET_FILE:test_register_overlap> --weft-cores=1)
set(overlap_line "weft_data_register: data 1 .0x[0-9a-f]+, [+]128 bytes[)] overlaps data 0 of weft_data_register .0x[0-9a-f]+, [+]128 bytes[)], not released")
weft_expect(stf_register_overlap_r2 fail 2
  LINES "^weft\\[%r\\] error: (  rank 0 refused weft_data_register[(]data 1: type 0, 4 x 4, owner rank 0[)]: )?${overlap_line}"
        "^test_register_overlap rank 0: twice refused=1 wait=-8 fini=-8$"
        "^test_register_overlap rank 1: twice refused=0 wait=-8 fini=-8$"
  RUN ${mpirun} -n 2 ${overlap} twice)
weft_expect(stf_register_overlap_r1 fail 1
  LINES "^weft\\[0\\] error: ${overlap_line}"
        "^test_register_overlap rank 0: twice refused=1 wait=0 fini=0$"
  RUN ${mpirun} -n 1 ${overlap} twice)
# A released handle whose task still runs: the words say so (they said
# "not released" and told the user to release what was released).
set(overlap_busy_line "weft_data_register: data 1 .0x[0-9a-f]+, [+]128 bytes[)] overlaps data 0 of weft_data_register .0x[0-9a-f]+, [+]128 bytes[)], released but still used by tasks not waited for: .* call weft_taskpool_wait first")
weft_expect(stf_register_overlap_busy fail 1
  LINES "^weft\\[0\\] error: ${overlap_busy_line}"
        "^test_register_overlap rank 0: busy refused=1 wait=0 fini=0$"
  RUN ${mpirun} -n 1 ${overlap} busy)
weft_expect(stf_register_overlap_busyw fail 1
  LINES "^weft\\[0\\] error: weft_matrix_wrap: data 9[.][.]17 .0x[0-9a-f]+, [+]1152 bytes[)] overlaps data 0[.][.]8 of weft_matrix_wrap .*, released but still used by tasks not waited for"
        "^test_register_overlap rank 0: busyw refused=1 wait=0 fini=0$"
  RUN ${mpirun} -n 1 ${overlap} busyw)
# Not only this rank's tasks write a released handle's bytes before the
# wait: a reduction's combines (inserted at the wait) and the final version
# of a tile written on another rank (it comes home at the wait). Both were
# taken for free: a second registration was accepted and the two handles'
# results mixed (a stranger's x = 103 where 8 was due).
weft_expect(stf_register_overlap_busyredux fail 1
  LINES "^weft\\[0\\] error: weft_data_register: .*released but still used by tasks not waited for"
        "^test_register_overlap rank 0: busyredux refused=1 wait=0 fini=0$"
  RUN ${mpirun} -n 1 ${overlap} busyredux)
weft_expect(stf_register_overlap_busyremote fail 2
  LINES "^weft\\[0\\] error: weft_data_register: data 1 .*released but still used by tasks not waited for"
        "^test_register_overlap rank 0: busyremote refused=1 wait=-8 fini=-8$"
        "^test_register_overlap rank 1: busyremote refused=0 wait=-8 fini=-8$"
  RUN ${mpirun} -n 2 ${overlap} busyremote)
weft_expect(stf_register_overlap_busyremotew fail 2
  LINES "^weft\\[0\\] error: weft_matrix_wrap: data 9[.][.]17 .*released but still used by tasks not waited for"
        "^test_register_overlap rank 0: busyremotew refused=1 wait=-8 fini=-8$"
        "^test_register_overlap rank 1: busyremotew refused=0 wait=-8 fini=-8$"
  RUN ${mpirun} -n 2 ${overlap} busyremotew)
weft_expect(stf_register_overlap_wrap fail 2
  LINES "^weft\\[%r\\] error: .*weft_data_register: data 9 .0x[0-9a-f]+, [+]112 bytes[)] overlaps data 0[.][.]8 of weft_matrix_wrap .0x[0-9a-f]+, [+]1152 bytes[)], not released"
        "^test_register_overlap rank 1: inside refused=1 wait=-8 fini=-8$"
  RUN ${mpirun} -n 2 ${overlap} inside)
weft_expect(stf_register_overlap_wraps fail 2
  LINES "^weft\\[%r\\] error: weft_matrix_wrap: data 9[.][.]17 .0x[0-9a-f]+, [+]1152 bytes[)] overlaps data 0[.][.]8 of weft_matrix_wrap .0x[0-9a-f]+, [+]1152 bytes[)], not released"
        "^test_register_overlap rank %r: wraps refused=1 wait=0 fini=0$"
  RUN ${mpirun} -n 2 ${overlap} wraps)
# Two strided registrations of shared bytes (the same tile twice, two
# tiles of one array whose rows and columns overlap, another ld over a
# column): refused on the owner, named on every rank; every tile of two
# arrays (doubles and floats, partial edge tiles, ld not a multiple of the
# tile rows) registered one by one is taken.
set(tile_line "weft_data_register: data 1 .0x[0-9a-f]+, [+]%b bytes[)] overlaps data 0 of weft_data_register .0x[0-9a-f]+, [+]320 bytes[)], not released")
foreach(c tile2:0:320 cross:1:320 ldiff:1:344)
  string(REPLACE ":" ";" c "${c}")
  list(GET c 0 name)
  list(GET c 1 owner)
  list(GET c 2 bytes)
  string(REPLACE "%b" "${bytes}" line "${tile_line}")
  math(EXPR other "1 - ${owner}")
  weft_expect(stf_register_overlap_${name} fail 2
    LINES "^weft\\[%r\\] error: (  rank ${owner} refused weft_data_register[(]data 1: type 0, 4 x 4, owner rank ${owner}[)]: )?${line}"
          "^test_register_overlap rank ${owner}: ${name} refused=1 wait=-8 fini=-8$"
          "^test_register_overlap rank ${other}: ${name} refused=0 wait=-8 fini=-8$"
    RUN ${mpirun} -n 2 ${overlap} ${name})
endforeach()
# Out of memory noting a registration (fault_inject span_alloc): refused
# naming it, on 1 rank (the refusal's own words dropped too: refusal_note)
# and on 2, where each rank's first registration fails (rank 0's data, rank
# 1's matrix) and the wait names rank 0's on every rank.
set(oom_line "weft_data_register: data 0: out of host memory noting the memory it registers: refused")
weft_expect(stf_register_overlap_oom_r1 fail 1
  LINES "^weft\\[0\\] error: ${oom_line}"
        "^test_register_overlap rank 0: oom refused=1 wait=0 fini=0$"
  RUN ${mpirun} -n 1 ${overlap} oom --weft-fault_inject=span_alloc:1,refusal_note:1)
weft_expect(stf_register_overlap_oom_r2 fail 2
  LINES "^weft\\[%r\\] error:   rank 0 refused weft_data_register[(]data 0: type 0, 4 x 4, owner rank 0[)]: ${oom_line}"
        "^weft\\[1\\] error: weft_matrix_wrap: data 1[.][.]9: out of host memory noting the memory it registers: refused"
        "^test_register_overlap rank %r: oom refused=1 wait=-8 fini=-8$"
  RUN ${mpirun} -n 2 ${overlap} oom --weft-fault_inject=span_alloc:1)
# The registrations taken on every rank: every tile of two arrays one by
# one (tiles, above); another rank's tile used there, the matrix freed
# before the wait, wrapped again after it (freew: rank 0 kept its buffer
# claimed for good through that tile, never touched there); adjacent
# memory and memory registered again after its release (control). Each
# case: test name, then test_register_overlap's case.
foreach(c tiles:tiles freew:freew control:ok)
  string(REPLACE ":" ";" c "${c}")
  list(GET c 0 name)
  list(GET c 1 mode)
  weft_expect(stf_register_overlap_${name} pass 2
    LINES "^test_register_overlap rank %r: ${mode} refused=0 wait=0 fini=0$"
    RUN ${mpirun} -n 2 ${overlap} ${mode})
endforeach()
# Local tiles and gather/scatter (issue 15 item 6): values through a
# gather and a scatter against the formulas, on the host and with the
# newest versions on emu devices; bad arguments on one rank reach every
# rank; a rank that skips a gather is named.
weft_test_exe(test_collect test_collect.c)
# In a simulation of 4 ranks both calls are refused (they crashed).
weft_expect_test(stf_collect_sim TIMEOUT 60
  CHECKS --match "^test_collect: [0-9]+ checks, 0 failures: PASSED"
  RUN $<TARGET_FILE:test_collect> --weft-cores=1 --weft-sim_nranks=4 --weft-sim_rank=1)
foreach(n 1 2 4)
  weft_passed_test(stf_collect_r${n} test_collect ${n})
endforeach()
# The same in rounds of 36 bytes a rank (a matrix past 2 GiB moves in
# rounds of MPI's int counts; it was refused, "gather it in parts").
weft_test_exe(test_collect_rounds test_collect.c INTERNAL)
target_compile_definitions(test_collect_rounds PRIVATE COLLECT_ROUND_BYTES=36)
foreach(n 1 3)
  weft_passed_test(stf_collect_rounds_r${n} test_collect_rounds ${n} PROGRAM test_collect)
endforeach()
foreach(n 1 2)
  weft_passed_test(stf_collect_emu_r${n} test_collect ${n}
    ARGS --weft-device_emu_enabled=2 --weft-device_emu_memory=16M)
endforeach()
weft_expect(stf_collect_skip fail 2
  LINES "^weft\\[%r\\] error: ranks are out of step"
        "^weft\\[%r\\] error:   rank 0: in weft_matrix_gather \\(root 0\\)"
        "^weft\\[%r\\] error:   rank 1: in weft_fini"
        "^test_collect rank 0: gather=-8 fini=-8"
        "^test_collect rank 1: gather=0 fini=-8"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_collect> --skip 1 --weft-cores=1)
weft_expect(stf_collect_skip_refused fail 2
  LINES "^weft\\[0\\] error: weft_matrix_gather: NULL buffer: pass the whole matrix"
        "^weft\\[%r\\] error: ranks are out of step"
        "^test_collect rank 0: gather=-8 fini=-8"
        "^test_collect rank 1: gather=0 fini=-8"
  RUN ${mpirun} -n 2 $<TARGET_FILE:test_collect> --skip 1 --null --weft-cores=1)
# Memory weft allocated itself (a NEW data's host copy, a tile of a new
# matrix, an emu device's memory) registered as the application's:
# refused, named (it was taken: two handles raced on the same bytes).
weft_test(stf_register_weft_memory SRC test_register_weft_memory.c ARGS --weft-cores=1)
weft_test(stf_register_weft_memory_emu EXE test_register_weft_memory
  ARGS --weft-cores=1 --weft-device_emu_enabled=1)
# weft_data_owner: data of each rank, a matrix tile, from a body, NULL.
weft_test(stf_data_owner EXE test_fail_words RANKS 2 ARGS owner --weft-cores=1 TIMEOUT 60)
