#!/bin/sh
# A program run through its task graph (--ptg) against the same run by
# sequential insertion: both must pass their check with the same residual
# line, and every rank must send the same activations and bytes and make
# the same SEND and RECV transfers, and run as many tasks (show_stats).
# Prints one line a rank and a verdict.
#
# Usage: ptg_vs_stf.sh N EXE [ARG ...] -- MPIEXEC [MPIEXEC_ARG ...]
set -u
script=ptg_vs_stf
. "$(dirname "$0")/../split_run_args.sh"
stf=$("$@" -n "$n" "$exe" $args --weft-show_stats=1 2>&1) || {
    echo "$stf"
    echo "ptg_vs_stf: the run by insertion failed"
    exit 1
}
ptg=$("$@" -n "$n" "$exe" $args --ptg --weft-show_stats=1 2>&1) || {
    echo "$ptg"
    echo "ptg_vs_stf: the run through the graph failed"
    exit 1
}
ok=1
rs=$(echo "$stf" | grep '^residual = ')
rp=$(echo "$ptg" | grep '^residual = ')
echo "by insertion: $rs"
echo "through the graph: $rp"
case "$rs" in *PASSED*) ;; *) ok=0 ;; esac
[ "$rs" = "$rp" ] || ok=0
counts() {
    echo "$1" | sed -n "s/^weft\[$2\] stats: rank $2: \([0-9]* tasks\) on .*/\1/p;s/^weft\[$2\] stats: rank $2: \(network: [0-9]* activations ([0-9]* eager), sent [0-9.]* MiB\).*/\1/p;s/^weft\[$2\] stats: rank $2: \(transfers: .*\)/\1/p" | tr '\n' ' '
}
r=0
while [ "$r" -lt "$n" ]; do
    a=$(counts "$stf" "$r")
    b=$(counts "$ptg" "$r")
    verdict=same
    if [ -z "$a" ] || [ "$a" != "$b" ]; then
        verdict=DIFFER
        ok=0
    fi
    echo "rank $r: insertion [$a] graph [$b]: $verdict"
    r=$((r + 1))
done
[ "$ok" = 1 ] && echo "ptg_vs_stf: PASSED" || echo "ptg_vs_stf: FAILED"
[ "$ok" = 1 ]
