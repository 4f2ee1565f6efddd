#!/usr/bin/env bash
# GEMM, LU and QR on two GPUs of one host, beside one GPU (issue "Runs on
# nvidia-h200-x2", item 4): weft-gemm, weft-getrf and weft-geqrf with -g 1,
# -g 2 (1 rank x 2 GPUs) and 2 ranks x 1 GPU (P=2). (A cusolverMgGetrf peer
# was tried and dropped: with IPIV NULL it crashed, with pivots on one GPU
# the library answered CUSOLVER_STATUS_INVALID_VALUE; not tried on two.)
# Each cell is one process doing a cold run and 2 warm runs (weft-getrf
# checks its first run; weft-gemm and weft-geqrf check every run they do,
# so they are checked in cells of their own at N=8192); the lines give the
# first (cold) run and the best warm one, in GFLOPS.
#
# Usage: bench/gpu_dense2.sh BUILD OUTDIR [N]   (BUILD: a CUDA build of weft
# with the apps; N default 32768; NB 2048 for gemm/getrf, 1024 for geqrf)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: gpu_dense2.sh BUILD OUTDIR [N]}
out=${2:?usage: gpu_dense2.sh BUILD OUTDIR [N]}
n=${3:-32768}
mkdir -p "$out" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH

# cell NAME COMMAND...: runs it (300 s at most), prints cold and best warm.
cell() {
    local name=$1
    shift
    timeout 300 "$@" >"$out/$name.log" 2>&1
    local rc=$?
    awk -v name="$name" -v rc=$rc '/^\[\*\*\*\*\] TIME/ { g = $(NF - 1); if (++k == 1) c = g; else if (g > b) b = g }
        /PASSED|FAILED/ { chk = $NF }
        END { printf "%-22s exit %d  cold %10.1f  warm best %10.1f  %s\n", name, rc, c, b, chk }' \
        "$out/$name.log"
}
ws=--weft-device_workspace=256M
for app in gemm getrf geqrf; do
    nb=2048
    [ $app = geqrf ] && nb=1024
    chk=
    [ $app = getrf ] && chk=--check-first
    a="$build/apps/weft-$app -N $n -t $nb --nruns 3 $chk $ws"
    cell "$app-g1" $a -g 1
    cell "$app-g2" $a -g 2
    cell "$app-2x1" mpiexec -n 2 --bind-to none -x NCCL_NVLS_ENABLE $a -g 1 -P 2 -Q 1
    if [ $app != getrf ]; then
        c="$build/apps/weft-$app -N 8192 -t 1024 --check $ws"
        cell "$app-g2-check" $c -g 2
        cell "$app-2x1-check" mpiexec -n 2 --bind-to none -x NCCL_NVLS_ENABLE $c -g 1 -P 2 -Q 1
    fi
done
