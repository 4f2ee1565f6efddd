#!/usr/bin/env bash
# Tile QR on this machine's CPU cores: weft-geqrf beside ScaLAPACK's pdgeqrf
# (bench/scalapack_geqrf.c, Debian libscalapack-openmpi-dev) on the same
# matrix (apps/qr_matrix.h), in one run, with the ratios.
#
# Usage: bench/geqrf_cpu.sh [BUILD_DIR] [N]
#   BUILD_DIR  weft build tree (default /tmp/build-geqrf-bench; configured
#              Release without CUDA and weft-geqrf built there if needed)
#   N          square matrix order (default 6144)
# Env: WEFT_CFGS   weft-geqrf NB:IB pairs tried (default "192:32 256:32 256:64")
#      SCALA_NBS   pdgeqrf block sizes tried (default "32 64")
#      GRIDS       2-rank grids tried by both (default "2x1 1x2")
#      RUNS        runs a configuration, the best is kept (default 1)
#
# Two placements: 1 process x 2 cores (weft-geqrf -c 2; pdgeqrf on one rank
# with 2 OpenBLAS threads) and 2 ranks x 1 core (mpiexec binds rank r to
# core r; weft-geqrf -c 1, OpenBLAS single-threaded for pdgeqrf). Each
# program's best figure over its configurations is compared. Other jobs on
# a shared machine skew the figures: run it on idle cores. It prints
# figures and never fails on a timing (it is not a test).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-/tmp/build-geqrf-bench}
n=${2:-6144}
weft_cfgs=${WEFT_CFGS:-192:32 256:32 256:64}
scala_nbs=${SCALA_NBS:-32 64}
grids=${GRIDS:-2x1 1x2}
runs=${RUNS:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpiexec=(mpiexec --bind-to core)
[ "$(id -u)" = 0 ] && mpiexec+=(--allow-run-as-root)

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA=OFF \
        -DBUILD_TESTING=OFF >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
fi
cmake --build "$build" -j2 --target weft-geqrf >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; exit 1; }
mpicc -std=c11 -O2 -Wall -Wextra -o "$work/scalapack_geqrf" "$here/scalapack_geqrf.c" \
    -lscalapack-openmpi -lm
weft=$build/apps/weft-geqrf

# The best gflops (last field but one) of the "[****] TIME(s)" lines on stdin.
best() { awk '/^\[\*\*\*\*\] TIME/ { g = $(NF - 1); if (g > b) b = g } END { printf "%.2f", b }'; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
row() { printf '%-44s %10s\n' "$1" "$2"; }

echo "dgeqrf N=$n, best of $runs run(s) a configuration; gflops = (2N^3 - 2N^3/3) / time;" \
    "weft $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'); $(date -u +%F)"
w1=0 s1=0 w2=0 s2=0
echo "--- 1 process x 2 cores"
for c in $weft_cfgs; do
    g=$(env -u OPENBLAS_NUM_THREADS "$weft" -N "$n" -t "${c%%:*}" -b "${c##*:}" -c 2 \
        --nruns "$runs" | tee -a "$work/log" | best)
    row "weft-geqrf -c 2 -t ${c%%:*} -b ${c##*:}" "$g"
    w1=$(max "$w1" "$g")
done
for nb in $scala_nbs; do
    g=$(OPENBLAS_NUM_THREADS=2 "${mpiexec[@]}" -n 1 --bind-to none "$work/scalapack_geqrf" \
        -N "$n" -t "$nb" --nruns "$runs" | tee -a "$work/log" | best)
    row "pdgeqrf 1 rank, 2 BLAS threads, NB $nb" "$g"
    s1=$(max "$s1" "$g")
done
echo "--- 2 ranks x 1 core"
for grid in $grids; do
    p=${grid%x*} q=${grid#*x}
    for c in $weft_cfgs; do
        g=$(env -u OPENBLAS_NUM_THREADS "${mpiexec[@]}" -n 2 "$weft" -N "$n" -t "${c%%:*}" \
            -b "${c##*:}" -P "$p" -Q "$q" -c 1 --nruns "$runs" | tee -a "$work/log" | best)
        row "weft-geqrf $grid -c 1 -t ${c%%:*} -b ${c##*:}" "$g"
        w2=$(max "$w2" "$g")
    done
    for nb in $scala_nbs; do
        g=$(OPENBLAS_NUM_THREADS=1 "${mpiexec[@]}" -n 2 "$work/scalapack_geqrf" -N "$n" -t "$nb" \
            -P "$p" -Q "$q" --nruns "$runs" | tee -a "$work/log" | best)
        row "pdgeqrf $grid NB $nb" "$g"
        s2=$(max "$s2" "$g")
    done
done
awk -v w1="$w1" -v s1="$s1" -v w2="$w2" -v s2="$s2" 'BEGIN {
    printf "weft/ScaLAPACK, best of each: 1 process x 2 cores %.2f / %.2f = %.3f; " \
        "2 ranks x 1 core %.2f / %.2f = %.3f (target 1.1)\n",
        w1, s1, (s1 > 0 ? w1 / s1 : 0), w2, s2, (s2 > 0 ? w2 / s2 : 0) }'
echo "--- raw lines"
cat "$work/log"
