#!/usr/bin/env bash
# Distributed Cholesky on 2 ranks of this machine, one core each: weft-potrf
# beside StarPU-MPI's mpi_cholesky (Debian starpu-examples) and ScaLAPACK's
# pdpotrf (bench/scalapack_potrf.c, Debian libscalapack-openmpi-dev) at the
# same N, in one run, with the ratios.
#
# Usage: bench/dist_potrf.sh [options]
#   -N <n>               matrix order (default 8192)
#   -B <dir>             weft build tree (default /tmp/build-dist-bench; configured
#                        Release and weft-potrf built there if needed)
#   -r <runs>            runs a configuration, the best is kept (default 1)
#   --grids "<PxQ> ..."  process grids tried by every program (default "2x1 1x2")
#   --weft-nb "<nb> ..."       tile sizes of weft-potrf (default "256 384")
#   --starpu-nb "<nb> ..."     block sizes of mpi_cholesky, N/nb blocks; sizes
#                              that do not divide N are skipped (default "256 512")
#   --scalapack-nb "<nb> ..."  block sizes of pdpotrf (default "64 128")
#   --check              weft-potrf --check and scalapack_potrf --check as well
#   --quiet-wait <s>     before each run, wait up to s seconds (default 120) for
#                        the other jobs of the machine to use less than 0.2 core
#   --retries <k>        run a configuration again, up to k times (default 2),
#                        when other jobs took more than 0.1 core during it
# Env: STARPU_SCHED (default prio, the best of the stock schedulers here).
#
# Placement: mpiexec binds rank r to core r and every program keeps its
# threads there: weft-potrf -c 1; StarPU with STARPU_NCPU=1 and its worker,
# main and MPI threads pinned to core r (StarPU alone would pin the worker of
# both ranks to core 0); OpenBLAS single-threaded for ScaLAPACK.
#
# Caveat: mpi_cholesky of StarPU 1.3 is a SINGLE precision Cholesky (float
# tiles, sgemm/ssyrk/strsm); weft-potrf and pdpotrf are double precision. Its
# gflops are printed as StarPU reports them (N^3/3 / time) and the ratio is
# taken as is, which favours StarPU (single precision runs up to twice the
# double precision rate on these cores).
#
# Other jobs on this 2-core machine skew the figures: each run waits (up to
# --quiet-wait) until the cores are idle; "busy" gives how many cores others
# kept busy just before it started (over 0.5 s) and "others" how many they
# used on average while it ran (machine CPU time less this script's children).
# A figure with others above 0.1 is run again (--retries) and, if it stays
# above, flagged with a '*'.
# This prints figures; it never fails on a timing (it is not a test).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
n=8192
build=/tmp/build-dist-bench
runs=1
grids="2x1 1x2"
weft_nbs="256 384"
starpu_nbs="256 512"
scalapack_nbs="64 128"
check=0
quiet_wait=120
retries=2
while [ $# -gt 0 ]; do
    case $1 in
    -N) n=$2; shift 2 ;;
    -B) build=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    --grids) grids=$2; shift 2 ;;
    --weft-nb) weft_nbs=$2; shift 2 ;;
    --starpu-nb) starpu_nbs=$2; shift 2 ;;
    --scalapack-nb) scalapack_nbs=$2; shift 2 ;;
    --check) check=1; shift ;;
    --quiet-wait) quiet_wait=$2; shift 2 ;;
    --retries) retries=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "dist_potrf.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case $n$runs$quiet_wait$retries in *[!0-9]*|'') echo "dist_potrf.sh: -N, -r, --quiet-wait and --retries take integers" >&2; exit 2 ;; esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpiexec=(mpiexec -n 2 --bind-to core)
[ "$(id -u)" = 0 ] && mpiexec+=(--allow-run-as-root)

# ---- build ------------------------------------------------------------------
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA=OFF \
        -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$build" -j2 --target weft-potrf >/dev/null
weft=$build/apps/weft-potrf
mpicc -std=c11 -O2 -Wall -Wextra -o "$work/scalapack_potrf" "$here/scalapack_potrf.c" \
    -lscalapack-openmpi -lm
