defmodule WellBehaved.External.Pool do
  @moduledoc false
  # A pool of WellBehaved.External: N server programs (the built-in
  # priv/wb_external, or a program of the user's job types; each a port, so
  # each dies with the VM) listening on Unix sockets in a private temp
  # directory, and `connections` sockets to each of them. Each pool has a
  # name: its manager's registered name and its ETS table's.
  #
  # Hot path, all in the caller (no message to this process):
  # WellBehaved.External.Client.
  #
  # This process (the manager) owns the ports, the sockets and the ETS table,
  # and only acts off the hot path:
  #   * no idle slot: the caller asks it (:checkout) and waits in a queue;
  #     while anyone waits (a counter in the atomics), releases go through
  #     the manager, which hands the slot to the first waiter; a release
  #     that set its slot idle as a caller was being queued tells the
  #     manager (:serve_waiters), which hands idle slots to the waiters in
  #     order (and so does every tick).
  #   * a caller whose call failed closes the socket, marks the slot down and
  #     sends :reconnect; a server that exits has its idle slots marked down
  #     and is restarted; its slots reconnect once it prints "ready".
  #   * a caller that gave up has its request cancelled: one that timed out
  #     marks its slot cancelling and sends {:cancel, slot}; one that died
  #     is found by the tick (its slot held by a dead process). The manager
  #     sends the cancel (an empty frame) and waits for the server's
  #     acknowledgement (an empty frame; a reply that comes first is
  #     dropped), and the slot is idle again. No acknowledgement within
  #     cancel_timeout_ms: the job does not stop (a step that never
  #     returns), so its server is killed (SIGKILL) and restarted at once,
  #     and counted as abandoned: no server works for nobody.
  #   * every tick, slots held by dead processes are cancelled.
  #   * a server's output (stdout and stderr, one pipe) is read a line at
  #     a time and logged (External.ServerLog); its exit status is decoded
  #     (External.ExitStatus); failures count against the restart
  #     intensity (External.Intensity): past it the pool is unavailable
  #     until a retry timer starts its servers again.
  #   * callers count their waits and timeouts (External.WaitStats) in a
  #     :counters ref of the ETS meta tuple.
  use GenServer

  alias WellBehaved.External.{Connection, Intensity, ServerLog, Servers, Slots, WaitStats}
  import Slots, only: [server_of: 2, slots_of: 2, close_slot: 2]
  alias WellBehaved.{OSProcess, Telemetry}

  # a slot's value in the atomics (Client uses the same): a caller's token
  # (positive), idle, down (no connection), cancelling (held here)
  @idle 0
  @down -1
  @cancelling -2
  @tick_ms 500
  # `opts` checked by WellBehaved.External, with :name and :executable
  def child_spec(opts) do
    %{
      id: Keyword.fetch!(opts, :name),
      start: {__MODULE__, :start_link, [opts]},
      # a pool started lazily that dies is started again by its next
      # caller; one in the user's supervision tree as the user says
      restart: Keyword.get(opts, :restart, :temporary),
      shutdown: 10_000
    }
  end

  def start_link(opts) do
    opts = Keyword.merge(defaults(), opts)
    GenServer.start_link(__MODULE__, opts, name: Keyword.fetch!(opts, :name))
  end

  defp defaults do
    [servers: System.schedulers_online(), connections: 4, timeout_ms: 60_000]
    |> Keyword.merge(cancel_timeout_ms: 1_000, max_waiting: :infinity)
    |> Keyword.merge(max_restarts: 10, max_seconds: 10, retry_ms: 1_000)
  end

  @doc """
  Starts the pool under `WellBehaved.Supervisor` unless it runs: `opts`
  (checked by `WellBehaved.External`) over the defaults.
  """
  def ensure_started(opts) do
    name = Keyword.fetch!(opts, :name)
    WellBehaved.Service.ensure_started(WellBehaved.Supervisor, name, {__MODULE__, opts})
  end

  @doc "Claims an idle slot for `token`, scanning from `at`: the slot, or 0."
  def claim(_atomics, _slots, _at, 0, _token), do: 0

  def claim(atomics, slots, at, left, token) do
    case :atomics.compare_exchange(atomics, at + 1, @idle, token) do
      :ok -> at + 1
      _ -> claim(atomics, slots, if(at + 1 == slots, do: 0, else: at + 1), left - 1, token)
    end
  end

  # --- the manager -------------------------------------------------------------------

  @impl true
  def init(opts) do
    Process.flag(:trap_exit, true)
    servers = Keyword.fetch!(opts, :servers)
    slots = servers * Keyword.fetch!(opts, :connections)
    name = Keyword.fetch!(opts, :name)
    exe = Connection.executable(Keyword.fetch!(opts, :executable))

    if File.regular?(exe) do
      dir = Connection.private_dir!()
      table = :ets.new(name, [:set, :public, :named_table, read_concurrency: true])
      atomics = :atomics.new(slots + 1, signed: true)
      for slot <- 1..slots, do: :atomics.put(atomics, slot, @down)

      state = %{
        name: name,
        exe: exe,
        dir: dir,
        table: table,
        atomics: atomics,
        slots: slots,
        timeout_ms: Keyword.fetch!(opts, :timeout_ms),
        cancel_timeout_ms: Keyword.fetch!(opts, :cancel_timeout_ms),
        max_waiting: Keyword.fetch!(opts, :max_waiting),
        # :running; :unavailable past the restart intensity (no server
        # runs, checkouts answer {:error, :unavailable}) until the retry,
        # then :recovering until a server is up
        status: :running,
        intensity: Intensity.new(opts),
        retry_in: nil,
        # callers' counts (External.WaitStats), and the manager's
        stats: WaitStats.new(),
        restarts: 0,
        exits: %{},
        crashes: %{},
        sheds: 0,
        cancel_count: 0,
        # slot => the cancel in flight on it
        cancels: %{},
        # server index => servers killed there for a job that would not stop
        abandoned: %{},
        servers: %{},
        ports: %{},
        waiters: :queue.new(),
        suspects: %{}
      }

      state = Enum.reduce(0..(servers - 1), state, &Servers.start_server(&2, &1))

      case await_ready(state, System.monotonic_time(:millisecond) + Servers.ready_timeout_ms()) do
        {:ok, state} ->
          meta = {:meta, name, atomics, slots, self(), state.timeout_ms, state.stats}
          :ets.insert(table, meta)
          Process.send_after(self(), :tick, @tick_ms)
          {:ok, state}

        {:error, reason, state} ->
          shutdown(state)
          {:stop, reason}
      end
    else
      {:stop, {:missing_executable, exe}}
    end
  end

  defp await_ready(state, deadline) do
    if Enum.all?(state.servers, fn {_, s} -> s.status == :up end) do
      {:ok, state}
    else
      receive do
        {port, {:data, _}} = msg when is_port(port) ->
          {:noreply, state} = handle_info(msg, state)
          await_ready(state, deadline)

        {port, {:exit_status, status}} when is_port(port) ->
          {:error, {:server_exited, status}, state}
      after
        max(deadline - System.monotonic_time(:millisecond), 0) ->
          {:error, :server_start_timeout, state}
      end
    end
  end

  @impl true
  def handle_call(:ready, _from, state), do: {:reply, :ok, state}

  def handle_call({:checkout, _timeout}, _from, %{status: :unavailable} = state),
    do: {:reply, {:error, :unavailable}, state}

  def handle_call({:checkout, timeout}, {pid, _} = from, state) do
    %{atomics: atomics, slots: slots} = state
    # the waiting cell counts the callers in the queue (only this process
    # changes it): bumped first, so that a release racing this claim goes
    # through here
    waiting = :atomics.add_get(atomics, slots + 1, 1) - 1
    token = :erlang.unique_integer([:positive])

    case claim(atomics, slots, 0, slots, token) do
      0 when is_integer(state.max_waiting) and waiting >= state.max_waiting ->
        :atomics.sub(atomics, slots + 1, 1)
        meta = %{pool: state.name, max_waiting: state.max_waiting}

        Telemetry.execute(
          [:well_behaved, :external, :overload],
          %{count: 1, waiting: waiting},
          meta
        )

        {:reply, {:error, :overloaded}, %{state | sheds: state.sheds + 1}}

      0 ->
        deadline = System.monotonic_time(:millisecond) + timeout
        Process.send_after(self(), :expire_waiters, timeout)
        {:noreply, %{state | waiters: :queue.in({from, deadline}, state.waiters)}}

      slot ->
        :atomics.sub(atomics, slots + 1, 1)
        :ets.insert(state.name, {{:owner, slot}, token, pid})
        [{^slot, sock, _}] = :ets.lookup(state.name, slot)
        {:reply, {:ok, slot, sock, token}, state}
    end
  end

  def handle_call(:info, _from, state) do
    servers =
      for {index, s} <- Enum.sort(state.servers) do
        %{index: index, os_pid: s.os_pid, port: s.port, socket: s.path, status: s.status}
      end

    busy =
      for slot <- 1..state.slots,
          (token = :atomics.get(state.atomics, slot)) > 0,
          [{_, ^token, pid}] <- [:ets.lookup(state.name, {:owner, slot})] do
        %{slot: slot, pid: pid, server: server_of(state, slot)}
      end

    cancelling =
      for {slot, cancel} <- Enum.sort(state.cancels), do: %{slot: slot, server: cancel.index}

    info = %{
      name: state.name,
      executable: state.exe,
      dir: state.dir,
      status: state.status,
      servers: servers,
      slots: state.slots,
      busy: busy,
      cancelling: cancelling,
      waiting: :atomics.get(state.atomics, state.slots + 1),
      queue: :queue.len(state.waiters),
      max_waiting: state.max_waiting,
      restarts: state.restarts,
      exits: state.exits,
      crashes: state.crashes,
      cancels: state.cancel_count,
      sheds: state.sheds,
      max_restarts: state.intensity.max_restarts,
      max_seconds: state.intensity.max_seconds,
      retry_in: state.retry_in
    }

    {:reply, Map.merge(info, WaitStats.read(state.stats)), state}
  end

  # each running server's answer to {wb_stats}, on a connection of its own
  def handle_call(:server_stats, _from, state) do
    stats =
      for {index, %{status: :up, path: path}} <- Enum.sort(state.servers) do
        abandoned = Map.get(state.abandoned, index, 0)

        case Connection.server_stats(path) do
          {:ok, stats} -> {index, {:ok, Map.put(stats, :abandoned, abandoned)}}
          error -> {index, error}
        end
      end

    {:reply, stats, state}
  end

  @impl true
  # a caller hands its slot to the first waiter
  def handle_info({:checkin, slot, token}, state) do
    if :atomics.get(state.atomics, slot) == token,
      do: {:noreply, give(state, slot, token)},
      else: {:noreply, state}
  end

  # a caller set its slot idle as callers were being queued
  def handle_info(:serve_waiters, state), do: {:noreply, serve_waiters(state)}

  def handle_info({:reconnect, slot}, state), do: {:noreply, reconnect(state, slot)}

  def handle_info({:cancel, slot}, state), do: {:noreply, start_cancel(state, slot, true)}

  def handle_info({:tcp, sock, data}, state), do: {:noreply, cancel_answer(state, sock, data)}
  def handle_info({:tcp_closed, sock}, state), do: {:noreply, cancel_broken(state, sock)}
  def handle_info({:tcp_error, sock, _}, state), do: {:noreply, cancel_broken(state, sock)}

  def handle_info({:cancel_timeout, slot, ref}, state),
    do: {:noreply, cancel_timed_out(state, slot, ref)}

  # a server's output, a line at a time: "ready" once it listens, any
  # other line (or piece of a long one) to the log. While it starts, a
  # line ending in "ready" is its "ready" after a partial line of stderr
  # (one pipe): that part is logged.
  def handle_info({port, {:data, {eol, line}}}, state) when is_map_key(state.ports, port) do
    index = Map.fetch!(state.ports, port)

    case {eol, state.servers[index].status, ServerLog.ready_prefix(line)} do
      {:eol, :starting, prefix} when is_binary(prefix) ->
        state = if prefix == "", do: state, else: log_line(state, index, prefix)
        {:noreply, state |> Servers.server_ready(index) |> reconnect_server(index)}

      _ ->
        {:noreply, log_line(state, index, line)}
    end
  end

  # a server exited; cancels in flight there are over: their jobs died
  # with it (or the pool killed it)
  def handle_info({port, {:exit_status, status}}, state) when is_map_key(state.ports, port) do
    {state, index, outcome} = Servers.server_exited(state, port, status)

    state =
      Enum.reduce(slots_of(state, index), state, fn slot, state ->
        if Map.has_key?(state.cancels, slot),
          do: end_cancel(state, slot, @down, outcome),
          else: state
      end)

    {:noreply, state}
  end

  # a restart after a pause: only the one the server's last exit set
  def handle_info({:restart, index, ref}, state) do
    case {state.status, state.servers[index]} do
      {status, %{status: :down, port: nil, restart: ^ref}} when status != :unavailable ->
        {:noreply, Servers.start_server(state, index)}

      _ ->
        {:noreply, state}
    end
  end

  def handle_info({:start_timeout, index, port}, state),
    do: {:noreply, Servers.start_timed_out(state, index, port)}

  # the pool was unavailable for its retry delay: its servers start again
  def handle_info(:retry, %{status: :unavailable} = state), do: {:noreply, Servers.retry(state)}

  def handle_info(:retry, state), do: {:noreply, state}

  def handle_info(:expire_waiters, state), do: {:noreply, expire_waiters(state)}

  def handle_info(:tick, state) do
    Process.send_after(self(), :tick, @tick_ms)

    state =
      state
      |> reclaim_abandoned()
      |> expire_waiters()
      |> serve_waiters()
      |> Servers.flush_logs()

    state =
      Enum.reduce(1..state.slots, state, fn slot, state ->
        if :atomics.get(state.atomics, slot) == @down, do: reconnect(state, slot), else: state
      end)

    {:noreply, state}
  end

  # a port closed by us, or a parent's exit (handled by GenServer)
  def handle_info({:EXIT, _port, _reason}, state), do: {:noreply, state}
  def handle_info(_other, state), do: {:noreply, state}

  @impl true
  def terminate(_reason, state), do: shutdown(state)

  defp log_line(state, index, line) do
    server = state.servers[index]
    log = ServerLog.line(server.log, state.name, index, server.os_pid, line)
    put_in(state.servers[index].log, log)
  end

  # --- slots ------------------------------------------------------------------------

  @doc false
  def reconnect_server(state, index) do
    Enum.reduce(slots_of(state, index), state, fn slot, state ->
      if :atomics.get(state.atomics, slot) == @down, do: reconnect(state, slot), else: state
    end)
  end

  # a down slot whose server is up gets a new connection, then a waiter
  defp reconnect(state, slot) do
    server = state.servers[server_of(state, slot)]

    if :atomics.get(state.atomics, slot) == @down and server.status == :up do
      close_slot(state, slot)

      case Connection.connect(server.path, state.timeout_ms) do
        {:ok, sock} ->
          :ets.insert(state.name, {slot, sock, server_of(state, slot)})
          give(state, slot, @down)

        {:error, _} ->
          # retried on the next tick, or when the server restarts
          state
      end
    else
      state
    end
  end

  # --- waiters -------------------------------------------------------------------------

  # The slot (held by the manager as value `from`) goes to the first live
  # waiter, or becomes idle.
  defp give(state, slot, from) do
    %{atomics: atomics, slots: slots} = state

    case next_waiter(state) do
      {nil, state} ->
        :atomics.compare_exchange(atomics, slot, from, @idle)
        state

      {{{pid, _} = caller, _deadline} = waiter, state} ->
        token = :erlang.unique_integer([:positive])

        if :atomics.compare_exchange(atomics, slot, from, token) == :ok do
          :atomics.sub(atomics, slots + 1, 1)
          :ets.insert(state.name, {{:owner, slot}, token, pid})
          [{^slot, sock, _}] = :ets.lookup(state.name, slot)
          GenServer.reply(caller, {:ok, slot, sock, token})
          state
        else
          # not ours to give after all: the waiter keeps its place
          %{state | waiters: :queue.in_r(waiter, state.waiters)}
        end
    end
  end

  # Idle slots go to the live waiters, first come first served, until
  # either runs out.
  defp serve_waiters(state) do
    %{atomics: atomics, slots: slots} = state

    case next_waiter(state) do
      {nil, state} ->
        state

      {{{pid, _} = caller, _deadline} = waiter, state} ->
        token = :erlang.unique_integer([:positive])

        case claim(atomics, slots, 0, slots, token) do
          0 ->
            %{state | waiters: :queue.in_r(waiter, state.waiters)}

          slot ->
            :atomics.sub(atomics, slots + 1, 1)
            :ets.insert(state.name, {{:owner, slot}, token, pid})
            [{^slot, sock, _}] = :ets.lookup(state.name, slot)
            GenServer.reply(caller, {:ok, slot, sock, token})
            serve_waiters(state)
        end
    end
  end

  defp next_waiter(state) do
    now = System.monotonic_time(:millisecond)

    case :queue.out(state.waiters) do
      {:empty, _} ->
        {nil, state}

      {{:value, {{pid, _} = caller, deadline} = waiter}, rest} ->
        cond do
          not Process.alive?(pid) ->
            :atomics.sub(state.atomics, state.slots + 1, 1)
            next_waiter(%{state | waiters: rest})

          deadline <= now ->
            GenServer.reply(caller, {:error, :checkout_timeout})
            :atomics.sub(state.atomics, state.slots + 1, 1)
            next_waiter(%{state | waiters: rest})

          true ->
            {waiter, %{state | waiters: rest}}
        end
    end
  end

  defp expire_waiters(state) do
    now = System.monotonic_time(:millisecond)

    {expired, kept} =
      state.waiters
      |> :queue.to_list()
      |> Enum.split_with(fn {{pid, _}, deadline} ->
        deadline <= now or not Process.alive?(pid)
      end)

    for {caller, _} <- expired do
      GenServer.reply(caller, {:error, :checkout_timeout})
      :atomics.sub(state.atomics, state.slots + 1, 1)
    end

    %{state | waiters: :queue.from_list(kept)}
  end

  # A slot held by a dead process, or held for two ticks by a token no live
  # owner has claimed (its owner died between claiming and recording), is
  # closed and reconnected.
  defp reclaim_abandoned(state) do
    {suspects, state} =
      Enum.reduce(1..state.slots, {%{}, state}, fn slot, {suspects, state} ->
        token = :atomics.get(state.atomics, slot)

        cond do
          token <= 0 ->
            {suspects, state}

          true ->
            suspect = Map.get(state.suspects, slot)

            case :ets.lookup(state.name, {:owner, slot}) do
              [{_, ^token, pid}] ->
                if Process.alive?(pid),
                  do: {suspects, state},
                  else: {suspects, reclaim(state, slot, token)}

              _ when suspect == token ->
                {suspects, reclaim(state, slot, token)}

              _ ->
                {Map.put(suspects, slot, token), state}
            end
        end
      end)

    %{state | suspects: suspects}
  end

  defp reclaim(state, slot, token) do
    if :atomics.compare_exchange(state.atomics, slot, token, @cancelling) == :ok do
      start_cancel(state, slot, false)
    else
      state
    end
  end

  # --- cancelling ---------------------------------------------------------------------

  # The slot (cancelling, held here) carries a request its caller gave up:
  # the server is told to abandon it, and has cancel_timeout_ms to say it
  # did. The connection serves on after the acknowledgement when `reuse`;
  # not after a caller that died, whose pending recv the socket keeps until
  # that recv's timeout (a later recv answers :ealready): that connection
  # is replaced. Active mode reaches this process even so, and is set
  # before the cancel goes, so that the dead caller's recv cannot take the
  # acknowledgement.
  defp start_cancel(state, slot, reuse) do
    index = server_of(state, slot)
    server = state.servers[index]
    state = %{state | cancel_count: state.cancel_count + 1}
    started = System.monotonic_time()

    with %{status: :up, os_pid: os_pid} <- server,
         [{^slot, sock, _}] <- :ets.lookup(state.name, slot),
         :ok <- :inet.setopts(sock, active: :once),
         :ok <- :gen_tcp.send(sock, <<>>) do
      ref = make_ref()
      timer = Process.send_after(self(), {:cancel_timeout, slot, ref}, state.cancel_timeout_ms)
      cancel = %{sock: sock, ref: ref, timer: timer, index: index, os_pid: os_pid, reuse: reuse}
      %{state | cancels: Map.put(state.cancels, slot, Map.put(cancel, :started, started))}
    else
      # no server, or a broken connection: nothing runs there any more
      _ ->
        cancel_event(state, slot, index, started, :lost)
        give_down(state, slot)
    end
  end

  defp cancel_slot(state, sock) do
    Enum.find_value(state.cancels, fn {slot, cancel} -> if cancel.sock == sock, do: slot end)
  end

  # the acknowledgement (an empty frame) ends the cancel; a reply that
  # crossed the cancel comes first and is dropped
  defp cancel_answer(state, sock, data) do
    case cancel_slot(state, sock) do
      nil ->
        state

      slot when data == <<>> ->
        if state.cancels[slot].reuse and :inet.setopts(sock, active: false) == :ok,
          do: end_cancel(state, slot, :give, :acknowledged),
          else: end_cancel(state, slot, @down, :acknowledged)

      slot ->
        case :inet.setopts(sock, active: :once) do
          :ok -> state
          {:error, _} -> end_cancel(state, slot, @down, :lost)
        end
    end
  end

  defp cancel_broken(state, sock) do
    case cancel_slot(state, sock) do
      nil -> state
      slot -> end_cancel(state, slot, @down, :lost)
    end
  end

  # No acknowledgement in time: the job does not stop, its server is
  # replaced (the exit is seen as any other and restarts it). Other cancels
  # on that server end with it: one replacement, counted once.
  defp cancel_timed_out(state, slot, ref) do
    case state.cancels[slot] do
      %{ref: ^ref, index: index, os_pid: os_pid} ->
        server = state.servers[index]

        state =
          if server.os_pid == os_pid and server.status == :up,
            do: replace(state, index),
            else: state

        end_cancel(state, slot, @down, :killed)

      _ ->
        state
    end
  end

  defp replace(state, index) do
    server = state.servers[index]

    ServerLog.warning(
      state.name,
      index,
      server.os_pid,
      "#{ServerLog.prefix(state.name, index, server.os_pid)} did not abandon a cancelled " <>
        "job within #{state.cancel_timeout_ms} ms; killing it"
    )

    state = Servers.stop_server(state, index)
    %{state | abandoned: Map.update(state.abandoned, index, 1, &(&1 + 1))}
  end

  # The cancel on `slot` is over (`outcome`: :acknowledged, :killed with
  # its server, :lost with the connection): the slot goes to a waiter or
  # idle (:give), or down (and reconnects when its server is up).
  defp end_cancel(state, slot, next, outcome) do
    {cancel, cancels} = Map.pop(state.cancels, slot)
    Process.cancel_timer(cancel.timer)
    state = %{state | cancels: cancels}
    cancel_event(state, slot, cancel.index, cancel.started, outcome)

    if next == :give do
      give(state, slot, @cancelling)
    else
      _ = :inet.setopts(cancel.sock, active: false)
      give_down(state, slot)
    end
  end

  defp cancel_event(state, slot, index, started, outcome) do
    Telemetry.execute(
      [:well_behaved, :external, :cancel],
      %{count: 1, duration: System.monotonic_time() - started},
      %{pool: state.name, server: index, slot: slot, outcome: outcome}
    )
  end

  defp give_down(state, slot) do
    if :atomics.compare_exchange(state.atomics, slot, @cancelling, @down) == :ok do
      close_slot(state, slot)
      reconnect(state, slot)
    else
      state
    end
  end

  # --- shutting down ------------------------------------------------------------------------

  defp shutdown(state) do
    for slot <- 1..state.slots, do: close_slot(state, slot)
    :ets.delete(state.table)

    for {caller, _} <- :queue.to_list(state.waiters),
        do: GenServer.reply(caller, {:error, :not_running})

    pids =
      for {_, %{port: port, os_pid: os_pid}} <- state.servers, port != nil do
        # closing stdin makes the server remove its socket file and exit
        OSProcess.close_port(port)

        os_pid
      end

    deadline = System.monotonic_time(:millisecond) + 2_000

    for os_pid <- pids,
        do: OSProcess.stop(os_pid, max(deadline - System.monotonic_time(:millisecond), 0))

    File.rm_rf(state.dir)
    :ok
  end
end
