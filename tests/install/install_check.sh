#!/bin/sh
# Installs the weft of build dir BUILD into a fresh prefix, runs the
# installed weft-info, then builds consumer/ outside the tree against that
# prefix twice (CMake find_package, then pkg-config) and runs each build on
# 2 ranks. Usage: install_check.sh BUILD MPIRUN... (issue 15 items 10, Checks)
# WEFT_CONSUMER_CFLAGS: flags the consumer needs too (a sanitized libweft).
set -eu
cflags=${WEFT_CONSUMER_CFLAGS:-}
build=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/weft-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
# The installed tool runs without LD_LIBRARY_PATH: its RPATH finds libweft.
env -u LD_LIBRARY_PATH "$prefix/bin/weft-info" | grep -q '^cores '
echo "installed weft-info runs"

"$prefix/bin/weft-info" --version | grep -q '^weft [0-9]*\.[0-9]*\.[0-9]* (.*emu'
echo "installed weft-info names its version"

cmake -S "$here/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_FLAGS="$cflags" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
echo "find_package build:"
"$@" -n 2 "$work/cmake-build/consumer" --weft-cores=1

# A C++-only project: the package finds MPI for C++ (it asked for C).
cmake -S "$here/consumer_cxx" -B "$work/cxx-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_FLAGS="$cflags" >/dev/null
cmake --build "$work/cxx-build" >/dev/null
echo "C++ find_package build:"
"$@" -n 2 "$work/cxx-build/consumer_cxx" --weft-cores=1

# What the package must refuse, each with words that say why: another
# minor version while the major is 0, a component it has not.
refused() { # DIR WORDS CMAKE-ARGS...
    dir=$1 words=$2
    shift 2
    if cmake -S "$here/consumer" -B "$work/$dir" -DCMAKE_PREFIX_PATH="$prefix" "$@" \
        >"$work/$dir.log" 2>&1; then
        echo "the package took $*"
        exit 1
    fi
    grep -q "$words" "$work/$dir.log" || { cat "$work/$dir.log"; exit 1; }
    echo "the package refuses $*"
}
refused want-0.2 'requested version "0.2"' -DWEFT_WANT=0.2
refused want-nosuch "no component 'nosuch'" -DWEFT_COMPONENTS=nosuch

libdir=$(dirname "$(find "$prefix" -name weft.pc)")
export PKG_CONFIG_PATH="$libdir"
cc -std=c11 -Wall -Wextra -Werror $cflags -o "$work/consumer-pc" "$here/consumer/consumer.c" \
    $(pkg-config --cflags --libs weft) -Wl,-rpath,"$(pkg-config --variable=libdir weft)"
echo "pkg-config build:"
"$@" -n 2 "$work/consumer-pc" --weft-cores=1

# The public headers through pkg-config's -I (so not system headers: their
# warnings show) compile clean under a strict consumer's warnings, in C99
# and C++11; MPI's own headers are included as system ones, and Open MPI's
# C++ bindings are left out (their warnings are theirs).
mpi_inc=$(pkg-config --cflags-only-I weft | tr ' ' '\n' | grep -v "^-I$(pkg-config --variable=includedir weft)\$" |
    sed -n 's/^-I/-isystem /p' | tr '\n' ' ')
printf '#include <weft/weft.h>\n#include <weft/weft_mpi.h>\n#include <weft/ptg.h>\nint main(void) { int v[3]; return weft_version(&v[0], &v[1], &v[2])[0] == 0; }\n' \
    >"$work/strict.c"
cp "$work/strict.c" "$work/strict.cpp"
cc -std=c99 -pedantic -Wall -Wextra -Wconversion -Wsign-conversion -Wshadow -Wundef \
    -Wstrict-prototypes -Wmissing-prototypes -Wcast-qual -Werror $mpi_inc \
    -I"$(pkg-config --variable=includedir weft)" -c "$work/strict.c" -o "$work/strict-c.o"
c++ -std=c++11 -pedantic -Wall -Wextra -Wconversion -Wsign-conversion -Wshadow -Wundef \
    -Wold-style-cast -Wzero-as-null-pointer-constant -Wcast-qual -Werror -DOMPI_SKIP_MPICXX=1 \
    $mpi_inc -I"$(pkg-config --variable=includedir weft)" -c "$work/strict.cpp" -o "$work/strict-cxx.o"
echo "the public headers compile under strict C99 and C++11 warnings"
