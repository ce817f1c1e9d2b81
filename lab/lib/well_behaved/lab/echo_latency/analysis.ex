defmodule WellBehaved.Lab.EchoLatency.Analysis do
  @moduledoc """
  The latency suite's targets: each method's median round trip of the
  64 KiB term against the bound it is expected to meet, and each method's
  median over the median of its mechanism's floor measured in the same run
  (`floor_targets/3`, on a quiet machine and on a loaded one).
  """

  alias WellBehaved.Lab.Markdown

  @doc """
  One `%{target:, measured:, met:}` per target; a target is met when every
  method it names was measured and each median is within its bound.
  """
  @spec targets([map()], [map()]) :: [
          %{target: String.t(), measured: String.t(), met: boolean()}
        ]
  def targets(rows, floors \\ []) do
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

    absolute =
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

    absolute ++ if(floors == [], do: [], else: floor_targets(rows, floors, "quiet"))
  end

  # {label, method, what it is read against, small bound, 64 KiB bound}:
  # a floor, or another method measured in the same pass
  @over [
    {"thread pool <= 2x the futex handoff", :threaded, {:floor, :futex}, 2.0, 2.0},
    {"thread pool no slower than a dirty scheduler", :threaded, {:method, :dirty_cpu}, 1.0, 1.0},
    {"external pool <= 1.5x the Unix socket (small), 1.3x (64 KiB)", :external, {:floor, :unix},
     1.5, 1.3},
    {"port <= 2x the pipe (small)", :port, {:floor, :pipe}, 2.0, nil},
    {"C node <= 1.5x TCP", :cnode, {:floor, :tcp}, 1.5, 1.5},
    {"a job in an SDK server <= 1.2x the built-in server's echo", :external_job,
     {:method, :external}, 1.2, 1.2}
  ]

  @doc """
  The ratio targets of one pass (`pass` names it: quiet, loaded): each
  method's median over its floor's, or over another method's, both
  measured in the pass, at both sizes where the target has a bound.
  """
  @spec floor_targets([map()], [map()], String.t()) :: [
          %{target: String.t(), measured: String.t(), met: boolean()}
        ]
  def floor_targets(rows, floors, pass) do
    for {label, method, against, small_bound, default_bound} <- @over do
      ratios =
        for {size, bound} <- [small: small_bound, default: default_bound], bound != nil do
          {size, bound, ratio(rows, floors, method, against, size)}
        end

      %{
        target: "#{label} (medians, #{pass})",
        measured:
          Enum.map_join(ratios, ", ", fn {size, _, r} ->
            "#{if size == :small, do: "small", else: "64 KiB"} #{ratio_text(r)}"
          end),
        met: Enum.all?(ratios, fn {_, bound, r} -> r != nil and r <= bound end)
      }
    end
  end

  defp ratio(rows, floors, method, against, size) do
    with us when is_number(us) <- p50(rows, method, size),
         base when is_number(base) and base > 0 <- base(rows, floors, against, size) do
      us / base
    else
      _ -> nil
    end
  end

  defp base(_rows, floors, {:floor, floor}, size) do
    case Enum.find(floors, &(&1.method == floor and &1.size == size)) do
      %{status: "ok", p50_ns: ns} -> ns / 1000
      _ -> nil
    end
  end

  defp base(rows, _floors, {:method, method}, size), do: p50(rows, method, size)

  defp ratio_text(nil), do: "not measured"
  defp ratio_text(r), do: "#{Markdown.fmt(r, 2)}x"

  defp p50(rows, method, size) do
    case Enum.find(rows, &(&1.method == method)) do
      %{status: "ok"} = row -> row[size][:p50_us]
      _ -> nil
    end
  end

  defp p50(rows, method), do: p50(rows, method, :default)
end
