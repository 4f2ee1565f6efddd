#!/usr/bin/env bash
# weft's dense apps beside DPLASMA's testers (PaRSEC + DPLASMA, CPU build) on
# this machine's cores, in one run, with the ratios weft / DPLASMA:
#   potrf  weft-potrf  vs testing_dpotrf
#   gemm   weft-gemm   vs testing_dgemm
#   getrf  weft-getrf  vs testing_dgetrf_nopiv   (both without pivoting)
#   geqrf  weft-geqrf  vs testing_dgeqrf         (same inner blocking IB)
# in two placements:
#   1p2c      one process, 2 worker cores (-c 2);
#   2r1c PxQ  2 ranks, one core each (mpiexec --bind-to core), -c 1.
#
# DPLASMA is built from a source tree the user supplies; none of its code is
# in this repository. DPLASMA vendors PaRSEC as a git submodule ("parsec") at
# a pinned commit: the tree must have that submodule checked out (the build
# never downloads anything). One way, from bare clones of ICLDisco/dplasma
# and ICLDisco/parsec:
#     git --git-dir=DPLASMA.git archive HEAD | tar -x -C SRC
#     pin=$(git --git-dir=DPLASMA.git ls-tree HEAD parsec | awk '{print $3}')
#     git --git-dir=PARSEC.git archive "$pin" | tar -x -C SRC/parsec
#
# Usage: bench/dplasma_cpu.sh DPLASMA_SRC DPLASMA_BUILD [WEFT_BUILD]
#   DPLASMA_SRC    DPLASMA source tree with parsec/ filled in
#   DPLASMA_BUILD  build folder for it (configured here if it has no
#                  CMakeCache.txt; only the four testers are built, -j$JOBS)
#   WEFT_BUILD     weft build tree holding apps/weft-* (default: <repo>/build;
#                  configured Release without CUDA and the apps built if absent)
# Env: N      matrix order (default 6144)
#      NBS    tile sizes tried by both sides (default "192 256 320"); the best
#             of each side is kept, and its NB shown
#      IB     inner blocking of QR, DPLASMA -i and weft-geqrf -b (default 32)
#      RUNS   --nruns of every process, the best run is kept (default 2)
#      GRIDS  2-rank grids (default "2x1"; "2x1 1x2" for both)
#      OPS    operations measured (default "potrf gemm getrf geqrf")
#      JOBS   build parallelism (default 2)
#      LIMIT  seconds one process may take before it is stopped (default 900)
#
# Debian packages: the ones .ci/deps installs (cmake gcc make pkg-config
# libopenmpi-dev openmpi-bin libhwloc-dev libopenblas-dev liblapacke-dev)
# plus flex and bison, which PaRSEC's PTG precompiler (parsec-ptgpp) needs
# when the tree has no pregenerated parser (a git archive has none). The
# script stops with the list of those missing. No CUDA, HIP, Fortran or C++:
# they are switched off in the configuration.
#
# How DPLASMA is run, to be fair to it (what its authors tune):
#   - OPENBLAS_NUM_THREADS=1: each PaRSEC task calls sequential BLAS;
#   - on 2 ranks, each rank's worker is bound to its own core: mpiexec binds
#     rank r to core r and PARSEC_MCA_bind_map (a file, one line per rank)
#     puts the worker of rank r on core r;
#   - a sleeping communication thread: PARSEC_MCA_runtime_comm_thread_yield=2
#     (yield as soon as idle), PARSEC_MCA_runtime_comm_thread_yield_duration=
#     1000000 ns (1 ms). Without these, 2 ranks on 2 cores run ~1.85x slower.
# weft runs as the other bench scripts run it: OPENBLAS_NUM_THREADS unset
# (weft_init keeps OpenBLAS on one thread inside its workers).
#
# gflops are the programs' own "[****] TIME(s)" lines (the figure before the
# first "gflops"; DPLASMA's lines also carry an ENQ&PROG&DEST figure after,
# which is not used). The load average before each run is printed: other
# jobs on a small machine skew the figures. This prints figures; it never
# fails on a timing (it is not a test). Nothing is checked numerically.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
if [ $# -lt 2 ] || [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
    sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
    [ $# -ge 2 ] && exit 0 || exit 2
fi
src=$(cd "$1" && pwd)
build=$2
weft_build=${3:-$root/build}
n=${N:-6144}
nbs=${NBS:-192 256 320}
ib=${IB:-32}
runs=${RUNS:-2}
grids=${GRIDS:-2x1}
ops=${OPS:-potrf gemm getrf geqrf}
jobs=${JOBS:-2}
limit=${LIMIT:-900}

# --- What the build needs.
need="cmake gcc make pkg-config libopenmpi-dev openmpi-bin libhwloc-dev libopenblas-dev liblapacke-dev flex bison"
if command -v dpkg >/dev/null 2>&1; then
    missing=""
    for p in $need; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
    if [ -n "$missing" ]; then
        echo "dplasma_cpu.sh: missing Debian packages:$missing" >&2
        echo "  install them with: apt-get install --no-install-recommends$missing" >&2
        exit 1
    fi
else
    for c in cmake cc make mpicc mpiexec flex bison; do
        command -v "$c" >/dev/null 2>&1 ||
            { echo "dplasma_cpu.sh: '$c' not found (see the package list in the header)" >&2; exit 1; }
    done
fi
if [ ! -f "$src/CMakeLists.txt" ] || ! grep -q 'project *(DPLASMA' "$src/CMakeLists.txt"; then
    echo "dplasma_cpu.sh: $src is not a DPLASMA source tree" >&2; exit 1
fi
if [ ! -f "$src/parsec/CMakeLists.txt" ]; then
    echo "dplasma_cpu.sh: $src/parsec is empty: check out PaRSEC at the commit DPLASMA pins" \
        "(git ls-tree HEAD parsec in a DPLASMA clone) into it; see the header" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$build"

# --- Build DPLASMA's four testers (double precision only, CPU only, MPI on,
# PaRSEC from the submodule, OpenBLAS for BLAS/LAPACK and Debian's LAPACKE).
testers="testing_dpotrf testing_dgemm testing_dgetrf_nopiv testing_dgeqrf"
t0=$(date +%s)
if [ ! -f "$build/CMakeCache.txt" ]; then
    echo "configuring DPLASMA in $build" >&2
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
        -DDPLASMA_PRECISIONS=d -DBUILD_SHARED_LIBS=ON \
        -DSUPPORT_FORTRAN=OFF -DSUPPORT_CXX=OFF -DBLA_VENDOR=OpenBLAS \
        -DDPLASMA_GPU_WITH_CUDA=OFF -DDPLASMA_GPU_WITH_HIP=OFF \
        -DPARSEC_GPU_WITH_CUDA=OFF -DPARSEC_GPU_WITH_HIP=OFF -DPARSEC_GPU_WITH_LEVEL_ZERO=OFF \
        -DPARSEC_DIST_WITH_MPI=ON -DPARSEC_HAVE_DEV_RECURSIVE_SUPPORT=OFF \
        -DDPLASMA_WITH_SCALAPACK_WRAPPER=OFF -DDPLASMA_FORCE_INTERNAL_PARSEC=ON \
        >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
fi
echo "building $testers (-j$jobs)" >&2
# shellcheck disable=SC2086
cmake --build "$build" -j"$jobs" --target $testers >"$work/build.log" 2>&1 ||
    { tail -n 60 "$work/build.log"; exit 1; }
echo "DPLASMA testers ready in $(($(date +%s) - t0)) s" >&2
dpl=$build/tests

# --- weft's apps.
weft_apps="weft-potrf weft-gemm weft-getrf weft-geqrf"
if [ ! -f "$weft_build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$weft_build" -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA=OFF \
        -DBUILD_TESTING=OFF >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
fi
# shellcheck disable=SC2086
cmake --build "$weft_build" -j"$jobs" --target $weft_apps >"$work/build.log" 2>&1 ||
    { tail -n 60 "$work/build.log"; exit 1; }
weft=$weft_build/apps

mpiexec=(mpiexec --oversubscribe)
[ "$(id -u)" = 0 ] && mpiexec+=(--allow-run-as-root)
# PARSEC_MCA_bind_map=file:...: line r is the core list of rank r.
printf '0\n1\n' >"$work/bind_map"
parsec2=(PARSEC_MCA_bind_map="file:$work/bind_map" PARSEC_MCA_runtime_comm_thread_yield=2
    PARSEC_MCA_runtime_comm_thread_yield_duration=1000000)

# The best gflops of the "[****] TIME(s)" lines on stdin: the field before
# the first "gflops" of each line.
best() {
    awk '/^\[\*\*\*\*\] TIME/ { for (i = 2; i <= NF; i++) if ($i == "gflops") { g = $(i - 1); break }
                               if (g + 0 > b + 0) b = g }
         END { printf "%.2f", b + 0 }'
}
# measure OP PLACE SIDE NB COMMAND...: one process (or one mpiexec), its
# output kept in the log; prints a line and records "op place side nb gflops".
measure() {
    local op=$1 place=$2 side=$3 nb=$4 load g rc=0
    shift 4
    load=$(cut -d' ' -f1 /proc/loadavg)
    echo "### $op $place $side NB=$nb: $*" >>"$work/log"
    timeout "$limit" "$@" >"$work/out" 2>&1 || rc=$?
    cat "$work/out" >>"$work/log"
    g=$(best <"$work/out")
    [ "$rc" = 0 ] || { echo "(exit status $rc)" >>"$work/log"; g="$g(rc=$rc)"; }
    printf '%-6s %-9s %-8s %5s %12s %6s\n' "$op" "$place" "$side" "$nb" "$g" "$load"
    echo "$op $place $side $nb ${g%%(*}" >>"$work/results"
}

: >"$work/results"
dpl_ver() { git -C "$1" rev-parse --short HEAD 2>/dev/null || echo "$1 (not a git checkout)"; }
echo "weft vs DPLASMA, N=$n, NB in {$nbs}, QR IB=$ib, best of $runs run(s) a process;" \
    "$(nproc) cores; $(date -u '+%F %T UTC')"
echo "weft $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?');" \
    "DPLASMA $(dpl_ver "$src"); PaRSEC $(dpl_ver "$src/parsec")"
printf '%-6s %-9s %-8s %5s %12s %6s\n' op place side NB gflops load
for op in $ops; do
    case $op in
    potrf) tester=testing_dpotrf wapp=weft-potrf dx=() wx=() ;;
    gemm) tester=testing_dgemm wapp=weft-gemm dx=() wx=() ;;
    getrf) tester=testing_dgetrf_nopiv wapp=weft-getrf dx=() wx=() ;;
    geqrf) tester=testing_dgeqrf wapp=weft-geqrf dx=(-i "$ib") wx=(-b "$ib") ;;
    *) echo "dplasma_cpu.sh: unknown op '$op'" >&2; exit 2 ;;
    esac
    for nb in $nbs; do
        measure "$op" 1p2c weft "$nb" env -u OPENBLAS_NUM_THREADS \
            "$weft/$wapp" -N "$n" -t "$nb" -c 2 --nruns "$runs" "${wx[@]}"
        measure "$op" 1p2c dplasma "$nb" env OPENBLAS_NUM_THREADS=1 \
            "${mpiexec[@]}" -n 1 --bind-to none \
            "$dpl/$tester" -N "$n" -t "$nb" -P 1 -Q 1 -c 2 --nruns "$runs" "${dx[@]}"
    done
    for grid in $grids; do
        p=${grid%x*} q=${grid#*x}
        for nb in $nbs; do
            measure "$op" "2r1c$grid" weft "$nb" env -u OPENBLAS_NUM_THREADS \
                "${mpiexec[@]}" -n 2 --bind-to core \
                "$weft/$wapp" -N "$n" -t "$nb" -P "$p" -Q "$q" -c 1 --nruns "$runs" "${wx[@]}"
            measure "$op" "2r1c$grid" dplasma "$nb" env OPENBLAS_NUM_THREADS=1 "${parsec2[@]}" \
                "${mpiexec[@]}" -n 2 --bind-to core \
                "$dpl/$tester" -N "$n" -t "$nb" -P "$p" -Q "$q" -c 1 --nruns "$runs" "${dx[@]}"
        done
    done
done

# --- One row per op and placement: each side's best NB, and weft / DPLASMA.
echo
echo "N=$n, gflops (best NB), $(date -u +%F)"
awk '{ k = $1 SUBSEP $2 SUBSEP $3
       if (!(k in g) || $5 + 0 > g[k] + 0) { g[k] = $5; nb[k] = $4 }
       if (!(($1, $2) in seen)) { seen[$1, $2] = 1; order[++m] = $1 SUBSEP $2 } }
     END { printf "%-6s %-10s %16s %16s %7s\n", "op", "placement", "weft", "DPLASMA", "ratio"
           for (i = 1; i <= m; i++) { split(order[i], a, SUBSEP)
             w = g[a[1], a[2], "weft"]; d = g[a[1], a[2], "dplasma"]
             r = d + 0 > 0 ? sprintf("%.3f", w / d) : "-"
             printf "%-6s %-10s %8.2f (%5s) %8.2f (%5s) %7s\n", a[1], a[2],
                    w, nb[a[1], a[2], "weft"], d, nb[a[1], a[2], "dplasma"], r } }' "$work/results"
echo "--- raw lines"
grep -E '^###|TIME\(s\)|rror|FAILED|suspicious|exit status' "$work/log" || true
