defmodule WellBehaved.Levenshtein.Index do
  @moduledoc """
  A candidate set packed once into native memory, for repeated searches:
  `WellBehaved.Levenshtein.nearest/3` and `distances/3` take an index in
  place of a list, and skip copying the candidates at every call.

  The memory is freed when the index is garbage collected; while it lives,
  its bytes count in `WellBehaved.Runtime.stats/0`'s `resident_bytes`.
  Besides the strings, an index holds their match tables, built once for
  the vector lanes a search uses: 100,000 random strings of 10-30 bytes
  take about 14 MB in all.

      iex> index = WellBehaved.Levenshtein.Index.new(["apple", "maple", "apply"])
      iex> WellBehaved.Levenshtein.Index.size(index)
      3
      iex> WellBehaved.Levenshtein.nearest("appel", index, limit: 2)
      [{"apple", 2}, {"apply", 2}]
  """

  alias WellBehaved.Options
  alias WellBehaved.Levenshtein.{Call, Search}
  alias WellBehaved.Search.{Distributed, Errors}

  @new "WellBehaved.Levenshtein.Index.new/2"

  @enforce_keys [:ref, :size]
  defstruct [:ref, :size, shards: nil]

  @typedoc """
  An index: packed here (`ref`), or split into shards held on other nodes
  (`shards`: `{node, holder, size}` in input order).
  """
  @type t :: %__MODULE__{
          ref: reference() | nil,
          size: non_neg_integer(),
          shards: [{node(), pid(), non_neg_integer()}] | nil
        }

  @doc """
  Packs `candidates` (a list of binaries) into an index.

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

        case Search.shards(candidates, count, settings, call) do
          {:ok, shards} -> %__MODULE__{ref: nil, size: count, shards: shards}
          {:error, _} = error -> error
        end

      _here ->
        case Search.index(candidates, count, call, @new) do
          {:ok, ref, size} -> %__MODULE__{ref: ref, size: size}
          {:error, _} = error -> Errors.failed(@new, error)
        end
    end
  end

  @doc "The number of candidates."
  @spec size(t()) :: non_neg_integer()
  def size(%__MODULE__{size: size}), do: size
end
