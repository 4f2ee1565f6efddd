#!/bin/sh
# A rank's cost follows its own work (docs/SCALE.md): a program simulated as
# the only rank and as rank R of a P x P grid. Both walk the same tasks;
# rank R keeps at most twice its share (1/P^2) of them, and its metadata
# peak is at most 1/D of the single rank's, which keeps every task.
#
# Usage: sim_scale_check.sh EXE P R D [ARG ...]
set -u
exe=$1 p=$2 r=$3 d=$4
shift 4
one=$("$exe" "$@" -P 1 -Q 1 --weft-sim_nranks=1 2>&1 | grep '^weft sim:')
many=$("$exe" "$@" -P "$p" -Q "$p" --weft-sim_nranks=$((p * p)) --weft-sim_rank="$r" 2>&1 |
    grep '^weft sim:')
echo "$one"
echo "$many"
num() { echo "$1" | sed -n "s/.* $2 \([0-9][0-9]*\)\( tasks\|,\| bytes\).*/\1/p"; }
w1=$(num "$one" walked) k1=$(num "$one" kept) m1=$(num "$one" metadata)
wn=$(num "$many" walked) kn=$(num "$many" kept) mn=$(num "$many" metadata)
[ -n "$w1" ] && [ -n "$wn" ] && [ -n "$m1" ] && [ -n "$mn" ] || {
    echo "sim_scale: a simulation did not print its line"
    exit 1
}
ok=1
[ "$w1" = "$wn" ] || { echo "sim_scale: walked $w1 alone, $wn as rank $r"; ok=0; }
[ "$k1" = "$w1" ] || { echo "sim_scale: the only rank kept $k1 of $w1"; ok=0; }
[ $((kn * p * p)) -le $((2 * k1)) ] || { echo "sim_scale: rank $r kept $kn, more than twice its share of $k1"; ok=0; }
[ $((mn * d)) -le "$m1" ] || { echo "sim_scale: metadata $mn bytes as rank $r, more than 1/$d of $m1"; ok=0; }
echo "sim_scale: metadata 1/$((m1 / mn)) of the single rank's"
[ "$ok" = 1 ] && echo "sim_scale: PASSED" || echo "sim_scale: FAILED"
[ "$ok" = 1 ]
