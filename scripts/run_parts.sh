#!/usr/bin/env bash
# Runs the parts of a test suite, each as `$MAKE PART` in the current
# directory, whatever the parts before it gave; then prints each part's
# verdict and time and exits non-zero if any part failed. `make test`
# (the library's and the lab's) calls it with the list of its parts:
#
#   MAKE="$(MAKE)" scripts/run_parts.sh format-check test-c ...
#
# An argument with spaces is a lane: its parts run one after another,
# and the lanes run at the same time, each part's output kept in a file
# and printed whole, in the order given, once every lane has ended (a
# line says when each part starts and ends meanwhile):
#
#   MAKE="$(MAKE)" scripts/run_parts.sh "format-check test-c" "test-elixir"
#
# A part is a make target; it fails when make exits non-zero. The last
# line reads "parts: N passed, N failed in N s".
set -uo pipefail

if [ $# -eq 0 ]; then
    echo "usage: run_parts.sh PART... | run_parts.sh \"PART...\" \"PART...\"" >&2
    exit 2
fi

make_cmd=${MAKE:-make}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# run_part NAME [LOG]: make NAME, its output to LOG if given; writes
# "rc seconds" to $logs/NAME.rc
run_part() {
    local part=$1 log=${2:-} start=$SECONDS rc
    # the make command may carry options (word splitting intended)
    # shellcheck disable=SC2086
    if [ -n "$log" ]; then
        $make_cmd --no-print-directory "$part" >"$log" 2>&1
    else
        $make_cmd --no-print-directory "$part"
    fi
    rc=$?
    echo "$rc $((SECONDS - start))" >"$logs/$part.rc"
}

parts=()
lanes=0
for lane in "$@"; do
    for part in $lane; do parts+=("$part"); done
    case $lane in *" "*) lanes=$((lanes + 1)) ;; esac
done

if [ "$lanes" -eq 0 ]; then
    # one after another, the output as it comes
    for part in "${parts[@]}"; do
        echo "=== $part"
        run_part "$part"
        read -r rc _ <"$logs/$part.rc"
        [ "$rc" -eq 0 ] || echo "=== $part FAILED (exit $rc); going on with the next part"
    done
else
    for lane in "$@"; do
        (
            for part in $lane; do
                echo "=== $part started"
                run_part "$part" "$logs/$part.log"
                read -r rc took <"$logs/$part.rc"
                echo "=== $part ended (exit $rc, $took s)"
            done
        ) &
    done
    wait
    for part in "${parts[@]}"; do
        echo
        echo "=== $part"
        cat "$logs/$part.log"
    done
fi

failed=0
echo
echo "=== summary ($(pwd))"
for part in "${parts[@]}"; do
    read -r rc took <"$logs/$part.rc"
    if [ "$rc" -eq 0 ]; then
        verdict="passed ($took s)"
    else
        verdict="FAILED (exit $rc, $took s)"
        failed=$((failed + 1))
    fi
    printf '  %-18s %s\n' "$part" "$verdict"
done
echo "parts: $((${#parts[@]} - failed)) passed, $failed failed in $SECONDS s"
[ "$failed" -eq 0 ]
