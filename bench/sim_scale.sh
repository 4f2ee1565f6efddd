#!/bin/sh
# Per-rank cost of weft's insertion as the grid grows (docs/SCALE.md), by
# simulation (sim_nranks, sim_rank): weft-potrf N=262144 NB=1024 (256 x 256
# tiles) and weft-gemm-stress (NB=1024, 256 chains of 1024 steps) on P x P
# grids, P = 1 2 4 .. 64, simulated as rank 0 and as the middle rank of the
# grid (row P/2, column P/2). One simulation a line; prints a Markdown
# table of the "weft sim:" lines with the insertion time per walked task.
#
# Usage: bench/sim_scale.sh [BUILD_DIR] [GRIDS]   (defaults: build, "1 2 4 8 16 32 64")
# Environment: SIM_POTRF_N (262144), SIM_NB (1024), SIM_GS_WIDTH (256),
# SIM_GS_DEPTH (1024), SIM_APPS ("potrf gemm-stress"), SIM_REPS (1): runs of
# each line, of which the one with the least insertion time is printed (the
# insertion time is the inserting thread's CPU time, which other processes
# of a loaded machine still stretch through the caches they share).
set -eu
build=${1:-build}
grids=${2:-"1 2 4 8 16 32 64"}
n=${SIM_POTRF_N:-262144}
nb=${SIM_NB:-1024}
width=${SIM_GS_WIDTH:-256}
depth=${SIM_GS_DEPTH:-1024}
apps=${SIM_APPS:-"potrf gemm-stress"}
reps=${SIM_REPS:-1}

run_one() { # app P rank -> the "weft sim:" line
    app=$1 p=$2 r=$3
    case $app in
    potrf) set -- "$build/apps/weft-potrf" -N "$n" -t "$nb" ;;
    gemm-stress) set -- "$build/apps/weft-gemm-stress" -t "$nb" --width "$width" --depth "$depth" ;;
    esac
    "$@" -P "$p" -Q "$p" -c 1 --weft-sim_nranks=$((p * p)) --weft-sim_rank="$r" 2>&1 |
        grep '^weft sim:'
}

echo "| app | grid | rank | walked | kept | sends | recvs | insert s | ns / walked | metadata MB |"
echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for app in $apps; do
    for p in $grids; do
        mid=$(((p / 2) * p + p / 2))
        ranks=0
        [ "$mid" -ne 0 ] && ranks="0 $mid"
        for r in $ranks; do
            line=$(i=0; while [ "$i" -lt "$reps" ]; do run_one "$app" "$p" "$r"; i=$((i + 1)); done |
                sort -t, -k5.9 -g | head -n 1)
            echo "$line" | awk -v app="$app" -v grid="${p}x$p" '{
                gsub(",", "");
                w = $8; k = $11; s = $13; v = $15; t = $17; m = $20;
                printf "| %s | %s | %s | %d | %d | %d | %d | %.3f | %.1f | %.1f |\n",
                       app, grid, $4, w, k, s, v, t, t * 1e9 / w, m / 1048576 }'
        done
    done
done
