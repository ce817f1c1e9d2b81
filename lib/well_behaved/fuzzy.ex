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
      (substitutions, position by position, the shorter padded; with
      `pad: false` strings of different lengths raise `ArgumentError`,
      as rapidfuzz's `pad=False` does);
    * distances from a similarity s, rapidfuzz's `LCSseq`, `Prefix` and
      `Postfix`: `:lcs_seq` (s the longest common subsequence),
      `:prefix` (the common prefix), `:postfix` (the common suffix), the
      distance max(length a, length b) - s (so the similarity is s);
    * `:jaro` and `:jaro_winkler` (`prefix_weight:`, default 0.1, the
      bonus of a common prefix of up to 4 characters), the usual choice
      for names of people;
    * the ratios, built on the Indel distance, from rapidfuzz's `fuzz`:
      `:ratio`, `:partial_ratio` (the best window of the longer string),
      `:token_sort_ratio` (words sorted), `:token_set_ratio` (words as
      sets), `:token_ratio`, `:partial_token_sort_ratio`,
      `:partial_token_set_ratio`, `:partial_token_ratio`, `:wratio` (a
      weighted choice among them by the strings' lengths) and `:qratio`;
    * a function of two binaries returning a number, for a measure of
      your own: the slow path, run in Elixir in the calling process (in
      the workers of `extract_many/3` and `cdist/3`) whatever `schedule:`
      says. Its `score:` kind only says which way is better (the distance
      kinds: lower), and `score_cutoff:` (any number) keeps a search's
      hits at least (at most) that good; `score/3` and `cdist/3` give its
      values as they are.

  ## Scores

  `score:` picks the kind of score (default `:normalized_similarity`):

    * `:distance` and `:similarity`: an edit distance's own integers,
      `:lcs_seq`'s, `:prefix`'s and `:postfix`'s too (the similarity is
      the largest distance the two lengths allow, less the distance),
      exact up to 2^64-1 (a score past it raises
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
  ratios' 0..100); two empty strings have a Jaro similarity of 1.0, like
  every other scorer's.

  ## Text

  `unit:` says what a character is:

    * `:byte` (default): bytes;
    * `:codepoint`: Unicode codepoints (valid UTF-8 required; words are
      then split at Unicode white space as well);
    * `:grapheme`: extended grapheme clusters, the characters people
      read, as `String.graphemes/1` splits them (and Elixir's own
      `String.jaro_distance/2` compares them): a letter and its combining
      marks, a flag, an emoji sequence joined by ZWJ, a Hangul syllable
      of jamo, CR LF each count once. Valid UTF-8 required. Lengths,
      scores, cutoffs and ranks are in clusters. Text whose every cluster
      is one codepoint (checked natively; Latin, Greek, Cyrillic, CJK,
      kana, Hangul syllables and emoji without modifiers are) scores as
      with `:codepoint`, at its speed; other text is split in Elixir
      first, each call numbering the clusters of several codepoints it
      meets (one numbering for the query and all the candidates), which
      costs about what `String.graphemes/1` does. Words are split at
      white space clusters (CR LF too) and sorted cluster by cluster: a
      cluster of one codepoint (below U+40000) by its codepoint and
      before every other cluster, the others by their codepoints. Not on
      a `WellBehaved.Fuzzy.Index` (it packs its candidates without the
      clusters' numbering: `ArgumentError`); search a list.

  `processor:` prepares every string before it is scored (and before it
  is split into clusters): `:default` (lowercase, non-alphanumerics to
  spaces, trimmed: `WellBehaved.Fuzzy.Processor.default/1`), `:fold`
  (the same, and accents and compatibility forms folded, so that
  "Łępicki" is "lepicki": `WellBehaved.Fuzzy.Processor.fold/1`, where
  its relation to `String.normalize/2` is told), or a function; a
  search returns the candidates as they were given.

      iex> WellBehaved.Fuzzy.score("🇫🇷🇩🇪", "🇫🇷", scorer: :levenshtein, score: :distance, unit: :grapheme)
      1
      iex> WellBehaved.Fuzzy.score("🇫🇷🇩🇪", "🇫🇷", scorer: :levenshtein, score: :distance, unit: :codepoint)
      2
      iex> WellBehaved.Fuzzy.score("Łępicki", "LEPICKI", scorer: :ratio, processor: :fold)
      1.0

      iex> WellBehaved.Fuzzy.score("kitten", "sitting", scorer: :levenshtein, score: :distance)
      3
      iex> WellBehaved.Fuzzy.score("this is a test", "this is a test!", scorer: :ratio, score: :similarity)
      96.55172413793103
      iex> WellBehaved.Fuzzy.score("MARTHA", "MARHTA", scorer: :jaro_winkler)
      0.9611111111111111
      iex> WellBehaved.Fuzzy.score("South Korea", "North Korea", scorer: :lcs_seq, score: :similarity)
      9
      iex> WellBehaved.Fuzzy.score("prefix", "preface", scorer: :prefix, score: :distance)
      3
  """

  alias WellBehaved.{External, Job, Native, Options}
  alias WellBehaved.Fuzzy.{Alignment, Call, Cdist, Dedupe, Edits, FunScorer, Graphemes}
  alias WellBehaved.Fuzzy.{Index, Many, Processor, Search}
  alias WellBehaved.Search.{Errors, Events}
  require WellBehaved.Telemetry, as: Telemetry

  @score "WellBehaved.Fuzzy.score/3"
  @extract "WellBehaved.Fuzzy.extract/3"
  @extract_one "WellBehaved.Fuzzy.extract_one/3"
  @extract_many "WellBehaved.Fuzzy.extract_many/3"
  @dedupe "WellBehaved.Fuzzy.dedupe/2"
  @cdist "WellBehaved.Fuzzy.cdist/3"
  @editops "WellBehaved.Fuzzy.editops/3"
  @opcodes "WellBehaved.Fuzzy.opcodes/3"
  @apply_edits "WellBehaved.Fuzzy.apply_edits/4"
  @pair Call.pair()

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
  `prefix_weight:`, `pad:`, `processor:`, `unit:`). `schedule:` and
  `tiny_slices:` as `WellBehaved.Job.call/4` takes them: a
  `t:WellBehaved.Runtime.mode/0` (default `:auto`), or `:external`, the
  same score job run by a server of the built-in `WellBehaved.External`
  pool (the library's job types built as a server, as `Job.call/4` runs
  a job of yours there): the same answers and errors, the options
  checked (and the processor run) here before any call. `score_hint:`
  (a number) is taken, for code ported from rapidfuzz, and changes nothing.

  `alignment: true` (`:ratio` and `:partial_ratio` only) returns
  `{score, alignment}`: where the score is, a `WellBehaved.Fuzzy.Alignment`
  (for the partial ratio, the shorter string whole and the window of the
  longer that scores best, the one rapidfuzz's
  `fuzz.partial_ratio_alignment` reports), or `nil` when the score does
  not pass `score_cutoff:`.

  Raises `ArgumentError` on a non-binary, an unknown option or value, a
  cutoff outside its kind's range, on invalid UTF-8 with
  `unit: :codepoint` or `:grapheme`, on an integer score past 2^64-1,
  and for `scorer: :hamming, pad: false` on strings of different lengths
  (in the `unit:`'s symbols), naming both lengths. With
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

    if is_function(call.scorer),
      do: FunScorer.score(@score, call.scorer, a, b),
      else: native_score(a, b, call)
  end

  def score(a, b, _opts) do
    {which, value} = if is_binary(a), do: {"second argument", b}, else: {"first argument", a}
    Options.invalid!(@score, which, value, "a binary")
  end

  defp native_score(a, b, call) do
    {a, b, call} = in_units(a, b, call)
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

      {:error, {:unequal_lengths, m, n}} ->
        Errors.raise!(@score, {:unequal_lengths, :arguments, m, n, call.unit})

      {:error, reason} ->
        Errors.raise!(@score, reason)
    end
  end

  # graphemes: the pair as codepoints, one a cluster (Graphemes)
  defp in_units(a, b, %{unit: :grapheme} = call) do
    case Graphemes.prepare(@score, [a, b], call.scorer) do
      {:ok, [a, b]} -> {a, b, %{call | unit: :codepoint}}
      {:invalid_utf8, at} -> Errors.raise!(@score, {:invalid_utf8, {:argument, at + 1}})
    end
  end

  defp in_units(a, b, call), do: {a, b, call}

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
  processor, and no `processor:` of the call's own; no `unit: :grapheme`).

  Options as `score/3`, and `limit:` (default 5): how many, or `:all`
  (every candidate within `score_cutoff:`; `nil` too, as rapidfuzz's
  `limit=None`). A `nil` among the choices (a list's element, a pair's
  or a map's value) is skipped, as rapidfuzz skips `None`: the others
  keep their positions. A map's candidates are taken in the order of
  their keys (Erlang's term order), so equal scores rank by key whatever
  the map's size. With `alignment: true` (`:ratio`, `:partial_ratio`)
  each hit is `{candidate, score, key, alignment}`: where its score is
  (`WellBehaved.Fuzzy.Alignment`, the query as `src`, the candidate
  processed as `dest`), found for the hits returned only. The candidates
  are scored in
  one native job, a slice of the runtime at a time in the modes that
  slice. Returns `{:error, :enomem}` when native memory runs out.

  With `scorer: :hamming, pad: false`, the first candidate (in the
  candidates' order) whose length differs from the query's raises
  `ArgumentError` naming it: by its position in a list of binaries, by
  its key otherwise (a pair's, a map's, an index's entry's). An index's
  deleted entries never raise. `limit: 0` scores nothing, so raises
  nothing.

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
  The best matches of each of many `queries` among the same `choices`, as
  `extract/3` gives them for one: a stream of `{query, hits}`, in the
  order of the queries (`ordered: false`: as each is done).

  The candidates are checked, processed and packed once, when the stream
  starts (an index is searched as it is); then each query is a search job
  of its own, `workers:` of them at a time (default: the VM's online
  schedulers), each in the `schedule:` mode, so that the queries spread
  over every scheduler while each job stays a slice at a time in the
  modes that slice. The stream holds at most `workers:` queries' hits
  that the caller has not read: the memory it takes does not grow with
  the number of queries (which may be a stream themselves). Stopping
  early (`Enum.take/2`) stops the searches under way. Everything is
  checked as the stream runs: a query that is not a binary raises then.

  Options as `extract/3` (`limit:`, `score_cutoff:`, `alignment:` ...),
  and `workers:` and `ordered:`. A search that fails gives `{query, {:error, reason}}`.

      iex> queries = ["appel", "banan"]
      iex> WellBehaved.Fuzzy.extract_many(queries, ["apple", "banana", "cherry"],
      ...>   scorer: :indel, score: :distance, limit: 1) |> Enum.to_list()
      [{"appel", [{"apple", 2, 0}]}, {"banan", [{"banana", 1, 1}]}]
  """
  @spec extract_many(Enumerable.t(), candidates(), keyword()) :: Enumerable.t()
  def extract_many(queries, choices, opts \\ []) do
    call =
      Call.options!(@extract_many, opts, [
        :limit,
        :workers,
        :ordered,
        :timeout,
        :partial,
        :alignment | @pair
      ])

    Many.stream(@extract_many, queries, choices, call)
  end

  @doc """
  Groups of near-duplicates among `choices`: every candidate in exactly
  one group, `{text, key}` (keys as `extract/3` gives them), each group
  in the order of the choices and the groups in the order of their first
  member. Two candidates whose score passes `score_cutoff:` are in the
  same group, and so are their groups (single linkage: a chain of close
  pairs makes one group).

  Candidates are compared through searches of the candidates against
  themselves, never a whole matrix: memory grows with the number of
  candidates and of close pairs. For `:ratio`, `:qratio` and
  `:token_sort_ratio` (in bytes), whose score bounds how much two lengths may
  differ, a candidate is compared only with those whose lengths it can
  reach; the searches run `workers:` at a time (default: the online
  schedulers), each a job in the `schedule:` mode.

  Options: `scorer:` (default `:token_sort_ratio`), `score:`,
  `score_cutoff:` (default 0.9 for the default kind; required for
  another kind or a scorer function), `processor:` (default `:default`:
  case and punctuation do not tell candidates apart; `nil` for none),
  `unit:`, `weights:`, `prefix_weight:`, `schedule:`, `tiny_slices:`,
  `workers:`, and `numbers:`: `:exact` (default) compares only candidates
  whose words holding a digit are the same ("iPhone 14" and "iPhone 15",
  "M2" and "M3", "500 ml" and "750 ml" stay apart), `:ignore` lets the
  score alone decide. A `nil` candidate is skipped. Returns `{:error,
  :enomem}` when native memory runs out.

      iex> WellBehaved.Fuzzy.dedupe(["Apple iPhone 14", "iphone 14 apple", "Apple iPhone 15", "Pixel 8"])
      [[{"Apple iPhone 14", 0}, {"iphone 14 apple", 1}], [{"Apple iPhone 15", 2}], [{"Pixel 8", 3}]]
  """
  @spec dedupe(choices(), keyword()) :: [[{binary(), key()}]] | {:error, :enomem}
  def dedupe(choices, opts \\ []) do
    if not is_list(opts), do: Options.not_keyword!(@dedupe, opts)
    {numbers, opts} = Keyword.pop(opts, :numbers, :exact)

    if numbers not in [:exact, :ignore],
      do: Options.invalid!(@dedupe, :numbers, numbers, ":exact or :ignore")

    defaults = [scorer: :token_sort_ratio, processor: :default]
    call = Call.options!(@dedupe, defaults ++ opts, [:workers | @pair])

    call =
      case call do
        %{score_cutoff: nil, score: :normalized_similarity} = call when is_atom(call.scorer) ->
          %{call | score_cutoff: 0.9}

        %{score_cutoff: nil} ->
          Options.invalid!(@dedupe, :score_cutoff, nil, "a cutoff for this scorer and kind")

        call ->
          call
      end

    Dedupe.groups(@dedupe, choices, call, numbers)
  end

  @doc """
  The score of every query against every candidate: a matrix with a row
  per query (in order) and a column per candidate (in order), as rapidfuzz's
  `process.cdist` gives it, and like it scored by `:ratio` unless
  `scorer:` says otherwise (the other functions' default is `:wratio`).
  `candidates`: binaries, or a `WellBehaved.Fuzzy.Index` (its entries'
  order, its processor; not with `unit: :grapheme`). An index
  split over nodes gives its candidates (as processed) to this node,
  every shard in parallel within the index's `timeout:`, in its order
  (`Enum.to_list/1`'s); when a shard does not answer, the call returns
  `{:error, {reason, node}}` (reasons as
  `extract/3` lists them).

  Options as `score/3` (a pair beyond `score_cutoff:` has the worst score
  of its kind; with `scorer: :hamming, pad: false` a candidate of another
  length than a query raises `ArgumentError` naming its position among
  the candidates and the query's), and:

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
    # rapidfuzz's process.cdist scores with fuzz.ratio unless told
    opts = if is_list(opts), do: [{:scorer, :ratio} | opts], else: opts
    call = Call.options!(@cdist, opts, [:as, :workers | @pair])

    if Telemetry.on?(),
      do: Events.cdist(queries, candidates, call, fn -> Cdist.run(queries, candidates, call) end),
      else: Cdist.run(queries, candidates, call)
  end

  @typedoc """
  An edit of `editops/3`: its type, and where it applies in the source and
  in the destination (in units of the call: bytes, codepoints or grapheme
  clusters).
  """
  @type editop :: Edits.editop()

  @typedoc """
  A block of `opcodes/3`: its tag, its start and end in the source, its
  start and end in the destination (ends excluded).
  """
  @type opcode :: Edits.opcode()

  @doc """
  The edits that turn `source` into `dest`, as few as the scorer allows,
  in order: `{:insert | :delete | :replace, src_pos, dest_pos}`, as
  rapidfuzz's `editops` gives them, and for `scorer: :osa`
  `{:transpose, src_pos, dest_pos}`.

    * `{:insert, s, d}` - `dest`'s unit at `d` inserted before `source`'s
      unit at `s`;
    * `{:delete, s, d}` - `source`'s unit at `s` deleted (`d`: where it
      would be in `dest`);
    * `{:replace, s, d}` - `source`'s unit at `s` replaced by `dest`'s at
      `d`;
    * `{:transpose, s, d}` - `source`'s units at `s` and `s + 1` swapped,
      giving `dest`'s at `d` and `d + 1` (two neighbours swapped and
      nothing else done to them: the optimal string alignment distance).

  Between two edits the units not named are equal, in order; there are
  as many edits as the distance (`score/3` with `score: :distance`).

  Options: `scorer:` `:levenshtein` (default; `weights:` only
  `{1, 1, 1}`), `:indel` (insertions and deletions only) or `:osa`;
  `unit:`, `processor:` (the positions are then in the processed
  strings), `schedule:` and `tiny_slices:` as `score/3` takes them
  (`:external` too). The script is made natively, a slice at a time in
  the modes that slice, and read here into the list; memory grows with
  the strings, not their product (a matrix kept of 8 MiB at most, a
  longer pair split in halves). Returns `{:error, :enomem}` when native
  memory runs out.

  Among scripts of the same length it gives rapidfuzz-cpp's (as
  `levenshtein_editops` and `indel_editops` break ties), but for pairs
  it splits where rapidfuzz does not (Indel pairs of more than about
  8 MiB of matrix; Levenshtein pairs with a source under 65 units or a
  destination under 10 whose matrix passes that bound): another script
  of the same length. OSA, which rapidfuzz has no script for: a
  transposition wherever one is on a shortest path, otherwise the
  Levenshtein rule.

  Raises `ArgumentError` as `score/3` does (a non-binary, an unknown
  option or value, a scorer without scripts, weights other than
  `{1, 1, 1}`, invalid UTF-8 with `unit: :codepoint` or `:grapheme`).

      iex> WellBehaved.Fuzzy.editops("kitten", "sitting")
      [{:replace, 0, 0}, {:replace, 4, 4}, {:insert, 6, 6}]
      iex> WellBehaved.Fuzzy.editops("kitten", "sitting", scorer: :indel)
      [{:insert, 0, 0}, {:delete, 0, 1}, {:insert, 4, 4}, {:delete, 4, 5}, {:insert, 6, 6}]
      iex> WellBehaved.Fuzzy.editops("recieve", "receive", scorer: :osa)
      [{:transpose, 3, 3}]
      iex> WellBehaved.Fuzzy.editops("café", "cafe", unit: :codepoint)
      [{:replace, 3, 3}]
  """
  @spec editops(binary(), binary(), keyword()) :: [editop()] | {:error, :enomem}
  def editops(source, dest, opts \\ []),
    do: Edits.script(@editops, source, dest, opts, :editops)

  @doc """
  The same script as blocks covering both strings whole, as rapidfuzz's
  `opcodes` gives them: `{tag, src_start, src_end, dest_start, dest_end}`,
  `:equal` for the units left as they are, `:replace`, `:insert` and
  `:delete` for the runs of edits of one kind that follow each other. A
  transposition (`scorer: :osa`) is a `:replace` of two units by two (the
  same two, swapped), joined to the replacements next to it. Options and
  errors as `editops/3`.

      iex> WellBehaved.Fuzzy.opcodes("kitten", "sitting")
      [{:replace, 0, 1, 0, 1}, {:equal, 1, 4, 1, 4}, {:replace, 4, 5, 4, 5}, {:equal, 5, 6, 5, 6},
       {:insert, 6, 6, 6, 7}]
      iex> WellBehaved.Fuzzy.opcodes("", "")
      []
  """
  @spec opcodes(binary(), binary(), keyword()) :: [opcode()] | {:error, :enomem}
  def opcodes(source, dest, opts \\ []),
    do: Edits.script(@opcodes, source, dest, opts, :opcodes)

  @doc """
  `dest` rebuilt from `source` by `edits`, the editops of `editops/3` or
  the opcodes of `opcodes/3` (in the same `unit:`, default `:byte`; of
  the processed strings when the script was made with a processor), as
  rapidfuzz's `Editops.apply` and `Opcodes.apply`: what is inserted or
  replaced comes from `dest`, what lies between the edits (or is
  `:equal`) from `source`.

  Raises `ArgumentError` when the edits do not fit the two strings (an
  edit past the end of one, out of order, not where the edits before it
  end, unequal lengths left after the last one, an opcode not starting
  where the one before it ended), on an edit or opcode of another shape,
  and on invalid UTF-8 with `unit: :codepoint` or `:grapheme`.

      iex> edits = WellBehaved.Fuzzy.editops("kitten", "sitting")
      iex> WellBehaved.Fuzzy.apply_edits(edits, "kitten", "sitting")
      "sitting"
      iex> WellBehaved.Fuzzy.apply_edits([{:delete, 0, 0}], "xab", "ab")
      "ab"
  """
  @spec apply_edits([editop()] | [opcode()], binary(), binary(), keyword()) :: binary()
  def apply_edits(edits, source, dest, opts \\ []),
    do: Edits.apply!(@apply_edits, edits, source, dest, opts)

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
