defmodule WellBehaved.Fuzzy.Search do
  @moduledoc false
  # The searches of WellBehaved.Fuzzy: one query against a list (packed
  # for the call), an index's segments (merged), or an index split over
  # nodes (each shard searched where it is); options already checked.

  alias WellBehaved.{Job, Native, Options}
  alias WellBehaved.Fuzzy.{Alignment, Call, Choices, FunScorer, Graphemes, Index, Processor}
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
      if(call.scorer == :hamming, do: [pad: call.pad], else: []) ++
      if call.scorer == :jaro_winkler, do: [prefix_weight: call.prefix_weight], else: []
  end

  @doc """
  A shard's search, on its node (the index first, for
  `WellBehaved.Search.Shard.with_value/4`); no span: the caller's node
  has the call's.
  """
  @spec extract_held(Index.t(), binary(), keyword()) :: term()
  def extract_held(index, query, opts) do
    name = "WellBehaved.Fuzzy.extract/3"
    run(name, query, index, Call.options!(name, opts, [:limit, :alignment | Call.pair()]))
  end

  # a function scorer: the index's entries scored in this process
  def run(name, query, %Index{} = index, %{scorer: fun} = call) when is_function(fun) do
    if not is_binary(query), do: Options.invalid!(name, "query", query, "a binary")
    search_in(name, query, prepare(name, index, call), call)
  end

  # an index split over nodes: each shard searched where it is, in
  # parallel, the hits merged by score (stable: shards in input order)
  def run(name, query, %Index{shards: [_ | _] = shards} = index, call) do
    if not is_binary(query), do: Options.invalid!(name, "query", query, "a binary")
    Call.no_processor!(name, call)
    Graphemes.no_index!(name, call)
    remote = Keyword.merge([timeout: index.timeout], Enum.reverse(call.remote))
    settings = Distributed.options(name, remote)
    opts = shard_options(call)

    calls =
      for {node, pid, size} <- shards,
          do: {node, {Shard, :with_value, [pid, __MODULE__, :extract_held, [query, opts]]}, size}

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

    Call.no_processor!(name, call)
    Graphemes.no_index!(name, call)
    fun = Processor.function(index.processor)
    query = if fun, do: fun.(query), else: query

    if call.limit == 0 do
      []
    else
      index.segments
      |> Enum.with_index()
      |> Enum.reduce_while({[], 0}, fn {segment, at}, {acc, before} ->
        case segment_search(name, query, segment, at, call, before) do
          {:error, _} = error -> {:halt, error}
          hits -> {:cont, {[hits | acc], before + segment.count}}
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
    set = prepare(name, choices, call)

    try do
      search_in(name, query, set, call)
    after
      release(set)
    end
  end

  @typedoc """
  Candidates made ready for many searches: a list's or a map's packed
  natively once, an index as it is, or entries a function scorer reads.
  """
  @type set ::
          {:packed, reference(), non_neg_integer(), tuple(), tuple() | nil}
          | {:index, Index.t()}
          | {:entries, [{binary(), binary(), term()}], (binary() -> binary()) | nil}
          | {:graphemes, tuple(), [binary()], tuple() | nil}
          | :none
          | {:error, term()}

  @doc """
  The candidates of a search made ready once (`release/1` gives back
  their native memory): checked (a `nil` among them skipped), processed,
  packed. Raises as the searches do.
  """
  @spec prepare(String.t(), term(), Call.t()) :: set()
  def prepare(_name, _choices, %{limit: 0}), do: :none

  def prepare(name, %Index{} = index, %{scorer: fun} = call) when is_function(fun) do
    Call.no_processor!(name, call)
    proc = Processor.function(index.processor)
    scored = if proc, do: proc, else: &Function.identity/1
    {:entries, Enum.map(index, fn {key, text} -> {text, scored.(text), key} end), proc}
  end

  def prepare(_name, %Index{} = index, _call), do: {:index, index}

  def prepare(name, choices, call) do
    {texts, scored, keys} = listed(name, choices, call)

    cond do
      is_function(call.scorer) ->
        keys = if keys, do: Tuple.to_list(keys), else: Enum.to_list(0..(length(texts) - 1)//1)
        {:entries, Enum.zip([texts, scored, keys]), Processor.function(call.processor)}

      # graphemes are numbered for each query with its candidates
      call.unit == :grapheme ->
        {:graphemes, List.to_tuple(texts), scored, keys}

      true ->
        count = length(texts)

        case Pack.pack(scored, count) do
          {:ok, packed, ^count} -> {:packed, packed, count, List.to_tuple(texts), keys}
          {:error, _} = error -> Errors.failed(name, error)
        end
    end
  end

  @doc """
  A list's or a map's texts (a `nil` skipped), as processed, and their
  keys (a tuple; nil: positions).
  """
  @spec listed(String.t(), term(), Call.t()) :: {[binary()], [binary()], tuple() | nil}
  def listed(name, choices, call) do
    {texts, keys} = choices!(name, choices)
    fun = Processor.function(call.processor)
    {texts, if(fun, do: Enum.map(texts, fun), else: texts), keys}
  end

  @doc """
  The candidates of many searches made ready once: as `prepare/3`, but a
  list's or a map's made into an index of one segment (packed with the
  search core's batches, and the tokens sorted for the token sort
  scorers), which each query then searches without laying them out
  again; the call's processor becomes the index's.
  """
  @spec prepare_many(String.t(), term(), Call.t()) :: {set(), Call.t()}
  def prepare_many(name, choices, call) do
    if is_function(call.scorer) or call.limit == 0 or call.unit == :grapheme or
         match?(%Index{}, choices),
       do: {prepare(name, choices, call), call},
       else: {many_index(name, listed(name, choices, call), call), %{call | processor: nil}}
  end

  defp many_index(name, {texts, scored, keys}, call) do
    tokens = call.scorer in [:token_sort_ratio, :partial_token_sort_ratio]
    build = %{Segment.build(tokens) | schedule: call.schedule, tiny_slices: call.tiny_slices}
    keys = if keys, do: Tuple.to_list(keys), else: {:positions, 0}
    count = length(texts)

    case Segment.new(texts, scored, keys, %{build | name: name}) do
      {:ok, segment} ->
        {:index,
         %Index{
           segments: List.wrap(segment),
           size: count,
           next: count,
           processor: call.processor,
           sorted_tokens: tokens
         }}

      {:error, _} = error ->
        error
    end
  end

  @doc "Gives back the native memory of a prepared set (once no search reads it)."
  @spec release(set()) :: :ok
  def release({:packed, packed, _count, _texts, _keys}) do
    Native.pack_release(packed)
    :ok
  end

  def release(_set), do: :ok

  @doc "The hits of one query in a prepared set (the query checked to be a binary)."
  @spec search_in(String.t(), binary(), set(), Call.t()) :: [tuple()] | tuple()
  def search_in(_name, _query, :none, _call), do: []
  def search_in(_name, _query, {:error, _} = error, _call), do: error
  def search_in(name, query, {:index, index}, call), do: run(name, query, index, call)

  def search_in(name, query, {:entries, entries, fun}, call) do
    query = if fun, do: fun.(query), else: query
    FunScorer.extract(name, query, entries, call)
  end

  def search_in(name, query, {:graphemes, texts, scored, keys}, call) do
    fun = Processor.function(call.processor)
    query = if fun, do: fun.(query), else: query
    {query, scored, call} = in_units(name, query, scored, call)
    count = length(scored)

    case Pack.pack(scored, count) do
      {:ok, packed, ^count} ->
        try do
          search_in(name, query, {:packed, packed, count, texts, keys}, %{call | processor: nil})
        after
          Native.pack_release(packed)
        end

      {:error, _} = error ->
        Errors.failed(name, error)
    end
  end

  def search_in(name, query, {:packed, packed, count, texts, keys}, call) do
    fun = Processor.function(call.processor)
    query = if fun, do: fun.(query), else: query

    case native_search(name, query, packed, count, call, & &1) do
      {:error, {:unequal_lengths, {:candidate, at}, m, n}} ->
        which = if keys == nil, do: {:candidate, at}, else: {:key, elem(keys, at)}
        Errors.raise!(name, {:unequal_lengths, which, m, n, call.unit})

      {:error, _} = error ->
        error

      hits ->
        hits(hits, texts, keys, call)
    end
  end

  # graphemes: the query and the candidates as codepoints, one a cluster
  # (Graphemes), the same table for all
  defp in_units(name, query, scored, %{unit: :grapheme} = call) do
    case Graphemes.prepare(name, [query | scored], call.scorer) do
      {:ok, [query | scored]} -> {query, scored, %{call | unit: :codepoint}}
      {:invalid_utf8, 0} -> Errors.raise!(name, {:invalid_utf8, :query})
      {:invalid_utf8, at} -> Errors.raise!(name, {:invalid_utf8, at - 1})
    end
  end

  defp in_units(_name, query, scored, call), do: {query, scored, call}

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

  # a segment's hits, each with what ranks it against other segments'
  defp segment_search(name, query, segment, at, call, before) do
    {query, ref, call} = sorted_search(query, segment, call)
    # as many more as the segment holds deleted entries
    wider = %{call | limit: Segment.search_limit(segment, call.limit)}

    case native_search(name, query, ref, segment.count, wider, &(&1 + before)) do
      # :hamming without padding: a live entry of another length is an
      # error; a deleted one is none of the call's business, so the live
      # entries alone are searched again
      {:error, {:unequal_lengths, {:candidate, position}, m, n}} ->
        if Segment.live?(segment, position) do
          {_texts, [key]} = Segment.texts_and_keys(segment, [position])
          Errors.raise!(name, {:unequal_lengths, {:key, key}, m, n, call.unit})
        else
          live_search(name, query, segment, at, call, before)
        end

      {:error, _} = error ->
        error

      hits ->
        segment_hits(hits, segment, at, call)
    end
  end

  # the live entries of a segment packed for this call and searched (their
  # order is the segment's: the same ties; errors name the index's
  # positions)
  defp live_search(name, query, segment, at, call, before) do
    {keys, texts, scored} = Segment.entries(segment)
    keys = List.to_tuple(keys)
    live = for p <- 0..(segment.count - 1)//1, Segment.live?(segment, p), do: p + before
    live = List.to_tuple(live)

    packed_search(name, query, texts, scored, {keys, &elem(live, &1)}, call, fn binary ->
      texts = List.to_tuple(texts)

      for {index, score, where} <- decode(binary, call) do
        {hit({elem(texts, index), score, elem(keys, index)}, where), {score, at, index}}
      end
    end)
  end

  # `scored` packed for this call and searched, the hits made by `made`;
  # `keys` (a tuple; nil: positions) name a candidate of another length,
  # `index_of` a candidate's position in the errors that name one
  defp packed_search(name, query, texts, scored, {keys, index_of}, call, made) do
    count = length(texts)

    case Pack.pack(scored, count) do
      {:ok, packed, ^count} ->
        try do
          case native_search(name, query, packed, count, call, index_of) do
            {:error, {:unequal_lengths, {:candidate, at}, m, n}} ->
              which = if keys == nil, do: {:candidate, at}, else: {:key, elem(keys, at)}
              Errors.raise!(name, {:unequal_lengths, which, m, n, call.unit})

            {:error, _} = error ->
              error

            hits ->
              made.(hits)
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
  # `index_of`: a packed candidate's position in the errors that name one
  # (an index's: its segments before this one counted)
  defp native_search(name, query, packed, count, call, index_of) do
    case Job.checked(
           &Native.fuzzy_search/9,
           [query, packed, count, call.unit, Call.native(call), call.limit],
           call.schedule,
           call.tiny_slices,
           :infinity,
           name
         ) do
      {:error, {:invalid_utf8, at}} when is_integer(at) ->
        Errors.failed(name, {:error, {:invalid_utf8, index_of.(at)}})

      {:error, {:does_not_fit, :u32, {:candidate, at}}} ->
        Errors.failed(name, {:error, {:does_not_fit, :u32, {:candidate, index_of.(at)}}})

      # named by the caller, which knows the candidates' keys
      {:error, {:unequal_lengths, _which, _m, _n}} = error ->
        error

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

  # the candidates' texts, and their keys as a tuple (nil: positions); a
  # nil among them is skipped (its position or key is in no hit); a map's
  # entries in the order of their keys (Erlang's term order), so equal
  # scores rank the same whatever the map's size
  defp choices!(name, choices) when is_map(choices) do
    {texts, keys} = Choices.of_map(name, choices)
    {texts, List.to_tuple(keys)}
  end

  defp choices!(name, choices) when is_list(choices) do
    if Enum.all?(choices, &is_binary/1) do
      {choices, nil}
    else
      {texts, keys} = Choices.of_list(name, choices, & &1)
      {texts, List.to_tuple(keys)}
    end
  end

  defp choices!(name, other),
    do: Options.invalid!(name, "choices", other, "a list of binaries or {key, binary}, or a map")

  # a hit's score: an integer kind's exact 64 bits, or a float's
  defp number(call, <<score::64-native>>) do
    if Call.integers?(call), do: score, else: float(<<score::64-native>>)
  end

  defp float(<<score::float-64-native>>), do: score
end
