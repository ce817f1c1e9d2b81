#!/usr/bin/env bash
# Runs the ExUnit suite as N partitions side by side (`mix test
# --partitions N`, each partition a VM of its own with a share of the
# test files), each bounded by SIGKILL after SECONDS (a job looping in a
# normal NIF holds its VM past any test's timeout, and the VM ignores
# SIGTERM then). Each partition's output is printed whole when all have
# ended; the exit status is non-zero if any partition failed. The code
# must be compiled first (MIX_ENV=test mix compile), so that the
# partitions do not build the same files at once.
#
#   scripts/run_mix_test_partitions.sh SECONDS [N]
set -uo pipefail

if [ $# -lt 1 ]; then
    echo "usage: run_mix_test_partitions.sh SECONDS [N]" >&2
    exit 2
fi
limit=$1
n=${2:-1}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

for p in $(seq 1 "$n"); do
    (
        start=$SECONDS
        if [ "$n" -eq 1 ]; then
            MIX_ENV=test timeout --signal=KILL "$limit" mix test >"$logs/$p" 2>&1
        else
            MIX_ENV=test MIX_TEST_PARTITION=$p timeout --signal=KILL "$limit" \
                mix test --partitions "$n" >"$logs/$p" 2>&1
        fi
        echo "$? $((SECONDS - start))" >"$logs/$p.rc"
    ) &
done
wait

failed=0
for p in $(seq 1 "$n"); do
    read -r rc took <"$logs/$p.rc"
    echo "=== mix test, partition $p of $n"
    cat "$logs/$p"
    if [ "$rc" -eq 0 ]; then
        echo "=== partition $p: passed ($took s)"
    else
        [ "$rc" -ne 137 ] || echo "error: partition $p ran past $limit s and was killed" >&2
        echo "=== partition $p: FAILED (exit $rc, $took s)"
        failed=$((failed + 1))
    fi
done
[ "$failed" -eq 0 ]
