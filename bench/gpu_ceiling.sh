#!/usr/bin/env bash
# What the H200s allow a tiled Cholesky, measured beside weft-potrf in one
# run: the tile kernels with cuBLAS/cuSOLVER alone on zeros and on random
# data (bench/cublas_tile_rate.c), the large DGEMM sustained on every GPU at
# once with random data while nvidia-smi samples clocks and power, and
# weft-potrf at N=98304 on 1 and 2 GPUs under the same sampling, so its rate
# can be read against the sustained ceiling of the same minutes.
#
# Usage: bench/gpu_ceiling.sh [BUILD_DIR] [OUT_DIR]  (defaults ./build-gpu ./gpu-ceiling)
# BUILD_DIR holds weft built with CUDA (bench/gpu_potrf.sh or .ci/gpu make
# one). Prints figures; never fails on a timing (it is not a test).
set -u
build=${1:-./build-gpu}
out=${2:-./gpu-ceiling}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
rate=$out/cublas_tile_rate
gcc -std=c11 -O2 -I"$cuda/include" "$here/cublas_tile_rate.c" -o "$rate" -L"$cuda/lib64" \
    -Wl,-rpath,"$cuda/lib64" -lcusolver -lcublas -lcudart || exit 1
potrf=$build/apps/weft-potrf
ngpu=$(nvidia-smi -L | grep -c '^GPU')

# sample NAME COMMAND...: runs COMMAND with nvidia-smi sampling every GPU's
# SM clock and power each 500 ms; prints COMMAND's RESULT/[****] lines and
# the samples' median clock and power per GPU while it ran.
sample() {
    local name=$1
    shift
    nvidia-smi --query-gpu=index,clocks.sm,power.draw --format=csv,noheader,nounits -lms 500 \
        >"$out/$name.smi" 2>&1 &
    local smi=$!
    "$@" >"$out/$name.log" 2>&1
    kill "$smi" 2>/dev/null
    wait "$smi" 2>/dev/null
    grep -hE '^RESULT|^\[\*\*\*\*\]|^residual' "$out/$name.log"
    awk -F', *' -v name="$name" '$3 + 0 > 150 { c[$1] = c[$1] " " $2; p[$1] = p[$1] " " $3; n[$1]++ }
        END { for (g in n) printf "%s: GPU %s under load: %d samples, SM clock %s MHz, power %s W (medians)\n",
                  name, g, n[g], med(c[g]), med(p[g]) }
        function med(s,   a, k, i, j, t) { k = split(s, a, " ")
            for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
            return k ? a[int((k + 1) / 2)] : "-" }' "$out/$name.smi"
}

# SECTIONS (env): which parts run, default all: kernels sustained potrf
want() { case " ${SECTIONS:-kernels sustained potrf} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if want kernels; then
echo "--- tile kernels, nb=2048, zeros/identity then random data"
for r in 0 1; do
    "$rate" -t 2048 -s 2 -r $r -k gemm,syrk,trsm,trsmgemm,trsmid,potrf | tee "$out/tiles-r$r.log"
done
echo "--- tile GEMMs nb=512: one a call and 16 a batched call"
"$rate" -t 512 -s 4 -c 4000 -k gemm,gemmbatch | tee "$out/tiles-512.log"
fi
if want sustained; then
echo "--- large DGEMM (n=32768, random) sustained 20 s on all $ngpu GPUs at once"
# (waits for its own processes only: sample's nvidia-smi runs meanwhile)
run_all() {
    local pids="" g
    for g in $(seq 0 $((ngpu - 1))); do
        CUDA_VISIBLE_DEVICES=$g "$rate" -n 32768 -r 1 -d 20 &
        pids="$pids $!"
    done
    wait $pids
}
sample sustained run_all | awk '/^RESULT/ { n++; s += $NF; if (min == "" || $NF < min) min = $NF }
    !/^RESULT/ { print } END { printf "sustained: %d calls, mean %.2f, min %.2f TFLOP/s a GPU\n", n, s / n, min }'
fi
if want potrf && [ -x "$potrf" ]; then
    echo "--- weft-potrf N=98304 NB=2048 (2 runs each, matrix on the GPUs before the clock)"
    sample w1-98304 "$potrf" -N 98304 -t 2048 -g 1 --nruns 2
    [ "$ngpu" -ge 2 ] && sample w2-98304 "$potrf" -N 98304 -t 2048 -g 2 --nruns 2
fi
