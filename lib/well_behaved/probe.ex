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

  # The public API; the work is done under probe/: Options (checks the
  # options), Measure and Ticker (measure/2), Turns and Tracer (the traced
  # windows of turns/2), Judge (judge/2's verdicts), Text (summary/1).
  alias WellBehaved.Probe.{Judge, Measure, Options, Text, Ticker, Turns}

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

    Measure.run(fun, Options.measure!(opts))
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
            "#{Options.qualified(name)}: expected a function of arity 0, got: #{inspect(fun)}"
    end

    {bounds, turn_opts} = Options.judge!(opts, name)
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
  defdelegate summary(report_or_judgement), to: Text

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

    report = Turns.traced(fun, Options.turns!(opts))
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

  @doc false
  # Exact nearest-rank percentiles of microsecond samples, in ms.
  defdelegate percentiles(samples_us), to: Ticker

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
  defdelegate scheduler_ids(schedulers, schedulers_online, dirty_cpu, dirty_cpu_online),
    to: Measure
end
