#!/usr/bin/env bash
# Runs the prod release built by `MIX_ENV=prod mix release` and checks that
# the Rust NIF library loads in it and answers as :crypto and Erlang do;
# then, with the application started, that its supervisor runs the pool of
# the release's own hash_sort_server programs and that schedule: :external
# answers alike.
set -euo pipefail
cd "$(dirname "$0")/.."

release=_build/prod/rel/hash_sort/bin/hash_sort

check() {
  local what=$1 expected=$2 code=$3 actual
  if ! actual=$(timeout --signal=KILL 60 "$release" eval "$code"); then
    echo "release check failed ($what): $release eval exited with an error: $actual" >&2
    exit 1
  fi
  if [ "$actual" != "$expected" ]; then
    echo "release check failed ($what): expected $expected, got: $actual" >&2
    exit 1
  fi
  echo "release check passed ($what): $actual"
}

check "the NIF library" '{true, true, true}' '
  data = :binary.copy("abc", 100_000)
  IO.inspect({
    HashSort.sha256(data) == :crypto.hash(:sha256, data),
    HashSort.sha256(data, schedule: :threaded) == :crypto.hash(:sha256, data),
    HashSort.sort_u32(<<3::32, 1::32, 2::32>>, schedule: :yielding) == <<1::32, 2::32, 3::32>>
  })
'

check "schedule: :external from the release's own servers" '{true, true, true}' '
  {:ok, _} = Application.ensure_all_started(:hash_sort)
  %{executable: exe} = WellBehaved.External.info(HashSort.Native.External)
  IO.inspect({
    HashSort.sha256("abc", schedule: :external) == :crypto.hash(:sha256, "abc"),
    HashSort.sort_u32(<<2::32, 1::32>>, schedule: :external) == <<1::32, 2::32>>,
    String.starts_with?(exe, List.to_string(:code.root_dir()))
  })
'
