defmodule WellBehaved.Lab.Search.Analysis do
  @moduledoc """
  The search suite's targets, from its throughput and lateness figures.
  """

  alias WellBehaved.Lab.Search.Plan
  import WellBehaved.Lab.Markdown, only: [fmt: 2]
  import WellBehaved.Lab.Search.Throughput, only: [row: 2]

  @bound Plan.bound()
  @codepoint_bound 1.2

  @doc """
  The suite's targets: `nearest/3` with an index at most 20 ns per
  candidate and at least 10x `Enum.map(&distance/3)` (the lower end of the
  speed-up's interval) on 100,000 candidates of 10-30 bytes, `unit:
  :codepoint` on those ASCII candidates within #{@codepoint_bound}x of byte mode, and
  `:auto`'s ticker p99 within the bound of pure Erlang's while searching.
  Without a 100,000-candidate set (a rough run) nothing is measured.
  """
  @spec targets([map()], map()) :: [map()]
  def targets(sets, lateness) do
    set =
      Enum.find(
        sets,
        &(&1.candidates == 100_000 and Map.get(&1, :candidate_bytes, "10-30") == "10-30")
      )

    one = set && set.one_query
    index_ns = one && row(one, :nearest_index).ns_per_candidate
    codepoint = one && row(one, :nearest_index_codepoint)
    codepoint_ratio = codepoint && codepoint.ns_per_candidate / index_ns

    [
      %{
        target: "nearest/3 with an index <= 20 ns per candidate (100,000 of 10-30 bytes)",
        measured: if(index_ns, do: "#{fmt(index_ns, 1)} ns", else: "-"),
        met: is_number(index_ns) and index_ns <= 20,
        absolute: true
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
        target:
          "nearest/3 on ASCII candidates with unit: :codepoint within #{@codepoint_bound}x of byte mode",
        measured: if(codepoint_ratio, do: "#{fmt(codepoint_ratio, 2)}x", else: "-"),
        met: is_number(codepoint_ratio) and codepoint_ratio <= @codepoint_bound
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

  @doc """
  The fuzzy part's targets (`WellBehaved.Lab.Search.Fuzzy`): every scorer
  at most #{WellBehaved.Lab.Search.Fuzzy.ns_bound()} ns per candidate through an index on 100,000
  candidates of 10-30 bytes (a query repeated on the index; the first
  query after other work is reported beside it), cdist with every scheduler at least
  #{WellBehaved.Lab.Search.Fuzzy.speedup_bound()}x one (the lower end of the interval),
  `:auto`'s ticker within the bound of pure Erlang while cdist runs, and
  the edit script of two 1 kB strings at most
  #{WellBehaved.Lab.Search.EditScripts.bound()}x rapidfuzz-cpp's (each shape's interval,
  `WellBehaved.Lab.Search.EditScripts.target/1`).

  A scorer's figure is its median over the rounds at the machine's steady
  pace (`steady_ns`, `WellBehaved.Lab.Search.Fuzzy.steady_rounds/1`) when
  #{WellBehaved.Lab.Measure.Verdict.min_repeats()} rounds or more ran at it, else its median over all rounds.
  In that case, when the machine's pace varied across the rounds by more
  than #{WellBehaved.Lab.Search.Fuzzy.pace_spread_max()}x (`pace`), a scorer over the bound whose
  fastest round was within it is counted apart, not told apart from the
  bound: the target is met only with every scorer's figure within.
  """
  @spec fuzzy_targets(map()) :: [map()]
  def fuzzy_targets(fuzzy) do
    full = fuzzy.candidates == 100_000
    ns_bound = WellBehaved.Lab.Search.Fuzzy.ns_bound()
    scorers = Enum.reject(fuzzy.scorers, &(&1.method == :levenshtein_nearest))
    pace = Map.get(fuzzy, :pace)
    # steady figures: 3 steady rounds or more (none in results of runs before)
    steady = scorers != [] and Enum.all?(scorers, &is_number(Map.get(&1, :steady_ns)))
    figure = if steady, do: & &1.steady_ns, else: & &1.ns
    over = Enum.filter(scorers, &(figure.(&1) > ns_bound))

    unsteady =
      not steady and pace != nil and
        pace.spread > WellBehaved.Lab.Search.Fuzzy.pace_spread_max()

    {unclear, clear_over} = Enum.split_with(over, &(unsteady and &1.low <= ns_bound))
    all_within = Enum.count(scorers, &(&1.ns <= ns_bound))
    cold_within = Enum.count(scorers, &(&1.cold_ns <= ns_bound))
    c = fuzzy.cdist
    l = fuzzy.lateness

    [
      %{
        target:
          "every scorer <= #{ns_bound} ns per candidate via an index (100,000 of 10-30 bytes, " <>
            "a query repeated)",
        measured:
          if(full,
            do:
              "#{length(scorers) - length(over)} of #{length(scorers)} within" <>
                rounds_text(steady, pace) <>
                " (#{all_text(steady, pace, all_within, length(scorers))}" <>
                "#{cold_within} of #{length(scorers)} on the first query after other work)" <>
                unclear_text(unclear, pace) <>
                if(clear_over == [],
                  do: "",
                  else:
                    "; slowest " <>
                      Enum.map_join(
                        Enum.take(Enum.sort_by(clear_over, &(-figure.(&1))), 3),
                        ", ",
                        &"#{&1.method} #{fmt(figure.(&1), 0)} ns"
                      )
                ),
            else: "-"
          ),
        met: full and over == [],
        absolute: true
      },
      %{
        target:
          "cdist #{c.queries} x #{c.candidates} with #{c.workers} workers >= " <>
            "#{WellBehaved.Lab.Search.Fuzzy.speedup_bound()}x one worker",
        measured:
          "#{fmt(c.speedup, 2)}x (#{fmt(c.speedup_low, 2)}-#{fmt(c.speedup_high, 2)})" <>
            speedup_verdict(c),
        met: full and c.speedup_low >= WellBehaved.Lab.Search.Fuzzy.speedup_bound()
      },
      %{
        target: ":auto ticker p99 within #{@bound}x of pure Erlang while cdist runs",
        measured:
          if(l.ratio,
            do:
              "#{fmt(l.ratio, 2)}x (#{fmt(l.ratio_low, 2)}-#{fmt(l.ratio_high, 2)}), #{l.verdict}",
            else: "-"
          ),
        met: l.verdict == :within
      },
      WellBehaved.Lab.Search.EditScripts.target(Map.get(fuzzy, :edit_scripts))
    ]
  end

  @doc """
  The targets of the parts on many queries at once: `extract_many/3` of
  1,000 queries over 100,000 candidates with two schedulers at least
  #{WellBehaved.Lab.Search.Many.bound()}x faster than with one (the lower end of the rounds' median
  ratio's 95% interval; `WellBehaved.Lab.Search.Many`), and `dedupe/2` of
  50,000 product titles in under #{WellBehaved.Lab.Search.Dedupe.bound_s()} s, the issue's bound for a
  machine of 2 cores (a time, so information;
  `WellBehaved.Lab.Search.Dedupe`). At other sizes (a rough run), or
  with fewer than 2 CPUs for the first, they read "-".
  """
  @spec many_targets(map(), map()) :: [map()]
  def many_targets(many, dedupe) do
    many_target(many) ++ dedupe_target(dedupe)
  end

  defp many_target(m) do
    bound = WellBehaved.Lab.Search.Many.bound()
    {queries, candidates} = Plan.many_size()
    full = m.queries == queries and m.candidates == candidates

    measured =
      cond do
        not m.available ->
          "- (#{m.reason})"

        not full ->
          "-"

        m.ratio == nil ->
          "- (no round ended in both VMs)"

        true ->
          "#{fmt(m.ratio, 2)}x (#{fmt(m.ratio_low, 2)}-#{fmt(m.ratio_high, 2)})" <>
            interval_verdict(m.ratio_low, m.ratio_high, bound) <> rounds_done(m)
      end

    [
      %{
        target:
          "extract_many of #{thousands(queries)} queries over #{thousands(candidates)} candidates " <>
            ">= #{bound}x faster with 2 schedulers than with 1",
        measured: measured,
        met: full and m.available and is_number(m.ratio_low) and m.ratio_low >= bound
      }
    ]
  end

  defp rounds_done(%{rounds_done: done, rounds: rounds}) when done < length(rounds),
    do: ", #{done} of #{length(rounds)} rounds"

  defp rounds_done(_m), do: ""

  defp dedupe_target(d) do
    titles = Plan.dedupe_titles()
    full = d.titles == titles and d.errors == []

    measured =
      cond do
        d.errors != [] ->
          "- (#{hd(d.errors)})"

        not full ->
          "-"

        true ->
          "#{fmt(d.seconds, 1)} s (#{fmt(d.low, 1)}-#{fmt(d.high, 1)}), " <>
            "#{d.schedulers} schedulers on #{d.cores} cores"
      end

    [
      %{
        target:
          "dedupe of #{thousands(titles)} product titles < #{d.bound_s} s (2 cores: the issue's " <>
            "bound for this machine class)",
        measured: measured,
        met: full and d.seconds < d.bound_s,
        absolute: true
      }
    ]
  end

  @doc """
  A count with its thousands set apart.

      iex> WellBehaved.Lab.Search.Analysis.thousands(100_000)
      "100,000"
      iex> WellBehaved.Lab.Search.Analysis.thousands(999)
      "999"
  """
  @spec thousands(non_neg_integer()) :: String.t()
  def thousands(n) do
    n
    |> Integer.to_string()
    |> String.reverse()
    |> String.graphemes()
    |> Enum.chunk_every(3)
    |> Enum.map_join(",", &Enum.join/1)
    |> String.reverse()
  end

  # where an interval stands against a lower bound: across it, not told
  # apart; under it, below
  defp interval_verdict(low, high, bound) do
    cond do
      low >= bound -> ""
      high >= bound -> ", not told apart from the bound"
      true -> ", below the bound"
    end
  end

  # which rounds the figures are over, when not all of them, and how many
  # were within over all rounds then
  defp rounds_text(true, %{steady_rounds: k, rounds: n}) when k < n,
    do: " over the #{k} of #{n} rounds at the machine's steady pace"

  defp rounds_text(_steady, _pace), do: ""

  defp all_text(true, %{steady_rounds: k, rounds: n}, all_within, count) when k < n,
    do: "#{all_within} of #{count} over all rounds, "

  defp all_text(_steady, _pace, _all_within, _count), do: ""

  defp unclear_text([], _pace), do: ""

  defp unclear_text(unclear, pace) do
    "; #{length(unclear)} not told apart from the bound (" <>
      Enum.map_join(unclear, ", ", &"#{&1.method} #{fmt(&1.ns, 1)}, fastest #{fmt(&1.low, 1)}") <>
      "): the machine's pace varied #{fmt(pace.spread, 2)}x across the rounds"
  end

  # where cdist's speed-up interval stands against the bound: an interval
  # across it is not told apart (not met), one under it is below
  defp speedup_verdict(c) do
    bound = WellBehaved.Lab.Search.Fuzzy.speedup_bound()

    cond do
      c.speedup_low >= bound -> ""
      c.speedup_high >= bound -> ", not told apart from the bound"
      true -> ", below the bound"
    end
  end
end
