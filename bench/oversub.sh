#!/usr/bin/env bash
# Out-of-core Cholesky (issue 18): weft-potrf with its device memory capped at
# a fraction of the matrix, device_evict=lru beside next_use, in one run, with
# a table (GFLOPS, bytes host->device and back, evictions), the traffic
# references of bench/oversub_bound.py and, when matplotlib is there, a plot
# of GFLOPS and bytes against the limit.
#
# Usage: bench/oversub.sh [options]
#   -B <dir>      weft build tree with apps/weft-potrf (default ./build, or
#                 ./build-gpu with -d cuda; configured Release, with
#                 -DWEFT_CUDA=ON for cuda, and built when weft-potrf is missing)
#   -o <dir>      where logs, results.csv, table.md and oversub.png go
#                 (default ./oversub)
#   -N <n>        matrix order (default 4096)
#   -t <nb>       tile size (default 256)
#   -g <n>        devices (default 1)
#   -d emu|cuda   device type (default emu; cuda on the GPU machine)
#   -c <cores>    worker cores (default 2 with emu; weft's own choice with cuda)
#   -f "<f> ..."  limits as fractions of the matrix's N^2 * 8 bytes, or
#                 "none" for no limit (default "1/8 1/4 1/2 1 none")
#   -p "<p> ..."  policies (default "lru next_use:0 next_use"): device_evict,
#                 with ":K" device_prefetch_ahead=K (0: no prefetch ahead of
#                 a task's start; without it weft's default)
#   -r <runs>     factorizations a process (default 1; 2 on cuda: the first
#                 loads the kernels); GFLOPS of the last, bytes / runs
#   --check       check the first factorization (its check's traffic then
#                 counts in the bytes)
#   --weft "<a>"  extra weft-potrf arguments for every cell
#   --timeout <s> a cell is cut after s seconds (default 600)
#
# Examples:
#   bench/oversub.sh                                  # this machine, emu device
#   bench/oversub.sh -d cuda -N 32768 -t 2048 -o oversub-32k   # one H200
#   bench/oversub.sh -d cuda -N 65536 -t 2048 -f "1/8 1/4 1/2 none" -o oversub-64k
# (on one H200, 1/4 of N=32768 is the 2 GiB limit of issue 18, 1/4 of 65536
# its 8 GiB). Bytes count every copy of the process, the fill and the
# prefetch of the matrix before the clock starts included (on cuda the fill
# runs on the host and every tile comes in; on emu it runs on the device).
# It prints figures and never fails on a timing (it is not a test).
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=""
out=./oversub
n=4096
nb=256
g=1
dtype=emu
cores=""
fracs="1/8 1/4 1/2 1 none"
policies="lru next_use:0 next_use"
runs=""
check=""
extra=""
cell_timeout=600
while [ $# -gt 0 ]; do
    case $1 in
    -B) build=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    -N) n=$2; shift 2 ;;
    -t) nb=$2; shift 2 ;;
    -g) g=$2; shift 2 ;;
    -d) dtype=$2; shift 2 ;;
    -c) cores=$2; shift 2 ;;
    -f) fracs=$2; shift 2 ;;
    -p) policies=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    --check) check=--check-first; shift ;;
    --weft) extra=$2; shift 2 ;;
    --timeout) cell_timeout=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "oversub.sh: unknown option $1 (-h lists them)"; exit 2 ;;
    esac
done
[ -n "$runs" ] || runs=$([ "$dtype" = cuda ] && echo 2 || echo 1)
[ -n "$build" ] || build=$([ "$dtype" = cuda ] && echo ./build-gpu || echo ./build)
[ -n "$cores" ] || cores=$([ "$dtype" = cuda ] && echo -1 || echo 2)
potrf=$build/apps/weft-potrf
mkdir -p "$out"
if [ ! -x "$potrf" ]; then
    cuda=$([ "$dtype" = cuda ] && echo ON || echo AUTO)
    cmake -S "$here/.." -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA="$cuda" >"$out/build.log" 2>&1 &&
        cmake --build "$build" -j "$(nproc)" --target weft-potrf >>"$out/build.log" 2>&1 ||
        { tail -n 30 "$out/build.log"; echo "oversub.sh: could not build $potrf"; exit 2; }
fi
matrix=$((n * n * 8))
csv=$out/results.csv
echo "N,NB,devices,type,limit,limit_bytes,policy,gflops,h2d_gib,d2h_gib,evictions,writebacks,prefetches,check" >"$csv"

# Bytes of a fraction "a/b" of the matrix; empty for "none".
limit_bytes() {
    case $1 in
    none) echo "" ;;
    */*) echo $((matrix * ${1%/*} / ${1#*/})) ;;
    *) echo $((matrix * $1)) ;;
    esac
}

