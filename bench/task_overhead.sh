#!/usr/bin/env bash
# Empty-task overhead, weft against StarPU 1.3, in one run with ratios.
#
# Usage: bench/task_overhead.sh [BUILD_DIR] [NTASKS] [CORES...]
#   BUILD_DIR  weft build tree (default /tmp/build-bench; configured and
#              libweft built there if needed, Release)
#   NTASKS     tasks a run (default 200000); each figure is the best of 3 runs
#   CORES      worker counts to measure (default: 1 2)
# Env: STARPU_SCHED (default lws, StarPU 1.3's own default policy).
#
# Both programs are built here with plain gcc: bench/ is not part of the
# top-level CMake build, and the StarPU one needs only pkg-config starpu-1.3.
# This prints figures; it never fails on a timing (it is not a test).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-/tmp/build-bench}
ntasks=${2:-200000}
shift $(($# < 2 ? $# : 2))
cores=${*:-1 2}
reps=3
sched=${STARPU_SCHED:-lws}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- build -----------------------------------------------------------------
# CMake's chatter goes to a log that is shown only when the build fails.
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$work/build.log" 2>&1 ||
        { cat "$work/build.log"; exit 1; }
fi
cmake --build "$build" -j2 --target weft >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; exit 1; }
cflags=(-std=c11 -O2 -Wall -Wextra)
gcc "${cflags[@]}" -o "$work/weft_overhead" "$here/task_overhead.c" \
    -I"$root/include" -L"$build/src" -lweft -Wl,-rpath,"$build/src"
# shellcheck disable=SC2046 # pkg-config output is meant to be split
gcc "${cflags[@]}" -o "$work/starpu_overhead" "$here/starpu_overhead.c" \
    $(pkg-config --cflags --libs starpu-1.3)
example=$(dpkg -L starpu-examples 2>/dev/null | grep '/tasks_overhead$' | head -n 1 || true)

# ---- run -------------------------------------------------------------------
# StarPU: only CPU workers, no banner; STARPU_NCPU is its worker count as
# --weft-cores is weft's. Both bind their workers; the main thread inserts.
export STARPU_SILENT=1 STARPU_NCUDA=0 STARPU_NOPENCL=0 STARPU_SCHED="$sched"
for c in $cores; do
    "$work/weft_overhead" -n "$ntasks" -r "$reps" --weft-cores="$c" >>"$work/results"
    STARPU_NCPU=$c "$work/starpu_overhead" -n "$ntasks" -r "$reps" >>"$work/results"
    # StarPU's own microbenchmark, best of 3 of its "Per task" (submit + run):
    # no buffers, but task i waits for task i-1 through a tag, all submitted
    # before the first one is released - a chain, so it sits by "chain".
    if [ -n "$example" ]; then
        for _ in $(seq "$reps"); do
            STARPU_NCPU=$c "$example" -i "$ntasks" 2>&1 | awk '/^Per task:/ {print $3}'
        done | sort -g | head -n 1 | awk -v c="$c" -v n="$ntasks" '{
            printf "RESULT example chain cores=%s ntasks=%s best_s=%.6f insert_s=0\n",
                   c, n, $1 * n / 1e6 }' >>"$work/results"
    fi
done

# ---- report ----------------------------------------------------------------
echo "empty tasks: insert + run, ${ntasks} tasks a run, best of ${reps}; $(nproc) cores;" \
    "StarPU $(pkg-config --modversion starpu-1.3) STARPU_SCHED=$sched;" \
    "weft $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
echo "nodata: no data (independent); spread: RW on tile i%1024; chain: RW on one tile"
echo "'ins us' is the insertion loop alone (per task), 'us' is insertion + wait"
awk '
    $1 == "RESULT" {
        for (i = 4; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        key = $3 SUBSEP f["cores"]
        t[$2, key] = f["best_s"]; ins[$2, key] = f["insert_s"]; n = f["ntasks"]
        if (!(key in seen)) { seen[key] = 1; order[++k] = key }
    }
    END {
        printf "%-7s %5s | %12s %7s %7s | %12s %7s %7s | %11s\n", "pattern", "cores",
               "weft task/s", "us", "ins us", "StarPU t/s", "us", "ins us", "weft/StarPU"
        for (j = 1; j <= k; j++) {
            split(order[j], pc, SUBSEP); w = t["weft", order[j]]; s = t["starpu", order[j]]
            printf "%-7s %5s | %12.0f %7.3f %7.3f | %12.0f %7.3f %7.3f | %10.2fx\n",
                   pc[1], pc[2], n / w, 1e6 * w / n, 1e6 * ins["weft", order[j]] / n,
                   n / s, 1e6 * s / n, 1e6 * ins["starpu", order[j]] / n, s / w
            if ((("example", order[j]) in t)) {
                e = t["example", order[j]]
                printf "%-7s %5s | %12s %7s %7s | %12.0f %7.3f %7s | %10.2fx  %s\n",
                       "", "", "", "", "", n / e, 1e6 * e / n, "", e / w,
                       "(StarPU tasks_overhead example: tag chain)"
            }
        }
    }' "$work/results"
