defmodule WellBehaved.Lab.Search.Analysis do
  @moduledoc """
  The search suite's targets, from its throughput and lateness figures.
  """

  alias WellBehaved.Lab.Search.Plan
  import WellBehaved.Lab.Markdown, only: [fmt: 2]
  import WellBehaved.Lab.Search.Throughput, only: [row: 2]

  @bound Plan.bound()

  @doc """
  The suite's targets: `nearest/3` with an index at most 20 ns per
  candidate and at least 10x `Enum.map(&distance/3)` (the lower end of the
  speed-up's interval) on 100,000 candidates, and `:auto`'s ticker p99
  within the bound of pure Erlang's while searching. Without a
  100,000-candidate set (a rough run) nothing is measured.
  """
  @spec targets([map()], map()) :: [map()]
  def targets(sets, lateness) do
    set = Enum.find(sets, &(&1.candidates == 100_000))
    one = set && set.one_query
    index_ns = one && row(one, :nearest_index).ns_per_candidate

    [
      %{
        target: "nearest/3 with an index <= 20 ns per candidate (100,000 of 10-30 bytes)",
        measured: if(index_ns, do: "#{fmt(index_ns, 1)} ns", else: "-"),
        met: is_number(index_ns) and index_ns <= 20
      },
      %{
        target: "nearest/3 with an index >= 10x Enum.map(&distance/3), same run",
        measured:
          if(one,
            do:
              "#{fmt(one.speedup, 1)}x (#{fmt(one.speedup_low, 1)}-#{fmt(one.speedup_high, 1)})",
            else: "-"
          ),
        met: one != nil and one.speedup_low >= 10
      },
      %{
        target: ":auto ticker p99 within #{@bound}x of pure Erlang while searching",
        measured:
          if(lateness.ratio,
            do:
              "#{fmt(lateness.ratio, 2)}x (#{fmt(lateness.ratio_low, 2)}-" <>
                "#{fmt(lateness.ratio_high, 2)}), #{lateness.verdict}",
            else: "-"
          ),
        met: lateness.verdict == :within
      }
    ]
  end
end
