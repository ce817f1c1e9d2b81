defmodule WellBehaved.External.Servers do
  @moduledoc false
  # The server programs of a WellBehaved.External.Pool, as its manager
  # runs them (functions on the manager's state): starting one, its
  # "ready", its exit (logged, counted, decoded, restarted or not), and
  # the restart intensity: past it the pool gives up for a while
  # (External.Intensity), stopping its servers.

  require Logger

  alias WellBehaved.External.{Connection, ExitStatus, Intensity, ServerLog, Slots}
  alias WellBehaved.{OSProcess, Telemetry}

  @ready_timeout_ms 10_000
  # a server's output lines, in bytes: a longer line comes in pieces
  @line_bytes 4096

  @doc false
  # how long a server has to print "ready"
  def ready_timeout_ms, do: @ready_timeout_ms

  @doc false
  def start_server(state, index) do
    path = Path.join(state.dir, "s#{index}.sock")
    # the last server to exit removes the directory (so that none is left
    # behind when the VM dies): make it again if a restart finds it gone
    Connection.ensure_private_dir(state.dir)

    # stderr too: both reach the log, a line at a time
    port =
      Port.open({:spawn_executable, state.exe}, [
        :binary,
        :exit_status,
        :use_stdio,
        :stderr_to_stdout,
        {:line, @line_bytes},
        args: [path, "--remove-dir"]
      ])

    {:os_pid, os_pid} = Port.info(port, :os_pid)
    Process.send_after(self(), {:start_timeout, index, port}, @ready_timeout_ms)
    old = Map.get(state.servers, index)

    server = %{
      port: port,
      os_pid: os_pid,
      path: path,
      status: :starting,
      # the rate window of the server it replaces, if any
      log: if(old, do: old.log, else: ServerLog.new()),
      started: System.monotonic_time(),
      started_at: System.monotonic_time(:millisecond),
      delay: if(old, do: old.delay, else: 0),
      # starts in a row that failed before "ready"
      failed_starts: if(old, do: old.failed_starts, else: 0)
    }

    %{
      state
      | servers: Map.put(state.servers, index, server),
        ports: Map.put(state.ports, port, index),
        restarts: if(old, do: state.restarts + 1, else: state.restarts)
    }
  end

  # "ready": the server listens (its slots connect next); the pool is
  # available again if it was recovering
  @doc false
  def server_ready(state, index) do
    server = %{state.servers[index] | status: :up, failed_starts: 0}
    state = put_in(state.servers[index], server)
    startup = System.monotonic_time() - server.started

    Telemetry.execute(
      [:well_behaved, :external, :server, :start],
      %{startup_time: startup},
      %{pool: state.name, server: index, os_pid: server.os_pid}
    )

    if state.status == :recovering do
      Logger.info("WellBehaved.External #{inspect(state.name)}: available again",
        pool: state.name,
        server: index,
        os_pid: server.os_pid
      )

      now = System.monotonic_time(:millisecond)

      Telemetry.execute(
        [:well_behaved, :external, :available],
        %{count: 1},
        intensity_meta(state)
      )

      %{
        state
        | status: :running,
          retry_in: nil,
          intensity: Intensity.available(state.intensity, now)
      }
    else
      state
    end
  end

  defp intensity_meta(state) do
    %{
      pool: state.name,
      max_restarts: state.intensity.max_restarts,
      max_seconds: state.intensity.max_seconds
    }
  end

  @doc false
  def flush_logs(state) do
    Enum.reduce(state.servers, state, fn {index, server}, state ->
      log = ServerLog.flush(server.log, state.name, index, server.os_pid, false)
      put_in(state.servers[index].log, log)
    end)
  end

  # A server exited: its idle slots go down, the exit is logged and
  # counted. It restarts (after a pause if it died young) unless the pool
  # is, or by this failure becomes, unavailable. Returns the state, the
  # server's index and how its cancels in flight ended (:killed when the
  # pool killed it, else :lost): the caller (Pool) ends them.
  @doc false
  def server_exited(state, port, status) do
    index = Map.fetch!(state.ports, port)
    server = state.servers[index]
    server = %{server | log: ServerLog.flush(server.log, state.name, index, server.os_pid, true)}
    signal = ExitStatus.signal(status)
    cause = exit_cause(Map.get(server, :killed), signal)
    now = System.monotonic_time(:millisecond)
    state = count_exit(%{state | ports: Map.delete(state.ports, port)}, status, signal, cause)

    # idle connections to it are dead; connections in use are discarded by
    # their callers, who see them closed
    Slots.down_idle(state, index)

    File.rm(server.path)
    # a server that dies young is restarted after a pause, unless killed
    # here for a job that would not stop
    young? = now - server.started_at < 1_000
    killed? = cause == :killed_by_pool

    delay =
      if young? and not killed?, do: Intensity.backoff(state.intensity, server.delay), else: 0

    failed_start? = server.status == :starting and not killed?
    failed_starts = if failed_start?, do: server.failed_starts + 1, else: 0
    down = %{status: :down, port: nil, delay: delay, failed_starts: failed_starts}
    down = server |> Map.delete(:killed) |> Map.merge(down)
    state = put_in(state.servers[index], down)

    # the exits the pool did not cause count against its intensity
    {verdict, state} =
      cond do
        state.status == :unavailable ->
          {:stopped, state}

        killed? ->
          {:ok, state}

        true ->
          {verdict, intensity} = Intensity.failure(state.intensity, now)

          if Intensity.failed_starts_exceeded?(intensity, failed_starts),
            do: {{:exceeded, {index, failed_starts}}, %{state | intensity: intensity}},
            else: {verdict, %{state | intensity: intensity}}
      end

    restart_in = if verdict == :ok, do: delay

    what =
      "#{ServerLog.prefix(state.name, index, server.os_pid)} #{ExitStatus.describe(status, signal)}"

    case restart_in do
      nil -> ServerLog.warning(state.name, index, server.os_pid, "#{what}; not restarted")
      0 -> ServerLog.warning(state.name, index, server.os_pid, "#{what}; restarting")
      ms -> ServerLog.warning(state.name, index, server.os_pid, "#{what}; restarting in #{ms} ms")
    end

    Telemetry.execute(
      [:well_behaved, :external, :server, :exit],
      %{uptime: System.monotonic_time() - server.started},
      %{
        pool: state.name,
        server: index,
        os_pid: server.os_pid,
        status: status,
        signal: signal,
        cause: cause,
        restart_in: restart_in
      }
    )

    state =
      case verdict do
        :ok when delay == 0 ->
          start_server(state, index)

        :ok ->
          # tagged: a timer left from an earlier exit of this index is
          # ignored (Pool matches the tag against the server's)
          ref = make_ref()
          Process.send_after(self(), {:restart, index, ref}, delay)
          put_in(state.servers[index][:restart], ref)

        :stopped ->
          state

        :exceeded ->
          give_up(state, now, nil)

        {:exceeded, failed_starts} ->
          give_up(state, now, failed_starts)
      end

    {state, index, if(killed?, do: :killed, else: :lost)}
  end

  defp exit_cause(true, _signal), do: :killed_by_pool
  defp exit_cause(:start_timeout, _signal), do: :start_timeout
  defp exit_cause(nil, nil), do: :exited
  defp exit_cause(nil, _signal), do: :crashed

  defp count_exit(state, status, signal, cause) do
    state = %{state | exits: Map.update(state.exits, status, 1, &(&1 + 1))}

    if cause == :crashed,
      do: %{state | crashes: Map.update(state.crashes, signal, 1, &(&1 + 1))},
      else: state
  end

  # Past the restart intensity (too many failures in the window, or
  # `failed_starts`: {index, count} failed starts in a row): the servers
  # still running are stopped, the waiters answered
  # {:error, :unavailable}, and a timer retries.
  defp give_up(state, now, failed_starts) do
    crashes = Intensity.failures(state.intensity)
    {delay, intensity} = Intensity.give_up(state.intensity, now)

    what =
      case failed_starts do
        nil -> "#{crashes} server failures within #{intensity.max_seconds} s"
        {index, count} -> "server #{index} failed #{count} starts in a row"
      end

    ServerLog.pool_error(
      state.name,
      "WellBehaved.External #{inspect(state.name)}: #{what}, more than max_restarts " <>
        "(#{intensity.max_restarts}): unavailable, servers start again in #{delay} ms"
    )

    Telemetry.execute(
      [:well_behaved, :external, :unavailable],
      %{count: 1, crashes: crashes},
      Map.put(intensity_meta(state), :retry_in, delay)
    )

    Process.send_after(self(), :retry, delay)

    # one kill command for all of them: the manager waits for it
    running = for {index, %{port: port}} <- state.servers, port != nil, do: index
    OSProcess.kill_all(for index <- running, do: state.servers[index].os_pid)
    state = Enum.reduce(running, state, &mark_stopped(&2, &1))

    for {caller, _} <- :queue.to_list(state.waiters) do
      GenServer.reply(caller, {:error, :unavailable})
      :atomics.sub(state.atomics, state.slots + 1, 1)
    end

    %{state | status: :unavailable, intensity: intensity, retry_in: delay, waiters: :queue.new()}
  end

  # Kills a running server (its exit, seen as any other, does not count
  # against the intensity): no new connection to it, none of its idle
  # ones used; callers on its other connections get {:error, :closed}.
  @doc false
  def stop_server(state, index) do
    OSProcess.kill(state.servers[index].os_pid)
    mark_stopped(state, index)
  end

  # a server just killed by the pool
  defp mark_stopped(state, index) do
    Slots.down_idle(state, index)
    put_in(state.servers[index], Map.merge(state.servers[index], %{status: :down, killed: true}))
  end

  @doc false
  # no "ready" within @ready_timeout_ms: killed, and counted as a failure
  def start_timed_out(state, index, port) do
    case state.servers[index] do
      %{status: :starting, port: ^port, os_pid: os_pid} = server ->
        ServerLog.warning(
          state.name,
          index,
          os_pid,
          "#{ServerLog.prefix(state.name, index, os_pid)} did not start within " <>
            "#{@ready_timeout_ms} ms; killing it"
        )

        OSProcess.kill(os_pid)
        put_in(state.servers[index], Map.put(server, :killed, :start_timeout))

      _ ->
        state
    end
  end

  @doc false
  # the retry after give_up/2: a new window, the stopped servers started
  def retry(state) do
    state = %{state | status: :recovering, intensity: Intensity.retry(state.intensity)}

    Enum.reduce(state.servers, state, fn
      {index, %{status: :down, port: nil}}, state ->
        start_server(put_in(state.servers[index].failed_starts, 0), index)

      _, state ->
        state
    end)
  end
end
