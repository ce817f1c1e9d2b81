defmodule WellBehaved.Lab.HttpLoad.Child do
  @moduledoc """
  One case of the HTTP-under-load suite, in its child VM: the server
  (`WellBehaved.Lab.HttpLoad.Server`), the background workers, the
  measurement window and what it measured.
  """

  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.Spin
  alias WellBehaved.Lab.HttpLoad.{Plan, Server}

  @doc """
  Runs in the child VM: starts the server, reports its port through the
  ready file, starts the workers of case `name` (none for `:idle`), each
  looping `Spin.run(iterations, schedule: name)`, and after the warm-up
  counts their calls and samples the schedulers' wall time until the
  parent writes `stop` into the child's folder or `window_ms` passes.
  """
  @spec run(atom(), pos_integer(), pos_integer()) :: map()
  def run(name, iterations, window_ms) do
    :ok = WellBehaved.Lab.Suite.settle_calibration()
    dir = System.fetch_env!("WB_CHILD_DIR")
    {httpd, port} = Server.start!(dir)
    :erlang.system_flag(:scheduler_wall_time, true)
    :ok = Server.warm_up(port)

    # Ready before the workers start: a VM hogged by :normal workers may
    # not get round to writing a file for seconds. The parent waits the
    # same warm-up before it starts wrk.
    ready = ChildVM.ready_file(dir)
    File.write!(ready <> ".tmp", Integer.to_string(port))
    File.rename!(ready <> ".tmp", ready)

    # this process only keeps time and counts; it must not wait for turns
    # behind the workers more than it has to
    Process.flag(:priority, :high)
    schedulers = :erlang.system_info(:schedulers_online)
    workers = if name == :idle, do: 0, else: Plan.workers_per_scheduler() * schedulers
    counter = :counters.new(1, [:write_concurrency])
    parent = self()

    pids = for _ <- 1..workers//1, do: spawn(fn -> work(name, iterations, counter, parent) end)

    Process.sleep(Plan.warmup_ms())

    calls0 = :counters.get(counter, 1)
    wall0 = :erlang.statistics(:scheduler_wall_time_all)
    t0 = System.monotonic_time(:millisecond)
    stopped_by = wait_stop(Path.join(dir, "stop"), t0 + window_ms)

    calls = :counters.get(counter, 1) - calls0
    wall1 = :erlang.statistics(:scheduler_wall_time_all)
    elapsed_ms = System.monotonic_time(:millisecond) - t0
    Enum.each(pids, &Process.exit(&1, :kill))
    worker_errors = worker_errors([])
    :ok = Server.stop!(httpd)
    dirty_cpu = :erlang.system_info(:dirty_cpu_schedulers_online)

    ids =
      WellBehaved.Probe.scheduler_ids(
        :erlang.system_info(:schedulers),
        schedulers,
        :erlang.system_info(:dirty_cpu_schedulers),
        dirty_cpu
      )

    %{
      port: port,
      workers: workers,
      schedulers_online: schedulers,
      dirty_cpu_schedulers_online: dirty_cpu,
      window_ms: elapsed_ms,
      stopped_by: stopped_by,
      worker_errors: length(worker_errors),
      worker_error: List.first(worker_errors),
      spin_calls: calls,
      spin_calls_per_s: calls * 1000 / max(elapsed_ms, 1),
      normal_utilization: utilization(wall0, wall1, ids.normal),
      dirty_cpu_utilization: utilization(wall0, wall1, ids.dirty_cpu)
    }
  end

  # A worker that fails reports why and stops: the case is then reported
  # with its worker errors rather than as a quiet VM.
  defp work(mode, iterations, counter, parent) do
    case spin_once(mode, iterations) do
      :ok ->
        :counters.add(counter, 1, 1)
        work(mode, iterations, counter, parent)

      {:error, text} ->
        send(parent, {:worker_error, text})
    end
  end

  defp spin_once(mode, iterations) do
    _ = Spin.run(iterations, schedule: mode)
    :ok
  catch
    kind, reason -> {:error, Exception.format_banner(kind, reason, __STACKTRACE__)}
  end

  defp worker_errors(acc) do
    receive do
      {:worker_error, text} -> worker_errors([text | acc])
    after
      0 -> Enum.reverse(acc)
    end
  end

  defp wait_stop(stop, deadline) do
    cond do
      File.exists?(stop) ->
        "parent"

      System.monotonic_time(:millisecond) >= deadline ->
        "window"

      true ->
        Process.sleep(20)
        wait_stop(stop, deadline)
    end
  end

  # Mean utilization of the schedulers with the given ids between two
  # samples of :scheduler_wall_time_all; nil if there is none.
  defp utilization(wall0, wall1, ids) do
    pick = fn wall -> Map.new(for {id, a, t} <- wall, id in ids, do: {id, {a, t}}) end
    s0 = pick.(wall0)
    s1 = pick.(wall1)

    {active, total} =
      Enum.reduce(s1, {0, 0}, fn {id, {a1, t1}}, {a, t} ->
        {a0, t0} = Map.get(s0, id, {0, 0})
        {a + a1 - a0, t + t1 - t0}
      end)

    if total > 0, do: active / total, else: nil
  end
end
