#!/bin/sh
# Runs a test command (or a few in a row) and checks its exit status and the
# lines of its output (stdout and stderr together). Every test that checks
# what a program prints goes through here (tests/CMakeLists.txt:
# weft_expect_test); tests/selftest_run_expect.sh shows that each check fails.
#
# Usage: run_expect.sh [CHECK ...] -- COMMAND [ARG ...] [--then COMMAND [ARG ...]] ...
#
#   --status S     the exit status wanted (default 0):
#                    0 or another number: exactly that;
#                    nonzero: anything but 0;
#                    clean: non-zero below 128 (a failure, not a signal);
#                    any: not checked.
#                  With several commands they run in order; under a status
#                  other than any, the first that exits non-zero ends the run
#                  and its status is the one checked.
#   --match RE     a line must match the extended regular expression RE.
#   --count RE N   exactly N lines must match RE.
#   --reject RE    no line may match RE.
#   --same RE      every command prints the same text matching RE (grep -o),
#                  and not an empty one: what runs of two settings must agree on.
#   --ranks N      in every RE, %r stands for a rank: a RE holding %r must
#                  match once for each rank 0 .. N-1.
#   --within S     the commands must end within S seconds.
#   --rank-within S  every rank must end within S seconds of its own time:
#                  the program prints "expect_elapsed rank R: N ms" at exit
#                  (tests/stf/elapsed.h); mpiexec's start, which a loaded
#                  machine stretches, is outside it. One line per rank
#                  (--ranks) is required.
#   --gpus G       G > 0: needs G CUDA devices, skipped (77) where
#                  `PROBE --probe-gpus` finds fewer; none: needs a machine
#                  without CUDA device, skipped where PROBE finds one.
#   --probe PROBE  the weft program that answers --probe-gpus ("cuda_devices= n").
#   --remove GLOB  files removed before the run (outputs of an earlier one).
#   --sanitizer-ok RE  a sanitizer's report line matching RE is expected (the
#                  fault the test injects); any other fails the test, whatever
#                  the status wanted (below).
#
# Exit 0 when every check passes (then "run_expect: PASSED" is the last line),
# 1 when one fails (each failure named), 77 when skipped.
set -u

die() {
    echo "run_expect.sh: $*"
    exit 1
}

status=0 nranks=1 within='' rank_within='' gpus=0 probe='' checks='' san_ok=''
# Checks are kept one a line as "KIND<tab>RE<tab>N".
tab=$(printf '\t')
add_check() { checks="$checks$1$tab$2$tab${3:-}
"; }
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    [ $# -ge 2 ] || die "$1 needs a value"
    case $1 in
    --status) status=$2 ;;
    --match | --reject | --same) add_check "${1#--}" "$2" ;;
    --count)
        [ $# -ge 3 ] || die "--count needs RE and N"
        add_check count "$2" "$3"
        shift
        ;;
    --ranks) nranks=$2 ;;
    --within) within=$2 ;;
    --rank-within) rank_within=$2 ;;
    --gpus) gpus=$2 ;;
    --probe) probe=$2 ;;
    --sanitizer-ok) san_ok=$2 ;;
    --remove)
        # shellcheck disable=SC2086 # the GLOB is expanded on purpose
        rm -f $2
        ;;
    *) die "unknown option '$1'" ;;
    esac
    shift 2
done
[ $# -ge 2 ] || die "no command after --"
# An RE grep refuses would drop every report below (grep's status 2, no line).
if [ -n "$san_ok" ]; then
    printf 'x\n' | grep -Eq -- "$san_ok"
    [ $? -le 1 ] || die "--sanitizer-ok: grep -E refuses '$san_ok'"
fi
shift
case $status in
any | nonzero | clean) ;;
*[!0-9]* | '') die "--status must be a number, nonzero, clean or any, not '$status'" ;;
esac

# ---- skip where the GPUs asked for are absent ----------------------------
if [ "$gpus" != 0 ]; then
    [ -n "$probe" ] || die "--gpus needs --probe"
    out=$("$probe" --probe-gpus 2>&1)
    rc=$?
    n=$(printf '%s\n' "$out" | sed -n 's/^cuda_devices= *\([0-9][0-9]*\)$/\1/p')
    if [ "$rc" -ne 0 ] || [ -z "$n" ]; then
        printf '%s\n' "$out"
        # A probe that fails on a machine with GPUs is a failure, not a skip.
        if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
            echo "run_expect: $probe --probe-gpus failed (exit $rc) but nvidia-smi lists GPUs"
            exit 1
        fi
        echo "run_expect: skipped: $probe --probe-gpus failed and nvidia-smi lists no GPU"
        exit 77
    fi
    if [ "$gpus" = none ]; then
        if [ "$n" -gt 0 ]; then
            echo "run_expect: skipped: weft finds $n CUDA device(s); this test needs a machine without"
            exit 77
        fi
    elif [ "$n" -lt "$gpus" ]; then
        echo "run_expect: skipped: needs $gpus CUDA device(s), weft finds $n"
        exit 77
    fi
fi

