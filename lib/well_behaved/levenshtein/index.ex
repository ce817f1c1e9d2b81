defmodule WellBehaved.Levenshtein.Index do
  @moduledoc """
  A candidate set packed once into native memory, for repeated searches:
  `WellBehaved.Levenshtein.nearest/3` and `distances/3` take an index in
  place of a list, and skip copying the candidates at every call.

  There is one index type: `new/2` makes a `WellBehaved.Fuzzy.Index`
  (its entries the candidates, keyed by their positions, with no
  processor), which `WellBehaved.Fuzzy.extract/3`, `extract_one/3` and
  `cdist/3` search as well, and which `WellBehaved.Fuzzy.Index.add/2`,
  `delete/2`, `dump/1` and `load/2` keep up. Levenshtein's functions take
  any `WellBehaved.Fuzzy.Index` in turn: its processor, if it has one,
  prepares the query, and the hits' texts are the candidates as given.

  The memory is freed when the index is garbage collected; while it lives,
  its bytes count in `WellBehaved.Runtime.stats/0`'s `resident_bytes`.
  Besides the strings, an index holds their match tables, built once for
  the vector lanes a search uses: 100,000 random strings of 10-30 bytes
  take about 14 MB in all. Unlike `WellBehaved.Fuzzy.Index.new/2`'s
  default, the index keeps no sorted tokens (`sorted_tokens: false`):
  making it costs the packing alone, and the token sort scores of
  `WellBehaved.Fuzzy.extract/3` on it are slower (make the index with
  `WellBehaved.Fuzzy.Index.new/2` for those).

      iex> index = WellBehaved.Levenshtein.Index.new(["apple", "maple", "apply"])
      iex> WellBehaved.Levenshtein.Index.size(index)
      3
      iex> WellBehaved.Levenshtein.nearest("appel", index, limit: 2)
      [{"apple", 2}, {"apply", 2}]
      iex> WellBehaved.Fuzzy.extract("appel", index, scorer: :levenshtein, score: :distance, limit: 2)
      [{"apple", 2, 0}, {"apply", 2, 2}]
  """

  alias WellBehaved.{Fuzzy, Options}
  alias WellBehaved.Levenshtein.Call
  alias WellBehaved.Search.{Distributed, Shard}

  @new "WellBehaved.Levenshtein.Index.new/2"

  @typedoc "An index: a `WellBehaved.Fuzzy.Index`."
  @type t :: Fuzzy.Index.t()

  @doc """
  Packs `candidates` (a list of binaries) into an index, a
  `WellBehaved.Fuzzy.Index` whose keys are the candidates' positions.

  Options: `schedule:` and `tiny_slices:`, as `WellBehaved.Job.call/4`
  takes them (the list is copied a slice at a time, and its batches made
  by a job). Raises `ArgumentError` naming the first element that is not
  a binary; returns `{:error, :enomem}` when native memory runs out.

  With `nodes: [node, ...]` (connected nodes, this one included if you
  like, each running `:well_behaved`), the candidates are split into one
  contiguous shard per node, packed there and held by a process that
  lives as long as the process calling `new/2`. `nearest/3` and
  `distances/3` on such an index ask every shard in parallel over Erlang
  distribution (`:erpc`) and merge the answers: the same result as one
  index holding every candidate. `timeout:` (milliseconds, default 5000)
  bounds each node's answer, here and in every search. Returns
  `{:error, {reason, node}}` (`:nodedown`, `:timeout`, `:no_library`,
  `:enomem`, as
  `WellBehaved.Levenshtein.nearest/3` lists them) when a node does not
  take its shard. The holders belong to the calling process, not to a
  connection: a node that disconnects and comes back within 30 s keeps
  its shard.
  """
  @spec new([binary()], keyword()) :: t() | {:error, :enomem | {atom() | tuple(), node()}}
  def new(candidates, opts \\ []) do
    call = Call.options!(@new, opts, [:schedule, :tiny_slices, :nodes, :timeout])

    if not is_list(candidates),
      do: Options.invalid!(@new, "candidates", candidates, "a list of binaries")

    count = Call.count!(@new, candidates)

    remote = if call.remote == [], do: nil, else: Distributed.options(@new, call.remote)

    case remote do
      %{nodes: [_ | _]} = settings ->
        Call.binaries!(@new, candidates)
        chunks = Distributed.split(candidates, count, settings.nodes)

        start = fn chunk, first ->
          args = [chunk, first, call.schedule, call.tiny_slices, @new]
          {Shard, :start_value, [self(), Fuzzy.Index, :of_binaries, args]}
        end

        case Distributed.hold(settings.nodes, chunks, settings.timeout, start) do
          {:ok, shards} ->
            %Fuzzy.Index{
              segments: [],
              size: count,
              next: count,
              processor: nil,
              sorted_tokens: false,
              shards: shards,
              timeout: settings.timeout
            }

          {:error, _} = error ->
            error
        end

      _here ->
        Fuzzy.Index.of_binaries(candidates, 0, call.schedule, call.tiny_slices, @new)
    end
  end

  @doc "The number of candidates (`WellBehaved.Fuzzy.Index.size/1`)."
  @spec size(t()) :: non_neg_integer()
  def size(index), do: Fuzzy.Index.size(index)
end
