#!/usr/bin/env bash
# Tile QR on one GPU: weft-geqrf -g 1 (every class on the GPU: GEMQRT/TSMQR
# by cuBLAS, GEQRT/TSQRT by cuSOLVER geqrf + larft) beside cusolverDnDgeqrf (bench/
# cusolver_geqrf.c), same matrix (apps/qr_matrix.h), with the ratio.
#
# Usage: bench/geqrf_gpu.sh LOGDIR [BUILD_DIR] [N] ["NB:IB ..."]
#   LOGDIR     where every run's log and summary.txt go (created)
#   BUILD_DIR  weft build tree (default ./build-gpu; configured Release with
#              CUDA and weft-geqrf built there if needed)
#   N          square matrix order (default 16384)
#   NB:IB      tile and inner block sizes weft-geqrf tries
#              (default "1024:256 1024:512 1024:1024 2048:512 2048:1024 2048:2048")
# Each configuration runs 3 times in one process (cold = the first); a
# --check run on a 5000 x 4096 matrix comes first. About 2-3
# minutes on an H200 with a 16-core host. It prints figures and never fails
# on a timing (it is not a test).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
logs=${1:?usage: geqrf_gpu.sh LOGDIR [BUILD_DIR] [N] [\"NB:IB ...\"]}
build=${2:-./build-gpu}
n=${3:-16384}
cfgs=${4:-1024:256 1024:512 1024:1024 2048:512 2048:1024 2048:2048}
mkdir -p "$logs"
cuda=${CUDA_HOME:-/usr/local/cuda}

if [ ! -x "$build/apps/weft-geqrf" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
        >"$logs/build.log" 2>&1 &&
        cmake --build "$build" -j"$(nproc)" --target weft-geqrf >>"$logs/build.log" 2>&1 ||
        { tail -30 "$logs/build.log"; exit 1; }
fi
gcc -std=c11 -O2 -Wall -Wextra -I"$cuda/include" -o "$logs/cusolver_geqrf" \
    "$here/cusolver_geqrf.c" -L"$cuda/lib64" -lcusolver -lcudart -lm >>"$logs/build.log" 2>&1 ||
    { tail -30 "$logs/build.log"; exit 1; }

# "cold warm": the first run of the process, the best of the later ones.
cold_warm() {
    awk '/^\[\*\*\*\*\] TIME/ { g = $(NF - 1); if (++n == 1) c = g; else if (g > w) w = g }
         END { printf "%.2f %.2f", c, w }'
}
weft=$build/apps/weft-geqrf

{
    echo "dgeqrf N=$n on one GPU, 3 runs a process: cold (first) and warm (best of the others); gflops = (2N^3 - 2N^3/3) / time;" \
        "weft $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
    nvidia-smi --query-gpu=name,power.limit --format=csv,noheader 2>/dev/null
    "$weft" -g 1 -M 5000 -N 4096 -t 512 -b 128 --check >"$logs/check.log" 2>&1
    echo "weft-geqrf -g 1 -M 5000 -N 4096 --check: $(grep -E 'PASSED|FAILED' "$logs/check.log")"
    read -r c_dn g_dn < <(timeout 120 "$logs/cusolver_geqrf" -N "$n" --nruns 3 --check 2>&1 |
        tee "$logs/cusolver.log" | cold_warm)
    printf '%-28s %12s %10s %10s\n' program "NB:IB" cold warm
    printf '%-28s %12s %10s %10s\n' cusolverDnDgeqrf - "$c_dn" "$g_dn"
    best_w=0
    for c in $cfgs; do
        nb=${c%%:*} ib=${c##*:}
        read -r cw g < <(timeout 150 "$weft" -g 1 -N "$n" -t "$nb" -b "$ib" --nruns 3 \
            --weft-show_stats=1 2>&1 | tee "$logs/weft-$nb-$ib.log" | cold_warm)
        printf '%-28s %12s %10s %10s\n' "weft-geqrf -g 1" "$c" "$cw" "$g"
        if awk -v g="$g" -v b="$best_w" 'BEGIN { exit !(g > b) }'; then best_w=$g; fi
    done
    awk -v w="$best_w" -v d="$g_dn" \
        'BEGIN { if (d > 0) printf "weft/cusolverDnDgeqrf at best NB:IB: %.3f (target 0.7)\n", w / d }'
} 2>&1 | tee "$logs/summary.txt"
