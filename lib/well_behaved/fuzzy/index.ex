defmodule WellBehaved.Fuzzy.Index do
  @moduledoc """
  Candidates kept in native memory for repeated searches with
  `WellBehaved.Fuzzy.extract/3` and `extract_one/3`, which take an index
  in place of a list or a map: nothing is copied at each search, and the
  processor ran once, when the candidates came in.

  An index is a value: `add/3` and `delete/2` return a new index and leave
  the old one as it was (both share what did not change). Its entries are
  `{key, candidate}`, in the order they came in; a candidate given without
  a key gets the next position as its key (0, 1, ...). It enumerates
  (`Enum.to_list/1` gives the entries), and `dump/1` makes it a binary
  that `load/1` makes an index again, on this node or another.

  Inside, the candidates are in a few segments, each packed natively
  once: an addition is a new segment, merged with the last one while it
  is at least half its size (so there are O(log n) segments, and each
  candidate is packed O(log n) times over the index's life); a deletion
  packs the segments that held the keys again. The native memory is freed
  when the last index using it is garbage collected, and counts in
  `WellBehaved.Runtime.stats/0`'s `resident_bytes` while it lives.

      iex> alias WellBehaved.Fuzzy.Index
      iex> index = Index.new(["apple", "maple"], processor: :default)
      iex> index = Index.add(index, [{:fruit, "Apply"}])
      iex> WellBehaved.Fuzzy.extract("APPEL", index, scorer: :indel, score: :distance, limit: 2)
      [{"apple", 2, 0}, {"Apply", 2, :fruit}]
      iex> index |> Index.delete(0) |> Enum.to_list()
      [{1, "maple"}, {:fruit, "Apply"}]
      iex> index |> Index.dump() |> Index.load() |> Index.size()
      3
  """

  alias WellBehaved.Options
  alias WellBehaved.Fuzzy.Processor
  alias WellBehaved.Levenshtein.{Errors, Search}

  @new "WellBehaved.Fuzzy.Index.new/2"
  @add "WellBehaved.Fuzzy.Index.add/2"
  @load "WellBehaved.Fuzzy.Index.load/1"
  @dump_version 1

  @enforce_keys [:segments, :size, :next, :processor]
  defstruct [:segments, :size, :next, :processor]

  @typedoc """
  An index: its segments (oldest first), its number of entries, the key
  the next candidate without one gets, and the processor its candidates
  went through (`nil`, `:default`, or a function).
  """
  @type t :: %__MODULE__{
          segments: [segment()],
          size: non_neg_integer(),
          next: non_neg_integer(),
          processor: nil | :default | (binary() -> binary())
        }

  @typedoc false
  # a native packed set of `count` candidates: their texts as given, as
  # scored (processed), and their keys
  @type segment :: %{
          ref: reference(),
          count: non_neg_integer(),
          texts: tuple(),
          scored: tuple(),
          keys: tuple()
        }

  @doc """
  An index of `choices` (binaries, `{key, binary}` pairs, or a map, as
  `WellBehaved.Fuzzy.extract/3` takes them).

  `processor:` (`nil`, `:default`, or a function of one binary) is applied
  to every candidate now, and to the query of every search on the index.
  Raises `ArgumentError` on a candidate that is not a binary; returns
  `{:error, :enomem}` when native memory runs out.
  """
  @spec new(WellBehaved.Fuzzy.choices(), keyword()) :: t() | {:error, :enomem}
  def new(choices, opts \\ []) do
    processor =
      case opts do
        [] ->
          nil

        [processor: p] ->
          check_processor!(@new, p)

        other ->
          Options.bad_option!(@new, List.first(other -- [processor: nil]), [:processor], other)
      end

    add(%__MODULE__{segments: [], size: 0, next: 0, processor: processor}, choices)
  end

  @doc """
  The index with `choices` added after its entries (processed by the
  index's processor). Returns `{:error, :enomem}` when native memory runs
  out.
  """
  @spec add(t(), WellBehaved.Fuzzy.choices()) :: t() | {:error, :enomem}
  def add(%__MODULE__{} = index, choices) do
    {texts, keys} = entries!(@add, choices, index.next)
    fun = Processor.function(index.processor)
    scored = if fun, do: Enum.map(texts, fun), else: texts

    case segment(texts, scored, keys) do
      {:ok, nil} ->
        index

      {:ok, segment} ->
        segments = merge(index.segments ++ [segment])
        added = segment.count
        %{index | segments: segments, size: index.size + added, next: index.next + added}

      {:error, _} = error ->
        error
    end
  end

  @doc """
  The index without the entries whose key is `key`, or is in `keys` (a
  list). Keys it does not hold are ignored.
  """
  @spec delete(t(), WellBehaved.Fuzzy.key() | [WellBehaved.Fuzzy.key()]) ::
          t() | {:error, :enomem}
  def delete(%__MODULE__{} = index, keys) when is_list(keys) do
    gone = MapSet.new(keys)

    index.segments
    |> Enum.reduce_while({[], 0}, fn segment, {kept, size} ->
      case without(segment, gone) do
        {:ok, nil} -> {:cont, {kept, size}}
        {:ok, s} -> {:cont, {[s | kept], size + s.count}}
        {:error, _} = error -> {:halt, error}
      end
    end)
    |> case do
      {:error, _} = error -> error
      {kept, size} -> %{index | segments: Enum.reverse(kept), size: size}
    end
  end

  def delete(%__MODULE__{} = index, key), do: delete(index, [key])

  @doc "The number of entries."
  @spec size(t()) :: non_neg_integer()
  def size(%__MODULE__{size: size}), do: size

  @doc """
  The index as a binary (its entries, as given and as processed), for
  `load/1` here or on another node. A processor that is a function is not
  kept: the loaded index searches with no processor for its queries
  (process them yourself), `:default` is kept.
  """
  @spec dump(t()) :: binary()
  def dump(%__MODULE__{} = index) do
    rows =
      for s <- index.segments do
        {Tuple.to_list(s.keys), Tuple.to_list(s.texts),
         if(s.scored == s.texts, do: nil, else: Tuple.to_list(s.scored))}
      end

    processor = if index.processor == :default, do: :default, else: nil

    :erlang.term_to_binary({__MODULE__, @dump_version, processor, index.next, rows}, [:compressed])
  end

  @doc """
  The index a binary of `dump/1` holds, packed natively again. Raises
  `ArgumentError` on a binary that is not one; returns `{:error, :enomem}`
  when native memory runs out.
  """
  @spec load(binary()) :: t() | {:error, :enomem}
  def load(binary) when is_binary(binary) do
    case safe_decode(binary) do
      {__MODULE__, @dump_version, processor, next, rows}
      when processor in [nil, :default] and is_integer(next) and is_list(rows) ->
        rows
        |> Enum.reduce_while({[], 0}, fn row, {segments, size} ->
          case load_row(row) do
            {:ok, s} -> {:cont, {[s | segments], size + s.count}}
            {:error, _} = error -> {:halt, error}
          end
        end)
        |> case do
          {:error, _} = error ->
            error

          {segments, size} ->
            segments = segments |> Enum.reverse() |> Enum.reject(&is_nil/1)
            %__MODULE__{segments: segments, size: size, next: next, processor: processor}
        end

      _ ->
        Options.invalid!(
          @load,
          "binary",
          :binary.part(binary, 0, min(16, byte_size(binary))),
          "a binary made by dump/1"
        )
    end
  end

  def load(other), do: Options.invalid!(@load, "argument", other, "a binary made by dump/1")

  defp safe_decode(binary) do
    :erlang.binary_to_term(binary, [:safe])
  rescue
    ArgumentError -> :error
  end

  defp load_row({keys, texts, scored})
       when is_list(keys) and is_list(texts) and (is_list(scored) or is_nil(scored)) do
    scored = scored || texts

    if length(keys) == length(texts) and length(scored) == length(texts) and
         Enum.all?(texts, &is_binary/1) and Enum.all?(scored, &is_binary/1) do
      segment(texts, scored, keys)
    else
      Options.invalid!(@load, "binary", "(a segment)", "a binary made by dump/1")
    end
  end

  defp load_row(_row),
    do: Options.invalid!(@load, "binary", "(a segment)", "a binary made by dump/1")

  # ---- segments -------------------------------------------------------------

  defp segment([], _scored, _keys), do: {:ok, nil}

  defp segment(texts, scored, keys) do
    count = length(texts)

    case Search.pack(scored, count) do
      {:ok, ref, ^count} ->
        {:ok,
         %{
           ref: ref,
           count: count,
           texts: List.to_tuple(texts),
           scored: List.to_tuple(scored),
           keys: List.to_tuple(keys)
         }}

      {:error, _} = error ->
        Errors.failed(@add, error)
    end
  end

  # the last segment merged with the one before while that one is at most
  # twice its size
  defp merge(segments) do
    case Enum.reverse(segments) do
      [last, previous | rest] when previous.count <= 2 * last.count ->
        texts = Tuple.to_list(previous.texts) ++ Tuple.to_list(last.texts)
        scored = Tuple.to_list(previous.scored) ++ Tuple.to_list(last.scored)
        keys = Tuple.to_list(previous.keys) ++ Tuple.to_list(last.keys)

        case segment(texts, scored, keys) do
          {:ok, merged} -> merge(Enum.reverse([merged | rest]))
          # no memory to merge: the two stay apart
          {:error, _} -> segments
        end

      _ ->
        segments
    end
  end

  defp without(segment, gone) do
    keys = Tuple.to_list(segment.keys)

    if Enum.any?(keys, &MapSet.member?(gone, &1)) do
      kept =
        [keys, Tuple.to_list(segment.texts), Tuple.to_list(segment.scored)]
        |> Enum.zip()
        |> Enum.reject(fn {key, _, _} -> MapSet.member?(gone, key) end)

      {keys, texts, scored} =
        Enum.reduce(Enum.reverse(kept), {[], [], []}, fn {k, t, s}, {ks, ts, ss} ->
          {[k | ks], [t | ts], [s | ss]}
        end)

      segment(texts, scored, keys)
    else
      {:ok, segment}
    end
  end

  # the texts and keys of choices (positions from `next` for binaries)
  defp entries!(name, choices, _next) when is_map(choices) do
    pairs = Map.to_list(choices)

    Enum.each(pairs, fn
      {_k, text} when is_binary(text) -> :ok
      {_k, text} -> Options.invalid!(name, "choices", text, "binaries as the map's values")
    end)

    {Enum.map(pairs, &elem(&1, 1)), Enum.map(pairs, &elem(&1, 0))}
  end

  defp entries!(name, choices, next) when is_list(choices) do
    choices
    |> Enum.with_index()
    |> Enum.map(fn
      {text, at} when is_binary(text) -> {text, next + at}
      {{key, text}, _at} when is_binary(text) -> {text, key}
      {_other, at} -> Errors.raise!(name, {:not_a_binary, at})
    end)
    |> Enum.unzip()
  end

  defp entries!(name, other, _next),
    do: Options.invalid!(name, "choices", other, "a list of binaries or {key, binary}, or a map")

  defp check_processor!(_name, p) when p in [nil, :default] or is_function(p, 1), do: p

  defp check_processor!(name, p),
    do: Options.invalid!(name, :processor, p, "nil, :default or a function of one argument")

  defimpl Enumerable do
    def count(index), do: {:ok, index.size}
    def member?(_index, _element), do: {:error, __MODULE__}
    def slice(_index), do: {:error, __MODULE__}

    def reduce(index, acc, fun) do
      index.segments
      |> Stream.flat_map(fn s -> Enum.zip(Tuple.to_list(s.keys), Tuple.to_list(s.texts)) end)
      |> Enumerable.reduce(acc, fun)
    end
  end
end
