#!/bin/sh
# Compiles the C block under "## Using it" in README.md with -Wall -Wextra
# -Werror against include/ and libweft, then runs it on 2 ranks: the
# README's own snippet must build clean and work (issue 15 item 13).
# Usage: readme_snippet.sh README INCLUDE_DIR LIBWEFT CC MPIRUN...
# WEFT_CONSUMER_CFLAGS: flags the program needs too (a sanitized libweft).
set -eu
readme=$1 inc=$2 lib=$3 cc=$4
shift 4
work=$(mktemp -d "${TMPDIR:-/tmp}/weft-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT
awk '/^## Using it/ { sec = 1; next } /^## / { sec = 0 }
     sec && /^```c$/ { code = 1; next } code && /^```$/ { exit } code { print }' \
    "$readme" >"$work/snippet.c"
[ -s "$work/snippet.c" ] || { echo "no C block under '## Using it' in $readme"; exit 1; }
echo "snippet: $(wc -l <"$work/snippet.c") lines"
"$cc" -std=c11 -Wall -Wextra -Werror ${WEFT_CONSUMER_CFLAGS:-} -I"$inc" -o "$work/snippet" "$work/snippet.c" \
    "$lib" -Wl,-rpath,"$(dirname "$lib")"
echo "snippet compiled without warnings"
"$@" -n 2 "$work/snippet" --weft-cores=1
echo "snippet ran"
