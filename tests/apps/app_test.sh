#!/bin/sh
# Runs an application as its users do and checks its exit status and output.
#
# Usage: app_test.sh MODE GPUS PROBE [PATTERN ...] -- COMMAND [ARG ...]
#   MODE     pass: COMMAND must exit 0;
#            fail: COMMAND must exit non-zero without being killed by a signal.
#   GPUS     0: runs anywhere;
#            N > 0: needs N CUDA devices: skipped (exit 77) where
#              `PROBE --probe-gpus` finds fewer;
#            none: needs a machine without CUDA devices (a run that fails
#              there succeeds on a GPU machine): skipped where PROBE finds one.
#   PROBE    the weft application that answers --probe-gpus ("cuda_devices= n").
#   PATTERN  extended regular expressions: each must match a line of the
#            output (stdout and stderr together).
# Exit 0 when every check passes, 1 otherwise (the reason printed last), 77
# when skipped.
set -u
mode=$1 gpus=$2 probe=$3
shift 3
pats=''
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    pats="$pats$1
"
    shift
done
[ $# -gt 1 ] || { echo "app_test.sh: no command after --"; exit 1; }
shift

if [ "$gpus" != 0 ]; then
    out=$("$probe" --probe-gpus 2>&1)
    rc=$?
    n=$(printf '%s\n' "$out" | sed -n 's/^cuda_devices= *\([0-9][0-9]*\)$/\1/p')
    if [ "$rc" -ne 0 ] || [ -z "$n" ]; then
        printf '%s\n' "$out"
        # A probe that fails on a machine with GPUs is a failure, not a skip.
        if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
            echo "test: $probe --probe-gpus failed (exit $rc) but nvidia-smi lists GPUs"
            exit 1
        fi
        echo "test: skipped: $probe --probe-gpus failed and nvidia-smi lists no GPU"
        exit 77
    fi
    if [ "$gpus" = none ]; then
        if [ "$n" -gt 0 ]; then
            echo "test: skipped: weft finds $n CUDA device(s); this test needs a machine without"
            exit 77
        fi
    elif [ "$n" -lt "$gpus" ]; then
        echo "test: skipped: needs $gpus CUDA device(s), weft finds $n"
        exit 77
    fi
fi

out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
case $mode in
pass)
    [ "$rc" -eq 0 ] || { echo "test: exit status $rc, expected 0"; exit 1; }
    ;;
fail)
    [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] ||
        { echo "test: exit status $rc, expected a clean failure"; exit 1; }
    ;;
*)
    echo "app_test.sh: MODE must be pass or fail, not '$mode'"
    exit 1
    ;;
esac
missing=$(printf '%s' "$pats" | while IFS= read -r p; do
    printf '%s\n' "$out" | grep -Eq -e "$p" || printf '%s\n' "$p"
done)
if [ -n "$missing" ]; then
    printf '%s\n' "$missing" | while IFS= read -r p; do echo "test: no line matches '$p'"; done
    exit 1
fi
exit 0
