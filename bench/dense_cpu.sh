#!/usr/bin/env bash
# weft-gemm and weft-posv beside ScaLAPACK's pdgemm and pdposv
# (bench/scalapack_dense.c) on this machine's CPU cores, in one run with
# the ratios: on 1 process x 2 cores and on 2 ranks x 1 core (2 x 1 grid).
# Beside them, for gemm, the tiled GEMM with no runtime around it
# (bench/tile_gemm_ceiling.c, one rank a core, weft's tile sizes): the
# ceiling of a tiled GEMM on these cores with this BLAS.
#
# Usage: bench/dense_cpu.sh [BUILD_DIR] [N] [NRHS]
#   BUILD_DIR  weft build tree (default /tmp/build-dense-bench; configured
#              Release and the apps built there if needed)
#   N          matrix order (default 6144)
#   NRHS       right-hand sides of posv (default 512)
# Env: WEFT_NB (default "256 384"), SCALAPACK_NB (default "64 128 256"):
#   tile sizes tried; the best of each program is kept.
# OpenBLAS runs 2 threads in the 1-process ScaLAPACK runs, 1 otherwise;
# mpiexec binds rank r to core r. Other jobs on the machine skew the
# figures. This prints figures; it never fails on a timing.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-/tmp/build-dense-bench}
n=${2:-6144}
nrhs=${3:-512}
weft_nbs=${WEFT_NB:-256 384}
sl_nbs=${SCALAPACK_NB:-64 128 256}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=(mpiexec --bind-to core)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$work/build.log" 2>&1 ||
        { cat "$work/build.log"; exit 1; }
fi
cmake --build "$build" -j2 --target weft-gemm weft-posv >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; exit 1; }
mpicc -std=c11 -O2 -o "$work/scalapack_dense" "$here/scalapack_dense.c" -lscalapack-openmpi -lm
mpicc -std=c11 -O2 -o "$work/tile_gemm_ceiling" \
    "$here/tile_gemm_ceiling.c" -lopenblas

# The best gflops (last field but one) of the "[****] TIME(s)" lines on stdin.
best() { awk '/^\[\*\*\*\*\] TIME/ { g = $(NF - 1); if (g > b) b = g } END { printf "%.2f", b }'; }

# best_of LABEL NBS COMMAND...: runs COMMAND with -t NB for each NB.
best_of() {
    local label=$1 nbs=$2 b=0 nb g
    shift 2
    for nb in $nbs; do
        g=$("$@" -t "$nb" 2>&1 | tee -a "$work/log" | best)
        echo "  $label NB=$nb: $g gflops" >&2
        b=$(awk -v g="$g" -v b="$b" 'BEGIN { print (g > b ? g : b) }')
    done
    echo "$b"
}

echo "N=$n NRHS=$nrhs, $(nproc) cores, $(date -u +%F), weft $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
printf '%-6s %-22s %10s %10s %8s\n' op config weft scalapack ratio
for op in gemm posv; do
    extra=()
    [ "$op" = posv ] && extra=(--nrhs "$nrhs")
    w1=$(best_of "weft-$op 1x2c" "$weft_nbs" env -u OPENBLAS_NUM_THREADS \
        "$build/apps/weft-$op" -N "$n" -c 2 "${extra[@]}")
    s1=$(best_of "pd$op 1x2c" "$sl_nbs" env OPENBLAS_NUM_THREADS=2 \
        "${mpi[@]}" -n 1 --bind-to none "$work/scalapack_dense" "$op" -N "$n" "${extra[@]}")
    w2=$(best_of "weft-$op 2r" "$weft_nbs" env -u OPENBLAS_NUM_THREADS \
        "${mpi[@]}" -n 2 "$build/apps/weft-$op" -N "$n" -P 2 -Q 1 -c 1 "${extra[@]}")
    s2=$(best_of "pd$op 2r" "$sl_nbs" env OPENBLAS_NUM_THREADS=1 \
        "${mpi[@]}" -n 2 "$work/scalapack_dense" "$op" -N "$n" -P 2 -Q 1 "${extra[@]}")
    awk -v o="$op" -v w="$w1" -v s="$s1" 'BEGIN { printf "%-6s %-22s %10.2f %10.2f %8.3f\n", o, "1 process x 2 cores", w, s, w / s }'
    awk -v o="$op" -v w="$w2" -v s="$s2" 'BEGIN { printf "%-6s %-22s %10.2f %10.2f %8.3f\n", o, "2 ranks x 1 core (2x1)", w, s, w / s }'
    if [ "$op" = gemm ]; then
        c=$(best_of "bare tiles 2 cores" "$weft_nbs" env OPENBLAS_NUM_THREADS=1 \
            "${mpi[@]}" -n 2 "$work/tile_gemm_ceiling" -N "$n")
        awk -v w="$w1" -v c="$c" -v s="$s1" 'BEGIN { printf "%-6s %-22s %10.2f %10s %8s  (weft 1x2c / bare tiles %.3f, bare tiles / pdgemm 1x2c %.3f)\n", "gemm", "bare tiles, no runtime", c, "-", "-", w / c, c / s }'
    fi
done
echo "--- raw lines"
cat "$work/log"
