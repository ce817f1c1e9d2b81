#!/usr/bin/env bash
# Runs a command with CC and CXX going through a compiler cache (ccache)
# made for this run alone and removed after it: the same sources built
# with the same flags in several copies of the tree (each first build,
# the example's and the lab's copies of the library, a prod release)
# compile once, and every other build takes the cached object. `make
# test` runs its parts this way. Without ccache, or with
# WB_COMPILER_CACHE=0, the command runs as it is.
#
#   scripts/with_compiler_cache.sh COMMAND [ARG...]
set -uo pipefail

if [ $# -eq 0 ]; then
    echo "usage: with_compiler_cache.sh COMMAND [ARG...]" >&2
    exit 2
fi
if [ "${WB_COMPILER_CACHE:-1}" = 0 ] || ! command -v ccache >/dev/null; then
    exec "$@"
fi
# a compiler given with options, or not found: no cache (the build says why)
cc=$(command -v "${CC:-cc}") || exec "$@"
cxx=$(command -v "${CXX:-c++}") || cxx=

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin"
# wrappers with a path of their own: Mix's compilers look CC up as a command
printf '#!/bin/sh\nexec ccache %q "$@"\n' "$cc" >"$dir/bin/cc"
export CC=$dir/bin/cc
if [ -n "$cxx" ]; then
    printf '#!/bin/sh\nexec ccache %q "$@"\n' "$cxx" >"$dir/bin/c++"
    export CXX=$dir/bin/c++
fi
chmod +x "$dir"/bin/*
# the copies sit in other directories: their paths are not part of a key
export CCACHE_DIR=$dir/cache CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=4G
unset CCACHE_DISABLE CCACHE_PREFIX

"$@"
rc=$?
echo "compiler cache of this run: $(ccache --print-stats 2>/dev/null |
    awk -F'\t' '$1 ~ /^direct_cache_hit|^preprocessed_cache_hit/ { h += $2 }
        $1 == "cache_miss" { m = $2 } END { printf "%d hits, %d misses", h, m }')"
exit $rc
