#!/bin/sh
# The matrices of --check are made with the app's own: a check past the
# rank's share of host memory is refused before the factorization, not
# after it (they were made once the work was done). Learns the share that
# host_memory_use=1 gives on this machine from a refusal, sizes N so that
# the app's matrices take FRACTION of it each, then: without --check the
# run passes; with it, it fails at once, naming the check's matrix, with
# no timing line (no factorization ran).
#
# Usage: check_room.sh FRACTION APP [ARG ...]   (ARG: N in "@N@" is replaced)
set -u
frac=$1
app=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
use=--weft-host_memory_use=1

"$app" -N 2000000 -t 1000 -c 1 $use >"$out" 2>&1
limit=$(sed -n "s/.*past the rank's share of the node's memory for weft's host copies: \([0-9]*\) bytes.*/\1/p" "$out" | head -1)
if [ -z "$limit" ]; then
    cat "$out"
    echo "check_room: no refusal to learn the share from"
    exit 1
fi
n=$(awk -v l="$limit" -v f="$frac" 'BEGIN { printf "%d", sqrt(f * l / 8) }')
args=$(echo "$*" | sed "s/@N@/$n/g")
echo "check_room: share $limit bytes, N = $n"

if ! "$app" -N "$n" -c 2 $use $args >"$out" 2>&1; then
    cat "$out"
    echo "check_room: N = $n without --check failed (its matrices should fit)"
    exit 1
fi
start=$(date +%s)
if "$app" -N "$n" -c 2 $use $args --check >"$out" 2>&1; then
    cat "$out"
    echo "check_room: N = $n with --check passed: its matrices should not fit"
    exit 1
fi
took=$(($(date +%s) - start))
cat "$out"
grep -q "cannot create the $n x [0-9]* matrix of the check (--check)" "$out" ||
    { echo "check_room: the check's matrix is not named"; exit 1; }
grep -q "refused before any tile was allocated" "$out" ||
    { echo "check_room: weft's refusal is not there"; exit 1; }
if grep -q '^\[\*\*\*\*\]' "$out"; then
    echo "check_room: a factorization ran before the refusal"
    exit 1
fi
echo "check_room: refused in $took s"
