defmodule WellBehaved.Levenshtein do
  @moduledoc """
  Levenshtein (edit) distance with unit costs, computed natively without
  blocking the VM's schedulers.

  The algorithm is bit-parallel (Myers 1999, Hyyrö 2003): 64 cells of the
  dynamic-programming matrix per machine word, blockwise for inputs longer
  than 64 units, after stripping the common prefix and suffix. Memory is a
  match table of 256 words per 64 units of the shorter input, never the
  n×m matrix. With `max_distance: k` only a diagonal band of width O(k) is
  computed, and the computation stops once no cell of it can end within
  `k`; a cutoff of at most 3 takes no table at all (each order of spending
  the edits is tried, as mbleven does). Long pairs compute two columns at
  a time in scalar code or four in SIMD lanes, whichever this CPU runs
  fastest, measured when the library loads (`native_paths/0`).

  Scheduling is the runtime's (see `WellBehaved.Runtime`): by default short
  calls run directly and long ones yield. Under `:auto`, a pair of at most
  512 bytes in all whose shorter side is at most 64 units once the common
  prefix and suffix go, or whose cutoff is at most 3 (ASCII, for
  codepoints), is computed in the NIF call itself, with no job: it takes
  under 2 µs. Text that is all ASCII runs at
  byte speed under `unit: :codepoint`. `schedule: :external` runs the same
  core in a separate OS process instead (see `WellBehaved.External`).

  ## A convenience over `WellBehaved.Fuzzy`

  `WellBehaved.Fuzzy` is the library's API for scoring and searching; this
  module gives its Levenshtein distance in terms of its own, kept for the
  code that uses them. The answers are Fuzzy's with `scorer: :levenshtein,
  score: :distance` (a cutoff `k` is `score_cutoff: k`; past it, `k + 1`):

    * `distance(a, b, opts)` is `Fuzzy.score(a, b, opts)`;
    * `nearest(query, candidates, opts)` is `Fuzzy.extract/3` without the
      keys: `{candidate, distance}`, and `limit:` 10 by default where
      `extract/3` has 5 (both kept as they were: changing them would change
      the answers of existing calls);
    * `distances(query, candidates, opts)` is the one row of
      `Fuzzy.cdist([query], candidates, opts)`;
    * `WellBehaved.Levenshtein.Index.new/2` makes a `WellBehaved.Fuzzy.Index`
      (one index type): `extract/3` and `cdist/3` take it, and this module's
      searches take any `Fuzzy.Index` (its processor prepares the query,
      deleted entries are left out).

  `schedule: :external` takes Fuzzy's path: the pair is scored by
  Fuzzy's score job in a server of the built-in `WellBehaved.External`
  pool, as `Fuzzy.score(a, b, scorer: :levenshtein, score: :distance,
  schedule: :external)` scores it (one job type for every external pair).
  `as: :binary` distances are `Fuzzy.cdist([query], candidates,
  as: :binary)`'s one row (the same native 32-bit cells).

  What only this module has: `nodes:` to split a plain list over nodes
  for one call (Fuzzy splits an index: `Fuzzy.Index.new(list, nodes:
  nodes)`, made once and searched many times, which is what a list worth
  sending to other nodes is for), and with `partial: true`, `nil`
  distances (`0xFFFFFFFF` cells) for a shard that did not answer where
  `Fuzzy.cdist/3` returns the error: kept so that existing calls keep
  their answers, not added to Fuzzy, whose searches answer a missing
  shard with `{:partial, hits, failed}`. It also runs faster on the same
  answers, which is why its functions keep their own native paths: a
  short pair is computed in the NIF call itself by Levenshtein's core
  (`Fuzzy.score/3` computes a short pair in the call too, with its own
  pair kernel), and a search runs the native Levenshtein search over the
  packed candidates directly, where `Fuzzy.extract/3` goes through the
  general engine. On a 2-vCPU
  Xeon, median: a 10-byte pair 165 ns (`Fuzzy.score/3` 1.4 µs), a 1 kB
  pair 35 µs (60 µs); on 200,000 names of 9-20 letters, the nearest 10
  on an index 0.77 ms (`extract/3` 0.98 ms), on the list 8.1 ms (12.1
  ms), every distance on the index `as: :binary` 1.2 ms (`cdist/3`'s row
  3.9 ms).
  """

  alias WellBehaved.{External, Job, Native, Options, Runtime}
  alias WellBehaved.Fuzzy.{Graphemes, Index}
  alias WellBehaved.Levenshtein.{Call, Search}
  alias WellBehaved.Search.{Distributed, Errors, Events}
  require WellBehaved.Telemetry, as: Telemetry

  @distance "WellBehaved.Levenshtein.distance/3"
  @distances "WellBehaved.Levenshtein.distances/3"
  @nearest "WellBehaved.Levenshtein.nearest/3"
  @known [:unit, :max_distance, :schedule, :tiny_slices]
  @search_known [:unit, :max_distance, :schedule, :tiny_slices, :nodes, :timeout, :partial]

  @type option ::
          {:unit, :byte | :codepoint | :grapheme}
          | {:max_distance, non_neg_integer() | nil}
          | {:schedule, Runtime.mode() | :external}
          | {:tiny_slices, boolean()}

  @doc """
  The edit distance between two binaries.

  Options:

    * `unit:` - `:byte` (default) compares bytes; `:codepoint` compares
      Unicode codepoints and requires valid UTF-8; `:grapheme` compares
      extended grapheme clusters as `String.graphemes/1` splits them
      (valid UTF-8 too; see "Text" in `WellBehaved.Fuzzy`).
    * `max_distance:` - a cutoff `k`: when the distance is above `k` the
      result is `k + 1`, and the work is only O(k·n/64). `nil` (default)
      means no cutoff.
    * `schedule:` - a `t:WellBehaved.Runtime.mode/0`, default `:auto`; or
      `:external`: a server of the `WellBehaved.External` pool computes it
      (Fuzzy's score job, as `WellBehaved.Fuzzy.score/3` runs it there).
    * `tiny_slices:` - for tests: one unit of work per slice, so every
      resume path runs. Slow.

  Raises `ArgumentError` on a non-binary, on invalid UTF-8 with
  `unit: :codepoint` or `:grapheme`, and on an unknown option or value. With
  `schedule: :external`, raises `WellBehaved.External.Error` when the
  server gives no answer (it died mid-call, timed out, or the pool is down).

  ## Examples

      iex> WellBehaved.Levenshtein.distance("kitten", "sitting")
      3
      iex> WellBehaved.Levenshtein.distance("héllo", "hello", unit: :codepoint)
      1
      iex> WellBehaved.Levenshtein.distance("héllo", "hello")
      2
      iex> WellBehaved.Levenshtein.distance("🇫🇷🇩🇪", "🇫🇷", unit: :grapheme)
      1
      iex> WellBehaved.Levenshtein.distance("abcdef", "uvwxyz", max_distance: 2)
      3
  """
  @spec distance(binary(), binary(), [option()]) :: non_neg_integer()
  def distance(a, b, opts \\ [])

  # a short pair (in codepoints, ASCII), under :auto, is computed in the
  # NIF call itself (no job: it takes less than a slice); any other pair
  # runs as a job
  def distance(a, b, []) when is_binary(a) and is_binary(b) do
    case Native.levenshtein_short(a, b, :byte, nil) do
      :long -> unwrap(Job.call(&Native.levenshtein/7, [a, b, :byte, nil]))
      distance -> distance
    end
  end

  def distance(a, b, opts) when is_binary(a) and is_binary(b) and is_list(opts) do
    call = Call.options!(@distance, opts, @known, [:external])
    {a, b, call} = in_units(a, b, call)
    max = Call.cutoff(call.max_distance, max(byte_size(a), byte_size(b)))

    case call do
      %{schedule: :auto, tiny_slices: false} ->
        case Native.levenshtein_short(a, b, call.unit, max) do
          :long -> job_distance(a, b, call, max)
          distance -> distance
        end

      %{schedule: :external} ->
        external(a, b, call.unit, max)

      _ ->
        job_distance(a, b, call, max)
    end
    |> unwrap()
  end

  def distance(a, b, opts) when is_binary(a) and is_binary(b),
    do: Options.not_keyword!(@distance, opts)

  def distance(a, b, _opts) do
    {which, value} = if is_binary(a), do: {"second argument", b}, else: {"first argument", a}
    Options.invalid!(@distance, which, value, "a binary")
  end

  # graphemes: the pair as codepoints, one a cluster (Fuzzy.Graphemes)
  defp in_units(a, b, %{unit: :grapheme} = call) do
    case Graphemes.prepare(@distance, [a, b], :levenshtein) do
      {:ok, [a, b]} -> {a, b, %{call | unit: :codepoint}}
      {:invalid_utf8, at} -> Errors.raise!(@distance, {:invalid_utf8, {:argument, at + 1}})
    end
  end

  defp in_units(a, b, call), do: {a, b, call}

  defp job_distance(a, b, call, max) do
    args = [a, b, call.unit, max]

    Job.checked(
      &Native.levenshtein/7,
      args,
      call.schedule,
      call.tiny_slices,
      :infinity,
      @distance
    )
  end

  @doc """
  How this machine computes: `pair_columns`, the way the columns of a long
  pair (or a long candidate) are computed, chosen when the library loaded
  by timing each one this CPU runs (`:scalar`, two columns at a time, or
  four in the SIMD lanes of `:simd` (SSE2), `:avx2` or `:avx512`); and
  `lanes`, the instruction set of the batches of short candidates in a
  search (`:baseline`, `:avx2` or `:avx512`, the widest the CPU has).

      iex> paths = WellBehaved.Levenshtein.native_paths()
      iex> paths.pair_columns in [:scalar, :simd, :avx2, :avx512]
      true
  """
  @spec native_paths() :: %{pair_columns: atom(), lanes: atom()}
  def native_paths do
    {pair, lanes} = Native.levenshtein_paths()
    %{pair_columns: pair, lanes: lanes}
  end

  @doc """
  The distance from `query` to each binary of `candidates` (a list, or a
  `WellBehaved.Levenshtein.Index`, that is any `WellBehaved.Fuzzy.Index`),
  in order: the results of `distance/3`
  on each pair, computed in one native job.

  Options as `distance/3`'s (`unit:`, `max_distance:`, `schedule:`,
  `tiny_slices:`), but not `schedule: :external`, and the distributed
  ones of `nearest/3` (`nodes:`, `timeout:`, `partial:`); `unit:
  :grapheme` on a list only (an index refuses it, as
  `WellBehaved.Fuzzy.extract/3` does). With
  `as: :binary` the distances come as one binary of native-endian 32-bit
  integers, `<<d::32-native, ...>>`, instead of a list: no list of a
  million elements to make (about 15 ns an element, more than the search
  of short candidates on an index); with `partial: true`, a candidate of a
  shard that did not answer is `0xFFFFFFFF` there. In byte mode,
  candidates of up to 64 bytes are compared with the query in batches of
  8 to 64, one per lane of a vector; longer ones, one machine word step
  per byte (query of up to 64 bytes) or the pair algorithm. Returns
  `{:error, :enomem}` when native memory runs out (copying the candidates,
  or the search's own tables). The search keeps its distances in 32 bits:
  one past 4294967295 (a side of 4 GiB or more) raises `ArgumentError`
  naming the candidate, in lists too (as in `nearest/3`), never a capped
  value.

      iex> WellBehaved.Levenshtein.distances("kitten", ["sitting", "kitten", "", "mitten"])
      [3, 0, 6, 1]
      iex> WellBehaved.Levenshtein.distances("kitten", ["sitting", "kitchen"], max_distance: 1)
      [2, 2]
      iex> WellBehaved.Levenshtein.distances("kitten", ["sitting", "kitten"], as: :binary)
      <<3::32-native, 0::32-native>>
  """
  @spec distances(binary(), [binary()] | WellBehaved.Levenshtein.Index.t(), keyword()) ::
          [non_neg_integer()]
          | binary()
          | {:error, :enomem | {atom() | tuple(), node()}}
          | {:partial, [non_neg_integer()], [{node(), term()}]}
  def distances(query, candidates, opts \\ []) do
    call = Call.options!(@distances, opts, [:as | @search_known])
    search(@distances, query, candidates, call, 0)
  end

  @doc """
  The `limit:` (default 10) candidates nearest to `query`, as
  `{candidate, distance}`, by distance and then by their order in
  `candidates` (a list, or a `WellBehaved.Levenshtein.Index`, that is any
  `WellBehaved.Fuzzy.Index`: the candidates as given, in its order).

  Options as `distances/3`, and `limit:`. With `max_distance: k` only the
  candidates within `k` are returned, and the work stops early: a length
  difference beyond the cutoff costs nothing, and a candidate (or a batch
  of them) stops once it cannot come under the current `limit`-th best.

  Across nodes: on an index made with `Index.new(candidates, nodes:
  nodes)`, or on a list with `nodes: [node, ...]` (split into one
  contiguous slice per node for this call), every node searches its share
  in parallel over Erlang distribution (`:erpc`) and the answers merge
  into the same result as a search here. Each node has `timeout:`
  milliseconds (default 5000) to answer. If one does not, the call returns
  `{:error, {reason, node}}`, or, with `partial: true`,
  `{:partial, hits, [{node, reason}]}`: the nearest among the shards that
  answered (`distances/3`: `nil` for each candidate of a shard that did
  not). The reasons: `:nodedown`; `:timeout`; `:no_library` (WellBehaved
  is not loaded on that node); `:shard_lost` (the process holding an
  index's shard is gone: its node restarted, or the node of the process
  that made the index stayed out of reach for 30 s; a shorter disconnect
  loses nothing); `:enomem` (native memory ran out on that node);
  `{:exit, reason}` (the call on that node exited otherwise). It never waits longer than the bound, and a search still
  running on a node at the bound, or whose caller died, is stopped there
  (its native job freed). An index made without `nodes:` lives on the
  node that made it: used on another node (or forged), it raises
  `ArgumentError` saying so.

      iex> names = ["Jonathan", "Johanna", "Jon", "Joanne", "Nathan"]
      iex> WellBehaved.Levenshtein.nearest("Johnathan", names, limit: 2)
      [{"Jonathan", 1}, {"Johanna", 4}]
      iex> WellBehaved.Levenshtein.nearest("Johnathan", names, max_distance: 4)
      [{"Jonathan", 1}, {"Johanna", 4}, {"Nathan", 4}]
  """
  @spec nearest(binary(), [binary()] | WellBehaved.Levenshtein.Index.t(), keyword()) ::
          [{binary(), non_neg_integer()}]
          | {:error, :enomem | {atom() | tuple(), node()}}
          | {:partial, [{binary(), non_neg_integer()}], [{node(), term()}]}
  def nearest(query, candidates, opts \\ []) do
    call = Call.options!(@nearest, opts, [:limit | @search_known])
    search(@nearest, query, candidates, call, call.limit)
  end

  # a [:well_behaved, :search] span around the search when events are on
  defp search(name, query, candidates, call, limit) do
    if Telemetry.on?(),
      do:
        Events.search(name, candidates, if(limit > 0, do: limit), call, fn ->
          searched(name, query, candidates, call, limit)
        end),
      else: searched(name, query, candidates, call, limit)
  end

  # Here, or over shards: a distributed index's, or a list split over the
  # nodes of `nodes:` for this call.
  defp searched(name, query, candidates, %{unit: :grapheme} = call, limit) do
    Call.query!(name, query)

    case candidates do
      %Index{} ->
        Graphemes.no_index!(name, call)

      list when is_list(list) ->
        Call.count!(name, list)
        Call.binaries!(name, list)

        case Graphemes.prepare(name, [query | list], :levenshtein) do
          {:ok, [mapped | texts]} ->
            name
            |> searched(mapped, texts, %{call | unit: :codepoint}, limit)
            |> as_given(list, texts, limit)

          {:invalid_utf8, 0} ->
            Errors.raise!(name, {:invalid_utf8, :query})

          {:invalid_utf8, at} ->
            Errors.raise!(name, {:invalid_utf8, at - 1})
        end

      other ->
        Options.invalid!(name, "candidates", other, "a list of binaries or an index")
    end
  end

  defp searched(name, query, candidates, call, limit) do
    Call.query!(name, query)
    remote = if call.remote == [], do: nil, else: Distributed.options(name, call.remote)

    case {candidates, remote} do
      {%Index{shards: [_ | _] = shards, size: size} = index, settings}
      when settings == nil or settings.nodes == nil ->
        # the index's timeout, unless the call gives its own
        settings = Distributed.options(name, call.remote ++ [timeout: index.timeout])
        Search.distributed(name, query, {:shards, shards}, size, call, limit, settings)

      {%Index{}, %{nodes: nodes}} when nodes != nil ->
        Options.invalid!(name, :nodes, nodes, "a list of candidates: an index is split \
        over nodes when made, by Index.new(candidates, nodes: nodes)")

      {%Index{} = index, _} ->
        failed(name, Search.on_index(query, index, call, limit, name))

      {list, %{nodes: [_ | _]} = settings} when is_list(list) ->
        count = Call.count!(name, list)
        Call.binaries!(name, list)
        Search.distributed(name, query, {:list, list}, count, call, limit, settings)

      {list, _} when is_list(list) ->
        failed(name, Search.run(query, {:list, list}, nil, call, limit, name))

      {other, _} ->
        Options.invalid!(name, "candidates", other, "a list of binaries or an index")
    end
  end

  # the hits of a search on texts made graphemes: the candidates as given
  # (a text of the call's maps to one given text: the mapping is one to one)
  defp as_given(result, _given, _texts, 0), do: result

  defp as_given(result, given, texts, _limit) do
    back = for {g, t} <- Enum.zip(given, texts), g != t, into: %{}, do: {t, g}
    restore = fn hits -> for {t, d} <- hits, do: {Map.get(back, t, t), d} end

    case result do
      {:partial, hits, failed} -> {:partial, restore.(hits), failed}
      {:error, _} = error -> error
      hits -> restore.(hits)
    end
  end

  defp failed(name, {:error, _} = error), do: Errors.failed(name, error)
  defp failed(_name, result), do: result

  # the distance, or an error for unwrap/1 to raise
  defp external(a, b, unit, max) do
    case External.levenshtein(a, b, unit, max) do
      {:ok, distance} -> distance
      {:error, {:invalid_utf8, _}} = error -> error
      {:error, :enomem} = error -> error
      {:error, reason} -> raise External.Error, reason: reason
    end
  end

  defp unwrap(distance) when is_integer(distance), do: distance

  defp unwrap({:error, {:invalid_utf8, which}}),
    do: Errors.raise!(@distance, {:invalid_utf8, {:argument, which}})

  defp unwrap({:error, reason}), do: Errors.raise!(@distance, reason)
end
