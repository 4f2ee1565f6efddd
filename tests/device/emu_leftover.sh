#!/bin/sh
# Runs a job whose ranks use emulated devices and end without weft_fini
# (an abort, the launcher's SIGTERM), prints its output, then "emu files
# left by its ranks: N": the /dev/shm files named after the ranks' pids
# (each rank prints its pid first, then becomes the command by exec).
# With --trace PREFIX the job also writes a trace there (its ranks' files
# PREFIX.rankN.json, written as .part and renamed once whole), and "trace
# files left: N" counts what is there after it (stale ones removed first).
# Exits with the job's status.
# Usage: emu_leftover.sh [--trace PREFIX] NP MPIRUN [MPIRUN-ARG ...] -- COMMAND [ARG ...]
trace=
if [ "$1" = "--trace" ]; then
    trace=$2
    shift 2
    rm -f "$trace".rank*
fi
np=$1
shift
mpirun=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    mpirun="$mpirun $1"
    shift
done
shift
[ -n "$trace" ] && set -- "$@" --weft-trace="$trace"
out=$($mpirun -n "$np" sh -c 'echo "rank pid $$"; exec "$@"' sh "$@" 2>&1)
s=$?
echo "$out"
left=0
for pid in $(echo "$out" | sed -n 's/^rank pid \([0-9]*\)$/\1/p'); do
    for f in /dev/shm/weft-emu-"$pid"-*; do
        [ -e "$f" ] || continue
        echo "left: $f"
        left=$((left + 1))
    done
done
echo "emu files left by its ranks: $left"
if [ -n "$trace" ]; then
    n=0
    for f in "$trace".rank*; do
        [ -e "$f" ] || continue
        echo "left: $f"
        n=$((n + 1))
    done
    echo "trace files left: $n"
    rm -f "$trace".rank*
fi
exit $s
