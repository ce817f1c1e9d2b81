defmodule WellBehaved.Test.FuzzyReference do
  @moduledoc """
  Slow, textbook reference implementations of fuzzy string scorers, used by the
  tests as an independent check of the native implementation.

  Every scorer works on lists of integer symbols (bytes or codepoints, see
  `symbols/2`) and is a plain full-matrix dynamic program kept in a map (the
  longest common subsequence, under the ratios: one row at a time), written
  for clarity rather than speed (inputs of a few dozen symbols). The scoring
  conventions (empty inputs, token handling, `wratio/3` weights) follow
  rapidfuzz.
  """

  @byte_whitespace [9, 10, 11, 12, 13, 28, 29, 30, 31, 32]
  @codepoint_whitespace @byte_whitespace ++
                          [0x85, 0xA0, 0x1680] ++
                          Enum.to_list(0x2000..0x200A) ++
                          [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]

  ## Symbols

  @doc "Converts a binary into a list of bytes or codepoints."
  def symbols(binary, :byte) when is_binary(binary), do: :binary.bin_to_list(binary)
  def symbols(binary, :codepoint) when is_binary(binary), do: String.to_charlist(binary)

  ## Edit distances

  @doc "Weighted Wagner-Fischer distance with weights `{ins, del, sub}`."
  def levenshtein(a, b, {ins, del, sub} \\ {1, 1, 1}) do
    {ta, m} = indexed(a)
    {tb, n} = indexed(b)

    d =
      Enum.reduce(0..m, %{}, fn i, d -> Map.put(d, {i, 0}, i * del) end)
      |> then(fn d -> Enum.reduce(0..n, d, fn j, d -> Map.put(d, {0, j}, j * ins) end) end)

    d =
      for i <- range(m), j <- range(n), reduce: d do
        d ->
          cost = if at(ta, i) == at(tb, j), do: 0, else: sub

          value =
            Enum.min([
              d[{i - 1, j}] + del,
              d[{i, j - 1}] + ins,
              d[{i - 1, j - 1}] + cost
            ])

          Map.put(d, {i, j}, value)
      end

    d[{m, n}]
  end

  @doc "Largest possible weighted Levenshtein distance between lengths `m` and `n`."
  def levenshtein_maximum(m, n, {ins, del, sub}) do
    via_sub =
      if m >= n,
        do: n * sub + (m - n) * del,
        else: m * sub + (n - m) * ins

    min(m * del + n * ins, via_sub)
  end

  @doc """
  Length of the longest common subsequence: the same recurrence as the
  other distances, one row of the matrix at a time (the partial ratios
  compute it for hundreds of windows: a matrix kept in a map took most of
  the suite's reference time).
  """
  def lcs(a, b) do
    first = List.duplicate(0, length(b) + 1)

    a
    |> Enum.reduce(first, fn x, [0 | above] -> [0 | lcs_row(x, b, 0, above, 0, [])] end)
    |> List.last()
  end

  # row[j] = row_above[j - 1] + 1 when x == b[j], else max(row_above[j], row[j - 1])
  defp lcs_row(_x, [], _diagonal, [], _left, acc), do: Enum.reverse(acc)

  defp lcs_row(x, [y | ys], diagonal, [up | ups], left, acc) do
    value = if x == y, do: diagonal + 1, else: max(up, left)
    lcs_row(x, ys, up, ups, value, [value | acc])
  end

  @doc "Insertion/deletion distance: `m + n - 2 * lcs`. Maximum is `m + n`."
  def indel(a, b), do: length(a) + length(b) - 2 * lcs(a, b)

  @doc "Optimal string alignment (restricted Damerau-Levenshtein). Maximum is `max(m, n)`."
  def osa(a, b) do
    {ta, m} = indexed(a)
    {tb, n} = indexed(b)

    d =
      Enum.reduce(0..m, %{}, fn i, d -> Map.put(d, {i, 0}, i) end)
      |> then(fn d -> Enum.reduce(0..n, d, fn j, d -> Map.put(d, {0, j}, j) end) end)

    d =
      for i <- range(m), j <- range(n), reduce: d do
        d ->
          cost = if at(ta, i) == at(tb, j), do: 0, else: 1

          value = Enum.min([d[{i - 1, j}] + 1, d[{i, j - 1}] + 1, d[{i - 1, j - 1}] + cost])

          value =
            if i > 1 and j > 1 and at(ta, i) == at(tb, j - 1) and at(ta, i - 1) == at(tb, j),
              do: min(value, d[{i - 2, j - 2}] + 1),
              else: value

          Map.put(d, {i, j}, value)
      end

    d[{m, n}]
  end

  @doc """
  Unrestricted Damerau-Levenshtein distance (Lowrance-Wagner), with the
  `da` last-row map and an infinity border at index -1. Maximum is `max(m, n)`.
  """
  def damerau_levenshtein(a, b) do
    {ta, m} = indexed(a)
    {tb, n} = indexed(b)
    inf = m + n

    d =
      for(i <- -1..m, do: {i, -1})
      |> Enum.concat(for j <- -1..n, do: {-1, j})
      |> Map.new(fn key -> {key, inf} end)
      |> then(fn d -> Enum.reduce(0..m, d, fn i, d -> Map.put(d, {i, 0}, i) end) end)
      |> then(fn d -> Enum.reduce(0..n, d, fn j, d -> Map.put(d, {0, j}, j) end) end)

    {d, _da} =
      Enum.reduce(range(m), {d, %{}}, fn i, {d, da} ->
        {d, _db} =
          Enum.reduce(range(n), {d, 0}, fn j, {d, db} ->
            k = Map.get(da, at(tb, j), 0)
            l = db
            {cost, db} = if at(ta, i) == at(tb, j), do: {0, j}, else: {1, db}

            value =
              Enum.min([
                d[{i - 1, j - 1}] + cost,
                d[{i, j - 1}] + 1,
                d[{i - 1, j}] + 1,
                d[{k - 1, l - 1}] + (i - k - 1) + 1 + (j - l - 1)
              ])

            {Map.put(d, {i, j}, value), db}
          end)

        {d, Map.put(da, at(ta, i), i)}
      end)

    d[{m, n}]
  end

  @doc "Mismatches over the common length plus the length difference. Maximum is `max(m, n)`."
  def hamming(a, b) do
    mismatches = Enum.zip(a, b) |> Enum.count(fn {x, y} -> x != y end)
    mismatches + abs(length(a) - length(b))
  end

  ## Jaro and Jaro-Winkler

  @doc "Jaro similarity in `0.0..1.0`."
  def jaro([], []), do: 1.0
  def jaro([], _), do: 0.0
  def jaro(_, []), do: 0.0

  def jaro(a, b) do
    {p, t} = if length(a) <= length(b), do: {a, b}, else: {b, a}
    lp = length(p)
    lt = length(t)
    bound = max(0, div(max(lp, lt), 2) - 1)
    tt = List.to_tuple(t)

    # For each symbol of p in order, the first unmatched equal symbol of t in range.
    {pairs, _used} =
      p
      |> Enum.with_index()
      |> Enum.reduce({[], MapSet.new()}, fn {c, i}, {pairs, used} ->
        from = max(0, i - bound)
        to = min(lt - 1, i + bound)

        hit =
          if from <= to,
            do: Enum.find(from..to//1, fn j -> elem(tt, j) == c and j not in used end)

        case hit do
          nil -> {pairs, used}
          j -> {[{i, j} | pairs], MapSet.put(used, j)}
        end
      end)

    case length(pairs) do
      0 ->
        0.0

      matches ->
        p_matched = pairs |> Enum.map(&elem(&1, 0)) |> Enum.sort() |> Enum.map(&Enum.at(p, &1))
        t_matched = pairs |> Enum.map(&elem(&1, 1)) |> Enum.sort() |> Enum.map(&elem(tt, &1))
        k = Enum.zip(p_matched, t_matched) |> Enum.count(fn {x, y} -> x != y end)

        mf = matches / 1
        tf = div(k, 2) / 1
        (mf / lp + mf / lt + (mf - tf) / mf) / 3.0
    end
  end

  @doc "Jaro-Winkler similarity: common prefix (at most 4) boost above 0.7."
  def jaro_winkler(a, b, prefix_weight \\ 0.1) do
    sim = jaro(a, b)

    l =
      Enum.zip(a, b)
      |> Enum.take(4)
      |> Enum.take_while(fn {x, y} -> x == y end)
      |> length()

    if sim > 0.7, do: sim + l * prefix_weight * (1.0 - sim), else: sim
  end

  ## Normalization

  @doc "`dist / maximum`, or 0.0 when the maximum is 0."
  def normalized_distance(_dist, 0), do: 0.0
  def normalized_distance(dist, maximum), do: dist / maximum

  @doc "`1.0 - normalized_distance(dist, maximum)`."
  def normalized_similarity(dist, maximum), do: 1.0 - normalized_distance(dist, maximum)

  ## fuzz scorers

  @doc "Normalized indel similarity in `0.0..100.0`."
  def ratio(a, b) do
    100.0 * normalized_similarity(indel(a, b), length(a) + length(b))
  end

  @doc "Best `ratio/2` of the shorter input against windows, prefixes and suffixes of the longer."
  def partial_ratio([], []), do: 100.0
  def partial_ratio([], _), do: 0.0
  def partial_ratio(_, []), do: 0.0

  def partial_ratio(a, b) do
    if length(a) <= length(b) do
      score = partial_ratio_of(a, b)
      if length(a) == length(b), do: max(score, partial_ratio_of(b, a)), else: score
    else
      partial_ratio_of(b, a)
    end
  end

  defp partial_ratio_of(s, l) do
    ls = length(s)
    ll = length(l)
    windows = for i <- 0..(ll - ls), do: Enum.slice(l, i, ls)
    prefixes = for k <- 1..(ls - 1)//1, do: Enum.take(l, k)
    suffixes = for k <- 1..(ls - 1)//1, do: Enum.take(l, -k)

    (windows ++ prefixes ++ suffixes)
    |> Enum.map(&ratio(s, &1))
    |> Enum.max()
  end

  @doc "Whitespace-separated tokens, in input order, empty tokens dropped."
  def tokens(a, unit) do
    ws = whitespace(unit)

    a
    |> Enum.chunk_by(&(&1 in ws))
    |> Enum.reject(fn chunk -> hd(chunk) in ws end)
  end

  @doc "`ratio/2` of the sorted, space-joined tokens."
  def token_sort_ratio(a, b, unit), do: ratio(sorted_join(a, unit), sorted_join(b, unit))

  @doc "`partial_ratio/2` of the sorted, space-joined tokens."
  def partial_token_sort_ratio(a, b, unit),
    do: partial_ratio(sorted_join(a, unit), sorted_join(b, unit))

  @doc "Token-set ratio: intersection and differences of the token sets."
  def token_set_ratio(a, b, unit) do
    ta = token_set(a, unit)
    tb = token_set(b, unit)

    if ta == [] or tb == [] do
      0.0
    else
      {sect, dab, dba} = set_parts(ta, tb)

      if sect != [] and (dab == [] or dba == []) do
        100.0
      else
        js = join(sect)
        jab = join_parts(sect, dab)
        jba = join_parts(sect, dba)
        result = ratio(jab, jba)

        if sect != [],
          do: Enum.max([result, ratio(js, jab), ratio(js, jba)]),
          else: result
      end
    end
  end

  @doc "Larger of `token_sort_ratio/3` and `token_set_ratio/3`."
  def token_ratio(a, b, unit), do: max(token_sort_ratio(a, b, unit), token_set_ratio(a, b, unit))

  @doc "100.0 if the token sets intersect, else `partial_ratio/2` of the set differences."
  def partial_token_set_ratio(a, b, unit) do
    ta = token_set(a, unit)
    tb = token_set(b, unit)

    if ta == [] or tb == [] do
      0.0
    else
      {sect, dab, dba} = set_parts(ta, tb)
      if sect != [], do: 100.0, else: partial_ratio(join(dab), join(dba))
    end
  end

  @doc "Larger of the partial sorted-token and partial set-difference ratios."
  def partial_token_ratio(a, b, unit) do
    cond do
      tokens(a, unit) == [] or tokens(b, unit) == [] ->
        0.0

      true ->
        {sect, dab, dba} = set_parts(token_set(a, unit), token_set(b, unit))

        if sect != [] do
          100.0
        else
          max(
            partial_ratio(sorted_join(a, unit), sorted_join(b, unit)),
            partial_ratio(join(dab), join(dba))
          )
        end
    end
  end

  @doc "Weighted ratio combining the scorers above by the length ratio."
  def wratio([], _, _), do: 0.0
  def wratio(_, [], _), do: 0.0

  def wratio(a, b, unit) do
    m = length(a)
    n = length(b)
    len_ratio = max(m, n) / min(m, n)
    r = ratio(a, b)

    if len_ratio < 1.5 do
      max(r, token_ratio(a, b, unit) * 0.95)
    else
      scale = if len_ratio <= 8.0, do: 0.9, else: 0.6
      r2 = max(r, partial_ratio(a, b) * scale)
      max(r2, partial_token_ratio(a, b, unit) * 0.95 * scale)
    end
  end

  @doc "`ratio/2`, but 0.0 when either input is empty."
  def qratio([], _), do: 0.0
  def qratio(_, []), do: 0.0
  def qratio(a, b), do: ratio(a, b)

  ## Preprocessing and search

  @doc "Lowercases, replaces each non-letter/non-number codepoint with a space, trims."
  def default_process(binary) when is_binary(binary) do
    binary
    |> String.downcase()
    |> then(&Regex.replace(~r/[^\p{L}\p{N}]/u, &1, " "))
    |> String.trim()
  end

  @doc """
  Scores `{key, text}` choices with `scorer_fun.(query, text)`, keeps those
  passing `:cutoff` (by `:better`, `:higher` or `:lower`), sorts best first
  (ties by input position), takes `:limit` (integer or `:all`) and returns
  `[{text, score, key}]`.
  """
  def extract(query, choices, scorer_fun, opts) do
    cutoff = Keyword.get(opts, :cutoff)
    better = Keyword.get(opts, :better, :higher)
    limit = Keyword.get(opts, :limit, :all)

    passes? = fn score ->
      cond do
        cutoff == nil -> true
        better == :higher -> score >= cutoff
        better == :lower -> score <= cutoff
      end
    end

    better_first? = fn {_, s1, _, i1}, {_, s2, _, i2} ->
      cond do
        s1 == s2 -> i1 <= i2
        better == :higher -> s1 > s2
        better == :lower -> s1 < s2
      end
    end

    sorted =
      choices
      |> Enum.with_index()
      |> Enum.map(fn {{key, text}, i} -> {text, scorer_fun.(query, text), key, i} end)
      |> Enum.filter(fn {_, score, _, _} -> passes?.(score) end)
      |> Enum.sort(better_first?)
      |> Enum.map(fn {text, score, key, _} -> {text, score, key} end)

    if limit in [:all, nil], do: sorted, else: Enum.take(sorted, limit)
  end

  ## Helpers

  defp indexed(list), do: {List.to_tuple(list), length(list)}
  defp at(tuple, i), do: elem(tuple, i - 1)
  defp range(n), do: 1..n//1

  defp whitespace(:byte), do: @byte_whitespace
  defp whitespace(:codepoint), do: @codepoint_whitespace

  defp token_set(a, unit), do: a |> tokens(unit) |> Enum.uniq() |> Enum.sort()

  defp set_parts(ta, tb) do
    sect = Enum.filter(ta, &(&1 in tb))
    dab = Enum.reject(ta, &(&1 in tb))
    dba = Enum.reject(tb, &(&1 in ta))
    {sect, dab, dba}
  end

  defp sorted_join(a, unit), do: a |> tokens(unit) |> Enum.sort() |> join()

  defp join(tokens), do: Enum.intersperse(tokens, [32]) |> Enum.concat()

  defp join_parts([], diff), do: join(diff)
  defp join_parts(sect, []), do: join(sect)
  defp join_parts(sect, diff), do: join(sect) ++ [32] ++ join(diff)

  @doc """
  The score of a scorer (as `WellBehaved.Fuzzy` names it) for binaries `a`
  and `b`: `{:edit, distance, maximum}`, `{:unit, similarity}` (0..1) or
  `{:percent, similarity}` (0..100). `kind_of/2` makes it a kind of score.
  """
  def reference(scorer, a, b, unit, opts \\ []) do
    x = symbols(a, unit)
    y = symbols(b, unit)
    {m, n} = {length(x), length(y)}

    case scorer do
      :levenshtein ->
        w = Keyword.get(opts, :weights, {1, 1, 1})
        {:edit, levenshtein(x, y, w), levenshtein_maximum(m, n, w)}

      :indel ->
        {:edit, indel(x, y), m + n}

      :osa ->
        {:edit, osa(x, y), max(m, n)}

      :damerau_levenshtein ->
        {:edit, damerau_levenshtein(x, y), max(m, n)}

      :hamming ->
        {:edit, hamming(x, y), max(m, n)}

      :jaro ->
        {:unit, jaro(x, y)}

      :jaro_winkler ->
        {:unit, jaro_winkler(x, y, Keyword.get(opts, :prefix_weight, 0.1))}

      :ratio ->
        {:percent, ratio(x, y)}

      :qratio ->
        {:percent, qratio(x, y)}

      :partial_ratio ->
        {:percent, partial_ratio(x, y)}

      other ->
        {:percent, apply(__MODULE__, other, [x, y, unit])}
    end
  end

  def kind_of({:edit, d, max}, kind) do
    case kind do
      :distance -> d
      :similarity -> max - d
      :normalized_distance -> normalized_distance(d, max)
      :normalized_similarity -> normalized_similarity(d, max)
    end
  end

  def kind_of({:unit, s}, kind) do
    case kind do
      :distance -> 1.0 - s
      :similarity -> s
      :normalized_distance -> 1.0 - s
      :normalized_similarity -> s
    end
  end

  def kind_of({:percent, s}, kind) do
    case kind do
      :distance -> 100.0 - s
      :similarity -> s
      :normalized_distance -> 1.0 - s / 100.0
      :normalized_similarity -> s / 100.0
    end
  end
end
