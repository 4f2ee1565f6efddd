#!/bin/sh
# Simulation mode against a real run (docs/SCALE.md): the program runs once
# on N real ranks with show_stats, then once per rank r as a simulation of
# rank r of N; each rank's sends (activations its comm engine sent) and
# receives (RECV transfers it completed) must equal the SEND and RECV tasks
# the simulation inferred. Prints one line a rank and a verdict.
#
# Usage: sim_vs_real.sh N EXE [ARG ...] -- MPIEXEC [MPIEXEC_ARG ...]
set -u
script=sim_vs_real
. "$(dirname "$0")/../split_run_args.sh"
real=$("$@" -n "$n" "$exe" $args --weft-show_stats=1 2>&1) || {
    echo "$real"
    echo "sim_vs_real: the real run failed"
    exit 1
}
ok=1
r=0
while [ "$r" -lt "$n" ]; do
    sends=$(echo "$real" | sed -n "s/^weft\[$r\] stats: rank $r: network: \([0-9]*\) activations.*/\1/p")
    recvs=$(echo "$real" | sed -n "s/^weft\[$r\] stats: rank $r: transfers: [0-9]* sends, \([0-9]*\) recvs$/\1/p")
    sim=$("$exe" $args --weft-sim_nranks="$n" --weft-sim_rank="$r" 2>&1 | grep "^weft sim: rank $r of $n:")
    ssends=$(echo "$sim" | sed -n 's/.* sends \([0-9]*\),.*/\1/p')
    srecvs=$(echo "$sim" | sed -n 's/.* recvs \([0-9]*\),.*/\1/p')
    verdict=same
    if [ -z "$sends" ] || [ -z "$recvs" ] || [ "$sends" != "$ssends" ] || [ "$recvs" != "$srecvs" ]; then
        verdict=DIFFER
        ok=0
    fi
    echo "rank $r: real sends ${sends:-?} recvs ${recvs:-?}, simulated sends ${ssends:-?} recvs ${srecvs:-?}: $verdict"
    r=$((r + 1))
done
[ "$ok" = 1 ] && echo "sim_vs_real: PASSED" || echo "sim_vs_real: FAILED"
[ "$ok" = 1 ]
