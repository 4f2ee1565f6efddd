#!/usr/bin/env bash
# Tiled Cholesky on the CPU cores: weft-potrf against LAPACKE_dpotrf of
# OpenBLAS (its own threads) on the same matrix, in one run with the ratio.
#
# Usage: bench/potrf_cpu.sh [BUILD_DIR] [N] [NB...]
#   BUILD_DIR  weft build tree (default /tmp/build-bench; configured and
#              weft-potrf built there if needed, Release)
#   N          matrix order (default 8192)
#   NB         tile sizes weft-potrf tries (default: 192 256 320 384 512)
# Env: CORES (default: all, nproc) - weft workers and OpenBLAS threads alike.
#
# Each figure is the best of 2 runs (--nruns 2, one process each program).
# This prints figures; it never fails on a timing (it is not a test).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-/tmp/build-bench}
n=${2:-8192}
shift $(($# < 2 ? $# : 2))
nbs=${*:-192 256 320 384 512}
cores=${CORES:-$(nproc)}
nruns=2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# CMake's chatter goes to a log that is shown only when the build fails.
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$work/build.log" 2>&1 ||
        { cat "$work/build.log"; exit 1; }
fi
cmake --build "$build" -j2 --target weft-potrf >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; exit 1; }
gcc -std=c11 -O2 -Wall -Wextra -o "$work/lapacke_potrf" "$here/lapacke_potrf.c" \
    -llapacke -lopenblas

# The best gflops (last field but one) of the "[****] TIME(s)" lines on stdin.
best() { awk '/^\[\*\*\*\*\] TIME/ { g = $(NF - 1); if (g > b) b = g } END { printf "%.2f", b }'; }

echo "dpotrf (lower), N=$n, $cores cores, best of $nruns runs; gflops = N^3/3 / time;" \
    "weft $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
printf '%-34s %6s %10s\n' "program" "NB" "gflops"
best_nb='' best_weft=0
for nb in $nbs; do
    # No OPENBLAS_NUM_THREADS for weft: weft_init itself keeps OpenBLAS at
    # one thread inside its workers, and that is what is measured here.
    g=$(env -u OPENBLAS_NUM_THREADS "$build/apps/weft-potrf" -N "$n" -t "$nb" -c "$cores" \
        --nruns "$nruns" | tee -a "$work/log" | best)
    printf '%-34s %6s %10s\n' "weft-potrf -c $cores" "$nb" "$g"
    if awk -v g="$g" -v b="$best_weft" 'BEGIN { exit !(g > b) }'; then
        best_weft=$g best_nb=$nb
    fi
done
g_lapacke=$(OPENBLAS_NUM_THREADS=$cores "$work/lapacke_potrf" -N "$n" --nruns "$nruns" |
    tee -a "$work/log" | best)
printf '%-34s %6s %10s\n' "LAPACKE_dpotrf OpenBLAS ($cores thr)" "-" "$g_lapacke"
awk -v w="$best_weft" -v l="$g_lapacke" -v nb="$best_nb" \
    'BEGIN { printf "weft/LAPACKE at best NB=%s: %.3f (%.1f%%)\n", nb, w / l, 100 * w / l }'
echo "--- raw lines"
cat "$work/log"
