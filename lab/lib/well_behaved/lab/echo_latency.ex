defmodule WellBehaved.Lab.EchoLatency do
  @moduledoc """
  The latency suite: the round-trip cost of every way of calling native
  code (`WellBehaved.Lab.Echo`), measured properly.

  Each method runs in its own child VM. The default term is a tuple holding
  a 64 KiB binary, as in the 2017 measurements, and a small term is timed
  too. After a warm-up, N round trips are timed (10,000 in quick runs,
  100,000 in full ones); methods faster than about 2 µs are timed in
  batches of ~20 µs, so that the clock's resolution cannot quantize them
  (each sample is then a batch's mean per call, which narrows the tails).
  Percentiles are exact, from all samples. Calls per second are measured
  with 1, schedulers_online and 4 x schedulers_online concurrent callers.
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.{Echo, Markdown, Suite}

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

  @batch_target_ns 20_000

  @impl true
  def run(opts) do
    {quick, scale, progress} = Suite.options!(opts)
    iterations = max(200, round(if(quick, do: 10_000, else: 100_000) * scale))
    window_ms = max(100, round(if(quick, do: 500, else: 2000) * scale))

    rows =
      for method <- Echo.methods() do
        row =
          if Echo.available?(method) do
            spec = %{method: method, iterations: iterations, window_ms: window_ms}

            case ChildVM.run({__MODULE__, :child_measure, [spec]},
                   bound_ms: 120_000,
                   start: [:well_behaved_lab]
                 ) do
              {:ok, measured} ->
                Map.merge(%{method: method, status: "ok"}, measured)

              {:timeout, ms} ->
                %{method: method, status: "bound hit (#{ms} ms)"}

              {:crashed, code, out} ->
                %{
                  method: method,
                  status: "crashed (exit #{code})",
                  output: String.slice(out, -400, 400)
                }
            end
          else
            %{method: method, status: "not available in this build"}
          end

        progress.("latency #{method}: #{summary(row)}")
        row
      end

    %{
      config: %{
        quick: quick,
        iterations: iterations,
        window_ms: window_ms,
        schedulers: :erlang.system_info(:schedulers_online)
      },
      rows: rows,
      targets: targets(rows)
    }
  end

  defp summary(%{status: "ok", default: d}),
    do: "p50 #{fmt(d.p50_us)} us, p99 #{fmt(d.p99_us)} us"

  defp summary(row), do: row.status

  # ---- in the child VM --------------------------------------------------------

  @doc false
  def child_measure(%{method: method, iterations: n, window_ms: window_ms}) do
    default = {:crypto.strong_rand_bytes(65_536)}
    small = {:ok, 42, "hello"}
    schedulers = :erlang.system_info(:schedulers_online)

    try do
      %{
        default: percentiles_of(method, default, n),
        small: percentiles_of(method, small, n),
        throughput:
          for callers <- Enum.uniq([1, schedulers, 4 * schedulers]) do
            %{callers: callers, calls_per_s: throughput(method, default, callers, window_ms)}
          end
      }
    after
      Echo.stop()
    end
  end

  defp percentiles_of(method, term, n) do
    check!(method, term)
    for _ <- 1..min(1000, div(n, 10) + 1), do: Echo.echo(term, method)
    # time 200 calls to choose the batch size
    {us, _} = :timer.tc(fn -> for _ <- 1..200, do: Echo.echo(term, method) end)
    per_call_ns = us * 1000 / 200

    batch =
      if per_call_ns < 2000, do: max(1, round(@batch_target_ns / max(per_call_ns, 1))), else: 1

    samples = max(1, div(n, batch))
    per_call = for _ <- 1..samples, do: time_batch(method, term, batch) / batch

    Map.merge(%{batch: batch, samples: samples}, percentiles(per_call))
  end

  defp check!(method, term) do
    case Echo.echo(term, method) do
      ^term -> :ok
      other -> raise "#{method} returned #{inspect(other, limit: 5)}, not the term sent"
    end
  end

  defp time_batch(method, term, batch) do
    t0 = :erlang.monotonic_time(:nanosecond)
    loop(method, term, batch)
    :erlang.monotonic_time(:nanosecond) - t0
  end

  defp loop(_method, _term, 0), do: :ok

  defp loop(method, term, n) do
    _ = Echo.echo(term, method)
    loop(method, term, n - 1)
  end

  defp throughput(method, term, callers, window_ms) do
    parent = self()
    deadline = System.monotonic_time(:millisecond) + window_ms

    for _ <- 1..callers do
      spawn_link(fn -> send(parent, {:calls, count_until(method, term, deadline, 0)}) end)
    end

    total = for(_ <- 1..callers, do: receive(do: ({:calls, n} -> n))) |> Enum.sum()
    total * 1000 / window_ms
  end

  defp count_until(method, term, deadline, n) do
    if System.monotonic_time(:millisecond) >= deadline do
      n
    else
      _ = Echo.echo(term, method)
      count_until(method, term, deadline, n + 1)
    end
  end

  @doc false
  # nearest-rank percentiles of nanosecond samples, in microseconds
  def percentiles(samples_ns) do
    [p50, p90, p99, p999, max] =
      WellBehaved.Stats.percentiles(samples_ns, [0.5, 0.9, 0.99, 0.999, 1])

    %{
      p50_us: p50 / 1000,
      p90_us: p90 / 1000,
      p99_us: p99 / 1000,
      p999_us: p999 / 1000,
      max_us: max / 1000
    }
  end

  # ---- analysis and rendering ----------------------------------------------------

  defp p50(rows, method) do
    case Enum.find(rows, &(&1.method == method)) do
      %{status: "ok", default: %{p50_us: p50}} -> p50
      _ -> nil
    end
  end

  @doc false
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
        measured: Enum.map_join(measured, ", ", fn {m, v} -> "#{m} #{fmt(v)} us" end),
        met:
          limit != nil and known != [] and length(known) == length(measured) and
            Enum.all?(known, fn {_, v} -> v <= limit end)
      }
    end
  end

  @impl true
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

    ### Targets

    #{Markdown.targets_table(result.targets)}
    """
  end

  defp row_md(%{status: "ok"} = r) do
    d = r.default

    "| #{r.method} | #{fmt(@earlier[r.method])} | #{fmt(d.p50_us)} | #{fmt(d.p90_us)} | " <>
      "#{fmt(d.p99_us)} | #{fmt(d.p999_us)} | #{fmt(d.max_us)} | #{d.batch} | " <>
      "#{fmt(r.small.p50_us)} | " <>
      Enum.map_join(r.throughput, " / ", &fmt_rate(&1.calls_per_s)) <> " |"
  end

  defp row_md(r),
    do: "| #{r.method} | #{fmt(@earlier[r.method])} | **#{r.status}** | | | | | | | |"

  @impl true
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
    ]
  end

  @impl true
  def tables(result) do
    columns =
      ~w(method status earlier_us p50_us p90_us p99_us p999_us max_us batch samples small_p50_us)

    rows =
      for r <- result.rows do
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

    throughput =
      for r <- result.rows,
          t <- Map.get(r, :throughput, []),
          do: [r.method, t.callers, t.calls_per_s]

    [
      %{name: "echo_latency", columns: columns, rows: rows},
      %{name: "throughput", columns: ["method", "callers", "calls_per_s"], rows: throughput}
    ]
  end

  defp fmt(x), do: Markdown.fmt_auto(x, 3)

  defp fmt_rate(x) when x >= 1000, do: "#{round(x / 1000)}k"
  defp fmt_rate(x), do: "#{round(x)}"
end
