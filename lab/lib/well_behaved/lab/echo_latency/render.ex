defmodule WellBehaved.Lab.EchoLatency.Render do
  @moduledoc """
  The latency suite's result as the report shows it: the Markdown section,
  the charts, the raw tables and the progress lines, with the 2017
  medians beside this run's.
  """

  alias WellBehaved.Lab.{EchoLatency, Markdown}

  # Round-trip medians from "Latency of Native Functions" (2017, macOS, a
  # 64 KiB binary in a tuple), in microseconds
  @earlier %{
    nif: 0.1,
    yielding: 0.5,
    dirty_cpu: 2.0,
    dirty_io: 2.0,
    threaded: 8.0,
    thread_new: 50.0,
    driver_call: 12.5,
    driver_control: 12.5,
    driver_outputv: 12.5,
    port: 100.0,
    cnode: 100.0,
    external: 15.0
  }

  # each method's floor: the same mechanism between two C parties, no VM
  @floor_of %{
    threaded: :futex,
    dirty_cpu: :futex,
    dirty_io: :futex,
    external: :unix,
    external_job: :unix,
    port: :pipe,
    cnode: :tcp
  }
  @floor_means %{
    futex: "a pointer to another thread and back, each side sleeping on a futex",
    spin: "the same, each side spinning",
    unix: "the bytes to a child process and back, Unix stream socket",
    pipe: "the same over two pipes",
    tcp: "the same over TCP on 127.0.0.1 (TCP_NODELAY)"
  }

  @doc "The method whose floor each method is read against (none: not in the map)."
  @spec floor_of() :: %{atom() => atom()}
  def floor_of, do: @floor_of

  @doc "The progress line of the floors."
  @spec floors_line([map()]) :: String.t()
  def floors_line(floors) do
    "floors (p50, small / 64 KiB): " <>
      Enum.map_join(Enum.chunk_by(floors, & &1.method), ", ", fn sizes ->
        "#{hd(sizes).method} " <> Enum.map_join(sizes, " / ", &floor_p50/1) <> " us"
      end)
  end

  defp floor_p50(%{status: "ok", p50_ns: ns}), do: fmt(ns / 1000)
  defp floor_p50(_failed), do: "-"

  defp floor_p99(%{status: "ok", p99_ns: ns}), do: fmt(ns / 1000)
  defp floor_p99(_failed), do: "-"

  @doc "The progress line of a method's row."
  @spec progress_line(map()) :: String.t()
  def progress_line(row), do: "latency #{row.method}: #{summary(row)}"

  defp summary(%{status: "ok", default: d}),
    do: "p50 #{fmt(d.p50_us)} us, p99 #{fmt(d.p99_us)} us"

  defp summary(row), do: row.status

  @doc """
  The Markdown section of a result: how it was measured, a row per method
  and the targets table.
  """
  @spec to_markdown(EchoLatency.result()) :: String.t()
  def to_markdown(result) do
    s = result.config.schedulers
    callers = Enum.uniq([1, s, 4 * s])

    """
    ## Latency of native calls

    Round trip of a term through each method (`WellBehaved.Lab.Echo`), each method in its own \
    child VM: #{result.config.iterations} timed round trips after a warm-up; methods under \
    ~2 us timed in batches of ~20 us (the batch column), so a sample is a batch's mean per \
    call. Default term: a tuple holding a 64 KiB binary (the 2017 measurement's); small term: \
    `{:ok, 42, "hello"}`. Throughput: #{result.config.window_ms} ms windows with \
    #{Enum.join(callers, ", ")} concurrent callers.

    | method | 2017 (us) | p50 | p90 | p99 | p99.9 | max (us, 64 KiB) | batch | small p50 (us) | calls/s at #{Enum.join(callers, " / ")} callers |
    | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
    #{Enum.map_join(result.rows, "\n", &row_md/1)}

    #{switches_md(result.rows)}
    #{floors_md(Map.get(result, :floors, []), result.rows)}
    #{loaded_md(Map.get(result, :loaded))}
    ### Targets

    #{Markdown.targets_table(result.targets)}
    """
  end

  # the mechanism, counted: context switches per round trip of the 64 KiB
  # term, by kind of thread (voluntary: it slept; involuntary: preempted)
  defp switches_md(rows) do
    counted = for %{status: "ok", switches: sw} = r <- rows, map_size(sw) > 0, do: {r.method, sw}

    case counted do
      [] ->
        ""

      _ ->
        """
        ### Context switches per round trip

        The VM's threads' context switches over the timed round trips of the 64 KiB term, per \
        call, by kind of thread: slept (voluntary) + preempted (involuntary); kinds below 0.01 \
        a call left out. The mechanism behind the times above, and steadier than they are.

        #{Markdown.table(["method", "switches per call"], for({m, sw} <- counted, do: [to_string(m), switches_cell(sw)]))}
        #{answered_md(rows)}
        """
    end
  end

  # the thread pool's short calls answered in the call that queued them
  defp answered_md(rows) do
    for %{status: "ok", method: method, answered_in_call: share} <- rows,
        to_string(method) == "threaded",
        into: "" do
      "`:threaded`: #{Markdown.fmt(100 * share, 1)}% of these calls were answered in the call " <>
        "that queued the job (a pool thread spinning for work took it; no message).\n"
    end
  end

  defp switches_cell(sw) do
    sw
    |> Enum.filter(fn {_, %{slept: v, preempted: nv}} -> v + nv >= 0.01 end)
    |> Enum.sort_by(fn {_, %{slept: v, preempted: nv}} -> -(v + nv) end)
    |> Enum.map_join(", ", fn {kind, %{slept: v, preempted: nv}} ->
      "#{kind} #{Markdown.fmt(v, 2)} + #{Markdown.fmt(nv, 2)}"
    end)
    |> case do
      "" -> "-"
      text -> text
    end
  end

  defp loaded_md(nil), do: ""

  defp loaded_md(loaded) do
    """
    ### On a loaded machine

    The methods that have a floor, and the floors, again while #{loaded.burners} CPU-bound \
    OS processes (`priv/wb_burn`, one per scheduler) kept the CPUs busy:

    | method | p50 small (us) | p50 64 KiB | p90 64 KiB | p99 64 KiB |
    | --- | --- | --- | --- | --- |
    #{Enum.map_join(loaded.rows, "\n", &loaded_row_md/1)}

    #{floors_md(loaded.floors, loaded.rows)}
    """
  end

  defp loaded_row_md(%{status: "ok"} = r),
    do:
      "| #{r.method} | #{fmt(r.small.p50_us)} | #{fmt(r.default.p50_us)} | " <>
        "#{fmt(r.default.p90_us)} | #{fmt(r.default.p99_us)} |"

  defp loaded_row_md(r), do: "| #{r.method} | **#{r.status}** | | | |"

  defp floors_md([], _rows), do: ""

  defp floors_md(floors, rows) do
    floor = fn method, size -> Enum.find(floors, &(&1.method == method and &1.size == size)) end

    floor_rows =
      for method <- Enum.uniq(Enum.map(floors, & &1.method)) do
        small = floor.(method, :small)
        default = floor.(method, :default)

        [
          "`#{method}`",
          @floor_means[method],
          floor_p50(small),
          floor_p50(default),
          floor_p99(small),
          floor_p99(default)
        ]
      end

    ratio_rows =
      for {method, f, small, default} <- over_floors(floors, rows) do
        ["#{method}", "`#{f}`", ratio_cell(small), ratio_cell(default)]
      end

    """
    ### Against the machine's floors

    Round trips between two C parties on this machine, no VM (`wb_floors`, \
    `WellBehaved.Lab.Floors`), in the same run, as many as each method's (at most 3 s \
    each), at \
    the sizes of the two terms once encoded:

    #{Markdown.table(["floor", "what goes round", "p50 small (us)", "p50 64 KiB", "p99 small", "p99 64 KiB"], floor_rows)}

    Each method's median over the median of its mechanism's floor:

    #{Markdown.table(["method", "floor", "small", "64 KiB"], ratio_rows)}
    """
  end

  # each measured method that has a floor: {method, floor, small, default},
  # its medians over the floor's (nil where the floor failed)
  defp over_floors([], _rows), do: []

  defp over_floors(floors, rows) do
    floor = fn method, size -> Enum.find(floors, &(&1.method == method and &1.size == size)) end

    for %{status: "ok"} = r <- rows, Map.has_key?(@floor_of, r.method) do
      f = @floor_of[r.method]

      {r.method, f, ratio(r.small.p50_us, floor.(f, :small)),
       ratio(r.default.p50_us, floor.(f, :default))}
    end
  end

  defp ratio(us, %{status: "ok", p50_ns: ns}) when ns > 0, do: us * 1000 / ns
  defp ratio(_us, _floor), do: nil

  defp ratio_cell(nil), do: "-"
  defp ratio_cell(x), do: "#{Markdown.fmt(x, 1)}x"

  defp row_md(%{status: "ok"} = r) do
    d = r.default

    "| #{r.method} | #{fmt(@earlier[r.method])} | #{fmt(d.p50_us)} | #{fmt(d.p90_us)} | " <>
      "#{fmt(d.p99_us)} | #{fmt(d.p999_us)} | #{fmt(d.max_us)} | #{d.batch} | " <>
      "#{fmt(r.small.p50_us)} | " <>
      Enum.map_join(r.throughput, " / ", &fmt_rate(&1.calls_per_s)) <> " |"
  end

  defp row_md(r),
    do: "| #{r.method} | #{fmt(@earlier[r.method])} | **#{r.status}** | | | | | | | |"

  @doc """
  Two charts: the round-trip percentiles of the 64 KiB term per method
  (`:lines`, log scale) and calls per second by concurrent callers
  (`:bars`, log scale).
  """
  @spec charts(EchoLatency.result()) :: [WellBehaved.Lab.Suite.chart()]
  def charts(result) do
    ok = Enum.filter(result.rows, &(&1.status == "ok"))

    [
      %{
        name: "latency_percentiles",
        title: "Round trip of a 64 KiB binary, percentiles (batched methods: batch means)",
        kind: :lines,
        x_label: "percentile",
        y_label: "microseconds",
        log_y: true,
        categories: ["p50", "p90", "p99", "p99.9", "max"],
        series:
          for r <- ok do
            d = r.default

            %{
              label: Atom.to_string(r.method),
              values: [d.p50_us, d.p90_us, d.p99_us, d.p999_us, d.max_us]
            }
          end
      },
      %{
        name: "latency_throughput",
        title: "Round trips per second, 64 KiB binary, by concurrent callers",
        kind: :bars,
        x_label: "method",
        y_label: "calls/s",
        log_y: true,
        categories: Enum.map(ok, &Atom.to_string(&1.method)),
        series:
          case ok do
            [] ->
              []

            [first | _] ->
              for {%{callers: c}, i} <- Enum.with_index(first.throughput) do
                %{
                  label: "#{c} callers",
                  values: Enum.map(ok, &Enum.at(&1.throughput, i).calls_per_s)
                }
              end
          end
      }
    ] ++
      floor_charts(Map.get(result, :floors, []), result.rows, "", "") ++
      case Map.get(result, :loaded) do
        nil -> []
        loaded -> floor_charts(loaded.floors, loaded.rows, "_loaded", ", loaded machine")
      end
  end

  # each method's median over its floor's, small and 64 KiB (none for a
  # result from before the floors)
  defp floor_charts(floors, rows, suffix, title) do
    case over_floors(floors, rows) do
      [] ->
        []

      over ->
        [
          %{
            name: "latency_over_floor" <> suffix,
            title: "Median round trip over the machine's floor for the same mechanism" <> title,
            kind: :bars,
            x_label: "method (its floor)",
            y_label: "times the floor",
            log_y: false,
            categories: for({m, f, _, _} <- over, do: "#{m} (#{f})"),
            series: [
              %{label: "small term", values: for({_, _, small, _} <- over, do: small)},
              %{label: "64 KiB", values: for({_, _, _, default} <- over, do: default)}
            ]
          }
        ]
    end
  end

  @doc "The raw rows: one per method, and one per method and caller count."
  @spec tables(EchoLatency.result()) :: [WellBehaved.Lab.Suite.table()]
  def tables(result) do
    columns =
      ~w(method status earlier_us p50_us p90_us p99_us p999_us max_us batch samples small_p50_us)

    rows = Enum.map(result.rows, &row_csv/1)

    throughput =
      for r <- result.rows,
          t <- Map.get(r, :throughput, []),
          do: [r.method, t.callers, t.calls_per_s]

    floors = floor_rows(Map.get(result, :floors, []))
    loaded = Map.get(result, :loaded) || %{rows: [], floors: []}

    rounds =
      for {pass, rs} <- [quiet: Map.get(result, :rounds, []), loaded: loaded[:rounds] || []],
          {round, i} <- Enum.with_index(rs, 1),
          r <- round do
        [kind, base] = r.against
        [pass, i, r.method, "#{kind} #{base}", r.small, r.default]
      end

    [
      %{name: "echo_latency", columns: columns, rows: rows},
      %{
        name: "ratio_rounds",
        columns: ~w(pass round method against small_ratio default_ratio),
        rows: rounds
      },
      %{name: "throughput", columns: ["method", "callers", "calls_per_s"], rows: throughput},
      %{
        name: "floors",
        columns: ~w(floor size bytes status p50_ns p90_ns p99_ns min_ns),
        rows: floors
      },
      %{name: "echo_latency_loaded", columns: columns, rows: Enum.map(loaded.rows, &row_csv/1)},
      %{
        name: "floors_loaded",
        columns: ~w(floor size bytes status p50_ns p90_ns p99_ns min_ns),
        rows: floor_rows(loaded.floors)
      }
    ]
  end

  defp row_csv(r) do
    d = Map.get(r, :default, %{})

    [
      r.method,
      r.status,
      @earlier[r.method],
      d[:p50_us],
      d[:p90_us],
      d[:p99_us],
      d[:p999_us],
      d[:max_us],
      d[:batch],
      d[:samples],
      get_in(r, [:small, :p50_us])
    ]
  end

  defp floor_rows(floors) do
    for f <- floors,
        do: [f.method, f.size, f.bytes, f.status, f[:p50_ns], f[:p90_ns], f[:p99_ns], f[:min_ns]]
  end

  defp fmt(x), do: Markdown.fmt_auto(x, 3)

  defp fmt_rate(x) when x >= 1000, do: "#{round(x / 1000)}k"
  defp fmt_rate(x), do: "#{round(x)}"
end
