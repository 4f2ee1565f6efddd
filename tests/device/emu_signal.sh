#!/bin/sh
# Starts COMMAND (one process, emulated devices), waits for its emu zone
# file in /dev/shm, sends it signal SIG, and prints "status S" (its exit
# status) and "emu files left: N". The signals that end a process by
# default left the files (nearly 1 GB each) until the next emu device of
# the node opened; only SIGTERM cleaned up.
# Usage: emu_signal.sh SIG COMMAND [ARG ...]
sig=$1
shift
# A command a non-interactive shell runs in the background ignores SIGINT
# and SIGQUIT: their default action back (coreutils 8.31 and later).
if env --default-signal=INT,QUIT true 2>/dev/null; then
    env --default-signal=INT,QUIT "$@" &
else
    "$@" &
fi
pid=$!
i=0
while [ $i -lt 300 ] && ! ls /dev/shm/weft-emu-"$pid"-* >/dev/null 2>&1; do
    sleep 0.1
    i=$((i + 1))
done
sleep 0.3
kill -"$sig" "$pid"
wait "$pid"
echo "status $?"
left=0
for f in /dev/shm/weft-emu-"$pid"-*; do
    [ -e "$f" ] || continue
    echo "left: $f"
    rm -f "$f"
    left=$((left + 1))
done
echo "emu files left: $left"
