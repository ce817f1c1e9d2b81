defmodule WellBehaved.Lab.Echo.PortProgram do
  @moduledoc """
  Echo through an external program, `priv/wb_echo_port`, over its stdin and
  stdout with `{:packet, 4}` framing: the caller encodes the term with
  `term_to_binary/1`, the program writes each frame back, the caller decodes
  the reply with `binary_to_term/1`.

  ## Design

  Starting an OS process per call, or per caller, costs far more than a
  round trip, so long-lived programs serve every caller: one by default, or
  a pool of up to 4 (application env `:well_behaved, :port_program_pool`).
  Each program's port belongs to an owner process
  (`WellBehaved.Lab.Echo.PortProgram.Owner`), started on first use under
  `WellBehaved.Supervisor`; with a pool, a caller goes to the owner of the
  scheduler it runs on. An owner writes each request to its port as it
  arrives and keeps the callers in a FIFO queue: the program answers frames
  in order, so the n-th reply belongs to the n-th request. Requests are
  pipelined (many frames may be in flight), and the program writes back
  every whole frame it has read in one write. Callers encode and decode
  themselves, so the owner only moves binaries (by reference, not copied).

  The owner is a hop the port's reply cannot avoid: replies from a port go
  to its connected process only. On 2 cores, 8 callers got the same calls/s
  from a pool of 2 as from one owner (small terms and 64 KiB binaries alike,
  medians of 5 runs within the run-to-run noise): the pipes and the
  program's wake-ups are the limit, not the owner, so the default is one.
  A pool may pay on more cores.

  ## Failures

  If a program dies (it crashed, or was killed), every caller waiting on it
  gets `{:error, {:exit_status, status}}` at once; the VM is not affected.
  The next call starts a fresh program. A call also gives up after its
  `:timeout` (default 30 s) with `{:error, :timeout}`; its reply, if
  it comes later, is dropped.

  `stop/0` stops the owners, which close their ports and wait (up to a
  bound, then SIGKILL) until their programs have exited.
  """

  alias WellBehaved.Service
  alias WellBehaved.OSProcess
  alias __MODULE__.Owner

  @default_timeout 30_000
  @max_pool 4
  @owners List.to_tuple(for i <- 1..@max_pool, do: Module.concat(Owner, "P#{i}"))

  @doc """
  Returns `term` after a round trip through the port program, or
  `{:error, reason}` when the program died or could not start, or the call
  took longer than `opts[:timeout]` milliseconds (default #{@default_timeout}).
  """
  @spec echo(term(), timeout: timeout()) :: term() | {:error, term()}
  def echo(term, opts \\ []) do
    timeout = Keyword.get(opts, :timeout, @default_timeout)
    bin = :erlang.term_to_binary(term)
    name = elem(@owners, rem(:erlang.system_info(:scheduler_id) - 1, pool_size()))

    with {:ok, owner} <- Service.ensure_started(WellBehaved.Lab.Supervisor, name, {Owner, name}) do
      try do
        GenServer.call(owner, {:echo, bin}, timeout)
      catch
        :exit, {:timeout, _} -> {:error, :timeout}
        :exit, {reason, _} -> {:error, {:owner_exited, reason}}
        :exit, reason -> {:error, {:owner_exited, reason}}
      else
        {:ok, reply} -> :erlang.binary_to_term(reply)
        {:error, _} = error -> error
      end
    end
  end

  @doc """
  The ports of the programs running now (each owner opens its program on
  its first request, and again on the first request after it died).
  `Port.info(port, :os_pid)` gives a program's OS pid.
  """
  @spec ports() :: [port()]
  def ports do
    for name <- Tuple.to_list(@owners),
        owner = Process.whereis(name),
        owner != nil,
        port = safe_call(owner, :port),
        is_port(port),
        do: port
  end

  @doc """
  Starts the owners and their programs now, so that no later call pays for
  starting one. Calls start what they need anyway.
  """
  @spec start() :: :ok | {:error, term()}
  def start do
    Enum.reduce_while(0..(pool_size() - 1), :ok, fn i, :ok ->
      name = elem(@owners, i)

      with {:ok, owner} <-
             Service.ensure_started(WellBehaved.Lab.Supervisor, name, {Owner, name}),
           port when is_port(port) <- safe_call(owner, :open) do
        {:cont, :ok}
      else
        {:error, _} = error -> {:halt, error}
        other -> {:halt, {:error, other}}
      end
    end)
  end

  @doc "Stops the owners and their programs; returns once the programs have exited."
  @spec stop() :: :ok
  def stop do
    @owners |> Tuple.to_list() |> Enum.each(&Service.stop(WellBehaved.Lab.Supervisor, &1))
  end

  defp pool_size do
    case Application.get_env(:well_behaved, :port_program_pool, 1) do
      n when is_integer(n) and n >= 1 -> min(n, @max_pool)
      _ -> 1
    end
  end

  defp safe_call(owner, request) do
    GenServer.call(owner, request)
  catch
    :exit, _ -> nil
  end

  defmodule Owner do
    @moduledoc false
    # Owns the port of wb_echo_port; replies reach callers in FIFO order.
    use GenServer, restart: :temporary

    # how long stop waits for the program to exit on its own after its stdin
    # closes, before SIGKILL
    @exit_wait_ms 2_000

    def start_link(name), do: GenServer.start_link(__MODULE__, [], name: name)

    @impl true
    def init([]) do
      Process.flag(:trap_exit, true)
      {:ok, %{port: nil, os_pid: nil, waiting: :queue.new()}}
    end

    @impl true
    def handle_call({:echo, bin}, from, state) do
      case ensure_port(state) do
        {:ok, state} ->
          try do
            Port.command(state.port, bin)
          rescue
            # the port closed under us; its exit message fails the others
            ArgumentError -> {:reply, {:error, :port_closed}, state}
          else
            true -> {:noreply, %{state | waiting: :queue.in(from, state.waiting)}}
          end

        {:error, _} = error ->
          {:reply, error, state}
      end
    end

    def handle_call(:port, _from, state), do: {:reply, state.port, state}

    def handle_call(:open, _from, state) do
      case ensure_port(state) do
        {:ok, state} -> {:reply, state.port, state}
        {:error, _} = error -> {:reply, error, state}
      end
    end

    @impl true
    def handle_info({port, {:data, reply}}, %{port: port} = state) do
      case :queue.out(state.waiting) do
        {{:value, from}, waiting} ->
          GenServer.reply(from, {:ok, reply})
          {:noreply, %{state | waiting: waiting}}

        {:empty, _} ->
          # a frame nobody asked for: the program is broken
          {:noreply, program_gone(state, {:error, :unexpected_reply}, kill: true)}
      end
    end

    def handle_info({port, {:exit_status, status}}, %{port: port} = state),
      do: {:noreply, program_gone(state, {:error, {:exit_status, status}})}

    def handle_info({:EXIT, port, reason}, %{port: port} = state),
      do: {:noreply, program_gone(state, {:error, {:port_exit, reason}})}

    # messages from a port already given up
    def handle_info({:EXIT, _port, _reason}, state), do: {:noreply, state}
    def handle_info({_port, {:data, _}}, state), do: {:noreply, state}
    def handle_info({_port, {:exit_status, _}}, state), do: {:noreply, state}

    @impl true
    def terminate(_reason, state) do
      program_gone(state, {:error, :stopped}, kill: false)
      :ok
    end

    defp ensure_port(%{port: nil} = state) do
      path = Path.join(:code.priv_dir(:well_behaved_lab), "wb_echo_port")

      port =
        Port.open({:spawn_executable, path}, [:binary, {:packet, 4}, :exit_status, :use_stdio])

      {:os_pid, os_pid} = Port.info(port, :os_pid)
      {:ok, %{state | port: port, os_pid: os_pid}}
    rescue
      error in ErlangError -> {:error, {:open_port, Exception.message(error)}}
    end

    defp ensure_port(state), do: {:ok, state}

    # Fails every waiting caller with `error`, closes the port and makes sure
    # the OS process is gone (at once with kill: true, else after its stdin
    # closes, bounded). The next request opens a new program.
    defp program_gone(state, error, opts \\ []) do
      state.waiting |> :queue.to_list() |> Enum.each(&GenServer.reply(&1, error))

      if state.port, do: OSProcess.close_port(state.port)

      if state.os_pid do
        if Keyword.get(opts, :kill, false), do: OSProcess.kill(state.os_pid)
        OSProcess.stop(state.os_pid, @exit_wait_ms)
      end

      %{state | port: nil, os_pid: nil, waiting: :queue.new()}
    end
  end
end
