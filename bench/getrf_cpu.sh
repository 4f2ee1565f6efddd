#!/usr/bin/env bash
# LU on the CPU cores of this machine: weft-getrf (no pivoting) beside
# ScaLAPACK's pdgetrf (bench/scalapack_getrf.c, WITH partial pivoting: it
# has no LU without) on the same diagonally dominant matrix, at one N, in
# two placements, with the ratios:
#   1p2c  one process, 2 cores: weft-getrf -c 2; pdgetrf on a 1 x 1 grid
#         with OpenBLAS on 2 threads;
#   2r1c  2 ranks, one core each (mpiexec --bind-to core): weft-getrf -c 1
#         and pdgetrf with OpenBLAS on 1 thread, on the grids of --grids.
#
# Usage: bench/getrf_cpu.sh [options]
#   -N <n>               matrix order (default 6144)
#   -B <dir>             weft build tree (default /tmp/build-getrf-bench;
#                        configured Release and weft-getrf built there if needed)
#   -r <runs>            runs a process (--nruns), the best is kept (default 2)
#   --grids "<PxQ> ..."  2-rank grids (default "2x1 1x2")
#   --weft-nb "<nb> ..."       tile sizes of weft-getrf (default "192 256 384")
#   --scalapack-nb "<nb> ..."  block sizes of pdgetrf (default "64 128")
#   --check              both programs check their factors (untimed)
# Needs mpicc and Debian's libscalapack-openmpi-dev.
#
# Figures are best-of-runs for each NB, then the best NB; the load average
# before each run is printed since other jobs on a small machine skew them.
# This prints figures; it never fails on a timing (it is not a test).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
n=6144
build=/tmp/build-getrf-bench
runs=2
grids="2x1 1x2"
weft_nbs="192 256 384"
scalapack_nbs="64 128"
check=()
while [ $# -gt 0 ]; do
    case $1 in
    -N) n=$2; shift 2 ;;
    -B) build=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    --grids) grids=$2; shift 2 ;;
    --weft-nb) weft_nbs=$2; shift 2 ;;
    --scalapack-nb) scalapack_nbs=$2; shift 2 ;;
    --check) check=(--check); shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "getrf_cpu.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA=OFF \
        -DBUILD_TESTING=OFF >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
fi
cmake --build "$build" -j2 --target weft-getrf >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; exit 1; }
weft=$build/apps/weft-getrf
mpicc -std=c11 -O2 -Wall -Wextra -o "$work/scalapack_getrf" "$here/scalapack_getrf.c" \
    -lscalapack-openmpi -lm
scal=$work/scalapack_getrf
mpiexec=(mpiexec -n 2 --bind-to core)
[ "$(id -u)" = 0 ] && mpiexec+=(--allow-run-as-root)

# The best gflops (last field but one) of the "[****] TIME(s)" lines on stdin.
best() { awk '/^\[\*\*\*\*\] TIME/ { g = $(NF - 1); if (g > b) b = g } END { printf "%.2f", b }'; }
# measure PLACEMENT PROGRAM GRID NB COMMAND...: one process (or one mpiexec)
# of --nruns runs; records "placement program grid nb gflops".
measure() {
    local place=$1 prog=$2 grid=$3 nb=$4 load g
    shift 4
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$@" >"$work/out" 2>&1 || echo "(exit status $?)" >>"$work/out"
    cat "$work/out" >>"$work/log"
    g=$(best <"$work/out")
    printf '%-5s %-26s %5s %5s %8s %6s\n' "$place" "$prog" "$grid" "$nb" "$g" "$load"
    echo "$place $prog $grid $nb $g" >>"$work/results"
}

: >"$work/results"
echo "LU, N=$n, best of $runs run(s) a process; gflops = 2 N^3 / 3 / time;" \
    "weft $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'), $(date '+%F %T')"
printf '%-5s %-26s %5s %5s %8s %6s\n' place program grid NB gflops load
for nb in $weft_nbs; do
    measure 1p2c weft-getrf 1x1 "$nb" env -u OPENBLAS_NUM_THREADS "$weft" -N "$n" -t "$nb" \
        -c 2 --nruns "$runs" "${check[@]}"
done
for nb in $scalapack_nbs; do
    measure 1p2c "pdgetrf(pivoting),2thr" 1x1 "$nb" env OPENBLAS_NUM_THREADS=2 "$scal" -N "$n" \
        -t "$nb" -P 1 -Q 1 --nruns "$runs" "${check[@]}"
done
for grid in $grids; do
    p=${grid%x*} q=${grid#*x}
    for nb in $weft_nbs; do
        measure 2r1c weft-getrf "$grid" "$nb" env -u OPENBLAS_NUM_THREADS "${mpiexec[@]}" \
            "$weft" -N "$n" -t "$nb" -P "$p" -Q "$q" -c 1 --nruns "$runs" "${check[@]}"
    done
    for nb in $scalapack_nbs; do
        measure 2r1c "pdgetrf(pivoting)" "$grid" "$nb" env OPENBLAS_NUM_THREADS=1 \
            "${mpiexec[@]}" "$scal" -N "$n" -t "$nb" -P "$p" -Q "$q" --nruns "$runs" \
            "${check[@]}"
    done
done

# Best of each program per placement, and weft / ScaLAPACK.
awk '{ k = $1 SUBSEP ($2 ~ /^weft/ ? "w" : "s")
       if (!(k in b) || $5 + 0 > b[k] + 0) { b[k] = $5; c[k] = $3 " NB " $4 } }
     END { for (i = 1; i <= 2; i++) { p = i == 1 ? "1p2c" : "2r1c"
             w = b[p, "w"]; s = b[p, "s"]
             if (s + 0 > 0)
               printf "%s: weft-getrf %.2f (%s) / pdgetrf %.2f (%s) = %.3f\n", p, w,
                      c[p, "w"], s, c[p, "s"], w / s } }' "$work/results"
echo "--- raw lines"
grep -E 'TIME\(s\)|residual|check:|rror|FAILED' "$work/log" || true
