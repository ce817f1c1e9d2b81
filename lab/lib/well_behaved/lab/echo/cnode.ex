defmodule WellBehaved.Lab.Echo.CNode do
  @moduledoc """
  The `:cnode` echo method: a C node written with the `ei` library
  (`priv/wb_cnode`, from `c_src/cnode/wb_cnode.c`) answers
  `{from, ref, term}` with `{ref, term}`, over Erlang distribution.

  Everything is set up on first use:

    * if the VM is not distributed, this module starts distribution
      (`Node.start/2`, a long name on 127.0.0.1, listening on loopback only,
      a random cookie), and before that epmd (`epmd -daemon`) if none
      answers on 127.0.0.1 (`WellBehaved.Lab.Echo.CNode.Distribution`);
    * a server under `WellBehaved.Supervisor` starts the C node as a port
      program: it gets its name (`wb_cnode_<os pid>_<n>@<this VM's host>`),
      the VM's node name and, on its standard input, the cookie; it connects
      to the VM (the VM is found through epmd; the C node itself is not
      registered there) and the server waits for its `nodeup`.

  Callers then send straight to the C node (`{:wb_echo, node}`) and wait
  for their tagged reply: no process relays the terms. Each call monitors
  the C node with `:erlang.monitor_node/2`, so when the C node dies the
  callers get `{:error, :nodedown}` at once, and `{:error, :timeout}` if no
  reply comes within the timeout; the next call starts a new C node. The
  C node exits when its connection or its standard input closes, so it
  does not outlive the VM.

  `stop/0` stops the C node, then distribution if this module started it,
  then epmd if this module started it and no node is registered in it any
  more (and removes `~/.erlang.cookie` if starting distribution created it).
  """

  use GenServer
  require Logger

  alias WellBehaved.Service
  alias WellBehaved.OSProcess
  alias WellBehaved.Lab.Echo.CNode.Distribution

  @target_key {__MODULE__, :target}
  # the C node answers messages sent to any registered name
  @registered_name :wb_echo
  @default_timeout 5_000
  @start_timeout 20_000
  @nodeup_timeout 15_000

  @doc """
  Returns `term` after a round trip through the C node, or
  `{:error, reason}`: `:nodedown` when the C node died during the call,
  `:timeout` when no reply came within `timeout` ms, or the reason the C
  node or distribution could not be started.
  """
  @spec echo(term(), timeout()) :: term() | {:error, term()}
  def echo(term, timeout \\ @default_timeout) do
    case :persistent_term.get(@target_key, nil) do
      nil ->
        case start_target() do
          {:ok, node} -> call(node, term, timeout)
          {:error, _} = error -> error
        end

      node ->
        call(node, term, timeout)
    end
  end

  @doc """
  Stops the C node and what this module started for it: distribution, the
  cookie file distribution created, and epmd (only when no other node is
  registered in it). Returns `:ok`, also when nothing was running.
  """
  @spec stop() :: :ok
  def stop do
    Service.stop(WellBehaved.Lab.Supervisor, __MODULE__)

    # the server was not running (or was killed) but left things behind
    Distribution.release(Distribution.leftover())

    :persistent_term.erase(@target_key)
    :ok
  end

  @doc "The OS pid of the running C node program, or `nil`."
  @spec os_pid() :: pos_integer() | nil
  def os_pid do
    case Process.whereis(__MODULE__) do
      nil -> nil
      pid -> GenServer.call(pid, :os_pid)
    end
  catch
    :exit, _ -> nil
  end

  @doc false
  def child_spec(arg) do
    %{
      id: __MODULE__,
      start: {__MODULE__, :start_link, [arg]},
      restart: :temporary,
      shutdown: 20_000
    }
  end

  @doc false
  def start_link(_arg), do: GenServer.start_link(__MODULE__, :ok, name: __MODULE__)

  # --- callers ------------------------------------------------------------------

  defp call(node, term, timeout) do
    ref = make_ref()
    :erlang.monitor_node(node, true)
    send({@registered_name, node}, {self(), ref, term})

    receive do
      {^ref, reply} ->
        demonitor_node(node)
        reply

      {:nodedown, ^node} ->
        node_down(node)
        {:error, :nodedown}
    after
      timeout ->
        demonitor_node(node)
        {:error, :timeout}
    end
  catch
    # distribution stopped under our feet (stop/0 during the call)
    :error, :notalive -> {:error, :notalive}
  end

  defp demonitor_node(node) do
    :erlang.monitor_node(node, false)

    receive do
      {:nodedown, ^node} -> :ok
    after
      0 -> :ok
    end
  end

  defp start_target do
    with {:ok, pid} <- Service.ensure_started(WellBehaved.Lab.Supervisor, __MODULE__, __MODULE__) do
      GenServer.call(pid, :target, @start_timeout)
    end
  catch
    :exit, reason -> {:error, {:start_failed, reason}}
  end

  # A caller saw the C node go down: make sure the server forgets it before
  # the caller returns, so that the caller's next call starts a new one.
  defp node_down(node) do
    case Process.whereis(__MODULE__) do
      nil -> erase_target(node)
      pid -> GenServer.call(pid, {:down, node}, @start_timeout)
    end
  catch
    :exit, _ -> erase_target(node)
  end

  defp erase_target(node) do
    if :persistent_term.get(@target_key, nil) == node, do: :persistent_term.erase(@target_key)
    :ok
  end

  # --- server ----------------------------------------------------------------------

  @impl true
  def init(:ok) do
    Process.flag(:trap_exit, true)

    case Distribution.ensure() do
      {:ok, owned} -> {:ok, %{owned: owned, cnode: nil}}
      {:error, reason} -> {:stop, reason}
    end
  end

  @impl true
  def handle_call(:target, _from, %{cnode: %{node: node}} = state),
    do: {:reply, {:ok, node}, state}

  def handle_call(:target, _from, state) do
    case start_cnode() do
      {:ok, cnode} -> {:reply, {:ok, cnode.node}, %{state | cnode: cnode}}
      {:error, _} = error -> {:reply, error, state}
    end
  end

  def handle_call({:down, node}, _from, %{cnode: %{node: node}} = state),
    do: {:reply, :ok, teardown(state)}

  def handle_call({:down, _old}, _from, state), do: {:reply, :ok, state}

  def handle_call(:os_pid, _from, state),
    do: {:reply, state.cnode && state.cnode.os_pid, state}

  @impl true
  def handle_info({:nodedown, node}, %{cnode: %{node: node}} = state),
    do: {:noreply, teardown(state)}

  def handle_info({port, {:exit_status, status}}, %{cnode: %{port: port}} = state) do
    if status != 0, do: Logger.warning("wb_cnode exited with status #{status}")
    {:noreply, teardown(state)}
  end

  def handle_info({port, {:data, {_eol, line}}}, %{cnode: %{port: port}} = state) do
    Logger.warning("wb_cnode: #{line}")
    {:noreply, state}
  end

  # exits of closed ports, late port messages, nodeup/nodedown of past C nodes
  def handle_info(_msg, state), do: {:noreply, state}

  @impl true
  def terminate(_reason, state) do
    teardown(state)
    Distribution.release(state.owned)
  end

  # --- the C node program --------------------------------------------------------

  defp start_cnode do
    exe = Application.app_dir(:well_behaved_lab, "priv/wb_cnode")

    if File.exists?(exe) do
      [_alive, host] = node() |> Atom.to_string() |> String.split("@", parts: 2)
      alive = "wb_cnode_#{System.pid()}_#{System.unique_integer([:positive])}"
      node = String.to_atom(alive <> "@" <> host)
      :ok = :net_kernel.monitor_nodes(true, node_type: :hidden)

      try do
        port =
          Port.open({:spawn_executable, exe}, [
            :binary,
            :exit_status,
            :stderr_to_stdout,
            {:line, 4096},
            args: [alive, host, Atom.to_string(node())]
          ])

        {:os_pid, os_pid} = Port.info(port, :os_pid)
        cnode = %{node: node, port: port, os_pid: os_pid}
        send_cookie(port)

        case await_nodeup(port, node, @nodeup_timeout, []) do
          :ok ->
            :erlang.monitor_node(node, true)
            :persistent_term.put(@target_key, node)
            {:ok, cnode}

          {:error, reason} ->
            teardown(%{cnode: cnode})
            {:error, reason}
        end
      after
        :net_kernel.monitor_nodes(false, node_type: :hidden)
      end
    else
      {:error, {:not_built, exe}}
    end
  end

  defp send_cookie(port) do
    Port.command(port, [Atom.to_string(Node.get_cookie()), "\n"])
  rescue
    # the program already exited: await_nodeup/4 gets its exit status
    ArgumentError -> :ok
  end

  defp await_nodeup(port, node, timeout, output) do
    receive do
      {:nodeup, ^node, _info} ->
        :ok

      {^port, {:data, {_eol, line}}} ->
        await_nodeup(port, node, timeout, [line | output])

      {^port, {:exit_status, status}} ->
        {:error, {:cnode_exited, status, output |> Enum.reverse() |> Enum.join("\n")}}
    after
      timeout -> {:error, {:cnode_start_timeout, node}}
    end
  end

  defp teardown(%{cnode: nil} = state), do: state

  defp teardown(%{cnode: %{node: node, port: port, os_pid: os_pid}} = state) do
    erase_target(node)
    demonitor_node(node)

    OSProcess.close_port(port)

    # closing stdin makes it exit; a stopped or hung one is killed
    OSProcess.stop(os_pid, 2_000, &cnode_process?/1)

    :erlang.disconnect_node(node)
    %{state | cnode: nil}
  end

  @doc false
  # Whether os_pid is a live wb_cnode program (a zombie has no command line).
  @spec cnode_process?(pos_integer()) :: boolean()
  def cnode_process?(os_pid) when is_integer(os_pid) and os_pid > 1 do
    if File.dir?("/proc/self") do
      case File.read("/proc/#{os_pid}/cmdline") do
        {:ok, cmdline} -> String.contains?(cmdline, "wb_cnode")
        {:error, _} -> false
      end
    else
      OSProcess.alive?(os_pid)
    end
  end
end
