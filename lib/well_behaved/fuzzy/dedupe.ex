defmodule WellBehaved.Fuzzy.Dedupe do
  @moduledoc false
  # WellBehaved.Fuzzy.dedupe/2: near-duplicates grouped through searches
  # of the candidates against themselves, never a whole matrix.
  #
  #  1. Each candidate is processed once. With `numbers: :exact`, only
  #     candidates whose tokens holding a digit are the same (as a
  #     multiset) are compared: they are split into blocks by those
  #     tokens, so "iphone 14" and "iphone 15" never meet.
  #  2. A block is sorted by length and cut into chunks, each made into an
  #     index once. For the scorers whose score bounds the lengths (the
  #     ratio, QRatio, the token sort ratio in bytes: 2 * shorter / (sum) >= the
  #     cutoff), a candidate searches only the chunks whose lengths it
  #     can reach; for the others, every chunk from its own on. Each pair
  #     is scored once (a hit counts only after its query in the order).
  #  3. The chunks' searches run `workers:` at a time; the pairs within
  #     the cutoff join their candidates' groups (union by size).
  #
  # Memory: the candidates, one chunk's index per worker, and the pairs.

  alias WellBehaved.Fuzzy.{Call, Search}
  alias WellBehaved.Fuzzy.Index.Tokens

  # candidates an index of a block holds
  @chunk 2048

  @doc "The groups of `choices` (options checked); see `Fuzzy.dedupe/2`."
  @spec groups(String.t(), term(), Call.t(), :exact | :ignore) ::
          [[{binary(), term()}]] | {:error, term()}
  def groups(name, choices, call, numbers) do
    {texts, scored, keys} = Search.listed(name, choices, call)
    search_call = %{call | processor: nil, limit: :all}
    fraction = fraction(call)
    measure = measure(call, fraction)

    entries =
      scored
      |> Enum.with_index()
      |> Enum.map(fn {text, at} -> {at, text, measure.(text)} end)

    blocks =
      if numbers == :exact,
        do: entries |> Enum.group_by(fn {_at, text, _len} -> numbers(text) end) |> Map.values(),
        else: [entries]

    units = Enum.flat_map(blocks, &searches(&1, fraction))

    units
    |> Task.async_stream(&unit_pairs(name, &1, search_call),
      max_concurrency: call.workers || System.schedulers_online(),
      ordered: false,
      timeout: :infinity
    )
    |> Enum.reduce_while([], fn
      {:ok, {:pairs, pairs}}, acc -> {:cont, [pairs | acc]}
      {:ok, {:error, _} = error}, _acc -> {:halt, error}
      {:ok, {:raise, e, stack}}, _acc -> reraise e, stack
    end)
    |> case do
      {:error, _} = error -> error
      pairs -> grouped(pairs, length(texts), List.to_tuple(texts), keys)
    end
  end

  # the cutoff as a normalized similarity of the ratio family (nil: none
  # that bounds lengths)
  # (the token sort ratio's words in codepoints split at Unicode white
  # space too, which a count here would not see: no bound there)
  defp fraction(%{scorer: scorer, score_cutoff: c, unit: unit} = call)
       when ((scorer in [:ratio, :qratio] and unit in [:byte, :codepoint]) or
               (scorer == :token_sort_ratio and unit == :byte)) and is_number(c) do
    case call.score do
      :normalized_similarity -> c
      :similarity -> c / 100
      :normalized_distance -> 1 - c
      :distance -> 1 - c / 100
    end
  end

  defp fraction(_call), do: nil

  # a candidate's length as its scorer compares it (tokens sorted and
  # joined by one space for the token sort ratio), in units; nothing
  # when no length bound holds
  defp measure(_call, nil), do: fn _text -> 0 end

  defp measure(%{scorer: :token_sort_ratio, unit: unit}, _fraction) do
    fn text ->
      tokens = :binary.split(text, Tokens.splitter(), [:global, :trim_all])
      Enum.reduce(tokens, max(length(tokens) - 1, 0), &(units(&1, unit) + &2))
    end
  end

  defp measure(%{unit: unit}, _fraction), do: &units(&1, unit)

  defp units(text, :byte), do: byte_size(text)

  defp units(text, :codepoint),
    do: for(<<b <- text>>, Bitwise.band(b, 0xC0) != 0x80, reduce: 0, do: (n -> n + 1))

  # the tokens of a candidate that hold a digit, sorted
  defp numbers(text) do
    text
    |> :binary.split(Tokens.splitter(), [:global, :trim_all])
    |> Enum.filter(&(:binary.match(&1, ~w(0 1 2 3 4 5 6 7 8 9)) != :nomatch))
    |> Enum.sort()
  end

  # A block's searches: {chunk, queries}, each a list of
  # {order, position, text}, the chunk's candidates after their queries
  defp searches([_one], _fraction), do: []

  defp searches(block, fraction) do
    sorted =
      block
      |> Enum.sort_by(fn {at, _text, len} -> {len, at} end)
      |> Enum.with_index()
      |> Enum.map(fn {{at, text, len}, order} -> {order, at, text, len} end)

    queries = List.to_tuple(sorted)

    sorted
    |> Enum.chunk_every(@chunk)
    |> Enum.map(fn [{_first, _, _, shortest} | _] = chunk ->
      {last, _, _, _} = List.last(chunk)
      from = reach_from(queries, shortest, fraction)
      asking = for k <- from..last//1, do: elem(queries, k)
      {Enum.map(chunk, &drop_len/1), Enum.map(asking, &drop_len/1)}
    end)
  end

  defp drop_len({order, at, text, _len}), do: {order, at, text}

  # the first candidate (in length order) whose longest reachable length
  # is at least `shortest`: the lengths 2 * a / (a + b) >= f allow, b <=
  # a * (2 - f) / f (a little wider: the scores are floats)
  defp reach_from(_queries, _shortest, nil), do: 0

  defp reach_from(queries, shortest, f) when f > 0 do
    Enum.find(0..(tuple_size(queries) - 1)//1, tuple_size(queries), fn k ->
      {_, _, _, len} = elem(queries, k)
      len * (2 - f) / f * (1 + 1.0e-9) + 1.0e-9 >= shortest
    end)
  end

  defp reach_from(_queries, _shortest, _f), do: 0

  # the pairs {position, position} within the cutoff among a unit's
  defp unit_pairs(name, {chunk, asking}, call) do
    {set, call} = Search.prepare_many(name, Enum.map(chunk, fn {o, _at, t} -> {o, t} end), call)
    positions = Map.new(chunk, fn {o, at, _t} -> {o, at} end)

    try do
      Enum.reduce_while(asking, {:pairs, []}, fn {order, at, text}, {:pairs, acc} ->
        case Search.search_in(name, text, set, call) do
          {:error, _} = error ->
            {:halt, error}

          hits ->
            found = for {_t, _s, o} <- hits, o > order, do: {at, Map.fetch!(positions, o)}
            {:cont, {:pairs, found ++ acc}}
        end
      end)
    rescue
      e -> {:raise, e, __STACKTRACE__}
    after
      Search.release(set)
    end
  end

  # connected candidates, each group in the order of the candidates, the
  # groups in the order of their first
  defp grouped(pair_lists, count, texts, keys) do
    forest =
      Enum.reduce(pair_lists, {%{}, %{}}, fn pairs, forest ->
        Enum.reduce(pairs, forest, fn {a, b}, forest -> union(forest, a, b) end)
      end)

    {parents, _sizes} = forest

    0..(count - 1)//1
    |> Enum.group_by(&root(parents, &1))
    |> Map.values()
    |> Enum.sort_by(&hd/1)
    |> Enum.map(fn members ->
      Enum.map(members, fn at -> {elem(texts, at), if(keys, do: elem(keys, at), else: at)} end)
    end)
  end

  # a forest in maps: a position's parent (a root has none) and a root's
  # size (1 when absent); the smaller tree goes under the larger, so a
  # root is at most log2(count) steps away
  defp root(parents, at) do
    case parents do
      %{^at => parent} -> root(parents, parent)
      _ -> at
    end
  end

  defp union({parents, sizes} = forest, a, b) do
    {ra, rb} = {root(parents, a), root(parents, b)}
    {sa, sb} = {Map.get(sizes, ra, 1), Map.get(sizes, rb, 1)}

    cond do
      ra == rb -> forest
      sa >= sb -> {Map.put(parents, rb, ra), Map.put(sizes, ra, sa + sb)}
      true -> {Map.put(parents, ra, rb), Map.put(sizes, rb, sa + sb)}
    end
  end
end
