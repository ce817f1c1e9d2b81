#!/usr/bin/env bash
# Runs each part of a test suite, one after another, as `$MAKE PART` in
# the current directory, whatever the parts before it gave; then prints
# each part's verdict and exits non-zero if any part failed. `make test`
# (the library's and the lab's) calls it with the list of its parts:
#
#   MAKE="$(MAKE)" scripts/run_parts.sh format-check test-c ...
#
# A part is a make target; it fails when make exits non-zero. The last
# line reads "parts: N passed, N failed in N s".
set -uo pipefail

if [ $# -eq 0 ]; then
    echo "usage: run_parts.sh PART..." >&2
    exit 2
fi

make_cmd=${MAKE:-make}
names=()
verdicts=()
failed=0

for part in "$@"; do
    echo "=== $part"
    start=$SECONDS
    # the make command may carry options (word splitting intended)
    # shellcheck disable=SC2086
    $make_cmd --no-print-directory "$part"
    rc=$?
    took=$((SECONDS - start))
    names+=("$part")
    if [ "$rc" -eq 0 ]; then
        verdicts+=("passed ($took s)")
    else
        verdicts+=("FAILED (exit $rc, $took s)")
        failed=$((failed + 1))
        echo "=== $part FAILED (exit $rc); going on with the next part"
    fi
done

echo
echo "=== summary ($(pwd))"
for i in "${!names[@]}"; do
    printf '  %-18s %s\n' "${names[$i]}" "${verdicts[$i]}"
done
echo "parts: $((${#names[@]} - failed)) passed, $failed failed in $SECONDS s"
[ "$failed" -eq 0 ]
