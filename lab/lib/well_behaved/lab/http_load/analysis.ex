defmodule WellBehaved.Lab.HttpLoad.Analysis do
  @moduledoc """
  The HTTP-under-load suite's figures relative to its baseline: each
  case's req/s and p99 latency over the `idle` case's.
  """

  @doc """
  Adds `ratio_to_idle:` (req/s over idle's) and `p99_to_idle:` (p99 over
  idle's) to every case; `nil` where either figure is missing or idle's
  is not positive.
  """
  @spec add_ratios([map()]) :: [map()]
  def add_ratios(cases) do
    idle = Enum.find(cases, &(&1.case == "idle"))

    for c <- cases do
      Map.merge(c, %{
        ratio_to_idle: ratio(c.req_s, idle.req_s),
        p99_to_idle: ratio(c.latency_ms.p99, idle.latency_ms.p99)
      })
    end
  end

  defp ratio(x, base) when is_number(x) and is_number(base) and base > 0, do: x / base
  defp ratio(_, _), do: nil
end
