defmodule WellBehaved.Lab.Stats do
  @moduledoc false
  # Summary statistics the lab's suites share.

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

  @doc "The median of a non-empty list of numbers, as a float."
  @spec median([number(), ...]) :: float()
  def median(samples) do
    sorted = Enum.sort(samples)
    n = length(sorted)
    mid = div(n, 2)

    if rem(n, 2) == 1,
      do: Enum.at(sorted, mid) * 1.0,
      else: (Enum.at(sorted, mid - 1) + Enum.at(sorted, mid)) / 2
  end
end
