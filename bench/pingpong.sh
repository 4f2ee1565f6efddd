#!/usr/bin/env bash
# Tile ping-pong between 2 ranks of this machine: weft-pingpong, which times
# weft tasks moving a tile back and forth and, in the same program, a bare
# MPI_Send/MPI_Recv ping-pong of the same bytes, from 8 B to 64 MiB.
#
# Usage: bench/pingpong.sh [BUILD_DIR] [weft-pingpong options...]
#   BUILD_DIR  weft build tree (default /tmp/build-dist-bench; configured
#              Release and weft-pingpong built there if needed)
#   options    passed on (default: --max-size 64M -c 1; see weft-pingpong -h)
#
# Target (issue 3): the weft bandwidth at 4 MiB within 10% of bare MPI; the
# last lines say where it stands. This prints figures; it never fails on a
# timing (it is not a test).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=/tmp/build-dist-bench
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    build=$1
    shift
fi
[ $# -gt 0 ] || set -- --max-size 64M -c 1
mpiexec=(mpiexec -n 2 --bind-to core)
[ "$(id -u)" = 0 ] && mpiexec+=(--allow-run-as-root)

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA=OFF \
        -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$build" -j2 --target weft-pingpong >/dev/null

out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "weft-pingpong, 2 ranks, $(date '+%F %T'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"${mpiexec[@]}" "$build/apps/weft-pingpong" "$@" 2>&1 | tee "$out"
awk '$1 == 4194304 {
  printf "at 4 MiB: weft %.3f GB/s, bare MPI %.3f GB/s, weft/MPI %.3f: %s\n", $4, $6, $8,
         ($8 >= 0.9 ? "within 10% of bare MPI" : "NOT within 10% of bare MPI")
}' "$out"
