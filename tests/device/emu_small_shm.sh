#!/bin/sh
# Runs "$@" with /dev/shm a 64 MiB tmpfs of its own (a container's default
# size), where two emu devices each took all of it and died of SIGBUS once
# their pages were touched. Needs a mount namespace (root): skipped (77)
# where unshare or the mount is refused. Passes when the command exits 0
# and prints PASSED.
set -u
command -v unshare >/dev/null 2>&1 || exit 77
unshare -m true 2>/dev/null || exit 77
out=$(unshare -m sh -c 'mount -t tmpfs -o size=64M tmpfs /dev/shm || exit 77; exec "$@"' sh "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { echo "emu_small_shm: exit status $rc"; exit 1; }
printf '%s\n' "$out" | grep -q PASSED || { echo "emu_small_shm: no PASSED line"; exit 1; }
