defmodule WellBehaved.Lab.Stats do
  @moduledoc """
  Summary statistics the lab's suites share: medians, percentiles,
  bootstrap intervals over repeats, and verdicts against a bound. The
  rule that turns a cell's repeats into a verdict (how many, which quiet
  ones) is `WellBehaved.Lab.Measure.Verdict`.
  """

  @doc "Runs `fun` once to warm up, then `n` times: the median wall time in ns."
  @spec median_ns((() -> any()), pos_integer()) :: float()
  def median_ns(fun, n) do
    fun.()

    median(
      for _ <- 1..n do
        t0 = System.monotonic_time(:nanosecond)
        fun.()
        System.monotonic_time(:nanosecond) - t0
      end
    )
  end

  @doc "The median (`WellBehaved.Stats.median/1`, the library's one definition)."
  defdelegate median(samples), to: WellBehaved.Stats

  @doc "The nearest-rank percentile (`WellBehaved.Stats.percentile/2`)."
  defdelegate percentile(samples, p), to: WellBehaved.Stats

  @doc """
  A bootstrap percentile interval of `statistic` over `groups` (one element
  per repeat of an experiment): the repeats are resampled with replacement,
  `statistic` is applied to each resample (a list as long as `groups`), and
  the interval holds the central `level` (default 0.95) of its values.

  With up to #{8} repeats every distinct resample is enumerated with its
  exact probability, so the interval is deterministic; beyond that,
  `resamples:` (default 2000) random ones are drawn with a fixed seed.
  Returns `{low, high}`.

  With few repeats and the median as the statistic the interval is the
  range of the repeats: a verdict needs them all on one side of a bound.

      iex> WellBehaved.Lab.Stats.bootstrap_interval([1.0, 2.0, 3.0], &WellBehaved.Lab.Stats.median/1)
      {1.0, 3.0}
  """
  @spec bootstrap_interval([term(), ...], ([term()] -> number()), keyword()) ::
          {number(), number()}
  def bootstrap_interval([_ | _] = groups, statistic, opts \\ []) do
    level = Keyword.get(opts, :level, 0.95)
    n = length(groups)
    items = List.to_tuple(groups)

    weighted =
      if n <= 8 do
        for counts <- compositions(n, n) do
          resample =
            counts
            |> Enum.with_index()
            |> Enum.flat_map(fn {c, i} -> List.duplicate(elem(items, i), c) end)

          {statistic.(resample), multinomial(counts, n)}
        end
      else
        state = :rand.seed_s(:exsss, {17, 29, 41})

        {draws, _} =
          Enum.map_reduce(1..Keyword.get(opts, :resamples, 2000), state, fn _, st ->
            {resample, st} =
              Enum.map_reduce(1..n, st, fn _, st ->
                {i, st} = :rand.uniform_s(n, st)
                {elem(items, i - 1), st}
              end)

            {{statistic.(resample), 1.0}, st}
          end)

        draws
      end

    sorted = Enum.sort_by(weighted, &elem(&1, 0))
    total = weighted |> Enum.map(&elem(&1, 1)) |> Enum.sum()
    tail = (1 - level) / 2
    {weighted_quantile(sorted, total * tail), weighted_quantile(sorted, total * (1 - tail))}
  end

  # the smallest value whose cumulative weight reaches `target`
  defp weighted_quantile(sorted, target) do
    Enum.reduce_while(sorted, 0.0, fn {value, w}, acc ->
      # a small tolerance: exact weights summed as floats
      if acc + w >= target - 1.0e-12, do: {:halt, {:value, value}}, else: {:cont, acc + w}
    end)
    |> case do
      {:value, value} -> value
      _ -> sorted |> List.last() |> elem(0)
    end
  end

  # every way to put `total` draws into `parts` repeats
  defp compositions(total, 1), do: [[total]]

  defp compositions(total, parts) do
    for first <- total..0//-1, rest <- compositions(total - first, parts - 1), do: [first | rest]
  end

  # probability of drawing these counts in n uniform draws from n repeats
  defp multinomial(counts, n) do
    ways = Enum.reduce(counts, factorial(n), fn c, acc -> div(acc, factorial(c)) end)
    ways / :math.pow(n, n)
  end

  defp factorial(0), do: 1
  defp factorial(n), do: n * factorial(n - 1)

  @doc """
  The verdict of an interval against an upper bound: `:within` when the
  whole interval is below it, `:outside` when the whole interval is above
  it, `:not_distinguishable` otherwise.

      iex> WellBehaved.Lab.Stats.verdict({0.6, 1.2}, 1.5)
      :within
      iex> WellBehaved.Lab.Stats.verdict({1.2, 1.8}, 1.5)
      :not_distinguishable
  """
  @spec verdict({number(), number()}, number()) :: :within | :outside | :not_distinguishable
  def verdict({_low, high}, bound) when high < bound, do: :within
  def verdict({low, _high}, bound) when low > bound, do: :outside
  def verdict(_interval, _bound), do: :not_distinguishable
end
