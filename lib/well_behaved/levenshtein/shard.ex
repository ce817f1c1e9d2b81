defmodule WellBehaved.Levenshtein.Shard do
  @moduledoc false
  # One shard of a distributed index: a process on its node holding a
  # local Levenshtein.Index (a native resource cannot leave its node). It
  # lives as long as the process that created the distributed index, and
  # searches run in the :erpc process of each call, not in the holder.

  use GenServer

  alias WellBehaved.Levenshtein

  @doc "Starts a holder of `candidates` on this node for `owner`; its pid."
  def start(owner, candidates, opts) do
    case GenServer.start(__MODULE__, {owner, candidates, opts}) do
      {:ok, pid} -> pid
      {:error, {%{__exception__: true} = e, stack}} -> reraise e, stack
      {:error, reason} -> exit(reason)
    end
  end

  @doc "Levenshtein.nearest/3 on the shard held by `holder` (on this node)."
  def nearest(holder, query, opts),
    do: Levenshtein.nearest(query, GenServer.call(holder, :index, :infinity), opts)

  @doc "Levenshtein.distances/3 on the shard held by `holder` (on this node)."
  def distances(holder, query, opts),
    do: Levenshtein.distances(query, GenServer.call(holder, :index, :infinity), opts)

  @impl true
  def init({owner, candidates, opts}) do
    Process.monitor(owner)
    {:ok, Levenshtein.Index.new(candidates, opts)}
  end

  @impl true
  def handle_call(:index, _from, index), do: {:reply, index, index}

  @impl true
  def handle_info({:DOWN, _, :process, _, _}, index), do: {:stop, :normal, index}
end
