#!/usr/bin/env bash
# Where the first run of a process goes (issues "Across nodes", item 3, and
# "GPU speed where runtimes lose", item 2), on one or two GPUs:
#   share   2 ranks sharing GPU 0, weft-potrf N=32768: first run against the
#           second (target 1.15), and at N=16384 with a trace, the first
#           network moves ("net recv" slices: target <= 5 ms)
#   one     1 rank 1 GPU, N=32768 with a trace: each task class's mean
#           kernel time in the first run against the second, and the device
#           idle time in each; the process wall time of one run (init, run,
#           fini) beside bench/cusolver_potrf.c's (target 1.1)
# Usage: bench/gpu_cold.sh BUILD OUTDIR (BUILD: a CUDA build with the apps)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: gpu_cold.sh BUILD OUTDIR}
out=${2:?usage: gpu_cold.sh BUILD OUTDIR}
mkdir -p "$out" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
potrf="$build/apps/weft-potrf -t 2048 --weft-device_workspace=256M"
gflops() { awk '/^\[\*\*\*\*\] TIME/ { printf "%s ", $(NF - 1) }' "$1"; }
wall() { local t0=$(date +%s.%N); "$@" >/dev/null 2>&1; awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN { printf "%.2f", b - a }'; }

echo "== 2 ranks sharing GPU 0"
run2="mpiexec -n 2 --bind-to none -x CUDA_VISIBLE_DEVICES=0"
$run2 $potrf -N 32768 -P 2 -Q 1 -g 1 --nruns 2 --check-first >"$out/share-32768.log" 2>&1
echo "N=32768 runs (first, second): $(gflops "$out/share-32768.log")"
$run2 $potrf -N 16384 -P 2 -Q 1 -g 1 --nruns 2 --weft-trace="$out/share16" >"$out/share-16384.log" 2>&1
echo "N=16384 runs (first, second): $(gflops "$out/share-16384.log")"

echo "== 1 rank, 1 GPU"
CUDA_VISIBLE_DEVICES=0 $potrf -N 32768 -g 1 --nruns 2 --weft-trace="$out/one" >"$out/one-32768.log" 2>&1
echo "N=32768 runs (first, second): $(gflops "$out/one-32768.log")"
gcc -std=c11 -O2 -fopenmp -I"$cuda/include" "$here/cusolver_potrf.c" -o "$out/cusolver_potrf" \
    -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" -lcusolver -lcublas -lcudart -lm
for i in 1 2; do
    echo "process wall, one run at N=32768: weft $(CUDA_VISIBLE_DEVICES=0 wall $potrf -N 32768 -g 1) s," \
        "cusolver_potrf $(CUDA_VISIBLE_DEVICES=0 wall "$out/cusolver_potrf" -N 32768) s"
done

python3 - "$out" <<'PY'
import json, glob, sys, collections
out = sys.argv[1]
def slices(path):
    doc = json.load(open(path))
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [e for e in ev if e.get("ph") == "X"]
for path in sorted(glob.glob(out + "/share16*.json")):
    recv = sorted((e["ts"], e["dur"]) for e in slices(path) if e["name"] == "net recv")
    print(path.split("/")[-1], "first net recv durations (ms):",
          " ".join("%.2f" % (d / 1000) for _, d in recv[:5]),
          "| median of all %.3f" % (sorted(d for _, d in recv)[len(recv) // 2] / 1000 if recv else 0))
for path in sorted(glob.glob(out + "/one*.json")):
    tasks = sorted((e["ts"], e["dur"], e["name"]) for e in slices(path)
                   if e.get("cat") == "task" and e["name"] in ("potrf", "trsm", "syrk", "gemm"))
    potrfs = [t for t in tasks if t[2] == "potrf"]
    if len(potrfs) < 2:
        print("no potrf tasks in", path); continue
    cut = potrfs[len(potrfs) // 2][0]  # the second run's first POTRF
    for label, run in (("first", [t for t in tasks if t[0] < cut]), ("second", [t for t in tasks if t[0] >= cut])):
        by = collections.defaultdict(list)
        for ts, d, n in run: by[n].append(d)
        span = max(ts + d for ts, d, _ in run) - min(ts for ts, _, _ in run)
        busy = sum(d for _, d, _ in run)
        print("%-6s run: span %.1f ms, kernel time %.1f ms (over all streams);" % (label, span / 1000, busy / 1000),
              ", ".join("%s %d x %.2f ms (max %.2f)" % (n, len(v), sum(v) / len(v) / 1000, max(v) / 1000) for n, v in sorted(by.items())))
PY
