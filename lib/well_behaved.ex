defmodule WellBehaved do
  @moduledoc """
  Native code for the Erlang VM that keeps its schedulers responsive.

    * `WellBehaved.Runtime` - the scheduling modes every job here can run in
      (normal, dirty, yielding, yielding dirty, threaded, auto) and the
      runtime's counters and settings.
    * `WellBehaved.Levenshtein` - bit-parallel edit distance.
    * `WellBehaved.File` - buffered file reading and writing that never
      blocks a normal scheduler.
    * `WellBehaved.External` - the same native work in pooled OS processes.
    * `WellBehaved.Probe` - measures how late a workload makes the VM's
      other processes.
    * `WellBehaved.SDK`, `WellBehaved.Job` and the `:well_behaved_make`
      compiler - the runtime for NIF libraries of your own (see the
      guide guides/sdk.md, "Writing your own well-behaved NIF"); the
      `:well_behaved_cargo` compiler builds one written in Rust
      (`Mix.Tasks.Compile.WellBehavedCargo`).
  """
end
