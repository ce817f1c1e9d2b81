defmodule WellBehaved.Fuzzy.Index.Segment do
  @moduledoc false
  # A segment of a WellBehaved.Fuzzy.Index: `count` candidates packed
  # natively once (as scored, with the search core's batches; as given,
  # when a processor changed them; their keys), the tokens of each sorted
  # for the token sort scores, and the positions of the entries deleted
  # since it was packed. See the index's documentation for how segments
  # are merged and packed again.

  alias WellBehaved.Native
  alias WellBehaved.Search.{Errors, Pack}

  @typedoc """
  How segments are made: with their tokens sorted (`tokens`), the batches
  made by a job in `schedule` (`tiny_slices`), `name` the public function
  a native refusal is raised for.
  """
  @type build :: %{
          tokens: boolean(),
          schedule: WellBehaved.Runtime.mode(),
          tiny_slices: boolean(),
          name: String.t()
        }

  @doc "How the segments of an index are made, with or without their `tokens` sorted."
  @spec build(boolean()) :: build()
  def build(tokens),
    do: %{
      tokens: tokens,
      schedule: :auto,
      tiny_slices: false,
      name: "WellBehaved.Fuzzy.Index.add/2"
    }

  @typedoc """
  A native packed set of `count` candidates as scored (processed), the
  one of their texts as given when those differ (else nil), and their
  keys: consecutive positions from `base`, or a packed set of their
  external term format. Nothing of a size the candidates set lives in
  the process: an index is cheap to hold, send and collect. sorted: the
  scored texts' tokens sorted and joined by one space (split at ASCII
  whitespace), packed with their batches, for the token sort scores; nil
  when every one is its text (single tokens); false when not made (the
  token sort scores then sort each candidate's tokens as they score it). ascii: every scored text is
  ASCII (in codepoints too, the tokens are those). dead: the positions of
  entries deleted since the segment was packed (at most half of them:
  then it is packed again without them).
  """
  @type t :: %{
          ref: reference(),
          count: non_neg_integer(),
          texts: reference() | nil,
          keys: {:positions, non_neg_integer()} | reference(),
          sorted: reference() | nil | false,
          ascii: boolean(),
          dead: MapSet.t(non_neg_integer())
        }

  # native memory a call of pack_slice/pack_pick hands back, at most
  @chunk 4096
  # no entry deleted
  @none MapSet.new()

  @doc """
  A segment of `texts` (as given), `scored` (as processed) and their
  `keys`, made as `build` says: `{:ok, segment}`, `{:ok, nil}` for no
  texts, or `{:error, :enomem}`.
  """
  @spec new([binary()], [binary()], term(), build()) :: {:ok, t() | nil} | {:error, :enomem}
  def new(texts, scored, keys, build)

  def new([], _scored, _keys, _build), do: {:ok, nil}

  def new(texts, scored, keys, build) do
    count = length(texts)

    with {:ok, ref} <- indexed(scored, count, build),
         {:ok, texts_ref} <-
           if(scored == texts, do: {:ok, nil}, else: packed(texts, count, build.name)),
         {:ok, keys} <- packed_keys(keys, count, build.name),
         {:ok, sorted_ref} <- sorted(ref, count, build) do
      {:ok,
       %{
         ref: ref,
         count: count,
         texts: texts_ref,
         keys: keys,
         sorted: sorted_ref,
         ascii: Native.pack_ascii(ref),
         dead: @none
       }}
    end
  end

  # the scored texts' tokens sorted (nil: each is its own), or not made;
  # made natively from the packed scored texts, by a job
  defp sorted(_ref, _count, %{tokens: false}), do: {:ok, false}

  defp sorted(ref, count, build) do
    case Pack.sorted(ref, count, build.schedule, build.tiny_slices, build.name) do
      {:ok, nil} ->
        {:ok, nil}

      {:ok, sorted, ^count} ->
        :ok = Native.pack_keep(sorted)
        {:ok, sorted}

      {:error, _} = error ->
        Errors.failed(build.name, error)
    end
  end

  # the scored texts: packed with the search core's batches, made once
  defp indexed(list, count, build) do
    pack = &Pack.index(&1, &2, build.schedule, build.tiny_slices, build.name)
    packed(list, count, build.name, pack)
  end

  defp packed(list, count, name, pack \\ &Pack.pack/2) do
    case pack.(list, count) do
      {:ok, ref, ^count} ->
        :ok = Native.pack_keep(ref)
        {:ok, ref}

      {:error, _} = error ->
        Errors.failed(name, error)
    end
  end

  # consecutive positions need nothing stored
  defp packed_keys({:positions, base}, _count, _name), do: {:ok, {:positions, base}}

  defp packed_keys([base | _] = keys, count, name) when is_integer(base) do
    if consecutive?(keys, base),
      do: {:ok, {:positions, base}},
      else: packed_keys({:own, keys}, count, name)
  end

  defp packed_keys({:own, keys}, count, name),
    do: keys |> Enum.map(&key_binary/1) |> packed(count, name) |> hashed(name)

  defp packed_keys(keys, count, name), do: packed_keys({:own, keys}, count, name)

  # keys of their own are found by the hash of their bytes (pack_find)
  defp hashed({:ok, ref}, name) do
    case Native.pack_hash(ref) do
      :more -> hashed({:ok, ref}, name)
      :done -> {:ok, ref}
      {:error, _} = error -> Errors.failed(name, error)
    end
  end

  defp hashed(error, _name), do: error

  # a key as stored: its external format, the same bytes for equal terms
  defp key_binary(key), do: :erlang.term_to_binary(key, [:deterministic])

  defp consecutive?([], _next), do: true
  defp consecutive?([next | rest], next), do: consecutive?(rest, next + 1)
  defp consecutive?(_keys, _next), do: false

  # the entries of a segment still in it (deleted ones wait, marked dead,
  # until the segment is packed again)
  @doc "The number of its entries still live."
  @spec live(t()) :: non_neg_integer()
  def live(segment), do: segment.count - MapSet.size(segment.dead)

  @doc false
  # whether a segment's candidate at `position` is still in the index
  @spec live?(t(), non_neg_integer()) :: boolean()
  def live?(segment, position), do: not MapSet.member?(segment.dead, position)

  @doc false
  # how many hits to ask a segment for, so that `limit` of them are live
  @spec search_limit(t(), pos_integer() | :all) :: pos_integer() | :all
  def search_limit(_segment, :all), do: :all
  def search_limit(segment, limit), do: limit + MapSet.size(segment.dead)

  @doc false
  # a segment's entries, {key, text as given}
  @spec pairs(t()) :: [{term(), binary()}]
  def pairs(segment) do
    {keys, texts, _scored} = entries(segment)
    Enum.zip(keys, texts)
  end

  @doc false
  # the scored texts of every segment, in order (cdist packs them as one)
  @spec scored([t()]) :: [binary()]
  def scored(segments), do: Enum.flat_map(segments, &alive(&1, all(&1.ref, &1.count)))

  @doc false
  # the texts as given and the keys of a segment's candidates at
  # `positions` (a list), in that order
  @spec texts_and_keys(t(), [non_neg_integer()]) :: {[binary()], [term()]}
  def texts_and_keys(segment, positions) do
    texts = picked(segment.texts || segment.ref, positions)

    keys =
      case segment.keys do
        {:positions, base} -> Enum.map(positions, &(base + &1))
        ref -> ref |> picked(positions) |> Enum.map(&:erlang.binary_to_term/1)
      end

    {texts, keys}
  end

  defp picked(ref, positions) do
    positions |> Enum.chunk_every(@chunk) |> Enum.flat_map(&Native.pack_pick(ref, &1))
  end

  @doc "Every live candidate of a segment: `{keys, texts as given, as scored}`."
  @spec entries(t()) :: {[term()], [binary()], [binary()]}
  def entries(segment) do
    scored = all(segment.ref, segment.count)
    texts = if segment.texts, do: all(segment.texts, segment.count), else: scored
    keys = keys(segment)
    {alive(segment, keys), alive(segment, texts), alive(segment, scored)}
  end

  # the elements of a list of a segment's candidates that are still live
  defp alive(segment, list) do
    if MapSet.size(segment.dead) == 0 do
      list
    else
      list
      |> Enum.with_index()
      |> Enum.flat_map(fn {x, at} -> if live?(segment, at), do: [x], else: [] end)
    end
  end

  defp keys(%{keys: {:positions, base}, count: count}),
    do: Enum.to_list(base..(base + count - 1)//1)

  defp keys(segment),
    do: segment.keys |> all(segment.count) |> Enum.map(&:erlang.binary_to_term/1)

  defp all(ref, count) do
    0..(count - 1)//@chunk
    |> Enum.flat_map(&Native.pack_slice(ref, &1, min(@chunk, count - &1)))
  end

  @doc """
  The segments with the last merged with the one before while that one
  is at most twice its size.
  """
  @spec merge([t()], build()) :: [t()]
  def merge(segments, build) do
    case Enum.reverse(segments) do
      [last, previous | rest] when previous.count <= 2 * last.count ->
        {k1, t1, s1} = entries(previous)
        {k2, t2, s2} = entries(last)

        case new(t1 ++ t2, s1 ++ s2, k1 ++ k2, build) do
          {:ok, merged} -> merge(Enum.reverse([merged | rest]), build)
          # no memory to merge: the two stay apart
          {:error, _} -> segments
        end

      _ ->
        segments
    end
  end

  @doc """
  The segment without the entries whose key is in `keys`: `{:ok,
  segment}`, `{:ok, nil}` when none is left, or `{:error, :enomem}`.
  """
  # A deletion marks the segment's entries with the keys dead: found in
  # time proportional to the keys (positions by arithmetic, keys of their
  # own through the native hash of their external format), nothing
  # packed again. Once half its entries are dead, the segment is packed
  # again without them, which costs its size, paid for by the deletions
  # that made half of it dead (each deleted entry pays for two packed).
  @spec without(t(), [term()], build()) :: {:ok, t() | nil} | {:error, :enomem}
  def without(segment, keys, build) do
    dead = Enum.reduce(positions(segment, keys), segment.dead, &MapSet.put(&2, &1))

    cond do
      MapSet.size(dead) == MapSet.size(segment.dead) ->
        {:ok, segment}

      MapSet.size(dead) == segment.count ->
        {:ok, nil}

      2 * MapSet.size(dead) >= segment.count ->
        {keys, texts, scored} = entries(%{segment | dead: dead})
        new(texts, scored, keys, build)

      true ->
        {:ok, %{segment | dead: dead}}
    end
  end

  # the positions in a segment of the entries whose key is one of `keys`
  defp positions(%{keys: {:positions, base}, count: count}, keys) do
    for key <- keys, is_integer(key), key >= base, key < base + count, do: key - base
  end

  defp positions(segment, keys) do
    keys
    |> Enum.map(&key_binary/1)
    |> Enum.chunk_every(@chunk)
    |> Enum.flat_map(&Native.pack_find(segment.keys, &1))
  end
end