starpu=$(dpkg -L starpu-examples 2>/dev/null | grep '/mpi/mpi_cholesky$' | head -n 1 || true)
[ -n "$starpu" ] && [ -x "$starpu" ] || starpu=''
if [ -z "$starpu" ]; then
    echo "dist_potrf.sh: no mpi_cholesky (apt-get install starpu-examples); StarPU skipped" >&2
fi
# Per-rank pinning of StarPU's threads (OpenMPI, or PMIx, names the rank).
starpu_wrap='r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}
export STARPU_WORKERS_CPUID=$r STARPU_MAIN_THREAD_CPUID=$r STARPU_MPI_THREAD_CPUID=$r
exec "$0" "$@"'

# ---- runs -------------------------------------------------------------------
# results: program grid nb gflops busy others
: >"$work/results"
ncores=$(nproc)
hz=$(getconf CLK_TCK)
# "<non-idle jiffies> <all jiffies>" of the machine.
cpu_snap() {
    local u n s i w q sq st
    read -r _ u n s i w q sq st _ </proc/stat
    echo "$((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st))"
}
# Cores kept busy over 0.5 s (by others: nothing of this script runs then).
busy() {
    local a b
    a=$(cpu_snap)
    sleep 0.5
    b=$(cpu_snap)
    awk -v a="$a" -v b="$b" -v c="$ncores" 'BEGIN { split(a, x, " "); split(b, y, " ")
        t = y[2] - x[2]; printf "%.2f", (t > 0 ? (y[1] - x[1]) / t * c : 0) }'
}
# Waits up to quiet_wait seconds for busy < 0.2; prints the last figure.
wait_quiet() {
    local b waited=0
    b=$(busy)
    while awk -v b="$b" 'BEGIN { exit !(b >= 0.2) }' && [ "$waited" -lt "$quiet_wait" ]; do
        sleep 2
        waited=$((waited + 3))
        b=$(busy)
    done
    echo "$b"
}
# CPU seconds (user + sys) of this shell's finished children, from the
# output of `times` (which must run in this shell, not in a $(...) subshell).
child_cpu() {
    awk 'NR == 2 { s = 0; for (f = 1; f <= 2; f++) { split($f, a, /[ms]/); s += a[1] * 60 + a[2] }
                   printf "%.3f", s }' "$1"
}
# The best gflops of the "[****] TIME(s)" / "Synthetic GFlops" lines on stdin.
best() {
    awk '/^\[\*\*\*\*\] TIME/ { g = $(NF - 1) } /^Synthetic GFlops/ { g = $NF }
         g != "" { if (g + 0 > b + 0) b = g; g = "" } END { printf "%.2f", b }'
}
# measure PROGRAM GRID NB COMMAND...: waits for a quiet machine, runs the
# command (output to the log), records its best gflops, the cores busy before
# it and the cores that other processes used on average while it ran; runs it
# again (up to --retries times) while that is above 0.1 core.
measure() {
    local prog=$1 grid=$2 nb=$3 b s0 s1 c0 c1 t0 t1 g others try=0 flag=''
    shift 3
    while :; do
        b=$(wait_quiet)
        times >"$work/times0"
        s0=$(cpu_snap) t0=$(date +%s.%N)
        "$@" >"$work/out" 2>&1 || echo "(exit status $?)" >>"$work/out"
        s1=$(cpu_snap) t1=$(date +%s.%N)
        times >"$work/times1"
        c0=$(child_cpu "$work/times0") c1=$(child_cpu "$work/times1")
        others=$(awk -v a="$s0" -v b="$s1" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" \
            -v hz="$hz" 'BEGIN { split(a, x, " "); split(b, y, " ")
            o = ((y[1] - x[1]) / hz - (c1 - c0)) / (t1 - t0); printf "%.2f", (o > 0 ? o : 0) }')
        cat "$work/out" >>"$work/log"
        g=$(best <"$work/out")
        awk -v o="$others" 'BEGIN { exit !(o > 0.1) }' || break
        if [ "$try" -ge "$retries" ]; then
            flag='*'
            break
        fi
        try=$((try + 1))
        echo "  ($prog $grid NB $nb: $g gflops while others took $others core; again)"
    done
    printf '%-38s %5s %5s %8s %6s %6s%s\n' "$prog" "$grid" "$nb" "$g" "$b" "$others" "$flag"
    echo "$prog $grid $nb $g $b $others" >>"$work/results"
}
starpu_runs() { # runs of mpi_cholesky one after the other
    local k
    for k in $(seq "$runs"); do
        STARPU_SCHED=${STARPU_SCHED:-prio} STARPU_NCPU=1 STARPU_SILENT=1 STARPU_HOME=$work \
            "${mpiexec[@]}" sh -c "$starpu_wrap" "$starpu" "$@" || return
    done
}

