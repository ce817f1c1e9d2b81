defmodule WellBehaved.Probe.Turns do
  @moduledoc false
  # The traced windows of WellBehaved.Probe.turns/2 and judge/2: workers
  # calling the function (and pure-Erlang control workers beside them),
  # traced from the first turn of their first counted call to the last turn
  # of their last one.
  #
  # A window: the workers call the function untraced for `warmup_ms` (each
  # stops at a call boundary, at least one call when warmup_ms > 0) and
  # wait; tracing is enabled on them and they are released together; after
  # `duration_ms` each finishes the call it is in and waits again; once
  # every one has (bounded by `timeout_ms`) and the tracer has seen every
  # turn begun end, tracing stops. So every call counted is whole, and its
  # last turn is in the log. A worker still in its call at the timeout is
  # killed and counted `unfinished`; its last turn is then `open`.
  #
  # The tracer's log is sized from the window's expected length; when it
  # fills (events lost), the window runs again with a log twice the events
  # seen, up to @max_events; events still lost are reported
  # (`lost_events`), and the judgement says nothing about such a window.

  import Bitwise

  alias WellBehaved.Probe.Tracer
  alias WellBehaved.Stats

  # trace events logged per scheduler and ms of window at first: a turn is
  # two, and Erlang code turns every 5 us or more
  @events_per_ms 500
  # a log of at most this many events (32 bytes each, as many turns again
  # when it is read)
  @max_events 1 <<< 22
  @retries 2
  # control work per call: about 0.1-0.2 ms of pure Erlang
  @control_chunk 16_384
  # how long a worker killed at the timeout may take to go (a normal NIF
  # runs to its end), and for its last `out` to land
  @reap_ms 60_000

  @doc false
  # The report of Probe.turns/2, each turn_stats also holding its turns'
  # CPU times (`cpu_us`). `opts`: a map of workers (nil: one per online
  # scheduler), duration_ms, warmup_ms, control, timeout_ms.
  def traced(fun, opts) do
    workers = opts.workers || :erlang.system_info(:schedulers_online)
    attempt(fun, %{opts | workers: workers}, nil, @retries)
  end

  defp attempt(fun, opts, capacity, retries) do
    report = window(fun, opts, capacity)

    if report.lost_events > 0 and retries > 0 and report.log_capacity < @max_events,
      do: attempt(fun, opts, min(2 * report.events, @max_events), retries - 1),
      else: Map.drop(report, [:events, :log_capacity])
  end

  @doc false
  def control_work, do: erlang_work(@control_chunk)

  # Probe.erlang_work/1's loop, here so that the windows do not depend on
  # the module that runs them
  @doc false
  def erlang_work(iterations), do: erlang_work(iterations, 0x1E3779B97F4A7C1)

  @m45 (1 <<< 45) - 1
  @m41 (1 <<< 41) - 1

  defp erlang_work(0, x), do: x

  defp erlang_work(n, x) do
    # masking before shifting keeps every intermediate below 2^58
    x = bxor(x, (x &&& @m45) <<< 13)
    x = bxor(x, x >>> 7)
    x = bxor(x, (x &&& @m41) <<< 17)
    erlang_work(n - 1, x)
  end

  defp window(fun, opts, capacity) do
    parent = self()
    ref = make_ref()
    stop = :atomics.new(1, [])
    started = now_ms()
    warm_until = started + opts.warmup_ms

    kinds =
      List.duplicate({:function, fun}, opts.workers) ++
        if opts.control, do: List.duplicate({:control, &control_work/0}, opts.workers), else: []

    procs =
      for {kind, f} <- kinds do
        {pid, mon} = spawn_monitor(fn -> worker(f, parent, ref, stop, warm_until) end)
        {pid, mon, kind}
      end

    pids = Enum.map(procs, &elem(&1, 0))

    try do
      {ready, _} = await(ref, :ready, pids, warm_until + opts.timeout_ms)
      warm_ms = now_ms() - started

      capacity =
        capacity ||
          min(
            @events_per_ms * :erlang.system_info(:schedulers) *
              (opts.duration_ms + warm_ms + 50),
            @max_events
          )

      tracer =
        case Tracer.new(capacity) do
          {:ok, tracer} -> tracer
          {:error, :enomem} -> raise "WellBehaved.Probe.turns/2: no memory for #{capacity} events"
        end

      # :exiting too: a killed worker's last turn ends (out_exited) in the log
      flags = [:running, :exiting, {:tracer, Tracer, tracer}]
      traced = Enum.filter(ready, &trace(&1, true, flags))
      off0 = off_scheduler_cpu_ns()
      t0 = :erlang.monotonic_time(:nanosecond)
      Enum.each(traced, &send(&1, {ref, :go}))
      Process.sleep(opts.duration_ms)
      :atomics.put(stop, 1, 1)
      deadline = now_ms() + opts.timeout_ms
      {done, calls} = await(ref, :done, traced, deadline)
      unfinished = pids -- done
      Enum.each(unfinished, &Process.exit(&1, :kill))
      # the last `out` of each turn begun, killed workers' included
      wait_until(fn -> Tracer.running(tracer) <= 0 end, max(deadline, now_ms()) + @reap_ms)
      t1 = :erlang.monotonic_time(:nanosecond)
      off1 = off_scheduler_cpu_ns()
      Enum.each(traced, &trace(&1, false, [:running, :exiting]))
      :ok = Tracer.close(tracer)

      {turns, lost} =
        case Tracer.turns(tracer) do
          {:error, :enomem} -> raise "WellBehaved.Probe.turns/2: no memory for the turns"
          {turns, lost} -> {turns, lost}
        end

      off_cpu = if off0 && off1, do: max(off1 - off0, 0) / max(t1 - t0, 1)
      by_pid = Enum.group_by(turns, &elem(&1, 0))

      stats = fn kind ->
        mine = for {pid, _, ^kind} <- procs, do: pid

        mine
        |> Enum.flat_map(&Map.get(by_pid, &1, []))
        |> turn_stats()
        |> Map.merge(%{
          calls: mine |> Enum.map(&Map.get(calls, &1, 0)) |> Enum.sum(),
          unfinished: Enum.count(mine, &(&1 in unfinished))
        })
      end

      function = stats.(:function)
      control = if opts.control, do: stats.(:control)

      %{
        workers: opts.workers,
        window_ms: (t1 - t0) / 1_000_000,
        function: function,
        control: control,
        p50_ratio: control && ratio(function.p50_us, control.p50_us),
        p90_ratio: control && ratio(function.p90_us, control.p90_us),
        cpu_p99_ratio: control && ratio(function.cpu_p99_us, control.cpu_p99_us),
        off_scheduler_cpu: off_cpu,
        lost_events: lost,
        events: length(turns) * 2 + lost,
        log_capacity: capacity
      }
    after
      stop_all(procs)
      flush(ref)
    end
  end

  # the workers' messages a failure left in the caller's mailbox
  defp flush(ref) do
    receive do
      {^ref, _, _, _} -> flush(ref)
      {^ref, :failed, _, _, _} -> flush(ref)
    after
      0 -> :ok
    end
  end

  # A worker: calls `fun` until warm_until, waits for :go, calls it until
  # `stop` is set (at least once), says how many calls it made, and waits
  # (its last turn ends) until it is killed. A failure is sent to the parent.
  defp worker(fun, parent, ref, stop, warm_until) do
    try do
      warm(fun, warm_until)
      send(parent, {ref, :ready, self(), nil})

      receive do
        {^ref, :go} -> :ok
      end

      send(parent, {ref, :done, self(), calls(fun, stop, 0)})
    catch
      kind, reason -> send(parent, {ref, :failed, kind, reason, __STACKTRACE__})
    end

    receive do
      {^ref, :never} -> :ok
    end
  end

  defp warm(fun, until) do
    if now_ms() < until do
      fun.()
      warm(fun, until)
    end
  end

  defp calls(fun, stop, n) do
    fun.()
    if :atomics.get(stop, 1) == 1, do: n + 1, else: calls(fun, stop, n + 1)
  end

  # {pids that sent `tag` by the deadline, %{pid => value}}; a worker's
  # failure is raised here, in the caller (the workers are stopped after)
  defp await(ref, tag, pids, deadline),
    do: await(ref, tag, Map.new(pids, &{&1, true}), deadline, [], %{})

  defp await(_ref, _tag, waiting, _deadline, got, values) when waiting == %{},
    do: {Enum.reverse(got), values}

  defp await(ref, tag, waiting, deadline, got, values) do
    receive do
      {^ref, ^tag, pid, value} ->
        waiting = Map.delete(waiting, pid)
        await(ref, tag, waiting, deadline, [pid | got], Map.put(values, pid, value))

      {^ref, :failed, kind, reason, stack} ->
        reraise_failure(kind, reason, stack)

      {:DOWN, _, :process, pid, reason} when is_map_key(waiting, pid) ->
        # killed from outside
        exit({:probe_worker_down, reason})
    after
      max(deadline - now_ms(), 0) -> {Enum.reverse(got), values}
    end
  end

  defp reraise_failure(:error, reason, stack),
    do: reraise(Exception.normalize(:error, reason, stack), stack)

  defp reraise_failure(:exit, reason, _stack), do: exit(reason)
  defp reraise_failure(:throw, value, _stack), do: throw(value)

  defp wait_until(check, deadline) do
    cond do
      check.() -> :ok
      now_ms() >= deadline -> :timeout
      true -> wait_until_later(check, deadline)
    end
  end

  defp wait_until_later(check, deadline) do
    Process.sleep(1)
    wait_until(check, deadline)
  end

  defp stop_all(procs) do
    Enum.each(procs, fn {pid, _, _} -> Process.exit(pid, :kill) end)

    Enum.each(procs, fn {_, mon, _} ->
      receive do
        {:DOWN, ^mon, :process, _, _} -> :ok
      after
        @reap_ms -> Process.demonitor(mon, [:flush])
      end
    end)
  end

  defp ratio(a, b) when is_number(a) and is_number(b) and b > 0, do: a / b
  defp ratio(_, _), do: nil

  # The CPU time, in ns, of this VM's threads other than its normal
  # schedulers: dirty schedulers, native threads, the VM's own helpers
  # (Linux's /proc/self/task/*/schedstat, read in one native call; nil
  # where there is none).
  defp off_scheduler_cpu_ns do
    case Tracer.other_threads_cpu_ns() do
      ns when is_integer(ns) -> ns
      :undefined -> nil
    end
  end

  defp trace(pid, on, flags) do
    :erlang.trace(pid, on, flags) == 1
  rescue
    # the process is gone
    ArgumentError -> false
  end

  defp turn_stats(turns) do
    {normal, dirty} = Enum.split_with(turns, fn {_, _, _, thread} -> thread == :normal end)
    {open, closed} = Enum.split_with(normal, fn {_, _, cpu, _} -> cpu == :open end)
    wall = percentiles_us(Enum.map(closed, &elem(&1, 1)))
    cpu_ns = Enum.map(closed, &elem(&1, 2))
    cpu = percentiles_us(cpu_ns)

    %{
      cpu_us: Enum.map(cpu_ns, &(&1 / 1000)),
      turns: length(closed),
      wall_total_us: closed |> Enum.map(&elem(&1, 1)) |> Enum.sum() |> Kernel./(1000),
      cpu_total_us: closed |> Enum.map(&elem(&1, 2)) |> Enum.sum() |> Kernel./(1000),
      open_turns: length(open),
      open_max_us: open |> Enum.map(&(elem(&1, 1) / 1000)) |> Enum.max(fn -> nil end),
      p50_us: wall.p50,
      p90_us: wall.p90,
      p99_us: wall.p99,
      max_us: wall.max,
      cpu_p50_us: cpu.p50,
      cpu_p90_us: cpu.p90,
      cpu_p99_us: cpu.p99,
      cpu_max_us: cpu.max,
      dirty_turns: length(dirty)
    }
  end

  # nearest-rank percentiles of nanoseconds, in microseconds
  defp percentiles_us([]), do: %{p50: nil, p90: nil, p99: nil, max: nil}

  defp percentiles_us(ns) do
    [p50, p90, p99, max] = Stats.percentiles(ns, [0.5, 0.9, 0.99, 1])
    %{p50: p50 / 1000, p90: p90 / 1000, p99: p99 / 1000, max: max / 1000}
  end

  defp now_ms, do: System.monotonic_time(:millisecond)
end
