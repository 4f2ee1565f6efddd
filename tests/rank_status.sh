#!/bin/sh
# Runs one rank's command under mpiexec and prints "PREFIX rank R: exit
# status S" after it, R from the launcher's environment (Open MPI's
# OMPI_COMM_WORLD_RANK, else PMI_RANK), S the command's status, which it
# then exits with: a test that lets every rank end (a rank exiting
# non-zero would have mpiexec kill the others) still sees each one's.
# Usage: rank_status.sh PREFIX COMMAND [ARG ...]
prefix=$1
shift
"$@"
s=$?
echo "$prefix rank ${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-?}}: exit status $s"
exit $s
