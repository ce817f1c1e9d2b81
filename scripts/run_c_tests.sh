#!/usr/bin/env bash
# Runs C test programs side by side, JOBS at a time (default: the number
# of CPUs), each under the sanitizers and bounded by SIGKILL after
# C_TEST_TIMEOUT seconds (default 600). A program's output is printed
# whole when it ends, with its verdict and time; the exit status is
# non-zero if any program failed.
#
#   JOBS=2 scripts/run_c_tests.sh c_src/build/test_a c_src/build/test_b
set -uo pipefail

if [ $# -eq 0 ]; then
    echo "usage: run_c_tests.sh PROGRAM..." >&2
    exit 2
fi

jobs=${JOBS:-$(nproc)}
limit=${C_TEST_TIMEOUT:-600}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

run_one() {
    local prog=$1 log=$2 start=$SECONDS rc
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        timeout --signal=KILL "$limit" "$prog" >"$log" 2>&1
    rc=$?
    echo "$rc $((SECONDS - start))" >"$log.rc"
}

# start up to $jobs programs, then one more each time one ends
i=0
running=0
for prog in "$@"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
    run_one "$prog" "$logs/$i" &
    running=$((running + 1))
    i=$((i + 1))
done
wait

failed=0
i=0
for prog in "$@"; do
    read -r rc took <"$logs/$i.rc"
    echo "=== $prog"
    cat "$logs/$i"
    if [ "$rc" -eq 0 ]; then
        echo "=== $prog: passed ($took s)"
    else
        [ "$rc" -ne 137 ] || echo "=== $prog ran past $limit s and was killed"
        echo "=== $prog: FAILED (exit $rc, $took s)"
        failed=$((failed + 1))
    fi
    i=$((i + 1))
done
echo "C tests: $(($# - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
