defmodule WellBehaved.Probe do
  @moduledoc """
  Measures how much a function hurts the rest of the VM when it runs on
  every scheduler at once: the test to run on your own NIFs.

  `measure/2` starts worker processes that call the function over and over
  (by default one per online scheduler, so every scheduler is busy), and
  meanwhile records:

    * the lateness of a ticker process that wants to run every
      millisecond (`tick_ms:`), as percentiles over every tick due while
      the workers run. Due times are whole milliseconds of the VM's
      monotonic clock, the resolution of Erlang timers; a tick's lateness is
      how long after its due time the ticker ran, in microseconds. A ticker
      held off for 30 ms wakes once, and the 30 ticks it missed were late by
      30 ms down to 1 ms; ticks still waiting at the end were late until
      then. So p99 is the lateness exceeded 1% of the time. Ticks due in
      the first `warmup_ms:` are not counted (workers are starting). A
      second ticker, every second, shows the longest waits;
    * `long_schedule` events from `:erlang.system_monitor/2` for the worker
      processes that held their scheduler longer than `long_schedule_ms`;
      events of other processes are counted apart, as `others` (on a loaded
      machine the OS can stretch any process's turn);
    * normal, dirty CPU and dirty IO scheduler utilization (the
      `:scheduler` module);
    * how many calls completed and the wall time.

  Then, unless `control: false`, it runs a **control**: the same number of
  workers doing pure-Erlang CPU work (`erlang_work/1`, which does not
  allocate) for as long, and reports the same figures for it under
  `:control`. The control is what the VM's responsiveness looks like on
  this machine, now, when the schedulers are as busy with well-behaved
  code; `assert_well_behaved/2` judges the function against it, so that a
  loaded machine does not fail a good function.

  The probe installs itself as the VM's system monitor while it runs and
  restores the previous one afterwards, so run one probe at a time (in
  ExUnit: `async: false`).

      iex> report = WellBehaved.Probe.measure(fn -> :ok end, workers: 2, calls: 10)
      iex> {report.workers, report.calls, report.completed}
      {2, 20, true}
  """

  alias WellBehaved.Probe.{Judge, Turns}
  alias WellBehaved.Stats

  @type ticker :: %{
          required(:period_ms) => pos_integer(),
          required(:samples) => non_neg_integer(),
          required(:p50_ms) => float() | nil,
          required(:p90_ms) => float() | nil,
          required(:p99_ms) => float() | nil,
          required(:max_ms) => float() | nil,
          optional(:samples_us) => [non_neg_integer()],
          optional(:due_us) => [integer()]
        }

  @type long_schedules :: %{
          count: non_neg_integer(),
          max_ms: non_neg_integer(),
          others: non_neg_integer(),
          threshold_ms: pos_integer()
        }

  @type utilization :: %{normal: float(), dirty_cpu: float(), dirty_io: float()}

  @type control :: %{
          workers: pos_integer(),
          wall_ms: float(),
          ticker: ticker(),
          slow_ticker: ticker(),
          long_schedules: long_schedules(),
          utilization: utilization()
        }

  @type report :: %{
          workers: pos_integer(),
          calls: non_neg_integer(),
          wall_ms: float(),
          ticker: ticker(),
          slow_ticker: ticker(),
          long_schedules: long_schedules(),
          utilization: utilization(),
          completed: boolean(),
          control: control() | nil
        }

  # {default, check}: every option of measure/2
  @options [
    workers: {nil, :workers},
    calls: {nil, :pos_or_nil},
    duration_ms: {1000, :pos},
    tick_ms: {1, :pos},
    slow_tick_ms: {1000, :pos},
    warmup_ms: {50, :non_neg},
    long_schedule_ms: {10, :pos},
    timeout_ms: {120_000, :pos},
    finish_calls: {true, :boolean},
    control: {true, :boolean},
    samples: {false, :boolean}
  ]
  @turns_options [
    workers: {nil, :workers},
    duration_ms: {200, :pos},
    warmup_ms: {20, :non_neg},
    control: {true, :boolean},
    timeout_ms: {60_000, :pos}
  ]
  @judge_options [max_block_ms: {1, :pos_number}, max_ratio: {1.5, :ratio}, rounds: {3, :pos}]
  @max_int 0xFFFF_FFFF
  # from this many workers on, they are started and stopped at high priority
  @boost_workers 200
  # the control runs at most this long (a ticker every ms: 5000 samples)
  @control_max_ms 5000

  @doc """
  Runs `fun` (a zero-arity function) in worker processes and reports what
  the rest of the VM saw meanwhile.

  Options (every duration is an integer of milliseconds):

    * `workers:` - how many processes call `fun` concurrently; default
      `:erlang.system_info(:schedulers_online)`.
    * `calls:` - a fixed number of calls per worker (fixed work). When not
      given, workers call `fun` until `duration_ms:` (default 1000) has
      passed.
    * `finish_calls:` (true) - with `duration_ms:`, whether workers finish
      the call in progress when the time is up (the report then covers
      whole calls) or are killed (the measurement ends on time; a killed
      call is not counted). The tickers count the ticks due until the time
      is up either way.
    * `tick_ms:` (1) and `slow_tick_ms:` (1000) - the two tickers' periods.
    * `warmup_ms:` (50) - ticks due this soon after the start are not
      counted.
    * `long_schedule_ms:` (10) - the `long_schedule` threshold.
    * `timeout_ms:` (120_000) - workers still running then are killed and
      the report says `completed: false`.
    * `control:` (true) - also run the pure-Erlang control (see the module
      doc), for the same duration as the function's run (at most 5 s).
    * `samples:` (false) - also return every tick of the fast ticker, in
      order: `ticker.samples_us`, their lateness, and `ticker.due_us`, their
      due times (`:erlang.monotonic_time(:microsecond)`), both in
      microseconds.

  A function that raises makes `measure/2` raise the same exception in the
  caller, once the workers are stopped.
  """
  @spec measure((() -> any()), keyword()) :: report()
  def measure(fun, opts \\ []) do
    unless is_function(fun, 0) do
      raise ArgumentError,
            "WellBehaved.Probe.measure/2: expected a function of arity 0, got: #{inspect(fun)}"
    end

    opts = options!(opts, @options, "measure/2", Keyword.keys(@options))
    workers = opts.workers || :erlang.system_info(:schedulers_online)
    report = with_system_monitor(opts.long_schedule_ms, &run_phase(fun, workers, opts, &1))

    control =
      if opts.control do
        duration = report.wall_ms |> ceil() |> max(opts.warmup_ms + 20) |> min(@control_max_ms)

        control_opts = %{
          opts
          | calls: nil,
            duration_ms: duration,
            finish_calls: false,
            timeout_ms: duration + opts.timeout_ms
        }

        phase =
          with_system_monitor(opts.long_schedule_ms, fn monitor ->
            run_phase(&Turns.control_work/0, workers, control_opts, monitor)
          end)

        Map.drop(phase, [:calls, :completed, :control])
      end

    Map.put(report, :control, control)
  end

  @doc """
  The judgement of `WellBehaved.Testing.assert_well_behaved/2`, without raising: `verdict` is
  `:pass`, `:fail` or `:inconclusive`, and `message` says why.
  """
  @spec judge((() -> any()), keyword()) :: map()
  def judge(fun, opts \\ []), do: judge(fun, opts, "judge/2")

  @doc false
  # judge/2 for another public function, named in its errors
  def judge(fun, opts, name) do
    unless is_function(fun, 0) do
      raise ArgumentError,
            "#{qualified(name)}: expected a function of arity 0, got: #{inspect(fun)}"
    end

    keyword!(opts, name)
    accepted = Keyword.keys(@judge_options) ++ Keyword.keys(@turns_options)

    {bounds, turn_opts} =
      Enum.split_with(opts, fn {k, _} -> Keyword.has_key?(@judge_options, k) end)

    bounds = options!(bounds, @judge_options, name, accepted)
    turn_opts = options!(turn_opts, @turns_options, name, accepted)
    Judge.run(fun, bounds, turn_opts)
  end

  @doc false
  # One round, judged from its turn_stats (with their turns' CPU times,
  # `cpu_us`): see WellBehaved.Probe.Judge.
  defdelegate judge_round(
                function,
                control,
                control_alone,
                max_ratio,
                max_block_ms,
                off_cpu \\ {nil, nil},
                lost_events \\ {0, 0}
              ),
              to: Judge

  @doc false
  # The verdict over rounds: most of the rounds that say something.
  defdelegate verdict(rounds), to: Judge

  @doc """
  A human summary: of a `measure/2` report, one paragraph; of a judgement
  (what `judge/2` and `WellBehaved.Testing.assert_well_behaved/2`
  return), its verdict and message, then a line per round: its result, the
  function's longest turn in CPU time, pure Erlang's, and the bound. Raises
  `ArgumentError` on anything else.
  """
  @spec summary(report() | map()) :: String.t()
  def summary(%{verdict: _, rounds: _, message: _} = judgement), do: Judge.summary(judgement)

  def summary(%{ticker: t, slow_ticker: s, long_schedules: ls, utilization: u} = report) do
    "#{report.workers} workers, #{report.calls} calls in #{fmt(report.wall_ms)} ms; " <>
      ticker_summary(t) <>
      "; #{s.period_ms} ms ticker max #{fmt(s.max_ms)} ms; #{ls.count} long_schedule " <>
      "(> #{ls.threshold_ms} ms, #{ls.others} more of other processes); utilization normal " <>
      "#{pct(u.normal)}, dirty CPU #{pct(u.dirty_cpu)}, dirty IO #{pct(u.dirty_io)}" <>
      case report[:control] do
        nil -> ""
        c -> ". Pure-Erlang control: " <> ticker_summary(c.ticker)
      end
  end

  def summary(other) do
    raise ArgumentError,
          "WellBehaved.Probe.summary/1: expected a report of measure/2 or a judgement of " <>
            "judge/2 (or WellBehaved.Testing.assert_well_behaved/2), got: " <>
            inspect(other, limit: 5)
  end

  defp ticker_summary(t) do
    "#{t.period_ms} ms ticker lateness p50 #{fmt(t.p50_ms)} / p99 #{fmt(t.p99_ms)} / " <>
      "max #{fmt(t.max_ms)} ms (#{t.samples} ticks)"
  end

  @typedoc """
  The turns of one kind of worker: how many, and percentiles of their
  wall time (`p50_us`...) and of the CPU time their thread had
  (`cpu_p50_us`...), in microseconds, over the turns on normal schedulers
  that ended in the window; `open_turns` were still running at its end,
  the longest for `open_max_us` until then (only the turns of a worker
  still in its call at the timeout: see `turns/2`); `calls`, the whole
  calls the window holds, and `unfinished`, the workers still in their
  call at the timeout (killed).
  """
  @type turn_stats :: %{
          turns: non_neg_integer(),
          wall_total_us: float(),
          cpu_total_us: float(),
          open_turns: non_neg_integer(),
          open_max_us: float() | nil,
          p50_us: float() | nil,
          p90_us: float() | nil,
          p99_us: float() | nil,
          max_us: float() | nil,
          cpu_p50_us: float() | nil,
          cpu_p90_us: float() | nil,
          cpu_p99_us: float() | nil,
          cpu_max_us: float() | nil,
          dirty_turns: non_neg_integer(),
          calls: non_neg_integer(),
          unfinished: non_neg_integer()
        }

  @type turns_report :: %{
          workers: pos_integer(),
          window_ms: float(),
          function: turn_stats(),
          control: turn_stats() | nil,
          p50_ratio: float() | nil,
          p90_ratio: float() | nil,
          cpu_p99_ratio: float() | nil,
          off_scheduler_cpu: float() | nil,
          lost_events: non_neg_integer()
        }

  @doc """
  How long `fun` holds a scheduler each time it runs: the turns of
  processes calling it over and over, against processes running pure
  Erlang code (`erlang_work/1`) beside them, in the same VM and the same
  window.

  A turn is the time from the moment the VM schedules a process in to the
  moment it schedules it out, taken by an `erl_tracer` module
  (`:erlang.trace/3` with `:running`) on the scheduler thread itself, with
  two clocks: the wall clock, and the CPU clock of that thread. A
  well-behaved function's turns are as short as Erlang code's: the VM
  switches an Erlang process out after 4000 reductions, and a native call
  that runs longer holds its scheduler for as long as it runs. Unlike the
  ticker of `measure/2`, this measures the mechanism, not its effect on
  others, so a noisy machine barely moves it; and the CPU time of a turn
  does not count the time the OS gave the thread's CPU to something else.
  Turns on dirty schedulers are counted apart (`dirty_turns`): they hold
  no normal scheduler.

  The window holds whole calls, from the first turn of each worker's
  first counted call to the last turn of its last one: the workers call
  `fun` untraced for `warmup_ms:` and wait at a call boundary; they are
  traced and released together; after `duration_ms:` each finishes the
  call it is in (at least one call each); and tracing stops once every
  worker has finished and the tracer has seen each turn end. So a turn
  that comes once per call, at its start or its end (a result built in one
  go), is always in the window. A worker still in its call `timeout_ms:`
  after the duration is killed (its function's `unfinished` count; its
  last turn `open`). The tracer's log is sized for the window; when it
  fills, the window runs again with a larger one, and events it still
  could not hold are counted in `lost_events`.

  Options: `workers:` (default the online schedulers; as many control
  workers run beside them), `duration_ms:` (200: how long the workers
  start new calls), `warmup_ms:` (20), `control:` (true), `timeout_ms:`
  (60_000). `window_ms` in the report is how long the traced window
  lasted, and each turn_stats counts the whole `calls` it holds. Reading
  the thread's CPU clock costs a system call: each turn is about 0.7 µs
  longer while traced, for the function and the control alike.

      iex> r = WellBehaved.Probe.turns(fn -> WellBehaved.Probe.erlang_work(50_000) end,
      ...>   workers: 1, duration_ms: 50)
      iex> r.function.turns > 0 and r.control.turns > 0
      true
  """
  @spec turns((() -> any()), keyword()) :: turns_report()
  def turns(fun, opts \\ []) do
    unless is_function(fun, 0) do
      raise ArgumentError,
            "WellBehaved.Probe.turns/2: expected a function of arity 0, got: #{inspect(fun)}"
    end

    opts = options!(opts, @turns_options, "turns/2", Keyword.keys(@turns_options))
    report = Turns.traced(fun, opts)
    %{report | function: drop_cpu(report.function), control: drop_cpu(report.control)}
  end

  defp drop_cpu(nil), do: nil
  defp drop_cpu(stats), do: Map.delete(stats, :cpu_us)

  @doc """
  The control's workload: `iterations` rounds of a xorshift-style mix on
  integers kept below 2^58, so every value stays a small integer and the
  loop never allocates. One round is one reduction; on a 2.25 GHz core
  4000 of them take about 40 µs, the pace at which the VM switches
  processes running Erlang code.

      iex> WellBehaved.Probe.erlang_work(1000) == WellBehaved.Probe.erlang_work(1000)
      true
  """
  @spec erlang_work(non_neg_integer()) :: non_neg_integer()
  def erlang_work(iterations) when is_integer(iterations) and iterations >= 0,
    do: Turns.erlang_work(iterations)

  defp fmt(nil), do: "-"
  defp fmt(x) when is_integer(x), do: Integer.to_string(x)
  defp fmt(x) when abs(x) >= 10, do: :erlang.float_to_binary(x / 1, decimals: 1)
  defp fmt(x), do: :erlang.float_to_binary(x / 1, decimals: 2)
  defp pct(x), do: "#{round(x * 100)}%"

  # ---- options ----------------------------------------------------------------

  # a Probe function ("turns/2") or another module's, named in full
  defp qualified("WellBehaved." <> _ = name), do: name
  defp qualified(name), do: "WellBehaved.Probe." <> name

  defp keyword!(opts, function) do
    unless is_list(opts) and Enum.all?(opts, &match?({key, _} when is_atom(key), &1)),
      do: WellBehaved.Options.not_keyword!(qualified(function), opts)
  end

  # Validates a keyword list against a spec of {default, check} and returns
  # a map of every option; `accepted` are the keys named when one is unknown.
  defp options!(opts, spec, function, accepted) do
    keyword!(opts, function)

    Enum.each(opts, fn {key, value} ->
      case Keyword.fetch(spec, key) do
        {:ok, {_default, check}} ->
          check!(check, value) ||
            WellBehaved.Options.invalid!(
              qualified(function),
              key,
              value,
              describe(check)
            )

        :error ->
          WellBehaved.Options.unknown!(qualified(function), key, accepted)
      end
    end)

    Map.new(spec, fn {key, {default, _}} -> {key, Keyword.get(opts, key, default)} end)
  end

  # durations and counts end up in `receive ... after` and timers: at most
  # 2^32 - 1 (ms: 49 days)
  defp check!(:pos, v), do: is_integer(v) and v in 1..@max_int
  defp check!(:non_neg, v), do: is_integer(v) and v in 0..@max_int
  defp check!(:pos_or_nil, v), do: v == nil or check!(:pos, v)
  defp check!(:workers, v), do: v == nil or (is_integer(v) and v in 1..max_workers())
  defp check!(:boolean, v), do: is_boolean(v)
  defp check!(:pos_number, v), do: is_number(v) and v > 0 and v <= @max_int
  defp check!(:ratio, v), do: is_number(v) and v >= 1

  defp describe(:pos), do: "an integer in 1..#{@max_int}"
  defp describe(:non_neg), do: "an integer in 0..#{@max_int}"
  defp describe(:pos_or_nil), do: "an integer in 1..#{@max_int} (or nil for the default)"

  defp describe(:workers),
    do: "an integer in 1..#{max_workers()} (half the VM's process limit), or nil"

  defp describe(:boolean), do: "a boolean"
  defp describe(:pos_number), do: "a positive number of milliseconds, at most #{@max_int}"
  defp describe(:ratio), do: "a number >= 1"

  defp max_workers, do: div(:erlang.system_info(:process_limit), 2)

  # ---- one phase: workers, tickers, monitor ---------------------------------------

  defp run_phase(fun, workers, opts, monitor) do
    with_wall_time(fn ->
      sample0 = :scheduler.sample_all()
      t0 = now_us()
      warm_until_us = t0 + opts.warmup_ms * 1000
      tickers = [start_ticker(opts.tick_ms, warm_until_us), start_ticker(opts.slow_tick_ms, t0)]
      # Hundreds of workers or more are started and stopped at high
      # priority: behind thousands of busy workers, one trip through the run
      # queue per batch, that would take minutes. Fewer are started as the
      # caller would (a high-priority spawner changes where the VM places
      # them). Meanwhile, the caller's priority (`priority`, when boosted).
      priority = if workers >= @boost_workers, do: Process.flag(:priority, :high)
      run = start_workers(fun, workers, opts)
      if priority, do: Process.flag(:priority, priority)

      window_end = if opts.calls == nil, do: t0 + opts.duration_ms * 1000
      if window_end, do: sleep_until_us(window_end)
      # The workers go first: a ticker queued behind thousands of workers
      # in long normal NIFs would not see a stop message for hours. The
      # tickers then count the ticks due in the window only (fixed work:
      # until the last worker finished).
      {calls, completed, pids, failure} = await_workers(run, opts, priority)
      wall_us = now_us() - t0
      end_us = window_end || now_us()
      [ticker, slow_ticker] = Enum.map(tickers, &stop_ticker(&1, end_us))
      utilization = utilization(sample0, :scheduler.sample_all())
      long_schedules = collect_long_schedules(monitor, pids, opts.long_schedule_ms)

      if failure, do: reraise_failure(failure)

      ticker = if opts.samples, do: ticker, else: Map.drop(ticker, [:samples_us, :due_us])

      %{
        workers: workers,
        calls: calls,
        wall_ms: wall_us / 1000,
        ticker: ticker,
        slow_ticker: Map.drop(slow_ticker, [:samples_us, :due_us]),
        long_schedules: long_schedules,
        utilization: utilization,
        completed: completed
      }
    end)
  end

  # ---- workers ----------------------------------------------------------------

  defp start_workers(fun, workers, opts) do
    parent = self()
    ref = make_ref()
    started = now_ms()
    deadline = if opts.calls, do: nil, else: started + opts.duration_ms

    monitors =
      Map.new(1..workers, fn _ ->
        spawn_monitor(fn ->
          result =
            try do
              {:done, call_loop(fun, opts.calls, deadline, 0)}
            catch
              kind, reason -> {:failed, kind, reason, __STACKTRACE__}
            end

          send(parent, {ref, self(), result})
        end)
      end)

    %{ref: ref, monitors: monitors, deadline: deadline, timeout_at: started + opts.timeout_ms}
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

  # {calls, completed, pids, failure}: without finish_calls, workers still
  # busy at the deadline are killed (on time: still completed); workers
  # still busy at the timeout are killed (not completed). The first failure
  # of a worker stops the others.
  defp await_workers(run, opts, priority) do
    %{ref: ref, monitors: monitors, deadline: deadline, timeout_at: timeout_at} = run

    stop_at =
      if deadline && not opts.finish_calls, do: min(deadline, timeout_at), else: timeout_at

    {calls, left, failure} = collect(ref, monitors, 0, stop_at)
    if priority, do: Process.flag(:priority, :high)
    Enum.each(left, fn {pid, _} -> Process.exit(pid, :kill) end)
    reap(ref, monitors)
    if priority, do: Process.flag(:priority, priority)
    completed = failure == nil and (left == %{} or stop_at < timeout_at)
    {calls, completed, MapSet.new(Map.keys(monitors)), failure}
  end

  defp collect(_ref, left, calls, _stop_at) when left == %{}, do: {calls, left, nil}

  defp collect(ref, left, calls, stop_at) do
    receive do
      {^ref, pid, {:done, done}} ->
        collect(ref, Map.delete(left, pid), calls + done, stop_at)

      {^ref, pid, {:failed, _, _, _} = failed} ->
        {calls, Map.delete(left, pid), failed}

      {:DOWN, mon, :process, pid, reason}
      when reason != :normal and :erlang.is_map_key(pid, left) ->
        # killed from outside before it could report: a failure too; the
        # message is put back for reap/2
        send(self(), {:DOWN, mon, :process, pid, reason})
        {calls, Map.delete(left, pid), {:failed, :exit, reason, []}}
    after
      max(stop_at - now_ms(), 0) -> {calls, left, nil}
    end
  end

  # Waits until every worker is gone (a killed worker inside a normal NIF
  # goes when the NIF returns), so the next measurement starts on idle
  # schedulers and the caller's mailbox keeps none of the probe's messages.
  @reap_ms 60_000
  defp reap(ref, monitors) do
    deadline = now_ms() + @reap_ms

    Enum.each(monitors, fn {_pid, mon} ->
      receive do
        {:DOWN, ^mon, :process, _, _} -> :ok
      after
        max(deadline - now_ms(), 0) -> Process.demonitor(mon, [:flush])
      end
    end)

    flush(ref)
  end

  defp flush(ref) do
    receive do
      {^ref, _, _} -> flush(ref)
    after
      0 -> :ok
    end
  end

  defp reraise_failure({:failed, :error, reason, stack}),
    do: reraise(Exception.normalize(:error, reason, stack), stack)

  defp reraise_failure({:failed, :exit, reason, _stack}), do: exit(reason)
  defp reraise_failure({:failed, :throw, value, _stack}), do: throw(value)

  defp now_ms, do: System.monotonic_time(:millisecond)
  defp now_us, do: :erlang.monotonic_time(:microsecond)

  defp sleep_until_us(t) do
    left = t - now_us()
    if left > 0, do: Process.sleep(div(left + 999, 1000))
  end

  # ---- tickers ------------------------------------------------------------------

  defp start_ticker(period_ms, count_from_us) do
    parent = self()
    first_due = Integer.floor_div(now_us(), 1000) + period_ms
    pid = spawn_link(fn -> tick(parent, period_ms, first_due, count_from_us, []) end)
    {pid, period_ms}
  end

  # due_ms: a whole millisecond of monotonic time, when the timer fires at
  # the earliest. Every tick due in the window is a sample: its lateness is
  # how long after its due time the ticker ran. A ticker that could not run
  # for a while wakes once, and the ticks it missed were late until then.
  defp tick(parent, period_ms, due_ms, count_from_us, late) do
    timer = :erlang.start_timer(due_ms, self(), :tick, abs: true)

    receive do
      {:timeout, ^timer, :tick} ->
        now = now_us()
        last_due = last_due(due_ms, period_ms, Integer.floor_div(now, 1000))
        late = record(due_ms, last_due, period_ms, now, count_from_us, late)
        tick(parent, period_ms, last_due + period_ms, count_from_us, late)

      {:stop, from, end_us} ->
        :erlang.cancel_timer(timer)
        # only ticks due in the window count; those that had not run by its
        # end were late at least until then
        end_ms = Integer.floor_div(end_us, 1000)
        late = Enum.reject(late, fn {due_us, _} -> due_us > end_us end)

        late =
          if due_ms <= end_ms,
            do:
              record(
                due_ms,
                last_due(due_ms, period_ms, end_ms),
                period_ms,
                end_us,
                count_from_us,
                late
              ),
            else: late

        send(from, {:ticks, self(), late})
    end
  end

  # the last tick due at or before now_ms, from the first one, due_ms
  defp last_due(due_ms, period_ms, now_ms),
    do: due_ms + period_ms * div(max(now_ms - due_ms, 0), period_ms)

  defp record(due_ms, last_ms, period_ms, at_us, count_from_us, late) do
    Enum.reduce(due_ms..last_ms//period_ms, late, fn d, acc ->
      if d * 1000 >= count_from_us, do: [{d * 1000, at_us - d * 1000} | acc], else: acc
    end)
  end

  defp stop_ticker({pid, period_ms}, end_us) do
    send(pid, {:stop, self(), end_us})

    late =
      receive do
        {:ticks, ^pid, late} -> late
      end

    Process.unlink(pid)
    {due, late} = late |> Enum.reverse() |> Enum.unzip()
    late |> percentiles() |> Map.merge(%{period_ms: period_ms, samples_us: late, due_us: due})
  end

  @doc false
  # Exact nearest-rank percentiles of microsecond samples, in ms.
  def percentiles([]), do: %{samples: 0, p50_ms: nil, p90_ms: nil, p99_ms: nil, max_ms: nil}

  def percentiles(samples_us) do
    [p50, p90, p99, max] = Stats.percentiles(samples_us, [0.5, 0.9, 0.99, 1])

    %{
      samples: length(samples_us),
      p50_ms: p50 / 1000,
      p90_ms: p90 / 1000,
      p99_ms: p99 / 1000,
      max_ms: max / 1000
    }
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

  # mean utilization of the online schedulers of each kind
  defp utilization(sample0, sample1) do
    rows = :scheduler.utilization(sample0, sample1)

    ids =
      scheduler_ids(
        :erlang.system_info(:schedulers),
        :erlang.system_info(:schedulers_online),
        :erlang.system_info(:dirty_cpu_schedulers),
        :erlang.system_info(:dirty_cpu_schedulers_online)
      )

    mean = fn type, online ->
      values = for {^type, id, util, _pct} <- rows, online == :all or id in online, do: util
      if values == [], do: 0.0, else: Enum.sum(values) / length(values)
    end

    %{
      normal: mean.(:normal, ids.normal),
      dirty_cpu: mean.(:cpu, ids.dirty_cpu),
      dirty_io: mean.(:io, :all)
    }
  end

  @doc """
  The ids, in `:erlang.statistics(:scheduler_wall_time)` (and
  `:scheduler_wall_time_all`), of the online normal and the online dirty
  CPU schedulers.

  Every scheduler has an id there, online or not: the normal ones
  `1..schedulers`, then the dirty CPU ones `schedulers + 1 ..
  schedulers + dirty_cpu`, then the dirty IO ones. Schedulers are taken
  online and offline from the lowest id up, so the online ones are the
  first of each kind. The arguments are what `:erlang.system_info/1`
  returns for `:schedulers`, `:schedulers_online`, `:dirty_cpu_schedulers`
  and `:dirty_cpu_schedulers_online`.

      iex> WellBehaved.Probe.scheduler_ids(4, 2, 4, 1)
      %{dirty_cpu: 5..5, normal: 1..2}
  """
  @spec scheduler_ids(pos_integer(), pos_integer(), non_neg_integer(), non_neg_integer()) ::
          %{normal: Range.t(), dirty_cpu: Range.t()}
  def scheduler_ids(schedulers, schedulers_online, dirty_cpu, dirty_cpu_online) do
    count!(:schedulers, schedulers, 1, :infinity)
    count!(:schedulers_online, schedulers_online, 1, schedulers)
    count!(:dirty_cpu, dirty_cpu, 0, :infinity)
    count!(:dirty_cpu_online, dirty_cpu_online, 0, dirty_cpu)

    %{
      normal: 1..schedulers_online//1,
      dirty_cpu: (schedulers + 1)..(schedulers + dirty_cpu_online)//1
    }
  end

  defp count!(_name, n, min, max)
       when is_integer(n) and n >= min and (max == :infinity or n <= max),
       do: :ok

  defp count!(name, n, min, max) do
    accepted =
      if max == :infinity,
        do: "an integer >= #{min}",
        else: "an integer from #{min} to #{max}"

    raise ArgumentError,
          "scheduler_ids/4: #{name} must be #{accepted}, got #{inspect(n)}"
  end
end
