defmodule WellBehaved.Lab.Search.Throughput do
  @moduledoc """
  The search suite's throughput: every method once per round, in an order
  shuffled anew for each round, on one query and on many; a method's
  figure is its median over the rounds in ns per candidate, and the
  speed-up of `nearest_index` over `enum_map` is taken round by round.
  """

  alias WellBehaved.Levenshtein
  alias WellBehaved.Lab.Stats
  alias WellBehaved.Lab.Search.Plan

  @doc """
  Measures one candidate set (`candidates` and their `index`): `rounds_one`
  rounds of the first query, `rounds_many` of all `queries`, each method of
  `methods` once a round.
  """
  @spec measure_set(
          [String.t()],
          term(),
          [String.t()],
          pos_integer(),
          pos_integer(),
          (String.t() ->
             any()),
          [atom()]
        ) ::
          map()
  def measure_set(
        candidates,
        index,
        queries,
        rounds_one,
        rounds_many,
        progress,
        methods \\ Plan.methods()
      ) do
    count = length(candidates)
    [first | _] = queries
    progress.("search #{count} candidates: #{rounds_one} rounds of one query")
    one = rounds([first], candidates, index, rounds_one, methods)
    progress.("search #{count} candidates: #{rounds_many} rounds of #{length(queries)} queries")
    many = rounds(queries, candidates, index, rounds_many, methods)

    %{
      candidates: count,
      methods: methods,
      one_query: summarize(one, count, 1, methods),
      many_queries: summarize(many, count, length(queries), methods)
    }
  end

  # every method once per round, in a shuffled order: [%{method => ns}]
  defp rounds(queries, candidates, index, rounds, methods) do
    for _ <- 1..rounds do
      for method <- Enum.shuffle(methods), into: %{} do
        fun = method_fun(method, candidates, index)
        t0 = System.monotonic_time(:nanosecond)
        Enum.each(queries, fun)
        {method, System.monotonic_time(:nanosecond) - t0}
      end
    end
  end

  defp method_fun(:nearest_index, _c, index), do: &Levenshtein.nearest(&1, index)

  defp method_fun(:nearest_index_codepoint, _c, index),
    do: &Levenshtein.nearest(&1, index, unit: :codepoint)

  defp method_fun(:distances_index_binary, _c, index),
    do: &Levenshtein.distances(&1, index, as: :binary)

  defp method_fun(:within_3_index, _c, index),
    do: &Levenshtein.distances(&1, index, max_distance: 3, as: :binary)

  defp method_fun(:nearest_list, c, _index), do: &Levenshtein.nearest(&1, c)
  defp method_fun(:distances_index, _c, index), do: &Levenshtein.distances(&1, index)
  defp method_fun(:distances_list, c, _index), do: &Levenshtein.distances(&1, c)
  defp method_fun(:enum_map, c, _index), do: fn q -> Enum.map(c, &Levenshtein.distance(q, &1)) end
  defp method_fun(:copy_list, c, _index), do: fn _q -> :erlang.iolist_to_binary(c) end

  # a set's figures from its rounds ([%{method => ns}])
  defp summarize(rounds, count, queries, methods) do
    per = fn ns -> ns / queries / count end

    rows =
      for method <- methods do
        values = Enum.map(rounds, &per.(&1[method]))

        %{
          method: method,
          ns_per_candidate: Stats.median(values),
          low: Enum.min(values),
          high: Enum.max(values)
        }
      end

    speedups = Enum.map(rounds, &(&1.enum_map / &1.nearest_index))
    {low, high} = Stats.bootstrap_interval(speedups, &Stats.median/1)

    %{
      rows: rows,
      speedup: Stats.median(speedups),
      speedup_low: low,
      speedup_high: high,
      list_over_copy: list_over_copy(rounds, methods)
    }
  end

  # a list search against an index search plus one copy of the list's
  # bytes, round by round: its median and interval, or nil when not
  # measured
  defp list_over_copy(rounds, methods) do
    if Enum.all?([:nearest_list, :nearest_index, :copy_list], &(&1 in methods)) do
      ratios = Enum.map(rounds, &(&1.nearest_list / (&1.nearest_index + &1.copy_list)))
      {low, high} = Stats.bootstrap_interval(ratios, &Stats.median/1)
      %{ratio: Stats.median(ratios), low: low, high: high}
    end
  end

  @doc "A random string of `n` lowercase letters (`:rand`, seeded by the caller)."
  @spec word(pos_integer()) :: String.t()
  def word(n), do: for(_ <- 1..n, into: "", do: <<?a + :rand.uniform(26) - 1>>)

  @doc "A method's row of a set's summary."
  @spec row(map(), atom()) :: map() | nil
  def row(summary, method), do: Enum.find(summary.rows, &(&1.method == method))
end