extra=()
[ "$check" = 1 ] && extra+=(--check)
echo "dpotrf (lower), N=$n, 2 ranks x 1 core, best of $runs run(s) a configuration;" \
     "gflops = N^3/3 / time"
echo "busy: cores used by other jobs just before a run; others: on average during it"
echo "start: $(date '+%F %T'), load average $(cut -d' ' -f1-3 /proc/loadavg), $ncores cores"
printf '%-38s %5s %5s %8s %6s %6s\n' program grid NB gflops busy others
for grid in $grids; do
    p=${grid%x*} q=${grid#*x}
    for nb in $weft_nbs; do
        measure weft-potrf "$grid" "$nb" env -u OPENBLAS_NUM_THREADS "${mpiexec[@]}" "$weft" \
            -N "$n" -t "$nb" -P "$p" -Q "$q" -c 1 --nruns "$runs" "${extra[@]}"
    done
    for nb in $starpu_nbs; do
        [ -n "$starpu" ] || break
        if [ $((n % nb)) -ne 0 ]; then
            echo "  (mpi_cholesky NB=$nb skipped: it does not divide N=$n)"
            continue
        fi
        measure "StarPU-MPI mpi_cholesky (SINGLE prec.)" "$grid" "$nb" starpu_runs \
            -size "$n" -nblocks $((n / nb)) -dblockx "$p" -dblocky "$q"
    done
    for nb in $scalapack_nbs; do
        measure "ScaLAPACK pdpotrf" "$grid" "$nb" env OPENBLAS_NUM_THREADS=1 "${mpiexec[@]}" \
            "$work/scalapack_potrf" -N "$n" -t "$nb" -P "$p" -Q "$q" --nruns "$runs" \
            "${extra[@]}"
    done
done
echo "end: $(date '+%F %T'), load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- summary ----------------------------------------------------------------
awk '
{ prog = $1; g = $(NF - 2); cfg = $(NF - 4) " NB " $(NF - 3)
  if (!(prog in b) || g + 0 > b[prog] + 0) { b[prog] = g; c[prog] = cfg } }
END {
  w = b["weft-potrf"]
  printf "best weft-potrf:             %8.2f gflops (%s)\n", w, c["weft-potrf"]
  if ("StarPU-MPI" in b)
    printf "best StarPU-MPI mpi_cholesky: %7.2f gflops (%s, single precision)\n",
           b["StarPU-MPI"], c["StarPU-MPI"]
  if ("ScaLAPACK" in b)
    printf "best ScaLAPACK pdpotrf:      %8.2f gflops (%s)\n", b["ScaLAPACK"], c["ScaLAPACK"]
  if (("StarPU-MPI" in b) && b["StarPU-MPI"] > 0)
    printf "weft / StarPU-MPI: %.3f\n", w / b["StarPU-MPI"]
  if (("ScaLAPACK" in b) && b["ScaLAPACK"] > 0)
    printf "weft / ScaLAPACK:  %.3f\n", w / b["ScaLAPACK"]
}' "$work/results"
echo "--- raw lines"
grep -E 'TIME\(s\)|GFlops|residual|check:|rror|FAILED' "$work/log" || true
