defmodule WellBehaved.External.Client do
  @moduledoc false
  # The caller's side of a WellBehaved.External.Pool, all in the caller (no
  # message to the manager on the way): claim an idle slot with one
  # :atomics.compare_exchange (idle 0 -> a fresh token), note the owner in
  # ETS, send and recv on the slot's socket directly, release with one
  # compare_exchange. Slots alternate between servers; a caller starts
  # scanning at a slot chosen by its scheduler.
  #
  # A slot's value in the atomics: a positive token (a caller holds it),
  # idle, down (no connection: the manager reconnects it), or cancelling
  # (the manager holds it while the server abandons the request of a
  # caller that gave up).

  alias WellBehaved.External.{Pool, WaitStats}
  alias WellBehaved.Telemetry

  # the slot values Pool's manager uses
  @idle 0
  @down -1
  @cancelling -2
  # the server's frame limit (c_src/external/wb_external.h)
  @max_frame 1_073_741_824
  # with events on: the slot of the call's last checkout and the time it
  # waited for the manager, for the call span's stop event (saved and put
  # back around a nested call)
  @trace {__MODULE__, :trace}

  @doc """
  Sends one request payload to the pool `name`, returns the reply payload.
  `timeout` (ms) bounds the wait for the reply, and the wait for a
  connection (`nil`: the pool's). A pool not running is started with
  `start` (its options) when given, else the call answers
  `{:error, :not_running}`. `what` names the request in the call span's
  events (a job's name, or `:echo`).
  """
  @spec request(atom(), binary(), timeout() | nil, keyword() | nil, atom()) ::
          {:ok, binary()} | {:error, term()}
  def request(name, payload, timeout, start, what \\ :request)

  def request(_name, payload, _timeout, _start, _what) when byte_size(payload) > @max_frame,
    do: {:error, :too_large}

  def request(name, payload, timeout, start, what) do
    case meta(name, start) do
      {:meta, _name, _atomics, slots, _manager, pool_timeout, _stats} = meta ->
        timeout = timeout || pool_timeout
        deadline = System.monotonic_time(:millisecond) + timeout

        # events off: one check of the flag, and no span; the call still
        # counts its checkout in the pool's counters (a :counters.add)
        if Telemetry.enabled?(),
          do: traced(meta, payload, slots, timeout, deadline, what),
          else: send_request(meta, payload, slots, timeout, deadline, false)

      error ->
        error
    end
  end

  # the call span: start metadata pool and request; stop adds the
  # server, the result (and error), and queue_time (native units waited for the
  # manager to hand a connection; 0 when an idle one was claimed)
  # An event handler may itself make a call (a nested span): the outer
  # call's trace is put back when the nested one ends.
  defp traced({:meta, name, _, _, _, _, _} = meta, payload, slots, timeout, deadline, what) do
    Telemetry.emit_span([:well_behaved, :external, :call], %{pool: name, request: what}, fn ->
      outer = Process.put(@trace, {nil, 0})

      try do
        answer = send_request(meta, payload, slots, timeout, deadline, true)
        {slot, queue_time} = Process.get(@trace)
        stop = Map.put(outcome(answer), :server, slot_server(name, slot))
        {answer, %{queue_time: queue_time}, stop}
      after
        if outer, do: Process.put(@trace, outer), else: Process.delete(@trace)
      end
    end)
  end

  # result and error as every span of the library gives them
  defp outcome({:error, reason}), do: %{result: :error, error: reason}
  defp outcome(_answer), do: %{result: :ok}

  defp slot_server(_name, nil), do: nil

  defp slot_server(name, slot) do
    :ets.lookup_element(name, slot, 3)
  rescue
    ArgumentError -> nil
  end

  defp meta(name, start) do
    case :ets.lookup(name, :meta) do
      [meta] -> meta
      [] -> start_and_meta(name, start)
    end
  rescue
    ArgumentError -> start_and_meta(name, start)
  end

  defp start_and_meta(_name, nil), do: {:error, :not_running}

  # The first caller starts the pool; callers that find it starting wait
  # for its init to finish (a call is handled only after init).
  defp start_and_meta(name, start) do
    with {:ok, pid} <- Pool.ensure_started(start),
         :ok <- GenServer.call(pid, :ready, :infinity),
         [meta] <- :ets.lookup(name, :meta) do
      meta
    else
      _ -> {:error, :not_running}
    end
  catch
    _, _ -> {:error, :not_running}
  end

  # A request that did not reach a live server (a connection to one that
  # died, its exit not yet seen by the manager: the send fails, or the
  # server died with the request unread and reset the connection) computed
  # nothing: it goes again on another connection, first on any idle one,
  # then (the retries spent: every connection was stale) on one the
  # manager gives, which waits for a server to be up again, up to
  # `timeout` in all.
  defp send_request(meta, payload, retries, timeout, deadline, trace) do
    case checkout(meta, timeout, retries, trace) do
      {:ok, slot, sock, token} ->
        if trace, do: Process.put(@trace, {slot, elem(Process.get(@trace), 1)})

        case :gen_tcp.send(sock, payload) do
          :ok ->
            case receive_reply(meta, slot, sock, token, timeout) do
              {:error, :econnreset} -> retry(meta, payload, retries, deadline, :closed, trace)
              answer -> answer
            end

          {:error, reason} when reason != :timeout ->
            discard(meta, slot, token, sock)
            retry(meta, payload, retries, deadline, reason, trace)

          {:error, reason} ->
            discard(meta, slot, token, sock)
            {:error, reason}
        end

      {:error, _} = error ->
        error
    end
  end

  defp retry(meta, payload, retries, deadline, reason, trace) do
    left = deadline - System.monotonic_time(:millisecond)

    cond do
      left <= 0 -> {:error, if(reason == :econnreset, do: :closed, else: reason)}
      true -> send_request(meta, payload, max(retries - 1, 0), left, deadline, trace)
    end
  end

  defp receive_reply(meta, slot, sock, token, timeout) do
    case :gen_tcp.recv(sock, 0, timeout) do
      {:ok, reply} ->
        checkin(meta, slot, token)
        {:ok, reply}

      # the server is told to abandon the request (the manager sees to it)
      {:error, :timeout} ->
        timed_out(meta, slot)
        cancel(meta, slot, token)
        {:error, :timeout}

      {:error, reason} ->
        discard(meta, slot, token, sock)
        {:error, reason}
    end
  end

  defp timed_out({:meta, name, _, _, _, _, stats}, slot) do
    WaitStats.timeout(stats)

    # the metadata (an ETS lookup) only with events on
    if Telemetry.enabled?() do
      meta = %{pool: name, server: slot_server(name, slot), slot: slot}
      Telemetry.execute([:well_behaved, :external, :timeout], %{count: 1}, meta)
    end

    :ok
  end

  # no retries left: only a connection the manager hands out
  defp checkout({:meta, _, _, _, manager, _, stats}, timeout, 0, trace),
    do: wait_checkout(manager, stats, timeout, trace)

  defp checkout({:meta, name, atomics, slots, manager, _, stats}, timeout, _retries, trace) do
    token = :erlang.unique_integer([:positive])
    start = rem(:erlang.system_info(:scheduler_id) - 1, slots)

    case Pool.claim(atomics, slots, start, slots, token) do
      0 ->
        wait_checkout(manager, stats, timeout, trace)

      slot ->
        WaitStats.immediate(stats)
        owned(name, slot, token)
    end
  end

  defp owned(name, slot, token) do
    :ets.insert(name, {{:owner, slot}, token, self()})
    [{^slot, sock, _server}] = :ets.lookup(name, slot)
    {:ok, slot, sock, token}
  rescue
    # the pool stopped under us
    _ -> {:error, :not_running}
  end

  # a wait through the manager, timed for the pool's histogram (and the
  # call span's queue_time)
  defp wait_checkout(manager, stats, timeout, trace) do
    started = System.monotonic_time()
    answer = ask_checkout(manager, timeout)
    waited = System.monotonic_time() - started

    # the histogram holds the waits that got a connection
    case answer do
      {:ok, _, _, _} -> WaitStats.waited(stats, waited)
      {:error, :checkout_timeout} -> WaitStats.checkout_timeout(stats)
      _ -> :ok
    end

    if trace do
      {slot, queue_time} = Process.get(@trace)
      Process.put(@trace, {slot, queue_time + waited})
    end

    answer
  end

  defp ask_checkout(manager, timeout) do
    GenServer.call(manager, {:checkout, timeout}, timeout + 5_000)
  catch
    :exit, {:timeout, _} -> {:error, :checkout_timeout}
    :exit, _ -> {:error, :not_running}
  end

  # The slot is set idle first, then the waiting count read: a manager
  # that queued a waiter bumped the count before it scanned the slots, so
  # either its scan saw this slot idle, or this read sees the count and
  # the manager is told to serve its queue (no waiter is left waiting
  # while a slot is idle).
  # While callers wait, the slot goes through the manager to the first of
  # them (a caller arriving meanwhile cannot take it ahead of them). Else
  # it goes idle, and the count is read again: a caller queued between the
  # two (the manager bumps the count, then looks for an idle slot) is
  # served by the manager.
  defp checkin({:meta, _name, atomics, slots, manager, _, _}, slot, token) do
    if :atomics.get(atomics, slots + 1) > 0 do
      send(manager, {:checkin, slot, token})
    else
      :atomics.compare_exchange(atomics, slot, token, @idle)
      if :atomics.get(atomics, slots + 1) > 0, do: send(manager, :serve_waiters)
    end

    :ok
  end

  defp discard({:meta, _name, atomics, _slots, manager, _, _}, slot, token, sock) do
    :gen_tcp.close(sock)

    if :atomics.compare_exchange(atomics, slot, token, @down) == :ok do
      send(manager, {:reconnect, slot})
    end

    :ok
  end

  defp cancel({:meta, _name, atomics, _slots, manager, _, _}, slot, token) do
    if :atomics.compare_exchange(atomics, slot, token, @cancelling) == :ok do
      send(manager, {:cancel, slot})
    end

    :ok
  end
end
