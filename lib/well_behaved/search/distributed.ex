defmodule WellBehaved.Search.Distributed do
  @moduledoc false
  # Calls over shards on connected nodes (Erlang distribution, :erpc), for
  # the searches of WellBehaved.Fuzzy and WellBehaved.Levenshtein alike:
  # an index split into holders (WellBehaved.Search.Shard) on several
  # nodes, or a list split per call. Every shard is asked in parallel, each answer is
  # bounded by `timeout:`, and a shard that does not answer makes the call
  # return {:error, {reason, node}}, or with `partial: true`
  # {:partial, result_of_the_others, [{node, reason}]}. The reasons:
  # :nodedown, :timeout, :shard_lost (the holder of an index's shard is
  # gone: its node restarted, or its owner's node stayed away longer than
  # Shard.grace_ms/0), :no_library (WellBehaved is not loaded there),
  # :enomem (native memory ran out there) and {:exit, reason} (the call on
  # that node exited otherwise).
  #
  # Each remote call watches the local process that waits for it: when the
  # caller dies (the waiting task is linked to it) or its node goes away,
  # the remote search is stopped and its job freed, at once.
  #
  # Shards are contiguous slices in input order, so merging the shards'
  # best lists (each by score, then order) with a stable sort by score
  # keeps ties in input order.

  alias WellBehaved.Search.Shard
  alias WellBehaved.Options

  @default_timeout 5_000

  @typedoc "The distributed options of a call: `nodes: nil` for an index's own shards."
  @type settings :: %{nodes: [node()] | nil, timeout: pos_integer(), partial: boolean()}

  @doc "Checks the distributed options (`nodes:`, `timeout:`, `partial:`) of `opts`."
  @spec options(String.t(), keyword()) :: settings()
  def options(name, opts) do
    timeout = Keyword.get(opts, :timeout, @default_timeout)

    if not (is_integer(timeout) and timeout > 0),
      do: Options.invalid!(name, :timeout, timeout, "a positive integer (milliseconds)")

    partial = Options.boolean!(name, :partial, Keyword.get(opts, :partial, false))
    %{nodes: nodes!(name, opts), timeout: timeout, partial: partial}
  end

  defp nodes!(name, opts) do
    case Keyword.fetch(opts, :nodes) do
      :error ->
        nil

      {:ok, [_ | _] = nodes} ->
        if Enum.all?(nodes, &is_atom/1),
          do: nodes,
          else: Options.invalid!(name, :nodes, nodes, "a non-empty list of node names")

      {:ok, other} ->
        Options.invalid!(name, :nodes, other, "a non-empty list of node names")
    end
  end

  @doc """
  One holder per node of `nodes`, each started by the call
  `start.(chunk, first)` makes for its chunk (in `chunks`, in node order;
  `first`: the position of the chunk's first element in all of them) and
  answering its pid:
  `{:ok, [{node, holder, size}]}`, or `{:error, {reason, node}}` after
  stopping the holders that did start.
  """
  @spec hold(
          [node()],
          [list()],
          pos_integer(),
          (list(), non_neg_integer() -> {module(), atom(), list()})
        ) :: {:ok, [{node(), pid(), non_neg_integer()}]} | {:error, {term(), node()}}
  def hold(nodes, chunks, timeout, start) do
    {calls, _count} =
      Enum.map_reduce(Enum.zip(nodes, chunks), 0, fn {node, chunk}, first ->
        size = length(chunk)
        {{node, start.(chunk, first), size}, first + size}
      end)

    case gather(calls, timeout) do
      {answers, []} ->
        {:ok, for({{node, _, size}, pid} <- Enum.zip(calls, answers), do: {node, pid, size})}

      {answers, [{node, reason} | _]} ->
        # the holders that did start go with their index
        for {{node, _, _}, pid} <- Enum.zip(calls, answers), is_pid(pid) do
          :erpc.cast(node, GenServer, :stop, [pid])
        end

        {:error, {reason, node}}
    end
  end

  @doc """
  Every call of `calls` (`{node, {m, f, a}, size}`) in parallel, each
  bounded by `settings.timeout`; `merge` makes the result of the answers
  (`[{answer | :failed, size}]`, in call order). A shard without an answer
  makes it `{:error, {reason, node}}`, or with `settings.partial`
  `{:partial, merged, [{node, reason}]}`.
  """
  @spec ask([{node(), {module(), atom(), list()}, non_neg_integer()}], settings(), function()) ::
          term()
  def ask(calls, settings, merge),
    do: finish(calls, gather(calls, settings.timeout), settings, merge)

  @doc "`count` elements in length(nodes) contiguous slices of near-equal size."
  @spec split(list(), non_neg_integer(), [node()]) :: [list()]
  def split(list, count, nodes) do
    n = length(nodes)
    sizes = for i <- 0..(n - 1), do: div(count + n - 1 - i, n)

    {chunks, []} = Enum.map_reduce(sizes, list, fn size, rest -> Enum.split(rest, size) end)

    chunks
  end

  defp finish(calls, {answers, failed}, settings, merge) do
    sized = Enum.zip(answers, for({_, _, size} <- calls, do: size))

    case failed do
      [] -> merge.(sized)
      _ when settings.partial -> {:partial, merge.(sized), failed}
      [{node, reason} | _] -> {:error, {reason, node}}
    end
  end

  # Every call in parallel, each bounded by `timeout`: the answers in call
  # order (:failed for a shard that gave none) and the failures. An
  # exception raised by a shard is raised here.
  defp gather(calls, timeout) do
    tasks =
      for {node, {m, f, a}, _size} <- calls do
        Task.async(fn -> call(node, m, f, a, timeout) end)
      end

    results =
      tasks
      |> Task.yield_many(timeout + 1_000)
      |> Enum.map(fn {task, result} -> result || Task.shutdown(task, :brutal_kill) end)

    outcomes =
      for {{node, _, _}, result} <- Enum.zip(calls, results) do
        case result do
          # native memory ran out there (a search or the shard of an index)
          {:ok, {:ok, {:error, :enomem}}} -> {:failed, {node, :enomem}}
          {:ok, {:ok, answer}} -> {:ok, answer}
          {:ok, {:raise, kind, reason, stack}} -> :erlang.raise(kind, reason, stack)
          {:ok, {:failed, reason}} -> {:failed, {node, reason}}
          _ -> {:failed, {node, :timeout}}
        end
      end

    answers = for o <- outcomes, do: if(match?({:ok, _}, o), do: elem(o, 1), else: :failed)
    {answers, for({:failed, f} <- outcomes, do: f)}
  end

  # the remote process is killed at the bound (Shard.bounded/5), a tenth
  # before this side stops waiting (on a timeout :erpc only stops waiting),
  # so that what it started (a shard holder) hears of it and stops too; and
  # as soon as this process (linked to the caller) is gone
  defp call(node, m, f, a, timeout) do
    remote = max(timeout - div(timeout, 10), 1)
    {:ok, :erpc.call(node, Shard, :bounded, [remote, self(), m, f, a], timeout)}
  catch
    :error, {:erpc, :timeout} -> {:failed, :timeout}
    :error, {:erpc, _} -> {:failed, :nodedown}
    :error, {:exception, :undef, [{Shard, :bounded, _, _} | _]} -> {:failed, :no_library}
    :error, {:exception, reason, stack} -> {:raise, :error, reason, stack}
    :exit, {:exception, {:noproc, {GenServer, :call, _}}} -> {:failed, :shard_lost}
    :exit, {:exception, reason} -> {:failed, {:exit, reason}}
    :exit, {:signal, reason} -> {:failed, exit_reason(reason)}
    :throw, value -> {:raise, :throw, value, []}
  end

  # stopped at the bound on its node (it can beat the local timeout there)
  defp exit_reason(reason) do
    if reason in [Shard.timed_out(), Shard.abandoned()], do: :timeout, else: {:exit, reason}
  end
end