# One cell: a process, its figures appended to results.csv.
cell() {
    local frac=$1 policy=$2 bytes log args
    bytes=$(limit_bytes "$frac")
    log=$out/potrf_${frac//\//of}_${policy//:/_ahead}.log
    args=(-N "$n" -t "$nb" -g "$g" --nruns "$runs" --weft-device_type="$dtype"
        --weft-show_stats=1 --weft-device_evict="${policy%%:*}")
    [ "${policy#*:}" != "$policy" ] && args+=(--weft-device_prefetch_ahead="${policy#*:}")
    [ "$cores" != -1 ] && args+=(-c "$cores")
    [ -n "$bytes" ] && args+=(--weft-device_memory_limit="$bytes")
    # The emu device's memory must hold the limit (and the whole matrix in core).
    [ "$dtype" = emu ] && args+=(--weft-device_emu_memory=$((matrix * 2 + (64 << 20))))
    [ -n "$check" ] && args+=("$check")
    # shellcheck disable=SC2086 # extra is a list of arguments
    timeout "$cell_timeout" "$potrf" "${args[@]}" $extra >"$log" 2>&1
    awk -v n="$n" -v nb="$nb" -v g="$g" -v t="$dtype" -v f="$frac" -v b="${bytes:-0}" \
        -v p="$policy" -v r="$runs" '
        /gflops/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "gflops") gf = $i }
        /stats: .*H2D/ {
            for (i = 1; i <= NF; i++) {
                if ($i == "H2D") h += $(i + 1)
                if ($i == "D2H") d += $(i + 1)
                if ($(i + 1) == "evictions") e += $i
                if ($(i + 1) == "write-backs),") w += substr($i, 2)
                if ($(i + 1) == "prefetches") pf += $i
            }
        }
        /residual/ { c = $NF }
        END { printf "%s,%s,%s,%s,%s,%s,%s,%s,%.3f,%.3f,%d,%d,%d,%s\n", n, nb, g, t, f, b, p,
                     gf == "" ? "fail" : gf, h / 1024 / r, d / 1024 / r, e / r, w / r, pf / r, c }' \
        "$log" >>"$csv"
}

for frac in $fracs; do
    for policy in $policies; do
        echo "oversub.sh: N=$n NB=$nb limit $frac, $policy" >&2
        cell "$frac" "$policy"
    done
done

# The table, with the references for each limit (bench/oversub_bound.py:
# Belady = a perfect cache on the one-at-a-time priority order, bound = the
# lower bound for any schedule; both H2D + D2H).
{
    echo "| limit | policy | GFLOPS | H2D GiB | D2H GiB | evictions | prefetches | bytes / lru | Belady GiB | bound GiB |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    tail -n +2 "$csv" | while IFS=, read -r _ _ _ _ frac bytes policy gf h2d d2h ev _ pf chk; do
        lru=$(awk -F, -v f="$frac" '$5 == f && $7 ~ /^lru(:|$)/ { print $9 + $10; exit }' "$csv")
        rel=$(awk -v a="$h2d" -v b="$d2h" -v l="${lru:-0}" 'BEGIN {
            if (l > 0) printf "%.2f", (a + b) / l; else printf "-" }')
        ref="-" comp="-"
        if [ "$bytes" != 0 ] && command -v python3 >/dev/null; then
            # The emu device runs weft-potrf's fill tasks: tiles are born there.
            born=$([ "$dtype" = emu ] && echo device || echo host)
            refs=$(python3 "$here/oversub_bound.py" "$n" "$nb" "$bytes" "$born")
            ref=$(echo "$refs" | awk '$1 == "belady" { printf "%.3f", $2 + $3 }')
            comp=$(echo "$refs" | awk '$1 == "bound" { printf "%.3f", $2 + $3 }')
        fi
        echo "| $frac | $policy | $gf${chk:+ ($chk)} | $h2d | $d2h | $ev | $pf | $rel | $ref | $comp |"
    done
} >"$out/table.md"
cat "$out/table.md"

# The plot, when a python3 with matplotlib is there.
py=""
for p in python3 /usr/bin/python3; do
    if "$p" -c "import matplotlib" 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "oversub.sh: no plot (python3 with matplotlib needed)"; exit 0; }
"$py" - "$csv" "$out/oversub.png" <<'PY' || echo "oversub.sh: the plot failed"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["limit"] != "none" and r["gflops"] != "fail"]
frac = lambda s: float(s.split("/")[0]) / float(s.split("/")[1]) if "/" in s else float(s)
fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
for p in sorted({r["policy"] for r in rows}):
    rs = sorted((r for r in rows if r["policy"] == p), key=lambda r: frac(r["limit"]))
    x = [frac(r["limit"]) for r in rs]
    a.plot(x, [float(r["gflops"]) for r in rs], "o-", label=p)
    b.plot(x, [float(r["h2d_gib"]) + float(r["d2h_gib"]) for r in rs], "o-", label=p)
r0 = rows[0]
a.set_title(f"weft-potrf N={r0['N']} NB={r0['NB']} ({r0['type']})")
for ax, yl in ((a, "GFLOPS"), (b, "GiB moved (H2D + D2H)")):
    ax.set_xscale("log", base=2)
    ax.set_xlabel("device memory limit / matrix")
    ax.set_ylabel(yl)
    ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
print("oversub.sh: plot in", sys.argv[2])
PY
