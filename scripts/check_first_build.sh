#!/usr/bin/env bash
# What a new user does, checked from a copy of this tree (tracked and new
# files, no build outputs):
#   1. `mix compile` once, then `mix run` calls the NIF, whose runtime has
#      the slice derived from this VM's Erlang turn;
#   2. a new app with the library as a git dependency: `mix deps.get`,
#      then `mix run` alone, which compiles the library and calls the NIF
#      in the VM that built it.
# Between them, each way of building once (mix compile, then a VM that
# loads; mix run, building and loading in one VM) and each layout (the
# project itself, a dependency).
# Each mix command is bounded; the script fails on the first problem.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bounded() { timeout --signal=KILL 600 "$@"; }
# the NIF works, and its runtime has this VM's slice (not the compiled default)
call='IO.puts([to_string(WellBehaved.Levenshtein.distance("kitten", "sitting", schedule: :yielding)), " ", to_string(WellBehaved.Runtime.stats().slice_source)])'

echo "first build of a fresh copy: mix compile, then mix run"
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$work" --one-top-level=well_behaved
(cd "$work/well_behaved" && bounded mix compile >/dev/null &&
  out=$(bounded mix run -e "$call") && [ "$out" = "3 erlang_turn" ]) ||
  { echo "error: the NIF did not load after the first mix compile, or without this VM's slice" >&2; exit 1; }

echo "as a git dependency: mix deps.get, then mix run alone (it compiles, then runs in the same VM)"
(cd "$work/well_behaved" && rm -rf _build && git init -q && git add -A &&
  git -c user.name=check -c user.email=check@localhost commit -qm copy)
mkdir -p "$work/app/lib"
cat >"$work/app/mix.exs" <<MIX
defmodule App.MixProject do
  use Mix.Project
  def project, do: [app: :app, version: "0.1.0", deps: [{:well_behaved, git: "$work/well_behaved"}]]
end
MIX
(cd "$work/app" && bounded mix deps.get >/dev/null &&
  out=$(bounded mix run -e "$call" | tail -1) && [ "$out" = "3 erlang_turn" ]) ||
  { echo "error: the NIF did not load in an app depending on the library by git, or without this VM's slice" >&2; exit 1; }
echo "first build checks passed"
