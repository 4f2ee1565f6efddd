#!/usr/bin/env bash
# GPU tile ping-pong between 2 ranks, each on its own GPU: weft-pingpong -g 1
# over each transport (ipc, nccl, staged, and gpu-aware off: tiles through
# host memory by MPI), beside the bare NCCL ping-pong, the bare CUDA IPC
# pull, the bare ping-pong of IPC pulls and the bare staged pipeline beside
# host MPI of bench/bare_p2p.c (bare.log), 8 B to 256 MiB, in one run.
#
# Usage: bench/gpu_pingpong.sh [-B build] [-o outdir] [--max-size B] [--split]
#   -B         weft build tree with CUDA (default ./build-gpu; configured
#              Release with -DWEFT_CUDA=ON -DWEFT_NCCL=ON and built if needed)
#   -o         where the logs and table.md go (default ./gpu-pingpong)
#   --split    also run each transport with comm_node_split=rank
#   PP_CELLS   (environment) the weft columns, default "ipc nccl staged off"
# The table gives, per size, each column's latency (us, half a round trip for
# weft and nccl, one pull for ipc, a pull and its message for the ipc
# ping-pong) and bandwidth, and weft's fixed cost per move (weft latency
# minus the bare latency of the same mechanism, against the pull and
# against the ping-pong of pulls). It prints
# figures; it never fails on a timing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=./build-gpu
out=./gpu-pingpong
max=256M
split=0
while [ $# -gt 0 ]; do
    case $1 in
    -B) build=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --max-size) max=$2; shift 2 ;;
    --split) split=1; shift ;;
    *) echo "gpu_pingpong.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
mkdir -p "$out" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
if [ ! -x "$build/apps/weft-pingpong" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA=ON -DWEFT_NCCL=ON \
        -DBUILD_TESTING=OFF >"$out/configure.log" 2>&1 &&
        cmake --build "$build" -j "$(nproc)" --target weft-pingpong >"$out/build.log" 2>&1 ||
        { echo "gpu_pingpong.sh: building weft failed ($out/build.log)" >&2; exit 1; }
fi
cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
nccl_inc=$(dirname "$(find / -name nccl.h -path '*include*' 2>/dev/null | head -1)")
nccl_lib=$(dirname "$(find / -name 'libnccl.so*' 2>/dev/null | head -1)")
mpicc -std=c11 -O2 -I"$cuda/include" -I"$nccl_inc" "$here/bare_p2p.c" -o "$out/bare_p2p" \
    -L"$cuda/lib64" -L"$nccl_lib" -Wl,-rpath,"$nccl_lib" -lnccl -lcudart ||
    { echo "gpu_pingpong.sh: building bench/bare_p2p.c failed" >&2; exit 1; }

run2=(mpiexec -n 2 --bind-to none -x NCCL_NVLS_ENABLE)
"${run2[@]}" "$out/bare_p2p" --max-size "$max" >"$out/bare.log" 2>&1
cells=${PP_CELLS:-ipc nccl staged off}
for t in $cells; do
    for sp in host $([ $split = 1 ] && echo rank); do
        args=(--weft-comm_transport=$t)
        [ $t = off ] && args=(--weft-comm_gpu_aware=off)
        "${run2[@]}" "$build/apps/weft-pingpong" -g 1 -c 2 --max-size "$max" "${args[@]}" \
            --weft-comm_node_split=$sp --weft-show_stats=1 >"$out/weft-$t-$sp.log" 2>&1
    done
done
python3 - "$out" $cells <<'PY'
import sys, os, glob
out, cells = sys.argv[1], sys.argv[2:]
def table(path, cols):
    rows = {}
    for line in open(path):
        f = line.split()
        if f and f[0].isdigit() and len(f) >= cols: rows[int(f[0])] = [float(v) for v in f[1:]]
    return rows
bare = table(os.path.join(out, "bare.log"), 7)
runs = {}
for p in sorted(glob.glob(os.path.join(out, "weft-*.log"))):
    runs[os.path.basename(p)[5:-4]] = table(p, 8)
names = list(runs)
with open(os.path.join(out, "table.md"), "w") as f:
    f.write("| bytes | bare nccl us / GB/s | bare ipc us / GB/s | bare ipc ping-pong us | " +
            " | ".join(f"weft {n} us / GB/s" for n in names) +
            " | weft ipc - bare ipc us | weft ipc - bare ipc ping-pong us | weft nccl - bare nccl us |\n")
    f.write("|---" * (7 + len(names)) + "|\n")
    for size in sorted(bare):
        b = bare[size]
        cells_ = [f"{b[1]:.1f} / {b[2]:.3g}", f"{b[3]:.1f} / {b[4]:.3g}", f"{b[5]:.1f}"]
        for n in names:
            r = runs[n].get(size)
            cells_.append(f"{r[1]:.1f} / {r[2]:.3g}" if r else "-")
        wi = runs.get("ipc-host", {}).get(size); wn = runs.get("nccl-host", {}).get(size)
        cells_.append(f"{wi[1] - b[3]:.1f}" if wi else "-")
        cells_.append(f"{wi[1] - b[5]:.1f}" if wi else "-")
        cells_.append(f"{wn[1] - b[1]:.1f}" if wn and b[1] > 0 else "-")
        f.write(f"| {size} | " + " | ".join(cells_) + " |\n")
print(open(os.path.join(out, "table.md")).read())
PY
grep -h "verified\|FAILED\|network" "$out"/weft-*.log
