#!/bin/sh
# weft-info and the README's parameter table agree (issue 15 item 12): the
# same parameters, each with the same default and the same help (weft-info's
# text, range or choices included; a '|' is written '\|' in the table).
# Usage: readme_params.sh WEFT_INFO README
set -eu
info=$1 readme=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/weft-params.XXXXXX")
trap 'rm -rf "$work"' EXIT

# weft-info pads name, value and default to columns: their starts are read
# from the first parameter line, whose fields are all non-empty.
env -u WEFT_CORES "$info" | awk '
    /^#/ { next }
    !cols { rest = $0; p = 1
            for (f = 1; f <= 4; f++) { match(rest, /[^ ]+/); start[f] = p + RSTART - 1
                                       p += RSTART + RLENGTH - 1; rest = substr($0, p) }
            cols = 1 }
    { name = substr($0, 1, start[2] - 1); def = substr($0, start[3], start[4] - start[3])
      gsub(/ +$/, "", name); gsub(/ +$/, "", def)
      printf "%s\t%s\t%s\n", name, def, substr($0, start[4]) }' | sort >"$work/info"

# README rows "| name | default | help |" under "## Parameters"; "" is empty.
awk '/^## Parameters/ { sec = 1; next } /^## / { sec = 0 }
     sec && /^\| [a-z_]+ \|/ && !/^\| name \|/ {
         line = $0; gsub(/\\\|/, "\001", line)
         n = split(line, f, / \| /); sub(/^\| /, "", f[1]); sub(/ \|$/, "", f[3])
         if (f[2] == "\"\"") f[2] = ""
         gsub("\001", "|", f[3]); printf "%s\t%s\t%s\n", f[1], f[2], f[3] }' "$readme" |
    sort >"$work/readme"

if diff "$work/info" "$work/readme" >"$work/diff"; then
    echo "README and weft-info agree on $(wc -l <"$work/info") parameters"
else
    echo "README.md's parameter table differs from weft-info (< weft-info, > README):"
    cat "$work/diff"
    exit 1
fi
