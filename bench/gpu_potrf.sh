#!/usr/bin/env bash
# Cholesky on H200-class GPUs: weft-potrf in four placements beside the
# vendor's solvers, in one run, with a table, ratios and a plot.
#
# Usage: bench/gpu_potrf.sh [options]
#   -B <dir>       weft build tree (default ./build-gpu; configured Release with
#                  -DWEFT_CUDA=ON and built when weft-potrf is missing there)
#   -o <dir>       where logs, results.csv, table.md and gpu_potrf.png go
#                  (default ./gpu-potrf)
#   -n "<N> ..."   matrix orders (default "16384 32768 65536 98304")
#   -c "<cfg> ..." configurations (default "dn mg w1 w2 won woff"):
#                    dn    cusolverDnDpotrf, 1 GPU (bench/cusolver_potrf.c)
#                    mg    cusolverMgPotrf, 2 GPUs, one process
#                          (bench/cusolvermg_potrf.c)
#                    w1    weft-potrf, 1 rank x 1 GPU
#                    w2    weft-potrf, 1 rank x 2 GPUs
#                    won   weft-potrf, 2 ranks x 1 GPU, comm_gpu_aware=on
#                    woff  the same with comm_gpu_aware=off (tiles through host)
#                    wnccl, wstg  won with comm_transport=nccl, staged
#                    wsplit  won with comm_node_split=rank (every rank its own
#                          node: the cross-node choice, nccl when built)
#   -r <runs>      timed runs a cell, the median is reported (default 3); each
#                  process does one more run first, checked and not counted
#                  (warm-up: CUDA loads kernels at first use; not for woff,
#                  whose runs take minutes at the largest N)
#   --nb "<N>:<NB> ..."  weft tile size per N (default 2048 for every N, the
#                  best in bench/gpu_tune.sh's sweeps); --mg-tile <T> cusolverMg's
#                  column block (default 1024; 256..2048 tried at N=32768)
#   --weft "<args>"  extra weft-potrf arguments for every weft cell
#   --timeout <s>  a cell is cut after s seconds (default 400)
#   --table-only   print the table and draw the plot from results.csv
#
# Each cell is one process (two ranks for won/woff) doing -r timed runs of
# the same matrix (apps/potrf_matrix.h), each run's matrix already on the
# GPUs when its clock starts; the first (warm-up) run of every cell is checked
# (weft: --check-first, ||A - L L^T|| / (||A|| N eps); the peers: --check,
# sqrt(N) ||(A - L L^T) x|| / (||A|| ||x|| N eps) for a random x, an O(N^2)
# estimate of the same residual: bench/potrf_vcheck.h), and a cell whose
# check did not pass is marked '!' in the table. GFLOPS = N^3/3 / time.
# A cell run again replaces its line in results.csv, so a long table can be
# made in several calls (-n / -c subsets). This prints figures; it never
# fails on a timing (it is not a test).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=./build-gpu
out=./gpu-potrf
ns="16384 32768 65536 98304"
cfgs="dn mg w1 w2 won woff"
runs=3
nbmap=""
mg_tile=1024
weft_extra=""
cell_timeout=400
table_only=0
while [ $# -gt 0 ]; do
    case $1 in
    -B) build=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    -n) ns=$2; shift 2 ;;
    -c) cfgs=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    --nb) nbmap=$2; shift 2 ;;
    --mg-tile) mg_tile=$2; shift 2 ;;
    --weft) weft_extra=$2; shift 2 ;;
    --timeout) cell_timeout=$2; shift 2 ;;
    --table-only) table_only=1; shift ;;
    *) echo "gpu_potrf.sh: unknown option '$1' (see the header of $0)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out" || exit 1
csv=$out/results.csv
touch "$csv"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
fi

nb_for() { # N -> weft tile size
    for kv in $nbmap; do
        [ "${kv%%:*}" = "$1" ] && { echo "${kv#*:}"; return; }
    done
    echo 2048
}

