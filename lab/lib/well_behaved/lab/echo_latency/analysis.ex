defmodule WellBehaved.Lab.EchoLatency.Analysis do
  @moduledoc """
  The latency suite's targets: each method's median round trip of the
  64 KiB term against the bound it is expected to meet, and each method's
  median over the median of its mechanism's floor measured in the same run
  (`floor_targets/2`, on a quiet machine and on a loaded one).
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

  # {label, method, what it is read against, small bound, 64 KiB bound}:
  # a floor, or another method measured in the same pass (lists, as the
  # results that name them are written to JSON)
  @over [
    {"thread pool <= 2x the futex handoff", :threaded, [:floor, :futex], 2.0, 2.0},
    {"thread pool no slower than a dirty scheduler", :threaded, [:method, :dirty_cpu], 1.0, 1.0},
    {"external pool <= 1.5x the Unix socket (small), 1.3x (64 KiB)", :external, [:floor, :unix],
     1.5, 1.3},
    {"port <= 2x the pipe (small)", :port, [:floor, :pipe], 2.0, nil},
    {"C node <= 1.5x TCP", :cnode, [:floor, :tcp], 1.5, 1.5},
    {"a job in an SDK server <= 1.2x the built-in server's echo", :external_job,
     [:method, :external], 1.2, 1.2}
  ]

  @doc "The `{method, against}` pairs of the ratio targets, for `WellBehaved.Lab.EchoLatency.Child.ratio_round/1`."
  @spec ratio_pairs() :: [{atom(), [atom()]}]
  def ratio_pairs, do: Enum.uniq(for {_, method, against, _, _} <- @over, do: {method, against})

  @doc """
  The ratio targets of one pass (`pass` names it: quiet, loaded), from its
  rounds (each a list of `%{method:, against: [kind, name], small:,
  default:}` ratios, measured side by side): per size with a bound, the median ratio and its
  range over the rounds. Met when every round is within the bound; a range
  across the bound is "not distinguishable" (and not met); every round
  above it, not met.
  """
  @spec floor_targets([[map()]], String.t()) :: [
          %{target: String.t(), measured: String.t(), met: boolean()}
        ]
  def floor_targets(rounds, pass) do
    for {label, method, against, small_bound, default_bound} <- @over do
      sizes =
        for {size, bound} <- [small: small_bound, default: default_bound], bound != nil do
          ratios =
            for round <- rounds,
                %{method: ^method, against: ^against} = r <- round,
                is_number(r[size]),
                do: r[size]

          {size, bound, ratios}
        end

      %{
        target: "#{label} (medians, #{length(rounds)} rounds, #{pass})",
        measured: Enum.map_join(sizes, "; ", &size_text/1),
        met: Enum.all?(sizes, fn {_, bound, rs} -> rs != [] and Enum.max(rs) <= bound end)
      }
    end
  end

  defp size_text({size, bound, ratios}) do
    name = if size == :small, do: "small", else: "64 KiB"

    case ratios do
      [] ->
        "#{name} not measured"

      _ ->
        {lo, hi} = Enum.min_max(ratios)
        median = Enum.at(Enum.sort(ratios), div(length(ratios) - 1, 2))

        verdict =
          cond do
            hi <= bound -> ""
            lo > bound -> ""
            true -> ", not distinguishable from #{Markdown.fmt(bound, 1)}x"
          end

        "#{name} #{ratio_text(median)} (#{ratio_text(lo)}-#{ratio_text(hi)}#{verdict})"
    end
  end

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
