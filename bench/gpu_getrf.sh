#!/usr/bin/env bash
# LU without pivoting on one H200: weft-getrf -g 1 beside cusolverDnDgetrf
# with devIpiv NULL (bench/cusolver_getrf.c), same matrix, at each N.
#
# Usage: bench/gpu_getrf.sh <logdir> [-B <dir>] [-n "<N> ..."] [-r <runs>]
#                           [--nb "<N>:<NB> ..."]
#   <logdir>   where the logs and summary.txt go (created)
#   -B <dir>   weft build tree (default ./build-gpu-getrf; configured Release
#              with -DWEFT_CUDA=ON, tests off, and weft-getrf built when missing)
#   -n         matrix orders (default "16384 32768")
#   -r         warm runs a process after the cold first one (default 3)
#   --nb       weft tile size per N (default 16384:1024 32768:2048)
#   --inv      weft-getrf --trsm-inv modes, one cell each (default "0 1": the
#              TRSM panels beside the inverted factors, the GPU default)
#
# Each cell is one process: run 1 is the cold one (CUDA loads its kernels,
# cuBLAS/cuSOLVER set up) and is checked (weft: --check-first, ||A - L U|| /
# (||A|| N eps) by tiles on the GPU; cuSOLVER: --check, a random-vector
# estimate); then the warm runs, of which the median is reported. Each run's
# matrix is on the GPU when its clock starts. gflops = 2 N^3 / 3 / time.
# About 2 minutes on an H200 after the build. Prints figures; never fails on
# a timing (it is not a test).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
[ $# -ge 1 ] || { echo "usage: $0 <logdir> [options] (see the header)" >&2; exit 2; }
out=$1
shift
build=./build-gpu-getrf
ns="16384 32768"
runs=3
nbmap="16384:1024 32768:2048"
invs="0 1"
while [ $# -gt 0 ]; do
    case $1 in
    -B) build=$2; shift 2 ;;
    -n) ns=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    --nb) nbmap=$2; shift 2 ;;
    --inv) invs=$2; shift 2 ;;
    *) echo "gpu_getrf.sh: unknown option '$1' (see the header of $0)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out" || exit 1
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
fi
nb_for() {
    for kv in $nbmap; do [ "${kv%%:*}" = "$1" ] && { echo "${kv#*:}"; return; }; done
    echo 2048
}

if [ ! -x "$build/apps/weft-getrf" ]; then
    { cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA=ON -DBUILD_TESTING=OFF &&
        cmake --build "$build" -j "$(nproc)" --target weft-getrf; } >"$out/build.log" 2>&1 ||
        { tail -n 30 "$out/build.log"; exit 1; }
fi
cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
gcc -std=c11 -O2 -fopenmp -Wall -Wextra -I"$cuda/include" "$here/cusolver_getrf.c" \
    -o "$build/cusolver_getrf" -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" -lcusolver -lcudart \
    -lm >>"$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }

# cell NAME LOG COMMAND...: runs it, prints "cold", "median warm" and the check.
cell() {
    local name=$1 log=$2 t0=$SECONDS
    shift 2
    echo "== $*" >"$log"
    timeout 300 "$@" >>"$log" 2>&1
    local rc=$?
    awk -v name="$name" -v rc=$rc -v s=$((SECONDS - t0)) '
        /^\[\*\*\*\*\] TIME/ { g[++k] = $(NF - 1) }
        /^residual = .* : PASSED/ { chk = "PASSED" } /^residual = .* : FAILED/ { chk = "FAILED" }
        END { for (i = 2; i <= k; i++) w[i - 1] = g[i]; m = k - 1
              for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (w[j] < w[i]) { x = w[i]; w[i] = w[j]; w[j] = x }
              printf "%-34s cold %9s  warm median %9s  check %-6s exit %d, %d s\n", name,
                     (k ? g[1] : "-"), (m > 0 ? w[int((m + 1) / 2)] : "-"), (chk ? chk : "none"), rc, s }' "$log"
}

{
    echo "LU without pivoting, 1 GPU, gflops = 2 N^3/3 / time; $(date '+%F %T');" \
        "weft $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
    nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader 2>/dev/null
    for n in $ns; do
        nb=$(nb_for "$n")
        cell "N=$n cusolverDnDgetrf (no pivot)" "$out/$n-cusolver.log" \
            "$build/cusolver_getrf" -N "$n" --nruns $((runs + 1)) --check
        for inv in $invs; do
            cell "N=$n weft-getrf -g 1 NB=$nb inv $inv" "$out/$n-weft-inv$inv.log" \
                "$build/apps/weft-getrf" -N "$n" -t "$nb" -g 1 --nruns $((runs + 1)) \
                --check-first --trsm-inv "$inv" --weft-device_workspace=256M
        done
    done
} | tee "$out/summary.txt"