build_all() {
    if [ ! -x "$build/apps/weft-potrf" ]; then
        cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA=ON \
            >"$out/build.log" 2>&1 &&
            cmake --build "$build" -j "$(nproc)" --target weft-potrf >>"$out/build.log" 2>&1 ||
            { tail -n 30 "$out/build.log"; return 1; }
    fi
    local cuda lib
    cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
    lib=$cuda/lib64
    mkdir -p "$build/peers"
    for p in cusolver_potrf cusolvermg_potrf; do
        gcc -std=c11 -O2 -fopenmp -Wall -Wextra -I"$cuda/include" "$here/$p.c" -o "$build/peers/$p" \
            -L"$lib" -Wl,-rpath,"$lib" -lcusolverMg -lcusolver -lcublas -lcudart -lm \
            >>"$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; return 1; }
    done
}

# The command of a cell (N, configuration).
cell_cmd() {
    local n=$1 cfg=$2 nb potrf ws
    nb=$(nb_for "$n")
    local r=$((runs + 1))
    [ "$cfg" = woff ] && r=$runs
    potrf="$build/apps/weft-potrf -N $n -t $nb --nruns $r --check-first"
    ws="--weft-device_workspace=256M $weft_extra"
    case $cfg in
    dn) echo "$build/peers/cusolver_potrf -N $n --nruns $r --check" ;;
    mg) echo "$build/peers/cusolvermg_potrf -N $n -G 2 -T $mg_tile --nruns $r --check" ;;
    w1) echo "$potrf -g 1 $ws" ;;
    w2) echo "$potrf -g 2 $ws" ;;
    won) echo "mpiexec -n 2 --bind-to none $potrf -P 2 -Q 1 -g 1 $ws --weft-comm_gpu_aware=on" ;;
    woff) echo "mpiexec -n 2 --bind-to none $potrf -P 2 -Q 1 -g 1 $ws --weft-comm_gpu_aware=off" ;;
    wnccl | wstg | wsplit)
        local t=--weft-comm_transport=nccl
        [ "$cfg" = wstg ] && t=--weft-comm_transport=staged
        [ "$cfg" = wsplit ] && t=--weft-comm_node_split=rank
        echo "mpiexec -n 2 --bind-to none -x NCCL_NVLS_ENABLE $potrf -P 2 -Q 1 -g 1 $ws $t" ;;
    *) return 1 ;;
    esac
}

# Runs a cell and records "N,cfg,median,runs,check,status" in results.csv.
run_cell() {
    local n=$1 cfg=$2 log cmd rc gf med chk
    log=$out/$n-$cfg.log
    cmd=$(cell_cmd "$n" "$cfg") || { echo "unknown configuration '$cfg'" >&2; return; }
    echo "== N=$n $cfg: $cmd" | tee "$log"
    local t0=$SECONDS
    timeout "$cell_timeout" $cmd >>"$log" 2>&1
    rc=$?
    local skip=1
    [ "$cfg" = woff ] && skip=0
    gf=$(awk -v skip=$skip '/^\[\*\*\*\*\] TIME/ && ++k > skip { print $(NF - 1) }' "$log" |
        tr '\n' ' ')
    # the middle value (the lower middle of an even count); "-" when none
    med=$(printf '%s\n' $gf | awk 'NF' | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }')
    if grep -q '^residual = .* : PASSED' "$log"; then chk=PASSED
    elif grep -q '^residual = .* : FAILED' "$log"; then chk=FAILED
    else chk=none; fi
    local cold
    cold=$(awk '/^\[\*\*\*\*\] TIME/ { print $(NF - 1); exit }' "$log")
    echo "   exit $rc, $((SECONDS - t0)) s, first (cold) run ${cold:-none}, gflops: ${gf:-none}, median $med, check $chk"
    grep -v "^$n,$cfg," "$csv" >"$csv.tmp"
    echo "$n,$cfg,$med,${gf% },$chk,$rc" >>"$csv.tmp"
    mv "$csv.tmp" "$csv"
}

