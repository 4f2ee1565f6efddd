#!/bin/sh
# Runs a (multi-rank) command and checks what every rank printed:
#   expect_ranks.sh fail|pass NRANKS PATTERN... -- COMMAND...
# fail: the command must exit non-zero; pass: zero. It must end within
# 10 s: each rank's own time when the program prints "expect_elapsed rank
# R: N ms" lines (tests/stf/elapsed.h; then the whole command, mpiexec's
# start included, gets 60 s), else the whole command's. Each PATTERN (a grep -E expression) must match a line of the
# output; one holding %r must match for every rank r, with %r replaced.
want=$1
n=$2
shift 2
pats=""
while [ "$1" != "--" ]; do
    pats="$pats$1
"
    shift
done
shift
t0=$(date +%s%N)
out=$("$@" 2>&1)
rc=$?
t1=$(date +%s%N)
echo "$out"
ms=$(((t1 - t0) / 1000000))
bad=0
echo "expect_ranks: exit status $rc after $ms ms"
if [ "$want" = fail ] && [ $rc -eq 0 ]; then echo "expect_ranks: FAIL: exit status 0, expected non-zero"; bad=1; fi
if [ "$want" = pass ] && [ $rc -ne 0 ]; then echo "expect_ranks: FAIL: exit status $rc, expected 0"; bad=1; fi
limit=10000
worst=$(echo "$out" | sed -n 's/^expect_elapsed rank [0-9]*: \([0-9]*\) ms$/\1/p' | sort -n | tail -1)
if [ -n "$worst" ]; then
    limit=60000
    echo "expect_ranks: slowest rank took $worst ms in its own process"
    if [ "$worst" -ge 10000 ]; then echo "expect_ranks: FAIL: a rank took $worst ms, the limit is 10 s"; bad=1; fi
fi
if [ $ms -ge $limit ]; then echo "expect_ranks: FAIL: took $ms ms, the limit is $limit ms"; bad=1; fi
echo "$pats" | while IFS= read -r p; do
    [ -z "$p" ] && continue
    r=0
    while [ $r -lt "$n" ]; do
        q=$(echo "$p" | sed "s/%r/$r/g")
        if ! echo "$out" | grep -Eq -- "$q"; then echo "expect_ranks: FAIL: no line matches: $q"; exit 1; fi
        case "$p" in *%r*) r=$((r + 1)) ;; *) r=$n ;; esac
    done
done || bad=1
[ $bad -eq 0 ] && echo "expect_ranks: PASSED"
exit $bad
