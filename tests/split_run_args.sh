# Sourced (with ".") by the scripts that compare runs of a program across
# ranks (tests/stf/sim_vs_real.sh, tests/ptg/ptg_vs_stf.sh): splits their
# "N EXE [ARG ...] -- MPIEXEC [MPIEXEC_ARG ...]" into n, exe and args (the
# program's arguments) and leaves the MPIEXEC command in "$@". $script
# names the caller in the usage message.
n=$1
exe=$2
shift 2
args=''
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    args="$args $1"
    shift
done
[ $# -gt 1 ] || { echo "$script: usage: N EXE [ARG ...] -- MPIEXEC ..."; exit 1; }
shift
