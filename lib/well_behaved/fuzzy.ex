defmodule WellBehaved.Fuzzy do
  @moduledoc """
  Fuzzy matching: scores of two strings, and the best matches of a query
  among many candidates, computed natively without blocking the VM's
  schedulers (`schedule:`, as for every job of `WellBehaved.Runtime`).

  ## Scorers

  `scorer:` picks how two strings are compared (default `:wratio`):

    * edit distances, the number of edits from one to the other:
      `:levenshtein` (insertions, deletions, substitutions; with
      `weights: {insertion, deletion, substitution}` their costs,
      integers in 0..2^64-1),
      `:indel` (insertions and deletions), `:osa` (and transpositions of
      two adjacent characters, no substring edited twice),
      `:damerau_levenshtein` (transpositions, unrestricted), `:hamming`
      (substitutions, position by position, the shorter padded);
    * `:jaro` and `:jaro_winkler` (`prefix_weight:`, default 0.1, the
      bonus of a common prefix of up to 4 characters), the usual choice
      for names of people;
    * the ratios, built on the Indel distance, from rapidfuzz's `fuzz`:
      `:ratio`, `:partial_ratio` (the best window of the longer string),
      `:token_sort_ratio` (words sorted), `:token_set_ratio` (words as
      sets), `:token_ratio`, `:partial_token_sort_ratio`,
      `:partial_token_set_ratio`, `:partial_token_ratio`, `:wratio` (a
      weighted choice among them by the strings' lengths) and `:qratio`.

  ## Scores

  `score:` picks the kind of score (default `:normalized_similarity`):

    * `:distance` and `:similarity`: an edit distance's own integers (the
      similarity is the largest distance the two lengths allow, less the
      distance), exact up to 2^64-1 (a score past it raises
      `ArgumentError`); for `:jaro` and `:jaro_winkler` a float in 0.0..1.0; for
      the ratios a float in 0.0..100.0, as rapidfuzz's `fuzz` functions
      give it;
    * `:normalized_distance` and `:normalized_similarity`: floats in
      0.0..1.0 for every scorer, 1.0 - each other.

  With `score_cutoff:` (in the terms of the kind), a similarity below the
  cutoff, or a distance above it, does not count: a search leaves that
  candidate out, and `score/3` reports the worst score of its kind
  instead (0, 0.0, 1.0 or 100.0; for an integer distance, the cutoff + 1).

  Where this differs from rapidfuzz: the default kind is a normalized
  similarity in 0.0..1.0 for every scorer (`score: :similarity` gives the
  ratios' 0..100); `:hamming` always pads the shorter string; two empty
  strings have a Jaro similarity of 1.0, like every other scorer's.

  ## Text

  `unit:` `:byte` (default) compares bytes, `:codepoint` Unicode
  codepoints (valid UTF-8 required; words are then split at Unicode white
  space as well). `processor:` prepares every string before it is scored:
  `:default` (`WellBehaved.Fuzzy.Processor.default/1`) or a function; a
  search returns the candidates as they were given.

      iex> WellBehaved.Fuzzy.score("kitten", "sitting", scorer: :levenshtein, score: :distance)
      3
      iex> WellBehaved.Fuzzy.score("this is a test", "this is a test!", scorer: :ratio, score: :similarity)
      96.55172413793103
      iex> WellBehaved.Fuzzy.score("MARTHA", "MARHTA", scorer: :jaro_winkler)
      0.9611111111111111
  """

  alias WellBehaved.{External, Job, Native, Options}
  alias WellBehaved.Fuzzy.{Call, Index, Processor}
  alias WellBehaved.Fuzzy.Index.{Segment, Tokens}
  alias WellBehaved.Search.{Distributed, Errors, Events, Pack, Shard}
  require WellBehaved.Telemetry, as: Telemetry

  @score "WellBehaved.Fuzzy.score/3"
  @extract "WellBehaved.Fuzzy.extract/3"
  @extract_one "WellBehaved.Fuzzy.extract_one/3"
  @cdist "WellBehaved.Fuzzy.cdist/3"
  @pair [
    :scorer,
    :score,
    :score_cutoff,
    :weights,
    :prefix_weight,
    :processor,
    :unit,
    :schedule,
    :tiny_slices
  ]

  @typedoc "A candidate's key: its position in a list, or the key it was given."
  @type key :: term()

  @typedoc "Candidates: binaries, `{key, binary}` pairs, or a map of keys to binaries."
  @type choices :: [binary() | {key(), binary()}] | %{optional(key()) => binary()}

  @typedoc "A match: the candidate as given, its score, its key."
  @type hit :: {binary(), number(), key()}

  @typedoc "What a search looks in: choices, or a `WellBehaved.Fuzzy.Index`."
  @type candidates :: choices() | Index.t()

  @doc """
  The score of `a` and `b`: the `score:` kind of the `scorer:` (see the
  module's documentation for both, and for `score_cutoff:`, `weights:`,
  `prefix_weight:`, `processor:`, `unit:`). `schedule:` and
  `tiny_slices:` as `WellBehaved.Job.call/4` takes them: a
  `t:WellBehaved.Runtime.mode/0` (default `:auto`), or `:external`, the
  same score job run by a server of the built-in `WellBehaved.External`
  pool (the library's job types built as a server, as `Job.call/4` runs
  a job of yours there): the same answers and errors, the options
  checked (and the processor run) here before any call.

  Raises `ArgumentError` on a non-binary, an unknown option or value, a
  cutoff outside its kind's range, on invalid UTF-8 with
  `unit: :codepoint`, and on an integer score past 2^64-1. With
  `schedule: :external`, raises `WellBehaved.External.Error` when the
  server gives no answer (it died mid-call, timed out, or the pool is
  down).

      iex> WellBehaved.Fuzzy.score("ab", "ba", scorer: :osa, score: :distance)
      1
      iex> WellBehaved.Fuzzy.score("fuzzy wuzzy was a bear", "wuzzy fuzzy was a bear", scorer: :token_sort_ratio)
      1.0
      iex> WellBehaved.Fuzzy.score("abcdef", "uvwxyz", scorer: :levenshtein, score: :distance, score_cutoff: 2)
      3
  """
  @spec score(binary(), binary(), keyword()) :: number()
  def score(a, b, opts \\ [])

  def score(a, b, opts) when is_binary(a) and is_binary(b) do
    call = Call.options!(@score, opts, @pair, [:external])
    {a, b} = processed(call, a, b)
    options = Call.native(call)

    result =
      case short_score(a, b, call, options) do
        :external ->
          External.score!(a, b, call.unit, options, call.tiny_slices)

        :long ->
          Job.checked(
            &Native.fuzzy_score/7,
            [a, b, call.unit, options],
            call.schedule,
            call.tiny_slices,
            :infinity,
            @score
          )

        score ->
          score
      end

    case result do
      score when is_number(score) ->
        score

      {:error, {:invalid_utf8, which}} ->
        Errors.raise!(@score, {:invalid_utf8, {:argument, which}})

      {:error, reason} ->
        Errors.raise!(@score, reason)
    end
  end

  def score(a, b, _opts) do
    {which, value} = if is_binary(a), do: {"second argument", b}, else: {"first argument", a}
    Options.invalid!(@score, which, value, "a binary")
  end

  # a short pair under :auto is scored in the NIF call itself (no job: its
  # work is less than a slice); any other pair, or :long, runs as a job
  defp short_score(a, b, %{schedule: :auto, tiny_slices: false} = call, options),
    do: Native.fuzzy_score_short(a, b, call.unit, options)

  defp short_score(_a, _b, %{schedule: :external}, _options), do: :external
  defp short_score(_a, _b, _call, _options), do: :long

  @doc """
  The best matches of `query` among `choices`, best first and, for equal
  scores, in the order of the choices: `{candidate, score, key}`, the
  key being the candidate's position in a list (from 0), or the key it
  came with (a `{key, candidate}` element, or a map). `choices` may be a
  `WellBehaved.Fuzzy.Index` (its entries, in the order they came in; its
  processor, and no `processor:` of the call's own).

  Options as `score/3`, and `limit:` (default 5): how many, or `:all`
  (every candidate within `score_cutoff:`). The candidates are scored in
  one native job, a slice of the runtime at a time in the modes that
  slice. Returns `{:error, :enomem}` when native memory runs out.

  On an index split over nodes (`WellBehaved.Fuzzy.Index.new/2` with
  `nodes:`), every shard is searched on its node in parallel, each within
  `timeout:` ms (default: the index's); when one does not answer, the
  call returns `{:error, {reason, node}}`, or with `partial: true`
  `{:partial, hits, [{node, reason}]}`: the best among the shards that
  answered. The reasons: `:nodedown`; `:timeout`; `:no_library`
  (WellBehaved is not loaded on that node, or another version of it);
  `:shard_lost` (the process holding the shard is gone: its node
  restarted, or the node of the process that made the index stayed out
  of reach for 30 s; a shorter disconnect loses nothing); `:enomem`
  (native memory ran out on that node); `{:exit, reason}` (the call on
  that node exited otherwise). A search still running on a node at the
  bound, or whose caller died, is stopped there.

      iex> names = ["Jonathan", "Johanna", "Jon", "Joanne", "Nathan"]
      iex> WellBehaved.Fuzzy.extract("Johnathan", names, scorer: :jaro_winkler, limit: 2)
      [{"Jonathan", 0.9037037037037037, 0}, {"Johanna", 0.8814814814814815, 1}]
      iex> WellBehaved.Fuzzy.extract("new york", %{nyc: "New York City", la: "Los Angeles"},
      ...>   processor: :default, scorer: :partial_ratio, score: :similarity, score_cutoff: 90)
      [{"New York City", 100.0, :nyc}]
  """
  @spec extract(binary(), candidates(), keyword()) ::
          [hit()]
          | {:partial, [hit()], [{node(), term()}]}
          | {:error, :enomem | {term(), node()}}
  def extract(query, choices, opts \\ []) do
    call = Call.options!(@extract, opts, [:limit, :timeout, :partial | @pair])
    spanned(@extract, query, choices, call)
  end

  # search/4 in a [:well_behaved, :search] span when events are on
  defp spanned(name, query, choices, call) do
    if Telemetry.on?(),
      do:
        Events.search(name, choices, call.limit, call, fn ->
          search(name, query, choices, call)
        end),
      else: search(name, query, choices, call)
  end

  @doc """
  The best match of `query` among `choices` (`extract/3` with `limit: 1`):
  `{candidate, score, key}`, or nil when no candidate is within
  `score_cutoff:` (on an index split over nodes with `partial: true`,
  `{:partial, best_or_nil, [{node, reason}]}` when a node did not answer).

      iex> WellBehaved.Fuzzy.extract_one("appel", ["apple", "maple", "apply"], scorer: :indel, score: :distance)
      {"apple", 2, 0}
  """
  @spec extract_one(binary(), candidates(), keyword()) ::
          hit()
          | nil
          | {:partial, hit() | nil, [{node(), term()}]}
          | {:error, :enomem | {term(), node()}}
  def extract_one(query, choices, opts \\ []) do
    call = Call.options!(@extract_one, opts, [:timeout, :partial | @pair])

    case spanned(@extract_one, query, choices, %{call | limit: 1}) do
      [hit] -> hit
      [] -> nil
      {:partial, hits, failed} -> {:partial, List.first(hits), failed}
      {:error, _} = error -> error
    end
  end

  @doc """
  The score of every query against every candidate: a matrix with a row
  per query (in order) and a column per candidate (in order), as rapidfuzz's
  `process.cdist` gives it. `candidates`: binaries, or a
  `WellBehaved.Fuzzy.Index` (its entries' order, its processor). An index
  split over nodes gives its candidates (as processed) to this node,
  every shard in parallel within the index's `timeout:`, in its order
  (`Enum.to_list/1`'s); when a shard does not answer, the call returns
  `{:error, {reason, node}}` (reasons as
  `extract/3` lists them).

  Options as `score/3` (a pair beyond `score_cutoff:` has the worst score
  of its kind), and:

    * `as:` - `:list` (default), a list of rows, each a list of scores;
      or `:binary`, one binary of the rows one after another, 32 bits a
      score in native byte order: a float (`<<s::float-32-native>>`), or
      an unsigned integer for an edit distance's own scores
      (`<<d::32-native>>`). A matrix of 1,000 x 100,000 is 400 MB as a
      binary, far more as lists. No cell is capped: an integer score
      past 4294967295 raises `ArgumentError` naming it (lists hold
      every score exactly).
    * `workers:` - how many rows are computed at the same time (default:
      the VM's online schedulers), each a job in the `schedule:` mode: a
      batch keeps every scheduler busy, a slice at a time in the modes
      that slice (as `:auto` does for long rows), so the VM stays
      responsive while it runs.

  Returns `{:error, :enomem}` when native memory runs out.

      iex> WellBehaved.Fuzzy.cdist(["kitten", "mitt"], ["sitting", "mitten"], scorer: :levenshtein, score: :distance)
      [[3, 1], [4, 2]]
  """
  @spec cdist([binary()], [binary()] | Index.t(), keyword()) ::
          [[number()]] | binary() | {:error, :enomem | {term(), node()}}
  def cdist(queries, candidates, opts \\ []) do
    call = Call.options!(@cdist, opts, [:as, :workers | @pair])

    if Telemetry.on?(),
      do:
        Events.cdist(queries, candidates, call, fn -> cdist_call(queries, candidates, call) end),
      else: cdist_call(queries, candidates, call)
  end

  defp cdist_call(queries, candidates, call) do
    if not is_list(queries) or not Enum.all?(queries, &is_binary/1),
      do: Options.invalid!(@cdist, "queries", queries, "a list of binaries")

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
            if segment, do: sorted_search(query, segment, call), else: {query, packed, call}

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

  # the matrix as one binary, or as lists of rows
  defp matrix(binary, _rows, _row_bytes, %{as: :binary}), do: binary

  defp matrix(binary, rows, row_bytes, call) do
    for r <- 0..(rows - 1)//1, do: row_list(binary_part(binary, r * row_bytes, row_bytes), call)
  end

  @doc false
  # a shard's search, on its node (the index first, for Shard.with_value/4)
  # (no span: the caller's node has the call's)
  def extract_held(index, query, opts),
    do: search(@extract, query, index, Call.options!(@extract, opts, [:limit | @pair]))

  @doc false
  # extract/3 on an index for another public function, `name`, which its
  # errors name (WellBehaved.Levenshtein.nearest/3)
  def extract_for(name, query, %Index{} = index, opts) do
    call = Call.options!(name, opts, [:limit | @pair])
    search(name, query, index, call)
  end

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
      tiny_slices: call.tiny_slices
    ] ++
      if(call.scorer == :levenshtein, do: [weights: {i, d, s}], else: []) ++
      if call.scorer == :jaro_winkler, do: [prefix_weight: call.prefix_weight], else: []
  end

  defp no_processor!(_name, %{processor: nil}), do: :ok

  defp no_processor!(name, call) do
    Options.invalid!(name, :processor, call.processor, "none with an index: its candidates \
    were processed when they came in, by the processor given to Index.new/2")
  end

  # the candidates packed natively (a list, packed for this call; an
  # index's one segment, with the segment for its sorted tokens; the
  # shards' candidates, gathered here), the processor of the queries, and
  # whether to give the packed list back afterwards (never a segment's)
  defp cdist_set!(%Index{shards: [_ | _]} = index, call) do
    no_processor!(@cdist, call)

    # as scored: the processor ran where each shard is
    case Index.ask_held(index, {Index, :scored_texts, []}) do
      {:error, _} = error -> error
      parts -> packed(Enum.concat(parts), index.processor)
    end
  end

  defp cdist_set!(%Index{} = index, call) do
    no_processor!(@cdist, call)

    case index.segments do
      [one] when one.count == index.size ->
        {:segment, one, Processor.function(index.processor)}

      many ->
        packed(Segment.scored(many), index.processor)
    end
  end

  defp cdist_set!(list, call) when is_list(list) do
    if not Enum.all?(list, &is_binary/1) do
      at = Enum.find_index(list, &(not is_binary(&1)))
      Errors.raise!(@cdist, {:not_a_binary, at})
    end

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
      # the caller raises or returns it, once the rows stop
      {:error, _} = error -> error
      :ok -> :ok
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

  # an index split over nodes: each shard searched where it is, in
  # parallel, the hits merged by score (stable: shards in input order)
  defp search(name, query, %Index{shards: [_ | _] = shards} = index, call) do
    if not is_binary(query), do: Options.invalid!(name, "query", query, "a binary")
    no_processor!(name, call)
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

  defp search(name, _query, %Index{}, %{remote: [{key, value} | _]}),
    do: Options.invalid!(name, key, value, "no #{key}: only for an index split over nodes")

  defp search(name, query, %Index{} = index, call) do
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

  defp search(name, _query, _choices, %{remote: [{key, value} | _]}),
    do: Options.invalid!(name, key, value, "no #{key}: only for an index split over nodes")

  defp search(name, query, choices, call) do
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
  defp sorted_search(query, segment, call) do
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
    for <<index::64-native, score::binary-8 <- binary>> do
      key = if keys == nil, do: index, else: elem(keys, index)
      {elem(texts, index), number(call, score), key}
    end
  end

  defp limited(hits, %{limit: :all}), do: hits
  defp limited(hits, %{limit: limit}), do: Enum.take(hits, limit)

  # a segment's hits (its live entries'), each with what ranks it against
  # other segments'
  defp segment_hits(binary, segment, at, call) do
    found =
      for <<index::64-native, score::binary-8 <- binary>>,
          Segment.live?(segment, index),
          do: {index, number(call, score)}

    {texts, keys} = Segment.texts_and_keys(segment, Enum.map(found, &elem(&1, 0)))

    for {{{index, score}, text}, key} <- Enum.zip(Enum.zip(found, texts), keys) do
      {{text, score, key}, {score, at, index}}
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

  defp processed(%{processor: nil}, a, b), do: {a, b}

  defp processed(call, a, b) do
    fun = Processor.function(call.processor)
    {fun.(a), fun.(b)}
  end

  # a hit's score: an integer kind's exact 64 bits, or a float's
  defp number(call, <<score::64-native>>) do
    if Call.integers?(call), do: score, else: float(<<score::64-native>>)
  end

  defp float(<<score::float-64-native>>), do: score
end
