defmodule WellBehaved.Lab.EchoLatency.Analysis do
  @moduledoc """
  The latency suite's targets: each method's median round trip of the
  64 KiB term against the bound it is expected to meet.
  """

  alias WellBehaved.Lab.Markdown

  @doc """
  One `%{target:, measured:, met:}` per target; a target is met when every
  method it names was measured and each median is within its bound.
  """
  @spec targets([map()]) :: [%{target: String.t(), measured: String.t(), met: boolean()}]
  def targets(rows) do
    dirty = p50(rows, :dirty_cpu)

    checks = [
      {"NIF <= 0.1 us", [:nif], 0.1},
      {"yielding <= 0.5 us", [:yielding], 0.5},
      {"dirty <= 2 us", [:dirty_cpu, :dirty_io], 2.0},
      {"thread pool within 2x of dirty", [:threaded], dirty && 2 * dirty},
      {"port driver <= 10 us", [:driver_call, :driver_control, :driver_outputv], 10.0},
      {"external pool <= 15 us", [:external], 15.0},
      {"port <= 100 us", [:port], 100.0},
      {"C node <= 100 us", [:cnode], 100.0}
    ]

    for {label, methods, limit} <- checks do
      measured = Enum.map(methods, &{&1, p50(rows, &1)})
      known = Enum.reject(measured, fn {_, v} -> is_nil(v) end)

      %{
        target: label <> " (median, 64 KiB)",
        measured:
          Enum.map_join(measured, ", ", fn {m, v} -> "#{m} #{Markdown.fmt_auto(v, 3)} us" end),
        met:
          limit != nil and known != [] and length(known) == length(measured) and
            Enum.all?(known, fn {_, v} -> v <= limit end)
      }
    end
  end

  defp p50(rows, method) do
    case Enum.find(rows, &(&1.method == method)) do
      %{status: "ok", default: %{p50_us: p50}} -> p50
      _ -> nil
    end
  end
end
