defmodule WellBehaved.Lab.Stats do
  @moduledoc false
  # Summary statistics the lab's suites share.

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