print_table() {
    sort -t, -k1,1n "$csv" | awk -F, '
    BEGIN { split("dn mg w1 w2 won woff wnccl wstg wsplit", order, " ")
            name["dn"] = "cusolverDn 1 GPU"; name["mg"] = "cusolverMg 2 GPUs"
            name["w1"] = "weft 1x1 GPU"; name["w2"] = "weft 1x2 GPUs"
            name["won"] = "weft 2 ranks x1 GPU, gpu-aware on"
            name["woff"] = "weft 2 ranks x1 GPU, gpu-aware off"
            name["wnccl"] = "weft 2x1, nccl"; name["wstg"] = "weft 2x1, staged"
            name["wsplit"] = "weft 2x1, node split (cross-node path)" }
    { if (!($1 in seen)) { seen[$1] = 1; ns[++nn] = $1 }
      g[$1, $2] = $3; c[$1, $2] = $5 }
    function cell(n, k) { if (!((n, k) in g)) return "";
                          return g[n, k] (c[n, k] == "PASSED" ? "" : " !") }
    function ratio(n, a, b) { if (g[n, a] + 0 > 0 && g[n, b] + 0 > 0)
                                  return sprintf("%.2f", g[n, a] / g[n, b]); return "" }
    END {
      printf "GFLOPS (median of the runs; ! = the check did not pass)\n\n| N |"
      for (i = 1; i <= 9; i++) printf " %s |", name[order[i]]; printf "\n|---|"
      for (i = 1; i <= 9; i++) printf "---|"; printf "\n"
      for (j = 1; j <= nn; j++) { n = ns[j]; printf "| %s |", n
        for (i = 1; i <= 9; i++) printf " %s |", cell(n, order[i]); printf "\n" }
      printf "\n| N | w1/dn | w2/dn | w2/mg | w2/w1 | won/woff | won/w2 | wnccl/won | wnccl/w2 |\n|---|---|---|---|---|---|---|---|---|\n"
      for (j = 1; j <= nn; j++) { n = ns[j]
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", n, ratio(n, "w1", "dn"),
               ratio(n, "w2", "dn"), ratio(n, "w2", "mg"), ratio(n, "w2", "w1"),
               ratio(n, "won", "woff"), ratio(n, "won", "w2"), ratio(n, "wnccl", "won"),
               ratio(n, "wnccl", "w2") } }' | tee "$out/table.md"
}

draw_plot() {
    python3 - "$csv" "$out/gpu_potrf.png" <<'EOF' || echo "plot: not drawn (python3 with matplotlib needed)"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
names = {"dn": "cusolverDnDpotrf, 1 GPU", "mg": "cusolverMgPotrf, 2 GPUs",
         "w1": "weft, 1 rank x 1 GPU", "w2": "weft, 1 rank x 2 GPUs",
         "won": "weft, 2 ranks x 1 GPU, gpu-aware on",
         "woff": "weft, 2 ranks x 1 GPU, gpu-aware off"}
pts = {}
for row in csv.reader(open(sys.argv[1])):
    if len(row) >= 3 and row[2] not in ("-", ""):
        pts.setdefault(row[1], []).append((int(row[0]), float(row[2]) / 1000.0))
fig, ax = plt.subplots(figsize=(8, 5))
for key in names:
    if key in pts:
        xs, ys = zip(*sorted(pts[key]))
        ax.plot(xs, ys, marker="o", linestyle="--" if key in ("dn", "mg") else "-",
                label=names[key])
ax.set_xlabel("N (matrix order)")
ax.set_ylabel("TFLOP/s (N^3/3 / time), median of 3")
ax.set_title("Cholesky (dpotrf, lower) on NVIDIA H200")
ax.set_xscale("log", base=2)
ns = sorted({x for v in pts.values() for x, _ in v})
ax.set_xticks(ns, [str(n) for n in ns])
ax.minorticks_off()
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
EOF
}

if [ "$table_only" = 0 ]; then
    build_all || exit 1
    nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null
    for n in $ns; do
        for cfg in $cfgs; do run_cell "$n" "$cfg"; done
    done
fi
print_table
draw_plot
