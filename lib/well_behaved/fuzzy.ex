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
  alias WellBehaved.Fuzzy.{Alignment, Call, Cdist, Index, Processor, Search}
  alias WellBehaved.Search.{Errors, Events}
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

  @typedoc "A match: the candidate as given, its score, its key (and with `alignment: true` where)."
  @type hit :: {binary(), number(), key()} | {binary(), number(), key(), Alignment.t()}

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

  `alignment: true` (`:ratio` and `:partial_ratio` only) returns
  `{score, alignment}`: where the score is, a `WellBehaved.Fuzzy.Alignment`
  (for the partial ratio, the shorter string whole and the window of the
  longer that scores best, the one rapidfuzz's
  `fuzz.partial_ratio_alignment` reports), or `nil` when the score does
  not pass `score_cutoff:`.

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
      iex> WellBehaved.Fuzzy.score("cetain", "a certain string", scorer: :partial_ratio, score: :similarity, alignment: true)
      {83.33333333333334, %WellBehaved.Fuzzy.Alignment{src_start: 0, src_end: 6, dest_start: 2, dest_end: 8}}
  """
  @spec score(binary(), binary(), keyword()) :: number() | {number(), Alignment.t() | nil}
  def score(a, b, opts \\ [])

  def score(a, b, opts) when is_binary(a) and is_binary(b) do
    call = Call.options!(@score, opts, [:alignment | @pair], [:external])
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

      {score, at} when is_number(score) ->
        {score, Alignment.new(at)}

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
  (every candidate within `score_cutoff:`). With `alignment: true`
  (`:ratio`, `:partial_ratio`) each hit is `{candidate, score, key,
  alignment}`: where its score is (`WellBehaved.Fuzzy.Alignment`, the
  query as `src`, the candidate processed as `dest`), found for the hits
  returned only. The candidates are scored in
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
    call = Call.options!(@extract, opts, [:limit, :timeout, :partial, :alignment | @pair])
    spanned(@extract, query, choices, call)
  end

  # search/4 in a [:well_behaved, :search] span when events are on
  defp spanned(name, query, choices, call) do
    if Telemetry.on?(),
      do:
        Events.search(name, choices, call.limit, call, fn ->
          Search.run(name, query, choices, call)
        end),
      else: Search.run(name, query, choices, call)
  end

  @doc """
  The best match of `query` among `choices` (`extract/3` with `limit: 1`):
  `{candidate, score, key}` (with `alignment: true`, `{candidate, score,
  key, alignment}`), or nil when no candidate is within
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
    call = Call.options!(@extract_one, opts, [:timeout, :partial, :alignment | @pair])

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
      do: Events.cdist(queries, candidates, call, fn -> Cdist.run(queries, candidates, call) end),
      else: Cdist.run(queries, candidates, call)
  end

  @doc false
  # a shard's search, on its node (the index first, for Shard.with_value/4)
  # (no span: the caller's node has the call's)
  def extract_held(index, query, opts),
    do:
      Search.run(
        @extract,
        query,
        index,
        Call.options!(@extract, opts, [:limit, :alignment | @pair])
      )

  @doc false
  # extract/3 on an index for another public function, `name`, which its
  # errors name (WellBehaved.Levenshtein.nearest/3)
  def extract_for(name, query, %Index{} = index, opts) do
    call = Call.options!(name, opts, [:limit | @pair])
    Search.run(name, query, index, call)
  end

  defp processed(%{processor: nil}, a, b), do: {a, b}

  defp processed(call, a, b) do
    fun = Processor.function(call.processor)
    {fun.(a), fun.(b)}
  end
end
