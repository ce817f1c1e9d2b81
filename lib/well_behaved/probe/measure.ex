defmodule WellBehaved.Probe.Measure do
  @moduledoc false
  # The measurement of WellBehaved.Probe.measure/2 (documented there): a
  # phase of worker processes calling the function while tickers
  # (WellBehaved.Probe.Ticker), the system monitor's long_schedule events
  # and scheduler utilization are recorded, then the same for pure-Erlang
  # control workers.

  alias WellBehaved.Probe.{Ticker, Turns}

  # from this many workers on, they are started and stopped at high priority
  @boost_workers 200
  # the control runs at most this long (a ticker every ms: 5000 samples)
  @control_max_ms 5000

  @doc false
  # The report of measure/2, from its checked options (a map).
  def run(fun, opts) do
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

  defp run_phase(fun, workers, opts, monitor) do
    with_wall_time(fn ->
      sample0 = :scheduler.sample_all()
      t0 = now_us()
      warm_until_us = t0 + opts.warmup_ms * 1000
      tickers = [Ticker.start(opts.tick_ms, warm_until_us), Ticker.start(opts.slow_tick_ms, t0)]
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
      [ticker, slow_ticker] = Enum.map(tickers, &Ticker.stop(&1, end_us))
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

  @doc false
  # WellBehaved.Probe.scheduler_ids/4 (documented there)
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
