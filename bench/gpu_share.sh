#!/usr/bin/env bash
# Ranks sharing one GPU, with and without MPS (issue "GPU speed where
# runtimes lose": 2 ranks sharing >= 0.95 of one rank; issue "Across nodes",
# item 4: weft's cost per move). Without MPS the GPU runs one process's
# kernels at a time; with it, both ranks' kernels run side by side. The
# script starts its own MPS control daemon (pipe and log folders under
# OUTDIR, so it never meets another one) and stops it at the end.
#   potrf     weft-potrf N (default 32768), one rank, then 2 ranks as 2x1
#             and 1x2, each --nruns 3 (the first run is the cold one)
#   pingpong  PP_CELLS=ipc bench/gpu_pingpong.sh up to 64 MiB
# Usage: bench/gpu_share.sh BUILD OUTDIR [N]   (BUILD: a CUDA build with the apps)
# Prints figures; never fails on a timing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: gpu_share.sh BUILD OUTDIR [N]}
out=${2:?usage: gpu_share.sh BUILD OUTDIR [N]}
n=${3:-32768}
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
command -v nvidia-cuda-mps-control >/dev/null ||
    { echo "gpu_share.sh: nvidia-cuda-mps-control not found" >&2; exit 1; }
potrf="$build/apps/weft-potrf -N $n -g 1 --nruns 3"
gflops() { awk '/^\[\*\*\*\*\] TIME/ { printf "%s ", $(NF - 1) }' "$1"; }

# Both placements of 2 ranks beside one rank; $1 names the setting.
potrf_runs() {
    $potrf >"$out/potrf-$1-1.log" 2>&1
    echo "$1, 1 rank (runs 1-3): $(gflops "$out/potrf-$1-1.log")"
    for grid in "2 1" "1 2"; do
        set -- "$1" $grid
        mpiexec -n 2 --bind-to none -x CUDA_VISIBLE_DEVICES=0 $potrf -P "$2" -Q "$3" \
            >"$out/potrf-$1-$2x$3.log" 2>&1
        echo "$1, 2 ranks $2x$3 (runs 1-3): $(gflops "$out/potrf-$1-$2x$3.log")"
    done
}

mps_start() {
    export CUDA_MPS_PIPE_DIRECTORY=$out/mps-pipe CUDA_MPS_LOG_DIRECTORY=$out/mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d || { echo "gpu_share.sh: the MPS daemon did not start" >&2; exit 1; }
}
mps_stop() {
    echo quit | nvidia-cuda-mps-control
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}

potrf_runs no-mps
PP_CELLS=ipc "$here/gpu_pingpong.sh" -B "$build" -o "$out/pingpong-no-mps" --max-size 64M \
    >"$out/pingpong-no-mps.out" 2>&1
mps_start
trap mps_stop EXIT
potrf_runs mps
PP_CELLS=ipc "$here/gpu_pingpong.sh" -B "$build" -o "$out/pingpong-mps" --max-size 64M \
    >"$out/pingpong-mps.out" 2>&1
grep -h "is shared by" "$out"/potrf-*.log | sort | uniq -c
for m in no-mps mps; do
    echo "== ping-pong, $m"
    cat "$out/pingpong-$m/table.md"
done
