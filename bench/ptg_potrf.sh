#!/bin/sh
# weft-potrf through its task graph (--ptg) beside the same factorization
# by insertion (--trsm-inv 0: the same TRSM panel), side by side in one
# run: processes alternate (insertion, graph, insertion, graph, ...), each
# doing --nruns R runs; per process the first (cold) run and the best of
# the others (warm) are printed, then the ratio of the graph's best warm
# rate to insertion's and of the cold medians. A figure, never a verdict.
#
# Usage: bench/ptg_potrf.sh [-B build] [-n ranks] [-p reps] [-r runs] -- WEFT-POTRF-ARGS
#   e.g. bench/ptg_potrf.sh -n 2 -- -N 6144 -t 256 -P 1 -Q 2 -c 1
#        bench/ptg_potrf.sh -B build-gpu -- -N 32768 -t 2048 -g 1
set -u
build=./build
ranks=1
reps=3
runs=4
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
    -B) build=$2; shift 2 ;;
    -n) ranks=$2; shift 2 ;;
    -p) reps=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    *) echo "ptg_potrf: unknown option $1"; exit 1 ;;
    esac
done
[ "${1:-}" = "--" ] && shift
exe=$build/apps/weft-potrf
[ -x "$exe" ] || { echo "ptg_potrf: $exe is missing (build first)"; exit 1; }
run() {
    if [ "$ranks" -gt 1 ]; then
        mpiexec --oversubscribe --allow-run-as-root --bind-to none -n "$ranks" "$exe" "$@"
    else
        "$exe" "$@"
    fi
}
rates() { sed -n 's/.*: \([0-9.]*\) gflops$/\1/p'; }
tmp=$(mktemp)
i=0
while [ "$i" -lt "$reps" ]; do
    for mode in stf ptg; do
        flag="--trsm-inv 0"
        [ "$mode" = ptg ] && flag="--ptg"
        r=$(run "$@" $flag --nruns "$runs" --check-first 2>&1)
        ok=$(echo "$r" | grep -c ': PASSED')
        g=$(echo "$r" | rates | tr '\n' ' ')
        cold=$(echo "$g" | awk '{print $1}')
        warm=$(echo "$g" | awk '{m=0; for (i=2;i<=NF;i++) if ($i>m) m=$i; print m}')
        echo "$mode process $i: cold $cold warm best $warm (runs: $g) check ${ok:-0}/1"
        echo "$mode $cold $warm" >>"$tmp"
    done
    i=$((i + 1))
done
median() { grep "^$1 " "$tmp" | awk '{print $2}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
best() { grep "^$1 " "$tmp" | awk 'BEGIN {m=0} $3>m {m=$3} END {print m}'; }
ws=$(best stf) wp=$(best ptg) cs=$(median stf) cp=$(median ptg)
awk -v ws="$ws" -v wp="$wp" -v cs="$cs" -v cp="$cp" 'BEGIN {
    printf "graph / insertion: warm best %.1f / %.1f = %.3f; cold median %.1f / %.1f = %.3f\n",
           wp, ws, (ws > 0 ? wp / ws : 0), cp, cs, (cs > 0 ? cp / cs : 0) }'
rm -f "$tmp"
