defmodule WellBehaved.Probe do
  @moduledoc """
  Measures how much a function hurts the rest of the VM when it runs on
  every scheduler at once: the test to run on your own NIFs.

  `measure/2` starts worker processes that call the function over and over
  (by default one per online scheduler, so every scheduler is busy), and
  meanwhile records:

    * the lateness of two ticker processes that want to run every 10 ms and
      every 1 s (absolute timers, so lateness does not accumulate; a late
      ticker skips the ticks it missed), as percentiles of all wake-ups;
      a ticker that never ran reports `samples: 0`;
    * `long_schedule` events from `:erlang.system_monitor/2` for the worker
      processes (the function under test) that held their scheduler longer
      than `long_schedule_ms`; events of other processes are counted
      apart, as `others` (on a loaded machine the OS can stretch any
      process's turn);
    * normal, dirty CPU and dirty IO scheduler utilization (the
      `:scheduler` module);
    * how many calls completed and the wall time.

  `assert_well_behaved/2` runs `measure/2` and fails, for use in ExUnit,
  when the function blocks schedulers beyond a bound.

  The probe installs itself as the VM's system monitor while it runs and
  restores the previous one afterwards, so run one probe at a time (in
  ExUnit: `async: false`). Timer granularity on Linux is about 1 ms, so a
  lateness of around 1 ms is the floor, not a finding.

      iex> report = WellBehaved.Probe.measure(fn -> :ok end, workers: 2, calls: 10)
      iex> {report.workers, report.calls, report.completed}
      {2, 20, true}
  """

  @type ticker :: %{
          period_ms: pos_integer(),
          samples: non_neg_integer(),
          p50_ms: float() | nil,
          p99_ms: float() | nil,
          max_ms: float() | nil
        }

  @type report :: %{
          workers: pos_integer(),
          calls: non_neg_integer(),
          wall_ms: float(),
          ticker: ticker(),
          slow_ticker: ticker(),
          long_schedules: %{
            count: non_neg_integer(),
            max_ms: non_neg_integer(),
            others: non_neg_integer(),
            threshold_ms: pos_integer()
          },
          utilization: %{normal: float(), dirty_cpu: float(), dirty_io: float()},
          completed: boolean()
        }

  @defaults [
    workers: nil,
    calls: nil,
    duration_ms: 1000,
    tick_ms: 10,
    slow_tick_ms: 1000,
    long_schedule_ms: 10,
    timeout_ms: 120_000
  ]

  @doc """
  Runs `fun` (a zero-arity function) in worker processes and reports what
  the rest of the VM saw meanwhile.

  Options:

    * `workers:` - how many processes call `fun` concurrently; default
      `:erlang.system_info(:schedulers_online)`.
    * `calls:` - a fixed number of calls per worker (fixed work). When not
      given, workers call `fun` until `duration_ms:` (default 1000) has
      passed, finishing the call in progress.
    * `tick_ms:` (10) and `slow_tick_ms:` (1000) - the two tickers' periods.
    * `long_schedule_ms:` (10) - the `long_schedule` threshold.
    * `timeout_ms:` (120_000) - workers still running then are killed and
      the report says `completed: false`.
  """
  @spec measure((() -> any()), keyword()) :: report()
  def measure(fun, opts \\ []) when is_function(fun, 0) do
    opts = Keyword.validate!(opts, @defaults)
    workers = opts[:workers] || :erlang.system_info(:schedulers_online)
    check_positive!(workers, :workers)
    check_positive!(opts[:tick_ms], :tick_ms)
    check_positive!(opts[:slow_tick_ms], :slow_tick_ms)
    check_positive!(opts[:long_schedule_ms], :long_schedule_ms)

    with_system_monitor(opts[:long_schedule_ms], fn monitor ->
      with_wall_time(fn ->
        sample0 = :scheduler.sample_all()
        tickers = [start_ticker(opts[:tick_ms]), start_ticker(opts[:slow_tick_ms])]
        t0 = System.monotonic_time(:microsecond)
        {calls, completed, pids} = run_workers(fun, workers, opts)
        wall_us = System.monotonic_time(:microsecond) - t0
        [ticker, slow_ticker] = Enum.map(tickers, &stop_ticker/1)
        utilization = utilization(sample0, :scheduler.sample_all())

        %{
          workers: workers,
          calls: calls,
          wall_ms: wall_us / 1000,
          ticker: ticker,
          slow_ticker: slow_ticker,
          long_schedules: collect_long_schedules(monitor, pids, opts[:long_schedule_ms]),
          utilization: utilization,
          completed: completed
        }
      end)
    end)
  end

  @doc """
  Fails (raises `ExUnit.AssertionError`) when `fun`, run on every scheduler
  by `measure/2`, blocks a scheduler for longer than `max_block_ms:`
  (default 20): a `long_schedule` event above that bound, or a 10 ms
  ticker whose p99 lateness exceeds it. Returns the report otherwise.

  Takes the options of `measure/2` too; `long_schedule_ms` defaults to
  `max_block_ms`.

      test "my NIF is well behaved" do
        WellBehaved.Probe.assert_well_behaved(fn -> MyNif.work(input) end,
          max_block_ms: 10)
      end
  """
  @spec assert_well_behaved((() -> any()), keyword()) :: report()
  def assert_well_behaved(fun, opts \\ []) do
    {bound, opts} = Keyword.pop(opts, :max_block_ms, 20)
    check_positive!(bound, :max_block_ms)
    report = measure(fun, Keyword.put_new(opts, :long_schedule_ms, bound))
    problems = problems(report, bound)

    if problems != [] do
      raise ExUnit.AssertionError,
        message:
          "the function blocks schedulers beyond #{bound} ms:\n" <>
            Enum.map_join(problems, "\n", &("  - " <> &1)) <>
            "\n" <>
            summary(report) <>
            "\nRun long native work with a yielding or dirty schedule " <>
            "(see WellBehaved.Runtime)."
    end

    report
  end

  defp problems(report, bound) do
    %{long_schedules: ls, ticker: ticker} = report

    [
      ls.count > 0 &&
        "#{ls.count} long_schedule event(s), the longest #{ls.max_ms} ms (a process held " <>
          "its scheduler longer than #{bound} ms)",
      ticker.p99_ms != nil and ticker.p99_ms > bound &&
        "a process that should run every #{ticker.period_ms} ms was late by " <>
          "#{fmt(ticker.p99_ms)} ms at p99 (max #{fmt(ticker.max_ms)} ms)",
      ticker.samples == 0 &&
        "a process that should run every #{ticker.period_ms} ms never ran in " <>
          "#{fmt(report.wall_ms)} ms",
      not report.completed && "the workers did not finish within the timeout"
    ]
    |> Enum.filter(&is_binary/1)
  end

  @doc "A one-paragraph human summary of a report."
  @spec summary(report()) :: String.t()
  def summary(report) do
    %{ticker: t, slow_ticker: s, long_schedules: ls, utilization: u} = report

    "#{report.workers} workers, #{report.calls} calls in #{fmt(report.wall_ms)} ms; " <>
      "#{t.period_ms} ms ticker lateness p50 #{fmt(t.p50_ms)} / p99 #{fmt(t.p99_ms)} / " <>
      "max #{fmt(t.max_ms)} ms (#{t.samples} ticks); #{s.period_ms} ms ticker max " <>
      "#{fmt(s.max_ms)} ms; #{ls.count} long_schedule (> #{ls.threshold_ms} ms, " <>
      "#{ls.others} more of other processes); " <>
      "utilization normal #{pct(u.normal)}, dirty CPU #{pct(u.dirty_cpu)}, " <>
      "dirty IO #{pct(u.dirty_io)}"
  end

  defp fmt(nil), do: "-"
  defp fmt(x), do: :erlang.float_to_binary(x / 1, decimals: 1)
  defp pct(x), do: "#{round(x * 100)}%"

  defp check_positive!(value, _name) when is_integer(value) and value > 0, do: :ok

  defp check_positive!(value, name) do
    raise ArgumentError, "#{inspect(name)} must be a positive integer, got: #{inspect(value)}"
  end

  # ---- workers ----------------------------------------------------------------

  defp run_workers(fun, workers, opts) do
    parent = self()
    ref = make_ref()
    deadline = if opts[:calls], do: nil, else: now_ms() + opts[:duration_ms]

    pids =
      for _ <- 1..workers do
        spawn_link(fn -> send(parent, {ref, call_loop(fun, opts[:calls], deadline, 0)}) end)
      end

    {calls, completed} = collect_workers(ref, pids, workers, 0, now_ms() + opts[:timeout_ms])
    {calls, completed, MapSet.new(pids)}
  end

  defp call_loop(_fun, 0, _deadline, done), do: done

  defp call_loop(fun, calls, deadline, done) do
    if deadline && now_ms() >= deadline do
      done
    else
      fun.()
      call_loop(fun, calls && calls - 1, deadline, done + 1)
    end
  end

  defp collect_workers(_ref, _pids, 0, calls, _deadline), do: {calls, true}

  defp collect_workers(ref, pids, left, calls, deadline) do
    receive do
      {^ref, done} -> collect_workers(ref, pids, left - 1, calls + done, deadline)
    after
      max(deadline - now_ms(), 0) ->
        Enum.each(pids, fn pid ->
          Process.unlink(pid)
          Process.exit(pid, :kill)
        end)

        {calls, false}
    end
  end

  defp now_ms, do: System.monotonic_time(:millisecond)

  # ---- tickers ------------------------------------------------------------------

  defp start_ticker(period_ms) do
    parent = self()
    pid = spawn_link(fn -> tick(parent, period_ms, now_us() + period_ms * 1000, []) end)
    {pid, period_ms}
  end

  defp tick(parent, period_ms, due_us, late) do
    timer = :erlang.start_timer(div(due_us, 1000) + 1, self(), :tick, abs: true)

    receive do
      {:timeout, ^timer, :tick} ->
        # the timer fires in whole milliseconds: measure from the due time.
        # A late ticker skips the ticks it missed, so each sample is one
        # wake-up's lateness and a starved ticker does not fall further
        # behind with every tick.
        now = now_us()
        period_us = period_ms * 1000
        next_due = due_us + period_us * (div(now - due_us, period_us) + 1)
        tick(parent, period_ms, next_due, [now - due_us | late])

      {:stop, from} ->
        :erlang.cancel_timer(timer)
        send(from, {:ticks, self(), late})
    end
  end

  defp stop_ticker({pid, period_ms}) do
    send(pid, {:stop, self()})

    late =
      receive do
        {:ticks, ^pid, late} -> late
      end

    Process.unlink(pid)
    Map.put(percentiles(late), :period_ms, period_ms)
  end

  defp now_us, do: :erlang.monotonic_time(:microsecond)

  @doc false
  # Exact nearest-rank percentiles of microsecond samples, in ms.
  def percentiles([]), do: %{samples: 0, p50_ms: nil, p99_ms: nil, max_ms: nil}

  def percentiles(samples_us) do
    sorted = samples_us |> Enum.sort() |> List.to_tuple()
    n = tuple_size(sorted)
    rank = fn p -> elem(sorted, max(0, ceil(p * n) - 1)) / 1000 end
    %{samples: n, p50_ms: rank.(0.5), p99_ms: rank.(0.99), max_ms: elem(sorted, n - 1) / 1000}
  end

  # ---- system monitor -------------------------------------------------------------

  defp with_system_monitor(threshold_ms, fun) do
    monitor = spawn_link(fn -> count_long_schedules([]) end)
    previous = :erlang.system_monitor(monitor, [{:long_schedule, threshold_ms}])

    try do
      fun.(monitor)
    after
      case previous do
        {pid, opts} -> :erlang.system_monitor(pid, opts)
        :undefined -> :erlang.system_monitor(:undefined)
      end

      Process.unlink(monitor)
      Process.exit(monitor, :kill)
    end
  end

  defp count_long_schedules(events) do
    receive do
      {:monitor, who, :long_schedule, info} ->
        count_long_schedules([{who, Keyword.get(info, :timeout, 0)} | events])

      {:report, from} ->
        send(from, {:long_schedules, events})
        count_long_schedules(events)
    end
  end

  defp collect_long_schedules(monitor, workers, threshold_ms) do
    # events are sent when the offender is scheduled out: let stragglers land
    Process.sleep(20)
    send(monitor, {:report, self()})

    events =
      receive do
        {:long_schedules, events} -> events
      end

    {mine, others} = Enum.split_with(events, fn {who, _ms} -> MapSet.member?(workers, who) end)

    %{
      count: length(mine),
      max_ms: mine |> Enum.map(&elem(&1, 1)) |> Enum.max(fn -> 0 end),
      others: length(others),
      threshold_ms: threshold_ms
    }
  end

  # ---- scheduler utilization ------------------------------------------------------

  defp with_wall_time(fun) do
    previous = :erlang.system_flag(:scheduler_wall_time, true)

    try do
      fun.()
    after
      :erlang.system_flag(:scheduler_wall_time, previous)
    end
  end

  defp utilization(sample0, sample1) do
    rows = :scheduler.utilization(sample0, sample1)

    mean = fn type ->
      values = for {^type, _id, util, _pct} <- rows, do: util
      if values == [], do: 0.0, else: Enum.sum(values) / length(values)
    end

    %{normal: mean.(:normal), dirty_cpu: mean.(:cpu), dirty_io: mean.(:io)}
  end
end
