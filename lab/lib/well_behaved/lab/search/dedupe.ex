defmodule WellBehaved.Lab.Search.Dedupe do
  @bound_s 30
  @seed 48
  @warmup_titles 500

  @moduledoc """
  `WellBehaved.Fuzzy.dedupe/2` on 50,000 product titles
  (`WellBehaved.Lab.Search.Titles`, a fixed seed: 40,000 products in
  families that differ only in their model numbers, capacities or
  years, and 10,000 near-duplicates of them), in the suite's VM with the
  machine's schedulers: `Fuzzy.dedupe(titles)` with the default options
  (`:token_sort_ratio`, cutoff 0.9, `processor: :default`, `numbers:
  :exact`, one worker per online scheduler) timed over rounds after a
  warm-up on #{@warmup_titles} of the titles, wall time, the median and the
  range. The target is the issue's bound for a machine of 2 cores:
  #{@bound_s} s.

  As information, once after the rounds: `numbers: :ignore` (the score
  alone decides) on the first titles (all of them in `--full`; its one
  block of every title costs more than the rounds), with the groups
  `numbers: :exact` makes of the same titles. With the rule each family's
  members stay apart and the groups are about as many as the products
  (a few more: near-duplicates of short titles that a word added takes
  under the cutoff); without it the members of a family merge.
  """

  alias WellBehaved.Fuzzy
  alias WellBehaved.Lab.Stats
  alias WellBehaved.Lab.Search.Titles
  import WellBehaved.Lab.Markdown, only: [fmt: 2]

  @doc "The bound on dedupe's time, in seconds (2 cores)."
  @spec bound_s() :: pos_integer()
  def bound_s, do: @bound_s

  @doc """
  Measures the plan's `dedupe_rounds` rounds of `dedupe_titles` titles,
  then `numbers: :ignore` on the first `dedupe_ignore_titles` (`plan` as
  `WellBehaved.Lab.Search.Plan.new/2` makes it).
  """
  @spec run(map(), (String.t() -> any())) :: map()
  def run(plan, progress) do
    generated = Titles.generate(plan.dedupe_titles, @seed)
    titles = generated.titles
    _ = Fuzzy.dedupe(Enum.take(titles, @warmup_titles))

    rounds =
      for r <- 1..plan.dedupe_rounds do
        {seconds, result} = timed(fn -> Fuzzy.dedupe(titles) end)
        round = Map.put(counted(result), :seconds, seconds)

        progress.(
          "dedupe #{length(titles)} titles, round #{r}: #{fmt(seconds, 2)} s, " <>
            (round.error || "#{round.groups} groups")
        )

        round
      end

    times = Enum.map(rounds, & &1.seconds)
    # every round's groups are the same (a deterministic function); the last's
    groups = List.last(rounds).groups
    errors = for %{error: e} <- rounds, e != nil, do: e
    ignore = ignore(titles, generated.copies, plan.dedupe_ignore_titles, groups, progress)

    %{
      titles: length(titles),
      products: generated.products,
      near_duplicates: generated.near_duplicates,
      schedulers: System.schedulers_online(),
      cores: cores(),
      bound_s: @bound_s,
      rounds: rounds,
      seconds: Stats.median(times),
      low: Enum.min(times),
      high: Enum.max(times),
      groups: groups,
      errors: errors,
      ignore: ignore
    }
  end

  # a result's group count, or the error it is
  defp counted(groups) when is_list(groups), do: %{groups: length(groups), error: nil}
  defp counted(error), do: %{groups: nil, error: "returned #{inspect(error)}"}

  # numbers: :ignore on the first `n` titles, and numbers: :exact's
  # groups of the same titles (`all_groups` when they are all)
  defp ignore(titles, copies, n, all_groups, progress) do
    part = Enum.take(titles, n)
    {seconds, result} = timed(fn -> Fuzzy.dedupe(part, numbers: :ignore) end)
    ignored = counted(result)

    exact =
      if n == length(titles),
        do: all_groups,
        else: counted(Fuzzy.dedupe(part)).groups

    progress.(
      "dedupe #{n} titles, numbers: :ignore: #{fmt(seconds, 2)} s, " <>
        (ignored.error || "#{ignored.groups} groups") <> " (numbers: :exact #{exact || "-"})"
    )

    Map.merge(ignored, %{
      titles: n,
      products: Enum.count(Enum.take(copies, n), &(not &1)),
      seconds: seconds,
      exact_groups: exact
    })
  end

  defp cores do
    case :erlang.system_info(:logical_processors_available) do
      n when is_integer(n) -> n
      _ -> :erlang.system_info(:logical_processors)
    end
  end

  defp timed(fun) do
    t0 = System.monotonic_time(:nanosecond)
    result = fun.()
    {(System.monotonic_time(:nanosecond) - t0) / 1.0e9, result}
  end
end
