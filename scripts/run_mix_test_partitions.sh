#!/usr/bin/env bash
# Runs the ExUnit suite as N partitions side by side, each a VM of its
# own with a share of the test files, each bounded by SIGKILL after
# SECONDS (a job looping in a normal NIF holds its VM past any test's
# timeout, and the VM ignores SIGTERM then). Each partition's output is
# printed whole when all have ended; the exit status is non-zero if any
# partition failed. The code must be compiled first (MIX_ENV=test mix
# compile), so that the partitions do not build the same files at once.
#
#   scripts/run_mix_test_partitions.sh SECONDS [N]
#
# The files are shared out by how long each takes, longest first, each to
# the partition with the least so far: test/partition_weights.txt gives a
# file's seconds ("SECONDS PATH" a line, from `mix test --slowest 1000`
# added up by file); a file it does not list counts as one second. The
# weights only balance the partitions: a stale one costs time, never a
# test.
set -uo pipefail

if [ $# -lt 1 ]; then
    echo "usage: run_mix_test_partitions.sh SECONDS [N]" >&2
    exit 2
fi
limit=$1
n=${2:-1}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

if [ "$n" -gt 1 ]; then
    weights=test/partition_weights.txt
    [ -f "$weights" ] || weights=/dev/null
    # "partition seconds path" for every test file, longest first
    find test -name '*_test.exs' | sort |
        awk -v weights="$weights" 'FILENAME == weights { if ($1 !~ /^#/ && NF == 2) w[$2] = $1; next }
            { printf "%s %s\n", ($0 in w ? w[$0] : 1), $0 }' "$weights" - |
        sort -k1,1nr -k2 |
        awk -v n="$n" '{ best = 1
                for (p = 2; p <= n; p++) if (load[p] < load[best]) best = p
                load[best] += $1; print best, $2 }
            END { for (p = 1; p <= n; p++) printf "partition %d: about %d s\n", p, load[p] > "/dev/stderr" }' \
            >"$logs/files" 2>"$logs/plan"
fi

for p in $(seq 1 "$n"); do
    (
        start=$SECONDS
        if [ "$n" -eq 1 ]; then
            MIX_ENV=test timeout --signal=KILL "$limit" mix test >"$logs/$p" 2>&1
        else
            mapfile -t files < <(awk -v p="$p" '$1 == p { print $2 }' "$logs/files")
            if [ "${#files[@]}" -eq 0 ]; then
                # more partitions than files: mix test with none would run all
                echo "no test files in this partition" >"$logs/$p"
                true
            else
                MIX_ENV=test MIX_TEST_PARTITION=$p timeout --signal=KILL "$limit" \
                    mix test "${files[@]}" >"$logs/$p" 2>&1
            fi
        fi
        echo "$? $((SECONDS - start))" >"$logs/$p.rc"
    ) &
done
wait

failed=0
for p in $(seq 1 "$n"); do
    read -r rc took <"$logs/$p.rc"
    echo "=== mix test, partition $p of $n"
    [ "$n" -eq 1 ] || grep "^partition $p:" "$logs/plan"
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
