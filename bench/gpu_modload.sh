#!/usr/bin/env bash
# The first run of a process against CUDA's lazy module loading (issue
# "GPU speed where runtimes lose", item 2): weft-potrf with its defaults and
# bench/cusolver_potrf.c, each process doing --nruns 3, under
# CUDA_MODULE_LOADING=LAZY (CUDA's default) and EAGER (every kernel of every
# library loaded when the context is made), side by side; the GFLOPS of each
# run (the first is the cold one) and the process wall time.
# Usage: bench/gpu_modload.sh BUILD OUTDIR ["N ..."]
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: gpu_modload.sh BUILD OUTDIR}
out=${2:?usage: gpu_modload.sh BUILD OUTDIR}
ns=${3:-8192 16384 32768}
mkdir -p "$out" || exit 1
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
gcc -std=c11 -O2 -fopenmp -I"$cuda/include" "$here/cusolver_potrf.c" -o "$out/cusolver_potrf" \
    -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" -lcusolver -lcublas -lcudart -lm || exit 1
gflops() { awk '/TIME|GFLOPS|gflops/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/ && ($(i+1) ~ /gflops|GFLOPS/)) printf "%s ", $i }' "$1"; }
for n in $ns; do
    for mode in LAZY EAGER; do
        for prog in weft cusolver; do
            log="$out/$prog-$n-$mode.log"
            cmd="$build/apps/weft-potrf -N $n -g 1 --nruns 3"
            [ $prog = cusolver ] && cmd="$out/cusolver_potrf -N $n --nruns 3"
            t0=$(date +%s.%N)
            CUDA_MODULE_LOADING=$mode $cmd >"$log" 2>&1
            t1=$(date +%s.%N)
            printf "N=%-6s %-5s %-8s wall %6.2f s  runs: %s\n" "$n" "$mode" "$prog" \
                "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$(gflops "$log")"
        done
    done
done
