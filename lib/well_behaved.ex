defmodule WellBehaved do
  @moduledoc """
  Native code for the Erlang VM that keeps its schedulers responsive.

    * `WellBehaved.Runtime` - the scheduling modes every native function
      here can run in (normal, dirty, yielding, yielding dirty, threaded,
      auto) and the runtime's counters.
    * `WellBehaved.Levenshtein` - bit-parallel edit distance.
    * `WellBehaved.Spin` - fixed native work, the lab's instrument.
  """
end
