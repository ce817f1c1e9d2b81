defmodule WellBehaved.Levenshtein do
  @moduledoc """
  Levenshtein (edit) distance with unit costs, computed natively without
  blocking the VM's schedulers.

  The algorithm is bit-parallel (Myers 1999, Hyyrö 2003): 64 cells of the
  dynamic-programming matrix per machine word, blockwise for inputs longer
  than 64 units, after stripping the common prefix and suffix. Memory is a
  match table of 256 words per 64 units of the shorter input, never the
  n×m matrix. With `max_distance: k` only a diagonal band of width O(k) is
  computed.

  Scheduling is the runtime's (see `WellBehaved.Runtime`): by default short
  calls run directly and long ones yield. `schedule: :external` runs the same
  core in a separate OS process instead (see `WellBehaved.External`).
  """

  alias WellBehaved.{External, Job, Native, Options, Runtime}

  @distance "WellBehaved.Levenshtein.distance/3"
  @known [:unit, :max_distance, :schedule, :tiny_slices]

  @type option ::
          {:unit, :byte | :codepoint}
          | {:max_distance, non_neg_integer() | nil}
          | {:schedule, Runtime.mode() | :external}
          | {:tiny_slices, boolean()}

  @doc """
  The edit distance between two binaries.

  Options:

    * `unit:` - `:byte` (default) compares bytes; `:codepoint` compares
      Unicode codepoints and requires valid UTF-8.
    * `max_distance:` - a cutoff `k`: when the distance is above `k` the
      result is `k + 1`, and the work is only O(k·n/64). `nil` (default)
      means no cutoff.
    * `schedule:` - a `t:WellBehaved.Runtime.mode/0`, default `:auto`; or
      `:external`: a server of the `WellBehaved.External` pool computes it.
    * `tiny_slices:` - for tests: one unit of work per slice, so every
      resume path runs. Slow.

  Raises `ArgumentError` on a non-binary, on invalid UTF-8 with
  `unit: :codepoint`, and on an unknown option or value. With
  `schedule: :external`, raises `WellBehaved.External.Error` when the
  server gives no answer (it died mid-call, timed out, or the pool is down).

  ## Examples

      iex> WellBehaved.Levenshtein.distance("kitten", "sitting")
      3
      iex> WellBehaved.Levenshtein.distance("héllo", "hello", unit: :codepoint)
      1
      iex> WellBehaved.Levenshtein.distance("héllo", "hello")
      2
      iex> WellBehaved.Levenshtein.distance("abcdef", "uvwxyz", max_distance: 2)
      3
  """
  @spec distance(binary(), binary(), [option()]) :: non_neg_integer()
  def distance(a, b, opts \\ [])

  def distance(a, b, []) when is_binary(a) and is_binary(b),
    do: unwrap(Job.call(&Native.levenshtein/7, [a, b, :byte, nil]))

  def distance(a, b, opts) when is_binary(a) and is_binary(b) and is_list(opts) do
    {unit, max, mode, tiny} = parse(opts, {:byte, nil, :auto, false}, opts)
    max = cutoff(a, b, max)

    case mode do
      :external -> external(a, b, unit, max)
      _ -> Job.call(&Native.levenshtein/7, [a, b, unit, max], job_opts(mode, tiny), @distance)
    end
    |> unwrap()
  end

  def distance(a, b, opts) when is_binary(a) and is_binary(b),
    do: Options.not_keyword!(@distance, opts)

  def distance(a, b, _opts) do
    {which, value} = if is_binary(a), do: {"second argument", b}, else: {"first argument", a}
    Options.invalid!(@distance, which, value, "a binary")
  end

  # the scheduling options, already checked, for Job.call/4: none when they
  # are the defaults
  defp job_opts(:auto, false), do: []
  defp job_opts(mode, false), do: [schedule: mode]
  defp job_opts(mode, tiny), do: [schedule: mode, tiny_slices: tiny]

  # a tail-recursive parser: no closures on the per-call path
  defp parse([], acc, _all), do: acc

  defp parse([{:schedule, :external} | rest], {u, k, _, t}, all),
    do: parse(rest, {u, k, :external, t}, all)

  defp parse([{:schedule, mode} | rest], {u, k, _, t}, all),
    do: parse(rest, {u, k, Runtime.check_mode!(mode, @distance, [:external]), t}, all)

  defp parse([{:unit, unit} | rest], {_, k, m, t}, all) when unit in [:byte, :codepoint],
    do: parse(rest, {unit, k, m, t}, all)

  defp parse([{:max_distance, k} | rest], {u, _, m, t}, all)
       when (is_integer(k) and k >= 0) or is_nil(k),
       do: parse(rest, {u, k, m, t}, all)

  defp parse([{:tiny_slices, tiny} | rest], {u, k, m, _}, all),
    do: parse(rest, {u, k, m, Runtime.check_tiny!(tiny, @distance)}, all)

  defp parse([{:unit, unit} | _], _, _),
    do: Options.invalid!(@distance, :unit, unit, ":byte or :codepoint")

  defp parse([{:max_distance, k} | _], _, _),
    do: Options.invalid!(@distance, :max_distance, k, "a non-negative integer or nil")

  defp parse([other | _], _, all), do: Options.bad_option!(@distance, other, @known, all)
  defp parse(_, _, all), do: Options.not_keyword!(@distance, all)

  @doc """
  The distance from `query` to each binary of `candidates` (a list, or a
  `WellBehaved.Levenshtein.Index`), in order: the results of `distance/3`
  on each pair, computed in one native job.

  Options as `distance/3`'s (`unit:`, `max_distance:`, `schedule:`,
  `tiny_slices:`), but not `schedule: :external`, and the distributed
  ones of `nearest/3` (`nodes:`, `timeout:`, `partial:`). In byte mode,
  candidates of up to 64 bytes are compared with the query in batches of
  8 to 64, one per lane of a vector; longer ones, one machine word step
  per byte (query of up to 64 bytes) or the pair algorithm. Returns
  `{:error, :enomem}` when native memory runs out (copying the candidates,
  or the search's own tables).

      iex> WellBehaved.Levenshtein.distances("kitten", ["sitting", "kitten", "", "mitten"])
      [3, 0, 6, 1]
      iex> WellBehaved.Levenshtein.distances("kitten", ["sitting", "kitchen"], max_distance: 1)
      [2, 2]
  """
  @spec distances(binary(), [binary()] | WellBehaved.Levenshtein.Index.t(), keyword()) ::
          [non_neg_integer()]
          | {:error, :enomem | {atom() | tuple(), node()}}
          | {:partial, [non_neg_integer()], [{node(), term()}]}
  def distances(query, candidates, opts \\ []),
    do: WellBehaved.Levenshtein.Search.distances(query, candidates, opts)

  @doc """
  The `limit:` (default 10) candidates nearest to `query`, as
  `{candidate, distance}`, by distance and then by their order in
  `candidates` (a list, or a `WellBehaved.Levenshtein.Index`).

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
  loses nothing); `{:exit, reason}` (the call on that node exited
  otherwise). It never waits longer than the bound, and a search still
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
  def nearest(query, candidates, opts \\ []),
    do: WellBehaved.Levenshtein.Search.nearest(query, candidates, opts)

  @doc false
  # A cutoff at or above the longer input cuts nothing (in bytes, so also in
  # codepoints): every mode and the external server then get nil, whatever
  # the integer width they decode.
  def cutoff(a, b, k) when is_integer(k),
    do: if(k >= max(byte_size(a), byte_size(b)), do: nil, else: k)

  def cutoff(_a, _b, k), do: k

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

  defp unwrap({:error, {:invalid_utf8, which}}) do
    arg = if which == 1, do: "first", else: "second"

    raise ArgumentError,
          "#{@distance}: the #{arg} argument is not valid UTF-8 (required by unit: :codepoint)"
  end

  defp unwrap({:error, :enomem}), do: raise(RuntimeError, "#{@distance}: out of native memory")

  defp unwrap({:error, reason}),
    do: raise(ArgumentError, "#{@distance}: invalid arguments: #{inspect(reason)}")
end
