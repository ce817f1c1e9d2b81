defmodule WellBehaved.Search.Shard do
  @moduledoc false
  # One shard of a distributed index: a process on its node holding a
  # local index (a native resource cannot leave its node). It
  # lives as long as the process that created the distributed index (and
  # no longer than the call that starts it, if that call is stopped at its
  # bound), and searches run in the :erpc process of each call, not in the
  # holder. It belongs to its owner, not to a connection: when the owner's
  # node disconnects, the holder tries to reach it again every
  # @retry_ms for grace_ms/0, and stops only if the owner is gone or
  # stays out of reach.

  use GenServer

  @doc """
  Starts a holder on this node of the value `m.f(a...)` makes (an index),
  for `owner`; its pid, or `{:error, :enomem}` when the value is that.
  """
  def start_value(owner, m, f, a) do
    case GenServer.start(__MODULE__, {:value, owner, self(), {m, f, a}}) do
      {:ok, pid} -> pid
      :ignore -> {:error, :enomem}
      {:error, {%{__exception__: true} = e, stack}} -> reraise e, stack
      {:error, reason} -> exit(reason)
    end
  end

  @doc "`m.f(value, a...)` in the calling process, with the value `holder` holds."
  def with_value(holder, m, f, a) do
    value = GenServer.call(holder, :index, :infinity)
    apply(m, f, [value | a])
  end

  @doc """
  Makes `holder` hold `new` in place of `old`: `:ok`, or `:changed` when
  it no longer holds `old` (another change came first) and keeps what it
  holds.
  """
  def swap_value(holder, old, new), do: GenServer.call(holder, {:swap, old, new}, :infinity)

  @retry_ms 500
  @grace_ms 30_000

  @doc "How long a holder waits for its owner's node to come back."
  def grace_ms, do: @grace_ms

  @doc """
  Applies `m.f(a...)` in the calling process, which is killed if still
  running after `timeout` ms, or as soon as `waiter` (the process on the
  calling node that waits for the answer) is gone: the :erpc process of a
  call its caller gave up on, or whose caller died, stops there, and the
  runtime frees its search job, instead of running to the end for nobody.
  """
  def bounded(timeout, waiter, m, f, a) do
    worker = self()

    spawn(fn ->
      ref = Process.monitor(worker)
      gone = Process.monitor(waiter)

      receive do
        {:DOWN, ^ref, :process, _, _} -> :ok
        {:DOWN, ^gone, :process, _, _} -> Process.exit(worker, abandoned())
      after
        timeout -> Process.exit(worker, timed_out())
      end
    end)

    apply(m, f, a)
  end

  @doc "The exit reason of a call stopped by `bounded/5` at its bound."
  def timed_out, do: {:shutdown, :timeout}

  @doc "The exit reason of a call stopped by `bounded/5` because nobody waits for it."
  def abandoned, do: {:shutdown, :abandoned}

  @impl true
  def init({:value, owner, starter, {m, f, a}}) do
    Process.monitor(owner)
    # the call starting this holder, stopped at its bound (while the value
    # was being made): nobody will have its pid
    Process.monitor(starter)

    case apply(m, f, a) do
      {:error, :enomem} -> :ignore
      value -> {:ok, {value, starter, owner}}
    end
  end

  @impl true
  def handle_call(:index, _from, {index, _, _} = state), do: {:reply, index, state}

  # a value made elsewhere from the one held, kept if that is still held
  def handle_call({:swap, old, new}, _from, {old, starter, owner}),
    do: {:reply, :ok, {new, starter, owner}}

  def handle_call({:swap, _old, _new}, _from, state), do: {:reply, :changed, state}

  @impl true
  def handle_info({:DOWN, _, :process, starter, reason}, {_, starter, _} = state) do
    # :noproc: it was stopped before this holder could even watch it
    if reason in [timed_out(), abandoned(), :noproc],
      do: {:stop, :normal, state},
      else: {:noreply, state}
  end

  # the owner's node went away, not (as far as we know) the owner
  def handle_info({:DOWN, _, :process, owner, :noconnection}, {_, _, owner} = state) do
    send(self(), {:reach, System.monotonic_time(:millisecond) + @grace_ms})
    {:noreply, state}
  end

  def handle_info({:DOWN, _, :process, owner, _}, {_, _, owner} = state),
    do: {:stop, :normal, state}

  def handle_info({:reach, until}, {_, _, owner} = state) do
    cond do
      Node.connect(node(owner)) == true ->
        # watched again: an owner that died meanwhile gives :noproc at once
        Process.monitor(owner)
        {:noreply, state}

      System.monotonic_time(:millisecond) >= until ->
        {:stop, :normal, state}

      true ->
        Process.send_after(self(), {:reach, until}, @retry_ms)
        {:noreply, state}
    end
  end

  def handle_info(_other, state), do: {:noreply, state}
end
