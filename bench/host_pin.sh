#!/usr/bin/env bash
# Pinned host copies (parameter host_pin) on one GPU, side by side in one
# call: what pinning costs (bench/host_pin.c: cudaHostRegister of fresh and
# touched memory, cudaHostAlloc, a tile's copy rate pageable vs pinned), then
# weft-potrf out of core (bench/oversub.sh at 1/4 of the matrix: host_pin
# auto, which pins there, and off) and in core (rates of the first and second
# run, process wall of one run: auto, which pins nothing there, on and off).
# Usage: bench/host_pin.sh BUILD OUTDIR [N = 32768] [NB = 2048]
# (BUILD: a CUDA build with the apps). Prints figures, never fails on one.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: host_pin.sh BUILD OUTDIR [N] [NB]}
out=${2:?usage: host_pin.sh BUILD OUTDIR [N] [NB]}
n=${3:-32768}
nb=${4:-2048}
mkdir -p "$out" || exit 1
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
gcc -std=c11 -O2 -I"$cuda/include" "$here/host_pin.c" -o "$out/host_pin" -L"$cuda/lib64" \
    -Wl,-rpath,"$cuda/lib64" -lcudart || exit 1
gib=$(awk -v n="$n" 'BEGIN { printf "%d", n * n * 8 / 2^30 + 0.999 }')
echo "== pinning $gib GiB, copies of one $nb tile"
"$out/host_pin" "$gib" 256 "$nb"

echo "== out of core: N=$n NB=$nb, 1/4 of the matrix"
for pin in auto off; do
    echo "-- host_pin=$pin"
    "$here/oversub.sh" -B "$build" -d cuda -N "$n" -t "$nb" -f 1/4 -p next_use:0 \
        --weft "--weft-host_pin=$pin" -o "$out/oversub-pin$pin" | tail -n 3
done

echo "== in core: N=$n NB=$nb, first and second run (GFLOPS), process wall of one run"
potrf="$build/apps/weft-potrf -N $n -t $nb -g 1 --weft-device_workspace=256M"
wall() { local t0=$(date +%s.%N); "$@" >/dev/null 2>&1; awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
for pin in auto on off; do
    $potrf --nruns 2 --weft-host_pin=$pin --weft-show_stats=1 >"$out/incore-pin$pin.log" 2>&1
    rates=$(awk '/^\[\*\*\*\*\] TIME/ { printf "%s ", $(NF - 1) }' "$out/incore-pin$pin.log")
    echo "host_pin=$pin: runs $rates; wall of one run $(wall $potrf --weft-host_pin=$pin) s," \
        "again $(wall $potrf --weft-host_pin=$pin) s"
done
