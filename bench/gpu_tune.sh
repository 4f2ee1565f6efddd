#!/usr/bin/env bash
# The sweeps behind weft-potrf's GPU settings, on a machine with 2 GPUs:
# the device managers' stage-in and stream choices (device_prefetch,
# device_urgent_stream, device_streams, device_inflight), the tile size,
# cusolverMg's column block, small tiles (NB=512: runtime overhead, tasks
# a second) and traces of the 2-GPU and 2-rank runs. One process a line,
# side by side in one run; logs and traces go to the output folder. Lines
# without a stream count run the defaults of the tree (docs/RESULTS.md's sweep
# ran when they were 2 streams and tile rows dealt round robin over GPUs).
#
# Usage: bench/gpu_tune.sh [BUILD_DIR] [OUT_DIR] [SECTION ...]
#   (defaults ./build-gpu ./gpu-tune, every section); sections: w1 w2 mg
#   overhead ranks inv (the TRSM by inverted diagonal factors, --trsm-inv,
#   against a TRSM a tile and the peers) batch (small tiles with and without
#   batched GEMMs, beside NB=2048).
# Needs the peers built by bench/gpu_potrf.sh (it builds them when missing).
# This prints figures; it never fails on a timing (it is not a test).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-./build-gpu}
out=${2:-./gpu-tune}
shift $(($# < 2 ? $# : 2))
sections=${*:-"w1 w2 mg overhead ranks inv batch"}
# want SECTION: whether the command line asked for it.
want() { case " $sections " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
mkdir -p "$out"
"$here/gpu_potrf.sh" -B "$build" -o "$out/peers" -n "" -c "" >/dev/null 2>&1
[ -x "$build/peers/cusolvermg_potrf" ] || { cat "$out/peers/build.log"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
potrf=$build/apps/weft-potrf
s2="--weft-device_streams=2"
# The sections before "inv" ran with a TRSM a tile (before --trsm-inv).
solve="--trsm-inv 0"
ws="--weft-device_workspace=256M $solve"
old="--weft-device_prefetch=0 --weft-device_urgent_stream=0 $s2"
pf="--weft-device_urgent_stream=0 $s2"

# line LABEL COMMAND...: runs it (cut at 120 s), prints the gflops of its
# runs, tasks a second for weft lines (from N and NB), and its check.
line() {
    local label=$1 log
    shift
    log=$out/$(echo "$label" | tr -c 'A-Za-z0-9_.-' '_').log
    echo "$*" >"$log"
    timeout 120 "$@" >>"$log" 2>&1
    local rc=$?
    awk -v label="$label" -v rc="$rc" '
        /^\[\*\*\*\*\] TIME/ { g = g " " $(NF - 1); t = $3
            for (i = 1; i <= NF; i++) { if ($i == "NB=") nb = $(i + 1); if ($i == "N=") n = $(i + 1) } }
        /^residual/ { chk = " " $NF }
        END { tasks = ""; if (nb > 0) { nt = int((n + nb - 1) / nb)
                  tasks = sprintf("  (%d tasks, %.0f tasks/s in the last run)", nt * (nt + 1) * (nt + 2) / 6,
                                  nt * (nt + 1) * (nt + 2) / 6 / t) }
              printf "%-44s rc %d gflops%s%s%s\n", label, rc, g, chk, tasks }' "$log"
}

nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
if want w1; then
echo "--- 1 GPU, N=32768"
line "cusolverDn N=32768" "$build/peers/cusolver_potrf" -N 32768 --nruns 3 --check
line "w1 NB=2048 old (copies on exec, no urgent)" $potrf -N 32768 -t 2048 -g 1 --nruns 3 $ws $old
line "w1 NB=2048 prefetch" $potrf -N 32768 -t 2048 -g 1 --nruns 3 $ws $pf
line "w1 NB=2048 prefetch+urgent" $potrf -N 32768 -t 2048 -g 1 --nruns 3 $ws $s2 --check-first
line "w1 NB=2048 +urgent streams=4" $potrf -N 32768 -t 2048 -g 1 --nruns 3 $ws --weft-device_streams=4
line "w1 NB=2048 +urgent streams=1" $potrf -N 32768 -t 2048 -g 1 --nruns 3 $ws --weft-device_streams=1
line "w1 NB=1024 +urgent" $potrf -N 32768 -t 1024 -g 1 --nruns 3 $ws $s2
line "w1 NB=4096 +urgent" $potrf -N 32768 -t 4096 -g 1 --nruns 3 $ws $s2
fi
if want w2; then
echo "--- 2 GPUs, one process"
line "w2 N=65536 NB=2048 old" $potrf -N 65536 -t 2048 -g 2 --nruns 2 $ws $old
line "w2 N=65536 NB=2048 new" $potrf -N 65536 -t 2048 -g 2 --nruns 2 $ws
line "w2 N=65536 NB=4096 old" $potrf -N 65536 -t 4096 -g 2 --nruns 2 $ws $old
line "w2 N=65536 NB=4096 new" $potrf -N 65536 -t 4096 -g 2 --nruns 2 $ws --weft-trace=$out/w2-65536
line "w2 N=98304 NB=4096 new" $potrf -N 98304 -t 4096 -g 2 --nruns 2 $ws --check-first
line "w2 N=98304 NB=3072 new" $potrf -N 98304 -t 3072 -g 2 --nruns 2 $ws
fi
if want mg; then
echo "--- cusolverMg, 2 GPUs"
for t in 256 512 1024 2048; do
    line "cusolverMg N=32768 T=$t" "$build/peers/cusolvermg_potrf" -N 32768 -G 2 -T $t --nruns 2
done
line "cusolverMg N=65536 T=1024" "$build/peers/cusolvermg_potrf" -N 65536 -G 2 -T 1024 --nruns 2 --check
fi
if want overhead; then
echo "--- runtime overhead, 1 GPU, N=65536"
line "w1 N=65536 NB=2048" $potrf -N 65536 -t 2048 -g 1 --nruns 1 $ws
line "w1 N=65536 NB=512 streams=2 inflight=4" $potrf -N 65536 -t 512 -g 1 --nruns 1 $ws $s2
line "w1 N=65536 NB=512 streams=6 inflight=8" $potrf -N 65536 -t 512 -g 1 --nruns 1 $ws --weft-device_streams=6 --weft-device_inflight=8
line "w1 N=65536 NB=1024 streams=4" $potrf -N 65536 -t 1024 -g 1 --nruns 1 $ws --weft-device_streams=4
fi
if want ranks; then
echo "--- 2 ranks x 1 GPU, N=65536, NB=4096"
line "won bind-to none" mpiexec -n 2 --bind-to none $potrf -N 65536 -t 4096 -P 2 -Q 1 -g 1 --nruns 2 $ws --weft-show_stats=1 --weft-trace=$out/won-65536
line "won bind-to none -c 4" mpiexec -n 2 --bind-to none $potrf -N 65536 -t 4096 -P 2 -Q 1 -g 1 -c 4 --nruns 2 $ws
line "woff bind-to none" mpiexec -n 2 --bind-to none $potrf -N 65536 -t 4096 -P 2 -Q 1 -g 1 --nruns 1 $ws --weft-comm_gpu_aware=off
fi
if want inv; then
echo "--- TRSM by inverted diagonal factors (--trsm-inv 2, the default with GPUs) against a TRSM a tile"
line "cusolverDn N=32768" "$build/peers/cusolver_potrf" -N 32768 --nruns 3
for m in 0 1 2; do
    line "w1 N=32768 trsm-inv $m" $potrf -N 32768 -t 2048 -g 1 --nruns 3 --trsm-inv $m --check-first
done
line "cusolverMg N=65536 T=1024" "$build/peers/cusolvermg_potrf" -N 65536 -G 2 -T 1024 --nruns 3
for m in 0 2; do
    line "w2 N=65536 trsm-inv $m" $potrf -N 65536 -t 2048 -g 2 --nruns 3 --trsm-inv $m --check-first
done
for m in 0 2; do
    line "w2 N=98304 trsm-inv $m" $potrf -N 98304 -t 2048 -g 2 --nruns 2 --trsm-inv $m --check-first
done
for m in 0 2; do
    line "won N=65536 trsm-inv $m" mpiexec -n 2 --bind-to none $potrf -N 65536 -t 2048 -P 2 -Q 1 -g 1 --nruns 3 --trsm-inv $m
done
fi
if want batch; then
echo "--- small tiles: GEMMs in batches (device_batch, default 16) or one a call, 1 GPU, N=65536"
many="--weft-device_streams=6 --weft-device_inflight=8"
line "w1 N=65536 NB=2048" $potrf -N 65536 -t 2048 -g 1 --nruns 3
line "w1 N=65536 NB=512 no batches" $potrf -N 65536 -t 512 -g 1 --nruns 3 $many --weft-device_batch=1
line "w1 N=65536 NB=512 batches" $potrf -N 65536 -t 512 -g 1 --nruns 3 $many --check-first
line "w1 N=65536 NB=512 batches, default streams" $potrf -N 65536 -t 512 -g 1 --nruns 3
fi
