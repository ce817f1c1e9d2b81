#!/usr/bin/env bash
# Runs the prod release built by `MIX_ENV=prod mix release` and checks that
# both NIF libraries load in it: the project's own (Checksum.Native, C and C++) and the
# dependency's (WellBehaved.Native). `bin/checksum eval` starts no
# application: the NIFs load with their modules. Then, with the application
# started, that its supervisor runs the pool of the release's own
# checksum_server programs and that schedule: :external answers alike.
set -euo pipefail
cd "$(dirname "$0")/.."

release=_build/prod/rel/checksum/bin/checksum
expected='{300286872, 300286872, 300286872, true, 3}'

if ! actual=$(timeout --signal=KILL 60 "$release" eval '
  IO.inspect({
    Checksum.adler32("Wikipedia"),
    Checksum.adler32("Wikipedia", schedule: :threaded),
    :erlang.adler32("Wikipedia"),
    Checksum.crc32_chunks("Wikipedia", 4) ==
      <<:erlang.crc32("Wiki")::32, :erlang.crc32("pedi")::32, :erlang.crc32("a")::32>>,
    WellBehaved.Levenshtein.distance("kitten", "sitting")
  })
'); then
  echo "release check failed: $release eval exited with an error: $actual" >&2
  exit 1
fi

if [ "$actual" != "$expected" ]; then
  echo "release check failed: expected $expected, got: $actual" >&2
  exit 1
fi
echo "release check passed: $actual"

expected='{true, true, true}'
if ! actual=$(timeout --signal=KILL 60 "$release" eval '
  {:ok, _} = Application.ensure_all_started(:checksum)
  %{executable: exe} = WellBehaved.External.info(Checksum.Native.External)
  IO.inspect({
    Checksum.crc32_chunks("Wikipedia", 4, schedule: :external) == Checksum.crc32_chunks("Wikipedia", 4),
    Checksum.adler32("Wikipedia", schedule: :external) == 300286872,
    String.starts_with?(exe, List.to_string(:code.root_dir()))
  })
'); then
  echo "release check failed: $release eval (schedule: :external) exited with an error: $actual" >&2
  exit 1
fi

if [ "$actual" != "$expected" ]; then
  echo "release check failed (schedule: :external): expected $expected, got: $actual" >&2
  exit 1
fi
echo "release check passed (schedule: :external from the release's own servers): $actual"
