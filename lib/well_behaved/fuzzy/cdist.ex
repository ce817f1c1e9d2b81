defmodule WellBehaved.Fuzzy.Cdist do
  @moduledoc false
  # WellBehaved.Fuzzy.cdist/3: the candidates packed once, a row a job,
  # the rows spread over `workers:` processes into one native matrix.

  alias WellBehaved.{Job, Native, Options}
  alias WellBehaved.Fuzzy.{Call, FunScorer, Graphemes, Index, Processor, Search}
  alias WellBehaved.Fuzzy.Index.Segment
  alias WellBehaved.Search.{Errors, Pack}

  @cdist "WellBehaved.Fuzzy.cdist/3"

  @doc "Fuzzy.cdist/3 with its options checked."
  @spec run(term(), term(), Call.t()) :: [[number()]] | binary() | {:error, term()}
  def run(queries, candidates, call) do
    if not is_list(queries) or not Enum.all?(queries, &is_binary/1),
      do: Options.invalid!(@cdist, "queries", queries, "a list of binaries")

    if is_function(call.scorer),
      do: fun_rows(queries, candidates, call),
      else: native_rows(queries, candidates, call)
  end

  defp native_rows(queries, candidates, call) do
    {queries, candidates, call} = in_units(queries, candidates, call)

    case cdist_set!(candidates, call) do
      {:error, _} = error ->
        error

      {:segment, segment, fun} ->
        cdist_rows(queries, {segment.ref, segment}, segment.count, fun, false, call)

      {packed, count, fun, release} ->
        cdist_rows(queries, {packed, nil}, count, fun, release, call)
    end
  end

  defp cdist_rows(queries, {packed, segment}, count, fun, release, call) do
    queries = if fun, do: Enum.map(queries, fun), else: queries
    workers = call.workers || System.schedulers_online()
    rows = length(queries)
    width = width(call)

    case Native.fuzzy_matrix_new(rows, count, width) do
      {:error, _} = error ->
        error

      matrix ->
        row = fn {query, at} ->
          # an index's sorted tokens: the token sort rows as searches score them
          {query, ref, call} =
            if segment,
              do: Search.sorted_search(query, segment, call),
              else: {query, packed, call}

          native_row(query, ref, count, matrix, at, call)
        end

        # one worker: the rows in this process, one after the other
        queries
        |> Enum.with_index()
        |> then(fn indexed ->
          if workers == 1,
            do: Stream.map(indexed, &{:ok, row.(&1)}),
            else:
              Task.async_stream(indexed, row,
                max_concurrency: workers,
                ordered: false,
                timeout: :infinity
              )
        end)
        |> Enum.find_value(:ok, fn
          {:ok, :ok} -> nil
          {:ok, {:error, _} = error} -> error
        end)
        |> case do
          :ok ->
            # every row done: the packed list is read by no job now
            if release, do: Native.pack_release(packed)
            matrix(Native.fuzzy_matrix_binary(matrix), rows, count * width, call)

          # a row refused (the other rows' jobs may still be queued: the
          # packed list goes with the last of them, not here)
          {:error, _} = error ->
            Errors.failed(@cdist, error)
        end
    end
  end

  # a function scorer: the rows in Elixir, `workers:` at a time (its
  # raise raised here, in the caller)
  defp fun_rows(queries, candidates, call) do
    {scored, proc} = FunScorer.candidates(candidates, call)
    queries = if proc, do: Enum.map(queries, proc), else: queries

    row = fn query ->
      try do
        {:ok, Enum.map(scored, &FunScorer.score(@cdist, call.scorer, query, &1))}
      rescue
        e -> {:raise, e, __STACKTRACE__}
      end
    end

    rows =
      queries
      |> Task.async_stream(row,
        max_concurrency: call.workers || System.schedulers_online(),
        timeout: :infinity
      )
      |> Enum.map(fn
        {:ok, {:ok, row}} -> row
        {:ok, {:raise, e, stack}} -> reraise e, stack
      end)

    if call.as == :binary,
      do: for(row <- rows, s <- row, into: <<>>, do: <<s::float-32-native>>),
      else: rows
  end

  # the matrix as one binary, or as lists of rows
  defp matrix(binary, _rows, _row_bytes, %{as: :binary}), do: binary

  defp matrix(binary, rows, row_bytes, call) do
    for r <- 0..(rows - 1)//1, do: row_list(binary_part(binary, r * row_bytes, row_bytes), call)
  end

  # the candidates packed natively (a list, packed for this call; an
  # index's one segment, with the segment for its sorted tokens; the
  # shards' candidates, gathered here), the processor of the queries, and
  # whether to give the packed list back afterwards (never a segment's)
  defp cdist_set!(%Index{shards: [_ | _]} = index, call) do
    Call.no_processor!(@cdist, call)

    # as scored: the processor ran where each shard is
    case Index.ask_held(index, {Index, :scored_texts, []}) do
      {:error, _} = error -> error
      parts -> packed(Enum.concat(parts), index.processor)
    end
  end

  defp cdist_set!(%Index{} = index, call) do
    Call.no_processor!(@cdist, call)

    case index.segments do
      [one] when one.count == index.size ->
        {:segment, one, Processor.function(index.processor)}

      many ->
        packed(Segment.scored(many), index.processor)
    end
  end

  defp cdist_set!(list, call) when is_list(list) do
    binaries!(list)
    fun = Processor.function(call.processor)
    packed(if(fun, do: Enum.map(list, fun), else: list), call.processor)
  end

  defp cdist_set!(other, _call),
    do: Options.invalid!(@cdist, "candidates", other, "a list of binaries or an index")

  # a list packed for this call, to give back afterwards
  defp packed(list, processor) do
    count = length(list)

    case Pack.pack(list, count) do
      {:ok, ref, ^count} -> {ref, count, Processor.function(processor), true}
      {:error, _} = error -> Errors.failed(@cdist, error)
    end
  end

  defp native_row(query, packed, count, matrix, row, call) do
    case Job.checked(
           &Native.fuzzy_cdist_row/10,
           [query, packed, count, call.unit, Call.native(call), matrix, row],
           call.schedule,
           call.tiny_slices,
           :infinity,
           @cdist
         ) do
      # a candidate of another length than this row's query (:hamming
      # without padding): named with the row
      {:error, {:unequal_lengths, {:candidate, at}, m, n}} ->
        {:error, {:unequal_lengths, {:candidate, at, :query, row}, m, n, call.unit}}

      # the caller raises or returns it, once the rows stop
      {:error, _} = error ->
        error

      :ok ->
        :ok
    end
  end

  # graphemes: the queries and the candidates (processed) as codepoints,
  # one a cluster (Graphemes), the same table for all
  defp in_units(queries, %Index{} = index, call) do
    Graphemes.no_index!(@cdist, call)
    {queries, index, call}
  end

  defp in_units(queries, candidates, %{unit: :grapheme} = call) when is_list(candidates) do
    binaries!(candidates)
    fun = Processor.function(call.processor) || (&Function.identity/1)
    count = length(queries)

    case Graphemes.prepare(@cdist, Enum.map(queries ++ candidates, fun), call.scorer) do
      {:ok, texts} ->
        {queries, candidates} = Enum.split(texts, count)
        {queries, candidates, %{call | unit: :codepoint, processor: nil}}

      {:invalid_utf8, at} when at < count ->
        Errors.raise!(@cdist, {:invalid_utf8, :query})

      {:invalid_utf8, at} ->
        Errors.raise!(@cdist, {:invalid_utf8, at - count})
    end
  end

  defp in_units(queries, candidates, call), do: {queries, candidates, call}

  defp binaries!(list) do
    if not Enum.all?(list, &is_binary/1) do
      at = Enum.find_index(list, &(not is_binary(&1)))
      Errors.raise!(@cdist, {:not_a_binary, at})
    end
  end

  # the cells of a row: 32 bits in a binary, 64 (exact) for lists
  defp width(%{as: :binary}), do: 4
  defp width(_call), do: 8

  defp row_list(row, call) do
    if Call.integers?(call),
      do: for(<<d::64-native <- row>>, do: d),
      else: for(<<s::float-64-native <- row>>, do: s)
  end
end