# ---- run: each command's output kept apart for --same --------------------
dir=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$dir"' EXIT
t0=$(date +%s%N)
rc=0 ncmd=0
while [ $# -gt 0 ]; do
    ncmd=$((ncmd + 1))
    cmd=''
    # Gather this command's words up to --then, quoted for eval.
    while [ $# -gt 0 ] && [ "$1" != "--then" ]; do
        cmd="$cmd '$(printf '%s' "$1" | sed "s/'/'\\\\''/g")'"
        shift
    done
    [ $# -gt 0 ] && shift
    [ -n "$cmd" ] || die "an empty command around --then"
    # Where the ranks of this command meet before they exit
    # (tests/stf/elapsed.h), so that none is killed before it printed.
    WEFT_TEST_EXIT_DIR="$dir/exit$ncmd"
    export WEFT_TEST_EXIT_DIR
    mkdir "$WEFT_TEST_EXIT_DIR" || die "mkdir $WEFT_TEST_EXIT_DIR failed"
    eval "$cmd" >"$dir/out$ncmd" 2>&1
    rc=$?
    cat "$dir/out$ncmd"
    if [ "$status" != any ] && [ "$rc" -ne 0 ]; then break; fi
done
t1=$(date +%s%N)
cat "$dir"/out* >"$dir/all"
ms=$(((t1 - t0) / 1000000))
echo "run_expect: exit status $rc after $ms ms"

# ---- checks -----------------------------------------------------------------
bad=0
fail() {
    echo "run_expect: FAIL: $*"
    bad=1
}
case $status in
any) ;;
nonzero) [ "$rc" -ne 0 ] || fail "exit status 0, expected non-zero" ;;
clean) { [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; } || fail "exit status $rc, expected a clean failure" ;;
*) [ "$rc" -eq "$status" ] || fail "exit status $rc, expected $status" ;;
esac
if [ -n "$within" ] && [ "$ms" -ge $((within * 1000)) ]; then
    fail "took $ms ms, the limit is $within s"
fi
if [ -n "$rank_within" ]; then
    times=$(sed -n 's/^expect_elapsed rank [0-9]*: \([0-9]*\) ms$/\1/p' "$dir/all")
    nt=$(echo "$times" | grep -c .)
    worst=$(echo "$times" | sort -n | tail -n 1)
    if [ "$nt" -lt "$nranks" ]; then
        fail "$nt expect_elapsed lines, expected one per rank ($nranks)"
    elif [ "$worst" -ge $((rank_within * 1000)) ]; then
        fail "a rank took $worst ms of its own time, the limit is $rank_within s"
    else
        echo "run_expect: slowest rank took $worst ms of its own time (limit $rank_within s)"
    fi
fi

# One check of one RE (%r already replaced); c_ names: the caller loops on
# kind, re and n.
check_one() {
    c_kind=$1 c_re=$2 c_n=$3
    case $c_kind in
    match) grep -Eq -- "$c_re" "$dir/all" || fail "no line matches: $c_re" ;;
    reject) ! grep -Eq -- "$c_re" "$dir/all" || fail "a line matches: $c_re" ;;
    count)
        got=$(grep -Ec -- "$c_re" "$dir/all")
        [ "$got" -eq "$c_n" ] || fail "$got lines match '$c_re', expected $c_n"
        ;;
    same)
        first=$(grep -Eo -- "$c_re" "$dir/out1" | tr '\n' ' ')
        [ -n "$first" ] || fail "command 1 prints nothing matching: $c_re"
        i=2
        while [ $i -le "$ncmd" ]; do
            got=$(grep -Eo -- "$c_re" "$dir/out$i" | tr '\n' ' ')
            echo "run_expect: '$c_re': command 1: $first; command $i: $got"
            [ "$got" = "$first" ] || fail "command $i differs from command 1 on: $c_re"
            i=$((i + 1))
        done
        ;;
    esac
}

while IFS="$tab" read -r kind re n; do
    [ -n "$kind" ] || continue
    case $re in
    *%r*)
        r=0
        while [ $r -lt "$nranks" ]; do
            check_one "$kind" "$(printf '%s' "$re" | sed "s/%r/$r/g")" "$n"
            r=$((r + 1))
        done
        ;;
    *) check_one "$kind" "$re" "$n" ;;
    esac
done <<EOF
$checks
EOF
# A sanitized build's report (UBSan's "runtime error:", ASan's "ERROR:
# AddressSanitizer") ends the process with status 1 or a signal, which a
# test wanting a failure took for the one it waits for: every refused
# command line of the apps negated LLONG_MIN (UBSan) and passed so.
# (-a: a stray NUL or invalid UTF-8 would make grep call the output binary
# and print no line. tests/CMakeLists.txt's weft_fail_on_sanitizer_reports
# gives ctest the same two patterns: keep them alike.)
reports=$(grep -aE 'runtime error: |(ERROR|WARNING): [A-Za-z]+Sanitizer' "$dir/all")
if [ -n "$san_ok" ] && [ -n "$reports" ]; then
    reports=$(printf '%s\n' "$reports" | grep -aEv -- "$san_ok")
fi
[ -z "$reports" ] || fail "a sanitizer report: $(printf '%s\n' "$reports" | head -n 1)"

[ $bad -eq 0 ] || exit 1
echo "run_expect: PASSED"
exit 0
