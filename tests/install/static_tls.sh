#!/bin/sh
# libweft's thread-local storage stays small: its initial-exec variables
# put the whole block in glibc's static TLS, and a process that loads
# libweft late (a Python extension, a plugin) takes that from a reserve of
# about 1.6 KB shared by every library loaded so ("cannot allocate memory in
# static TLS block"; a 1 KB error line there made it 1.1 KB).
# Usage: static_tls.sh LIBWEFT [LIMIT_BYTES]
set -eu
lib=$1
limit=${2:-256}
size=$(readelf -lW "$lib" | awk '$1 == "TLS" { print $6 }')
[ -n "$size" ] || { echo "no TLS segment in $lib"; exit 0; } # none at all: nothing to take
bytes=$(printf '%d' "$size")
echo "static TLS of libweft: $bytes bytes (at most $limit)"
[ "$bytes" -le "$limit" ]
