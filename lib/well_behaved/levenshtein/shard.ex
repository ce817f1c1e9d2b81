defmodule WellBehaved.Levenshtein.Shard do
  @moduledoc false
  # One shard of a distributed index: a process on its node holding a
  # local Levenshtein.Index (a native resource cannot leave its node). It
  # lives as long as the process that created the distributed index (and
  # no longer than the call that starts it, if that call is stopped at its
  # bound), and searches run in the :erpc process of each call, not in the
  # holder.

  use GenServer

  alias WellBehaved.Levenshtein

  @doc "Starts a holder of `candidates` on this node for `owner`; its pid."
  def start(owner, candidates, opts) do
    case GenServer.start(__MODULE__, {owner, self(), candidates, opts}) do
      {:ok, pid} -> pid
      {:error, {%{__exception__: true} = e, stack}} -> reraise e, stack
      {:error, reason} -> exit(reason)
    end
  end

  @doc """
  Applies `m.f(a...)` in the calling process, which is killed
  if still running after `timeout` ms: the :erpc process of a call its
  caller gave up on stops there, and the runtime frees its search job,
  instead of running to the end for nobody.
  """
  def bounded(timeout, m, f, a) do
    worker = self()

    spawn(fn ->
      ref = Process.monitor(worker)

      receive do
        {:DOWN, ^ref, :process, _, _} -> :ok
      after
        timeout -> Process.exit(worker, timed_out())
      end
    end)

    apply(m, f, a)
  end

  @doc "The exit reason of a call stopped by `bounded/4`."
  def timed_out, do: {:shutdown, :timeout}

  @doc "Levenshtein.nearest/3 on the shard held by `holder` (on this node)."
  def nearest(holder, query, opts),
    do: Levenshtein.nearest(query, GenServer.call(holder, :index, :infinity), opts)

  @doc "Levenshtein.distances/3 on the shard held by `holder` (on this node)."
  def distances(holder, query, opts),
    do: Levenshtein.distances(query, GenServer.call(holder, :index, :infinity), opts)

  @impl true
  def init({owner, starter, candidates, opts}) do
    Process.monitor(owner)
    # the call starting this holder, stopped at its bound (while the index
    # was being made): nobody will have its pid
    Process.monitor(starter)
    {:ok, {Levenshtein.Index.new(candidates, opts), starter}}
  end

  @impl true
  def handle_call(:index, _from, {index, _} = state), do: {:reply, index, state}

  @impl true
  def handle_info({:DOWN, _, :process, starter, reason}, {_, starter} = state) do
    # :noproc: it was stopped before this holder could even watch it
    if reason in [timed_out(), :noproc], do: {:stop, :normal, state}, else: {:noreply, state}
  end

  def handle_info({:DOWN, _, :process, _owner, _}, state), do: {:stop, :normal, state}
end
