defmodule WellBehaved.Stats do
  @moduledoc """
  Nearest-rank percentiles, the one definition the library's `Probe`, the
  testing kit and the lab's suites share: the `p` percentile of `n`
  samples is the smallest sample with at least `p * n` samples at or
  below it, so every figure reported is a sample that was measured.
  """

  @doc """
  The nearest-rank percentile `p` (0 < p <= 1) of a non-empty list of
  numbers; `p` 1 is the maximum.

      iex> WellBehaved.Stats.percentile(Enum.to_list(1..100), 0.99)
      99
      iex> WellBehaved.Stats.percentile([3, 1, 2], 0.5)
      2
  """
  @spec percentile([number(), ...], number()) :: number()
  def percentile(samples, p), do: hd(percentiles(samples, [p]))

  @doc """
  The nearest-rank percentiles `ps` of a non-empty list of numbers, in the
  order of `ps` (the samples are sorted once).

      iex> WellBehaved.Stats.percentiles(Enum.to_list(1..1000), [0.5, 0.999, 1])
      [500, 999, 1000]
  """
  @spec percentiles([number(), ...], [number()]) :: [number()]
  def percentiles([_ | _] = samples, ps) when is_list(ps) do
    sorted = samples |> Enum.sort() |> List.to_tuple()
    n = tuple_size(sorted)

    for p <- ps do
      unless is_number(p) and p > 0 and p <= 1 do
        raise ArgumentError,
              "WellBehaved.Stats.percentiles/2: a percentile must be a number in (0, 1], got: " <>
                inspect(p)
      end

      elem(sorted, max(0, ceil(p * n) - 1))
    end
  end

  def percentiles(samples, _ps) do
    raise ArgumentError,
          "WellBehaved.Stats.percentiles/2: samples must be a non-empty list of numbers, got: " <>
            inspect(samples, limit: 5)
  end

  @doc """
  The median of a non-empty list of numbers, as a float (the mean of the
  two middle samples when there are an even number).

      iex> WellBehaved.Stats.median([4, 1, 3, 2])
      2.5
  """
  @spec median([number(), ...]) :: float()
  def median([_ | _] = samples) do
    sorted = Enum.sort(samples)
    n = length(sorted)
    mid = div(n, 2)

    if rem(n, 2) == 1,
      do: Enum.at(sorted, mid) * 1.0,
      else: (Enum.at(sorted, mid - 1) + Enum.at(sorted, mid)) / 2
  end
end
