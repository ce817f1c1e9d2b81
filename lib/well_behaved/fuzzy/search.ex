defmodule WellBehaved.Fuzzy.Search do
  @moduledoc false
  # The searches of WellBehaved.Fuzzy: one query against a list (packed
  # for the call), an index's segments (merged), or an index split over
  # nodes (each shard searched where it is); options already checked.

  alias WellBehaved.{Job, Native, Options}
  alias WellBehaved.Fuzzy.{Alignment, Call, Index, Processor}
  alias WellBehaved.Fuzzy.Index.{Segment, Tokens}
  alias WellBehaved.Search.{Distributed, Errors, Pack, Shard}

  # the options of a search as a shard runs it
  defp shard_options(call) do
    {i, d, s} = call.weights

    [
      scorer: call.scorer,
      score: call.score,
      score_cutoff: call.score_cutoff,
      unit: call.unit,
      limit: call.limit,
      schedule: call.schedule,
      tiny_slices: call.tiny_slices,
      alignment: call.alignment
    ] ++
      if(call.scorer == :levenshtein, do: [weights: {i, d, s}], else: []) ++
      if call.scorer == :jaro_winkler, do: [prefix_weight: call.prefix_weight], else: []
  end

  # an index's candidates were processed as they came in: a call's own
  # processor would be a second one
  def no_processor!(_name, %{processor: nil}), do: :ok

  def no_processor!(name, call) do
    Options.invalid!(name, :processor, call.processor, "none with an index: its candidates \
    were processed when they came in, by the processor given to Index.new/2")
  end

  # an index split over nodes: each shard searched where it is, in
  # parallel, the hits merged by score (stable: shards in input order)
  def run(name, query, %Index{shards: [_ | _] = shards} = index, call) do
    if not is_binary(query), do: Options.invalid!(name, "query", query, "a binary")
    no_processor!(name, call)
    remote = Keyword.merge([timeout: index.timeout], Enum.reverse(call.remote))
    settings = Distributed.options(name, remote)
    opts = shard_options(call)

    calls =
      for {node, pid, size} <- shards,
          do:
            {node, {Shard, :with_value, [pid, WellBehaved.Fuzzy, :extract_held, [query, opts]]},
             size}

    order = if Call.distance?(call), do: :asc, else: :desc

    Distributed.ask(calls, settings, fn answers ->
      for({hits, _size} <- answers, hits != :failed, do: hits)
      |> Enum.concat()
      |> Enum.sort_by(&elem(&1, 1), order)
      |> then(fn all -> if call.limit == :all, do: all, else: Enum.take(all, call.limit) end)
    end)
  end

  def run(name, _query, %Index{}, %{remote: [{key, value} | _]}),
    do: Options.invalid!(name, key, value, "no #{key}: only for an index split over nodes")

  def run(name, query, %Index{} = index, call) do
    if not is_binary(query), do: Options.invalid!(name, "query", query, "a binary")

    no_processor!(name, call)
    fun = Processor.function(index.processor)
    query = if fun, do: fun.(query), else: query

    if call.limit == 0 do
      []
    else
      index.segments
      |> Enum.with_index()
      |> Enum.reduce_while({[], 0}, fn {segment, at}, {acc, before} ->
        {query, ref, call} = sorted_search(query, segment, call)
        # as many more as the segment holds deleted entries
        wider = %{call | limit: Segment.search_limit(segment, call.limit)}

        case native_search(name, query, ref, segment.count, wider, before) do
          {:error, _} = error -> {:halt, error}
          hits -> {:cont, {[segment_hits(hits, segment, at, call) | acc], before + segment.count}}
        end
      end)
      |> then(fn
        {:error, _} = error -> error
        {lists, _count} -> lists
      end)
      |> case do
        {:error, _} = error -> error
        [one] -> one |> limited(call) |> Enum.map(&elem(&1, 0))
        many -> merge_hits(many, call)
      end
    end
  end

  def run(name, _query, _choices, %{remote: [{key, value} | _]}),
    do: Options.invalid!(name, key, value, "no #{key}: only for an index split over nodes")

  def run(name, query, choices, call) do
    if not is_binary(query), do: Options.invalid!(name, "query", query, "a binary")
    {texts, keys} = choices!(name, choices)
    fun = Processor.function(call.processor)
    query = if fun, do: fun.(query), else: query
    scored = if fun, do: Enum.map(texts, fun), else: texts

    case call.limit do
      0 -> []
      _ -> search_list(name, query, texts, scored, keys, call)
    end
  end

  # The token sort scores of an index's segment: the ratio (partial ratio)
  # of the query's tokens sorted against the candidates' tokens sorted,
  # kept by the segment (exactly the token sort score: the core's tokens
  # are split at ASCII whitespace in bytes, and in codepoints of ASCII
  # text, both sides); the batches then score every candidate
  def sorted_search(query, segment, call) do
    sorted = %{token_sort_ratio: :ratio, partial_token_sort_ratio: :partial_ratio}[call.scorer]
    same_tokens = call.unit == :byte or (segment.ascii and Tokens.ascii?(query))

    # sorted false: the index keeps no sorted tokens (sorted_tokens: false)
    if sorted != nil and segment.sorted != false and same_tokens,
      do: {Tokens.sorted(query), segment.sorted || segment.ref, %{call | scorer: sorted}},
      else: {query, segment.ref, call}
  end

  defp search_list(name, query, texts, scored, keys, call) do
    count = length(texts)

    case Pack.pack(scored, count) do
      {:ok, packed, ^count} ->
        try do
          case native_search(name, query, packed, count, call) do
            {:error, _} = error -> error
            hits -> hits(hits, List.to_tuple(texts), keys, call)
          end
        after
          Native.pack_release(packed)
        end

      {:error, _} = error ->
        Errors.failed(name, error)
    end
  end

  # the best `call.limit` of `count` packed candidates: a binary of
  # <<index::64, score::float-64>> (native endian; an integer kind's
  # <<index::64, score::64>>), best first
  # `before`: candidates of the segments before this one (positions in
  # errors are the index's)
  defp native_search(name, query, packed, count, call, before \\ 0) do
    case Job.checked(
           &Native.fuzzy_search/9,
           [query, packed, count, call.unit, Call.native(call), call.limit],
           call.schedule,
           call.tiny_slices,
           :infinity,
           name
         ) do
      {:error, {:invalid_utf8, at}} when is_integer(at) ->
        Errors.failed(name, {:error, {:invalid_utf8, at + before}})

      {:error, {:does_not_fit, :u32, {:candidate, at}}} ->
        Errors.failed(name, {:error, {:does_not_fit, :u32, {:candidate, at + before}}})

      {:error, _} = error ->
        Errors.failed(name, error)

      hits ->
        hits
    end
  end

  defp hits(binary, texts, keys, call) do
    for {index, score, at} <- decode(binary, call) do
      key = if keys == nil, do: index, else: elem(keys, index)
      hit({elem(texts, index), score, key}, at)
    end
  end

  # the native hits: {index, score, alignment or nil}
  defp decode(binary, %{alignment: false} = call),
    do:
      for(<<index::64-native, score::binary-8 <- binary>>, do: {index, number(call, score), nil})

  defp decode(binary, call) do
    for <<index::64-native, score::binary-8, ss::64-native, se::64-native, ds::64-native,
          de::64-native <- binary>>,
        do: {index, number(call, score), Alignment.new({ss, se, ds, de})}
  end

  defp hit(hit, nil), do: hit
  defp hit(hit, at), do: Tuple.append(hit, at)

  defp limited(hits, %{limit: :all}), do: hits
  defp limited(hits, %{limit: limit}), do: Enum.take(hits, limit)

  # a segment's hits (its live entries'), each with what ranks it against
  # other segments'
  defp segment_hits(binary, segment, at, call) do
    found =
      for {index, _score, _at} = hit <- decode(binary, call),
          Segment.live?(segment, index),
          do: hit

    {texts, keys} = Segment.texts_and_keys(segment, Enum.map(found, &elem(&1, 0)))

    for {{{index, score, where}, text}, key} <- Enum.zip(Enum.zip(found, texts), keys) do
      {hit({text, score, key}, where), {score, at, index}}
    end
  end

  # the hits of every segment: best score first, then the order the
  # candidates came in (segment, then position)
  defp merge_hits(lists, call) do
    sorter =
      if Call.distance?(call),
        do: fn {_, {s1, a1, i1}}, {_, {s2, a2, i2}} -> {s1, a1, i1} <= {s2, a2, i2} end,
        else: fn {_, {s1, a1, i1}}, {_, {s2, a2, i2}} -> {-s1, a1, i1} <= {-s2, a2, i2} end

    lists
    |> Enum.concat()
    |> Enum.sort(sorter)
    |> then(fn all -> if call.limit == :all, do: all, else: Enum.take(all, call.limit) end)
    |> Enum.map(&elem(&1, 0))
  end

  # the candidates' texts, and their keys as a tuple (nil: positions)
  defp choices!(name, choices) when is_map(choices) do
    pairs = Map.to_list(choices)
    texts = for {_key, text} <- pairs, do: text!(name, text, pairs)
    {texts, pairs |> Enum.map(&elem(&1, 0)) |> List.to_tuple()}
  end

  defp choices!(name, choices) when is_list(choices) do
    if Enum.all?(choices, &is_binary/1) do
      {choices, nil}
    else
      {texts, keys} =
        choices
        |> Enum.with_index()
        |> Enum.map(fn
          {text, at} when is_binary(text) -> {text, at}
          {{key, text}, _at} when is_binary(text) -> {text, key}
          {_other, at} -> Errors.raise!(name, {:not_a_binary, at})
        end)
        |> Enum.unzip()

      {texts, List.to_tuple(keys)}
    end
  end

  defp choices!(name, other),
    do: Options.invalid!(name, "choices", other, "a list of binaries or {key, binary}, or a map")

  defp text!(_name, text, _pairs) when is_binary(text), do: text

  defp text!(name, text, _pairs),
    do: Options.invalid!(name, "choices", text, "binaries as the map's values")

  # a hit's score: an integer kind's exact 64 bits, or a float's
  defp number(call, <<score::64-native>>) do
    if Call.integers?(call), do: score, else: float(<<score::64-native>>)
  end

  defp float(<<score::float-64-native>>), do: score
end
