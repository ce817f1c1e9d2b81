defmodule WellBehaved.Levenshtein.Search do
  @moduledoc false
  # Levenshtein's searches (distances/3 and nearest/3): on this node, the
  # native search of c_src/nif/search_job.c over a set packed by
  # WellBehaved.Search.Pack; over shards, the same search on every node
  # (WellBehaved.Search.Distributed), the answers merged. The arguments
  # and options come checked (Call), and what the native side refuses
  # comes back as {:error, reason} for WellBehaved.Search.Errors to
  # translate.

  alias WellBehaved.{Fuzzy, Job, Native}
  alias WellBehaved.Fuzzy.{Index, Processor}
  alias WellBehaved.Fuzzy.Index.Segment
  alias WellBehaved.Levenshtein.Call
  alias WellBehaved.Search.{Distributed, Errors, Pack, Shard}

  @typedoc "What a search runs on: a list of binaries, or an index's native resource."
  @type candidates :: {:list, [binary()]} | {:index, reference()}

  @doc """
  The distances (`limit` 0, in order) or the `limit` nearest
  `{candidate, distance}` from `query` to `count` candidates (for a list,
  nil: the packing counts them).
  """
  @spec run(
          binary(),
          candidates(),
          non_neg_integer() | nil,
          Call.t(),
          non_neg_integer(),
          String.t()
        ) ::
          [non_neg_integer()] | [{binary(), non_neg_integer()}] | {:error, term()}
  def run(query, candidates, count, %Call{} = call, limit, name) do
    max = Call.cutoff(call.max_distance, :search)

    with {:ok, set, count} <- native_set(candidates, count) do
      args = [query, set, count, call.unit, max, limit]

      try do
        case Job.checked(&Native.search/9, args, call.schedule, call.tiny_slices, :infinity, name) do
          # every other argument was checked: the index is not this node's
          {:error, :badarg} when elem(candidates, 0) == :index ->
            {:error, :not_an_index_here}

          {:error, _} = error ->
            error

          {:hits, hits, _count} ->
            hits_list(hits, [])

          distances when is_binary(distances) and call.as == :binary ->
            distances

          distances when is_binary(distances) ->
            distances_list(distances, div(byte_size(distances), 4), [])

          # a short answer of distances comes as the list itself
          distances when limit == 0 and call.as == :binary ->
            for d <- distances, into: <<>>, do: <<d::32-native>>

          hits ->
            hits
        end
      after
        # a list packed for this search: its memory now, for the next list
        # (not when the VM collects the resource)
        if elem(candidates, 0) == :list, do: Native.pack_release(set)
      end
    end
  end

  defp native_set({:index, ref}, count), do: {:ok, ref, count}
  defp native_set({:list, list}, count), do: Pack.pack(list, count)

  # A long result of nearest, made a slice at a time, from its end.
  defp hits_list(hits, list) do
    case Native.hits_more(hits, list) do
      {:done, list} -> list
      {:more, list} -> hits_list(hits, list)
      {:error, :enomem} = error -> error
    end
  end

  # A long result of distances, made a slice at a time, from its end.
  defp distances_list(distances, count, list) do
    case Native.distances_more(distances, count, list) do
      {:done, list} -> list
      {:more, left, list} -> distances_list(distances, left, list)
    end
  end

  # ---- on an index ------------------------------------------------------------

  @doc """
  The distances (`limit` 0, in the index's order) or the `limit` nearest
  on a `WellBehaved.Fuzzy.Index` of this node, its processor applied to
  the query. Its segments are searched by the native Levenshtein search,
  their answers merged in order (a segment's distances without its
  deleted entries'); but the nearest on an index with deleted entries,
  or with texts a processor changed, are `WellBehaved.Fuzzy`'s extract
  with `scorer: :levenshtein` (the same answers), which knows the
  positions of its hits.
  """
  @spec on_index(binary(), Index.t(), Call.t(), non_neg_integer(), String.t()) ::
          [non_neg_integer()] | [{binary(), non_neg_integer()}] | binary() | {:error, term()}
  def on_index(query, %Index{} = index, %Call{} = call, limit, name) do
    if limit > 0 and not Enum.all?(index.segments, &as_given?/1),
      do: extract(query, index, call, limit, name),
      else: segments(query, index, call, limit, name)
  end

  # its texts as given, none deleted: the native search's hits are its entries
  defp as_given?(segment), do: segment.texts == nil and MapSet.size(segment.dead) == 0

  defp extract(query, index, call, limit, name) do
    opts = [
      scorer: :levenshtein,
      score: :distance,
      unit: call.unit,
      limit: limit,
      schedule: call.schedule,
      tiny_slices: call.tiny_slices
    ]

    opts = if call.max_distance, do: [score_cutoff: call.max_distance] ++ opts, else: opts

    case Fuzzy.extract_for(name, query, index, opts) do
      {:error, _} = error -> error
      hits -> for {text, distance, _key} <- hits, do: {text, distance}
    end
  end

  defp segments(query, index, call, limit, name) do
    fun = Processor.function(index.processor)
    query = if fun, do: fun.(query), else: query

    index.segments
    |> Enum.reduce_while({[], 0}, fn segment, {answers, before} ->
      case run(query, {:index, segment.ref}, segment.count, call, limit, name) do
        {:error, reason} -> {:halt, {:error, at(reason, before)}}
        answer -> {:cont, {[live(answer, segment) | answers], before + segment.count}}
      end
    end)
    |> case do
      {:error, _} = error -> error
      {[], _} when limit == 0 and call.as == :binary -> <<>>
      {[], _} -> []
      {[one], _} -> one
      {answers, _} -> merged(limit, call.as, Enum.reverse(answers))
    end
  end

  # a segment's distances without its deleted entries'
  defp live({:error, _} = error, _segment), do: error

  defp live(distances, segment) do
    if MapSet.size(segment.dead) == 0, do: distances, else: alive(distances, segment)
  end

  defp alive(binary, segment) when is_binary(binary),
    do: binary |> cells([]) |> alive(segment) |> IO.iodata_to_binary()

  defp alive(distances, segment),
    do: for({d, at} <- Enum.with_index(distances), Segment.live?(segment, at), do: d)

  defp cells(<<d::binary-4, rest::binary>>, acc), do: cells(rest, [d | acc])
  defp cells(<<>>, acc), do: Enum.reverse(acc)

  # a candidate named by its position in a segment: its position in the index
  defp at({:invalid_utf8, at}, before) when is_integer(at), do: {:invalid_utf8, at + before}

  defp at({:does_not_fit, :u32, {:candidate, at}}, before),
    do: {:does_not_fit, :u32, {:candidate, at + before}}

  defp at(reason, _before), do: reason

  # the answers of several segments (or shards) as one
  defp merged(0, :binary, answers), do: IO.iodata_to_binary(answers)
  defp merged(0, _as, answers), do: Enum.concat(answers)

  defp merged(limit, _as, answers),
    do: answers |> Enum.concat() |> Enum.sort_by(&elem(&1, 1)) |> Enum.take(limit)

  # ---- over shards ------------------------------------------------------------

  @doc """
  The distances (`limit` 0) or the `limit` nearest over shards: an
  index's (`{:shards, shards}`), or a list split over `settings.nodes`
  (`{:list, list}`), merged as one search here would answer.
  """
  def distributed(name, query, target, count, call, limit, settings) do
    local = %{call | remote: []}

    calls =
      case target do
        {:shards, shards} ->
          for {node, pid, size} <- shards,
              do:
                {node,
                 {Shard, :with_value, [pid, __MODULE__, :held, [query, local, limit, name]]},
                 size}

        {:list, list} ->
          for {node, chunk} <-
                Enum.zip(settings.nodes, Distributed.split(list, count, settings.nodes)),
              do: {node, {__MODULE__, :slice, [chunk, query, local, limit, name]}, length(chunk)}
      end

    Distributed.ask(calls, settings, &merge(limit, call.as, &1))
  end

  @doc false
  # a shard's search, on its node, on the index its holder holds
  def held(%Index{} = index, query, call, limit, name),
    do: answer(name, on_index(query, index, call, limit, name))

  @doc false
  # the same search on `list`, a slice of a list split over nodes for one call
  def slice(list, query, call, limit, name),
    do: answer(name, run(query, {:list, list}, length(list), call, limit, name))

  defp answer(name, {:error, _} = error), do: Errors.failed(name, error)
  defp answer(_name, result), do: result

  # distances: nil for each candidate of a shard that failed (as: :binary,
  # the binaries one after another, 0xFFFFFFFF for such a candidate)
  defp merge(0, :binary, answers) do
    for {answer, size} <- answers, into: <<>> do
      if answer == :failed, do: :binary.copy(<<0xFFFF_FFFF::32-native>>, size), else: answer
    end
  end

  defp merge(0, _as, answers) do
    Enum.flat_map(answers, fn
      {:failed, size} -> List.duplicate(nil, size)
      {answer, _size} -> answer
    end)
  end

  defp merge(limit, _as, answers) do
    for({answer, _size} <- answers, answer != :failed, do: answer)
    |> Enum.concat()
    |> Enum.sort_by(&elem(&1, 1))
    |> Enum.take(limit)
  end
end
