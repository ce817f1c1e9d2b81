defmodule WellBehaved.Lab.Echo.Driver do
  @moduledoc """
  Echo through a port driver (`priv/wb_echo_drv.so`, erl_driver), three ways:

    * `:driver_call`: `:erlang.port_call/3`; the driver gets the term in the
      external term format and hands the same bytes back, which the runtime
      decodes.
    * `:driver_control`: `:erlang.port_control/3` with `term_to_binary/1`;
      the reply binary is decoded with `binary_to_term/1`.
    * `:driver_outputv`: `Port.command/2` reaches the driver's `outputv`
      callback; the reply comes back as `{port, {:data, binary}}` to the
      port's connected process.

  ## Who owns what

  A service process (started on first use under `WellBehaved.Supervisor`)
  loads the driver with `:erl_ddll.load_driver/2` and owns the shared ports.
  The driver is loaded with `kill_ports`: when the service stops, or dies,
  every port of the driver is closed.

  `port_call` and `port_control` are synchronous and any process may call
  them on a port it does not own, so the caller uses a shared port directly:
  no message, no process hop. The service opens one shared port per
  scheduler and a caller picks the one of the scheduler it runs on. The
  driver uses port-level locking, so callers on different schedulers never
  wait for each other's port lock (on one shared port they would, and a
  call that finds the lock taken is scheduled on the port and waited for).

  `outputv` replies go to the port's connected process, so each caller
  process gets its own port, opened on its first `:driver_outputv` call and
  cached in its process dictionary: the call is then `Port.command/2`
  followed by a `receive` of the reply already in the caller's mailbox, again
  with no hop. The alternative, a relay process owning one port and
  forwarding replies, adds two messages per call and one process that every
  caller queues behind: measured on 2 cores with a 64 KiB binary, it gave a
  third to a half of the calls/s of own ports at 1, 2 and 8 callers, and
  small terms fared alike. The caller's port is unlinked from the caller
  right after it opens (so closing it, or unloading the driver, sends the
  caller no exit signal); instead the service monitors the caller and closes
  its port when it exits. The cost is one port open per caller process: a
  caller that spawns a fresh process for every call pays it every time.

  A caller whose port was closed (by `stop/0`) gets a new one on its next
  call; one whose port closes while it waits gets `{:error, :port_closed}`.
  `stop/0` is not meant to race with calls: a call that loses the race
  returns `{:error, reason}`, and a caller whose first `:driver_outputv`
  call opens its port in the instant before it is unlinked would get the
  driver's `driver_unloaded` exit signal.
  """

  alias WellBehaved.Service
  alias WellBehaved.OSProcess

  @driver ~c"wb_echo_drv"
  # the only operation the driver knows; any other makes it raise badarg
  @op 1
  @service __MODULE__.Server
  @shared_key {__MODULE__, :shared_ports}
  @own_key {__MODULE__, :own_port}

  @type method :: :driver_call | :driver_control | :driver_outputv

  @doc """
  Returns `term` after a round trip through the port driver by `method`, or
  `{:error, reason}` when the driver cannot be loaded or the port was closed
  during the call.
  """
  @spec echo(term(), method()) :: term() | {:error, term()}
  def echo(term, :driver_call), do: with_shared_port(&:erlang.port_call(&1, @op, term))

  def echo(term, :driver_control) do
    bin = :erlang.term_to_binary(term)

    case with_shared_port(&:erlang.port_control(&1, @op, bin)) do
      reply when is_binary(reply) -> :erlang.binary_to_term(reply)
      error -> error
    end
  end

  def echo(term, :driver_outputv), do: outputv(:erlang.term_to_binary(term), 1)

  def echo(_term, method) do
    WellBehaved.Options.invalid!(
      "WellBehaved.Lab.Echo.Driver.echo/2",
      "method",
      method,
      ":driver_call, :driver_control or :driver_outputv"
    )
  end

  @doc """
  Closes every port of the driver (the shared ones and every caller's own)
  and unloads it. The next call loads it again.
  """
  @spec stop() :: :ok
  def stop, do: Service.stop(WellBehaved.Lab.Supervisor, @service)

  # --- port_call / port_control: a shared port per scheduler ----------------

  defp with_shared_port(fun, retried? \\ false) do
    with {:ok, port} <- shared_port() do
      try do
        fun.(port)
      rescue
        ArgumentError ->
          cond do
            Port.info(port) != nil -> {:error, :badarg}
            retried? -> {:error, :port_closed}
            # closed under us: by stop/0, or the service died without
            # withdrawing its ports; start a service if none runs, once
            true -> with {:ok, _, _} <- ready_service(), do: with_shared_port(fun, true)
          end
      end
    end
  end

  defp shared_port do
    case :persistent_term.get(@shared_key, nil) do
      nil -> with {:ok, _pid, ports} <- ready_service(), do: {:ok, pick(ports)}
      ports -> {:ok, pick(ports)}
    end
  end

  # The service, started if needed, once its init is over: a concurrent
  # caller that started it may still be in init (a GenServer registers its
  # name before init runs), so ask it for its ports, which waits for that.
  defp ready_service do
    with {:ok, pid} <-
           Service.ensure_started(WellBehaved.Lab.Supervisor, @service, {__MODULE__.Server, []}) do
      {:ok, pid, GenServer.call(pid, :shared_ports)}
    end
  catch
    :exit, reason -> {:error, {:driver_service, reason}}
  end

  defp pick(ports) do
    elem(ports, rem(:erlang.system_info(:scheduler_id) - 1, tuple_size(ports)))
  end

  # --- outputv: a port per caller process ------------------------------------

  defp outputv(bin, retries) do
    with {:ok, port} <- own_port() do
      try do
        Port.command(port, bin)
      rescue
        # closed since the last call (stop/0): open a new one, once
        ArgumentError ->
          Process.delete(@own_key)
          if retries > 0, do: outputv(bin, retries - 1), else: {:error, :port_closed}
      else
        true -> await_reply(port)
      end
    end
  end

  # The driver replies within Port.command/2 when it runs the command at
  # once, so the reply is normally waiting already. It can be later when the
  # command was scheduled on the port (its lock was taken: only stop/0 does
  # that) and never comes if stop/0 closed the port: every 100 ms without a
  # reply, check the port is still open. (A port monitor per call would catch
  # the close too, but costs about a microsecond per call.)
  defp await_reply(port) do
    receive do
      {^port, {:data, reply}} -> :erlang.binary_to_term(reply)
    after
      100 ->
        if Port.info(port, :id) == nil do
          Process.delete(@own_key)

          receive do
            {^port, {:data, reply}} -> :erlang.binary_to_term(reply)
          after
            0 -> {:error, :port_closed}
          end
        else
          await_reply(port)
        end
    end
  end

  defp own_port do
    case Process.get(@own_key) do
      nil ->
        with {:ok, service, _} <- ready_service(), do: open_own_port(service)

      port ->
        {:ok, port}
    end
  end

  defp open_own_port(service) do
    port = Port.open({:spawn_driver, @driver}, [:binary])
    Process.unlink(port)
    send(service, {:watch, self(), port})
    Process.put(@own_key, port)
    {:ok, port}
  rescue
    # the driver was unloaded since ready_service (stop/0)
    error in ArgumentError -> {:error, {:open_port, Exception.message(error)}}
  end

  defmodule Server do
    @moduledoc false
    # Loads the driver, owns the shared ports (published in :persistent_term)
    # and closes each caller's own port when that caller exits.
    use GenServer, restart: :temporary

    @driver Module.get_attribute(WellBehaved.Lab.Echo.Driver, :driver)
    @shared_key Module.get_attribute(WellBehaved.Lab.Echo.Driver, :shared_key)

    def start_link(_arg), do: GenServer.start_link(__MODULE__, [], name: __MODULE__)

    @impl true
    def init([]) do
      Process.flag(:trap_exit, true)
      priv = :code.priv_dir(:well_behaved_lab)

      case :erl_ddll.load_driver(priv, @driver) do
        :ok ->
          n = :erlang.system_info(:schedulers)

          shared =
            List.to_tuple(for _ <- 1..n, do: Port.open({:spawn_driver, @driver}, [:binary]))

          :persistent_term.put(@shared_key, shared)
          {:ok, %{shared: shared, watched: %{}}}

        {:error, reason} ->
          {:stop, {:load_driver, :erl_ddll.format_error(reason) |> to_string()}}
      end
    end

    @impl true
    def handle_call(:shared_ports, _from, state),
      do: {:reply, state.shared, state}

    @impl true
    def handle_info({:watch, pid, port}, state) do
      mref = Process.monitor(pid)
      {:noreply, put_in(state.watched[mref], port)}
    end

    def handle_info({:DOWN, mref, :process, _pid, _reason}, state) do
      {port, watched} = Map.pop(state.watched, mref)
      close(port)
      {:noreply, %{state | watched: watched}}
    end

    # the shared ports are linked to this process; their exits are expected
    # only when the driver is unloaded
    def handle_info({:EXIT, _port, _reason}, state), do: {:noreply, state}

    @impl true
    def terminate(_reason, state) do
      :persistent_term.erase(@shared_key)
      state.shared |> Tuple.to_list() |> Enum.each(&close/1)
      Enum.each(state.watched, fn {_mref, port} -> close(port) end)
      # kill_ports (load_driver's default) closes any port opened meanwhile
      :erl_ddll.unload_driver(@driver)
      :ok
    end

    defp close(nil), do: :ok
    defp close(port), do: OSProcess.close_port(port)
  end
end
