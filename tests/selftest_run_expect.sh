#!/bin/sh
# Self-test of run_expect.sh: each check passes when its expectation holds
# and fails (exit 1) when it does not, so that no test built on it can pass
# whatever its program does. The commands are small shell snippets.
#   selftest_run_expect.sh RUN_EXPECT
set -u
runner=$1
bad=0
n=0

# expect WANT CHECK... -- COMMAND...: run_expect.sh must exit WANT.
expect() {
    want=$1
    shift
    n=$((n + 1))
    sh "$runner" "$@" >/dev/null 2>&1
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "selftest_run_expect: FAIL: exit $got, expected $want: run_expect.sh $*"
        bad=1
    fi
}

two_ranks='echo "rank 0: ok"; echo "rank 1: ok"; echo "fatal: no"'
# Exit status.
expect 0 -- true
expect 1 -- false
expect 0 --status 3 -- sh -c 'exit 3'
expect 1 --status 3 -- sh -c 'exit 4'
expect 0 --status nonzero -- false
expect 1 --status nonzero -- true
expect 0 --status clean -- sh -c 'exit 2'
expect 1 --status clean -- sh -c 'kill -KILL $$'
expect 1 --status clean -- true
expect 0 --status any -- false
# Lines: match, count, reject, per rank.
expect 0 --match '^rank 1: ok$' -- sh -c "$two_ranks"
expect 1 --match '^rank 2: ok$' -- sh -c "$two_ranks"
expect 0 --count '^rank [01]: ok$' 2 -- sh -c "$two_ranks"
expect 1 --count '^rank [01]: ok$' 3 -- sh -c "$two_ranks"
expect 0 --reject '^error' -- sh -c "$two_ranks"
expect 1 --reject '^fatal' -- sh -c "$two_ranks"
expect 0 --ranks 2 --match '^rank %r: ok$' -- sh -c "$two_ranks"
expect 1 --ranks 3 --match '^rank %r: ok$' -- sh -c "$two_ranks"
expect 0 --match 'to stderr' -- sh -c 'echo to stderr >&2'
# A sanitizer's report fails a run whatever its status, unless named.
ubsan='echo "x.c:1:2: runtime error: negation of -9 cannot be represented"; exit 1'
expect 1 --status nonzero -- sh -c "$ubsan"
expect 1 --status any -- sh -c 'echo "==1==ERROR: AddressSanitizer: heap-use-after-free"'
expect 0 --status nonzero --sanitizer-ok 'AddressSanitizer: BUS ' \
    -- sh -c 'echo "==1==ERROR: AddressSanitizer: BUS on unknown address"; exit 1'
expect 1 --status nonzero --sanitizer-ok 'AddressSanitizer: BUS ' \
    -- sh -c 'echo "==1==ERROR: AddressSanitizer: BUS on x"; echo "y.c:2:3: runtime error: z"; exit 1'
expect 1 --status nonzero --sanitizer-ok '(' -- sh -c 'echo "y.c:2:3: runtime error: z"; exit 1'
# Several commands: each runs, the first failure ends the run.
expect 0 --count '^x$' 2 -- echo x --then echo x
expect 1 -- echo x --then false --then true
expect 1 --match '^z$' -- false --then echo z
expect 0 --status any --match '^z$' -- false --then echo z
# Runs that must agree.
expect 0 --same 'D2D [0-9]+' -- echo 'D2D 4 MiB' --then echo 'D2D 4 MiB'
expect 1 --same 'D2D [0-9]+' -- echo 'D2D 4 MiB' --then echo 'D2D 5 MiB'
expect 1 --same 'D2D [0-9]+' -- echo 'none' --then echo 'none'
# Outputs of an earlier run removed first.
old=$(mktemp -d)
touch "$old/t.rank0.json"
expect 0 --remove "$old/t.rank*.json" -- sh -c "! ls $old/t.rank0.json"
touch "$old/t.rank0.json"
expect 1 -- sh -c "! ls $old/t.rank0.json"
rm -rf "$old"
# Time limit, skip, misuse.
expect 1 --within 1 -- sleep 1
expect 0 --within 5 -- true
# Each rank's own time (expect_elapsed lines), one line per rank required.
el='echo "expect_elapsed rank 0: 300 ms"; echo "expect_elapsed rank 1: 2500 ms"'
expect 0 --ranks 2 --rank-within 3 -- sh -c "$el"
expect 1 --ranks 2 --rank-within 2 -- sh -c "$el"
expect 1 --ranks 3 --rank-within 3 -- sh -c "$el"
expect 1 --rank-within 3 -- true
# A probe that cannot run skips, except where nvidia-smi lists GPUs.
no_probe=77
nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && no_probe=1
expect $no_probe --gpus 1 --probe "$runner-absent-probe" -- true
expect 1 --bogus x -- true
expect 1 --status sometimes -- true
expect 1 --match x

[ $bad -eq 0 ] || exit 1
echo "selftest_run_expect: $n cases: PASSED"
