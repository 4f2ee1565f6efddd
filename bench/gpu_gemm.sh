#!/usr/bin/env bash
# weft-gemm -g 1 beside one cublasDgemm of the whole matrix (bench/cublas_gemm.c)
# on one GPU (the issue-16 target: weft >= 0.95 of cuBLAS at N = 32768).
#
# Usage: bench/gpu_gemm.sh OUTDIR [N] [NB...]
#   OUTDIR  where the log (gpu_gemm.log) and the build log go (created)
#   N       matrix order (default 32768)
#   NB      weft-gemm tile sizes tried (default: 2048 4096)
# Env: BUILD (default /tmp/build-gpu-gemm): weft build tree, Release, CUDA.
# Prints, and writes to OUTDIR/gpu_gemm.log: the cuBLAS figure (best of 3
# timed calls after a warm-up), weft-gemm's (best of 2 runs a tile size),
# the ratio weft/cuBLAS, and a --check run of weft-gemm -g 1 at N = 8192.
# Takes about 2 minutes on an H200 after the build (16 cores: ~1 minute).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=${1:?usage: gpu_gemm.sh OUTDIR [N] [NB...]}
n=${2:-32768}
shift $(($# < 2 ? $# : 2))
nbs=${*:-2048 4096}
build=${BUILD:-/tmp/build-gpu-gemm}
mkdir -p "$out"
log=$out/gpu_gemm.log
: >"$log"
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
fi
cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/build.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" --target weft-gemm >>"$out/build.log" 2>&1 ||
    { tail -n 30 "$out/build.log"; exit 1; }
gcc -std=c11 -O2 -Wall -Wextra -I"$cuda/include" "$here/cublas_gemm.c" -o "$build/cublas_gemm" \
    -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" -lcublas -lcurand -lcudart >>"$out/build.log" 2>&1 ||
    { tail -n 30 "$out/build.log"; exit 1; }

best() { awk '/^\[\*\*\*\*\] TIME/ { g = $(NF - 1); if (g > b) b = g } END { printf "%.2f", b }'; }
say() { echo "$*" | tee -a "$log"; }

say "gpu_gemm.sh $(date -u +%FT%TZ) N=$n weft $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$log"
g_cublas=$(timeout 60 "$build/cublas_gemm" -N "$n" --nruns 3 2>&1 | tee -a "$log" | best)
say "cublasDgemm whole matrix: $g_cublas gflops"
best_weft=0 best_nb=-
for nb in $nbs; do
    g=$(timeout 100 "$build/apps/weft-gemm" -g 1 -N "$n" -t "$nb" --nruns 2 2>&1 | tee -a "$log" | best)
    say "weft-gemm -g 1 NB=$nb: $g gflops"
    if awk -v g="$g" -v b="$best_weft" 'BEGIN { exit !(g > b) }'; then best_weft=$g best_nb=$nb; fi
done
awk -v w="$best_weft" -v c="$g_cublas" -v nb="$best_nb" \
    'BEGIN { printf "ratio weft/cuBLAS at best NB=%s: %.3f (target >= 0.95)\n", nb, (c > 0 ? w / c : 0) }' |
    tee -a "$log"
timeout 60 "$build/apps/weft-gemm" -g 1 -N 8192 -t 1024 --check 2>&1 | tee -a "$log" | grep -E "TIME|residual"
