#!/bin/sh
# Out-of-core Cholesky under both eviction policies (issue 18): runs a
# weft-potrf command (with show_stats on and a device memory limit) with
# device_evict=lru and =next_use, each once with --check (the factor must
# be right) and once without (the check's own tasks would blur the count);
# sums H2D + D2H over every device line of show_stats, and passes when
# next_use moved at most RATIO of lru's bytes and evicted fewer copies.
#
# Usage: evict_potrf.sh RATIO COMMAND [ARG ...]
set -u
ratio=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# Prints "bytes evictions" summed over the show_stats lines of a run.
counts() {
    sed -n 's/.*stats: .*H2D \([0-9.]*\) MiB, D2H \([0-9.]*\) MiB.* \([0-9]*\) evictions.*/\1 \2 \3/p' "$out" |
        awk '{ b += $1 + $2; e += $3 } END { printf "%.1f %d\n", b, e }'
}

fail=0
for policy in lru next_use; do
    if ! "$@" --weft-device_evict=$policy --check >"$out" 2>&1 || ! grep -q PASSED "$out"; then
        cat "$out"
        echo "evict_potrf: $policy: the run with --check failed"
        fail=1
    fi
    if ! "$@" --weft-device_evict=$policy >"$out" 2>&1; then
        cat "$out"
        echo "evict_potrf: $policy: the run failed"
        fail=1
    fi
    eval "c_$policy=\"\$(counts)\""
    eval "echo \"evict_potrf: $policy: \$c_$policy (MiB moved, evictions)\""
done
# shellcheck disable=SC2154 # set by the eval above
if ! echo "$c_lru $c_next_use $ratio" |
    awk '{ exit !($3 <= $5 * $1 && $4 < $2 && $3 > 0) }'; then
    echo "evict_potrf: next_use moved more than $ratio of lru's bytes, or evicted as many"
    fail=1
fi
[ $fail -eq 0 ] && echo "evict_potrf: PASSED" || echo "evict_potrf: FAILED"
exit $fail
