defmodule WellBehaved.FuzzyLcsSeqPrefixPostfixTest do
  # Issue 48: rapidfuzz's LCSseq, Prefix and Postfix as :lcs_seq, :prefix
  # and :postfix. Each is a similarity s (the longest common subsequence,
  # the common prefix, the common suffix) with rapidfuzz's maximum
  # max(m, n) and distance maximum - s; checked against textbook
  # definitions written here in Elixir (a dynamic program, two walks),
  # every kind, with cutoffs, in bytes and codepoints; against
  # rapidfuzz-cpp's own answers; in every place a scorer works (the call,
  # jobs in every mode with one unit a slice, searches of a list and an
  # index, cdist, the external server), on inputs far larger than a slice.
  use ExUnit.Case, async: true

  alias WellBehaved.{Fuzzy, Runtime}
  alias WellBehaved.Fuzzy.{Call, Index}

  @scorers [:lcs_seq, :prefix, :postfix]
  @kinds [:distance, :similarity, :normalized_distance, :normalized_similarity]

  ## The textbook definitions

  defp symbols(text, :byte), do: :binary.bin_to_list(text)
  defp symbols(text, :codepoint), do: String.to_charlist(text)

  # the LCS: the rows of the dynamic program, L[i][j] = L[i-1][j-1] + 1 on
  # a match, else max(L[i-1][j], L[i][j-1])
  defp lcs(a, b) do
    first = List.duplicate(0, length(b) + 1)

    a
    |> Enum.reduce(first, fn x, [0 | above] = previous ->
      {row, _left} =
        Enum.zip([b, previous, above])
        |> Enum.reduce({[0], 0}, fn {y, diagonal, up}, {row, left} ->
          cell = if x == y, do: diagonal + 1, else: max(up, left)
          {[cell | row], cell}
        end)

      Enum.reverse(row)
    end)
    |> List.last()
  end

  defp common_prefix([x | a], [x | b]), do: 1 + common_prefix(a, b)
  defp common_prefix(_a, _b), do: 0

  defp similarity(:lcs_seq, a, b), do: lcs(a, b)
  defp similarity(:prefix, a, b), do: common_prefix(a, b)
  defp similarity(:postfix, a, b), do: common_prefix(Enum.reverse(a), Enum.reverse(b))

  # the score of a kind, and with a cutoff rapidfuzz's answer beyond it:
  # an integer distance's cutoff + 1, else the worst of the kind
  defp reference(scorer, a, b, unit, kind, cutoff \\ nil) do
    {a, b} = {symbols(a, unit), symbols(b, unit)}
    most = max(length(a), length(b))
    d = most - similarity(scorer, a, b)
    nd = if most == 0, do: 0.0, else: d / most

    {score, distance?} =
      case kind do
        :distance -> {d, true}
        :similarity -> {most - d, false}
        :normalized_distance -> {nd, true}
        :normalized_similarity -> {1.0 - nd, false}
      end

    cond do
      cutoff == nil -> score
      distance? and score <= cutoff -> score
      not distance? and score >= cutoff -> score
      kind == :distance -> cutoff + 1
      kind == :similarity -> 0
      kind == :normalized_distance -> 1.0
      true -> 0.0
    end
  end

  ## Pairs

  defp word(n, alphabet), do: for(_ <- 1..n//1, into: "", do: <<Enum.random(alphabet)::utf8>>)

  @alphabets %{byte: ~c"abc", codepoint: [?a, ?é, 0x4E2D, ?b]}

  # random pairs, and pairs sharing a long prefix or suffix
  defp pairs(unit) do
    alphabet = @alphabets[unit]
    w = fn n -> word(n, alphabet) end

    fixed = [{"", ""}, {"", "a"}, {"a", ""}, {"a", "a"}, {"ab", "ba"}, {"abc", "abc"}]

    random =
      for _ <- 1..40 do
        shared = w.(Enum.random(0..20))

        case Enum.random(1..3) do
          1 -> {w.(Enum.random(0..15)), w.(Enum.random(0..15))}
          2 -> {shared <> w.(Enum.random(0..4)), shared <> w.(Enum.random(0..4))}
          3 -> {w.(Enum.random(0..4)) <> shared, w.(Enum.random(0..4)) <> shared}
        end
      end

    # past a word of 64 symbols, and the in-call bound of 64 bytes
    long = for n <- [64, 65, 130], do: {w.(n), w.(n - Enum.random(0..3))}
    fixed ++ random ++ long
  end

  # cutoffs around a score: itself, just past it either way, and random
  defp cutoffs(score, kind) when kind in [:distance, :similarity],
    do: Enum.uniq([score, max(score - 1, 0), score + 1, Enum.random(0..(score + 3))])

  defp cutoffs(score, _kind),
    do: Enum.uniq([score, max(score - 1.0e-9, 0.0), min(score + 1.0e-9, 1.0), :rand.uniform()])

  ## Scores

  for scorer <- @scorers, unit <- [:byte, :codepoint] do
    test "#{scorer}, #{unit}: every kind and cutoff equals the textbook definition" do
      scorer = unquote(scorer)
      unit = unquote(unit)

      for {a, b} <- pairs(unit), kind <- @kinds do
        want = reference(scorer, a, b, unit, kind)
        opts = [scorer: scorer, score: kind, unit: unit]

        assert Fuzzy.score(a, b, opts) === want,
               "#{scorer} #{kind} #{inspect(a)} #{inspect(b)}: want #{inspect(want)}"

        for cutoff <- cutoffs(want, kind) do
          want = reference(scorer, a, b, unit, kind, cutoff)

          assert Fuzzy.score(a, b, [score_cutoff: cutoff] ++ opts) === want,
                 "#{scorer} #{kind} #{inspect(a)} #{inspect(b)} cutoff #{cutoff}"
        end
      end
    end
  end

  test "the integer kinds are integers, the others floats; the Elixir lists name them" do
    for scorer <- @scorers do
      assert Call.integers?(%Call{scorer: scorer, score: :distance})
      assert Call.integers?(%Call{scorer: scorer, score: :similarity})
      refute Call.integers?(%Call{scorer: scorer, score: :normalized_similarity})
      assert scorer in Call.scorers()
    end

    assert is_integer(Fuzzy.score("abc", "abd", scorer: :prefix, score: :distance))
    assert is_float(Fuzzy.score("abc", "abd", scorer: :prefix, score: :normalized_distance))

    # an integer cutoff only for the integer kinds
    assert_raise ArgumentError, ~r/score_cutoff.*non-negative integer/, fn ->
      Fuzzy.score("a", "b", scorer: :lcs_seq, score: :distance, score_cutoff: 1.5)
    end

    assert_raise ArgumentError, ~r/score_cutoff.*0\.\.1/, fn ->
      Fuzzy.score("a", "b", scorer: :postfix, score: :normalized_distance, score_cutoff: 2)
    end
  end

  # rapidfuzz-cpp's answers for the same pairs (lcs_seq_*, prefix_*,
  # postfix_* of rapidfuzz/distance.hpp, from a program built against
  # it): distance, similarity, normalized distance and similarity
  @parity [
    {"South Korea", "North Korea", [2, 9, 0.18181818181818182, 0.81818181818181812],
     [11, 0, 1.0, 0.0], [3, 8, 0.27272727272727271, 0.72727272727272729]},
    {"aabc", "cccd", [3, 1, 0.75, 0.25], [4, 0, 1.0, 0.0], [4, 0, 1.0, 0.0]},
    {"001", "220", [2, 1, 0.66666666666666663, 0.33333333333333337], [3, 0, 1.0, 0.0],
     [3, 0, 1.0, 0.0]},
    {"hello", "help", [2, 3, 0.40000000000000002, 0.59999999999999998],
     [2, 3, 0.40000000000000002, 0.59999999999999998], [5, 0, 1.0, 0.0]},
    {"postfix", "suffix", [3, 4, 0.42857142857142855, 0.5714285714285714], [7, 0, 1.0, 0.0],
     [4, 3, 0.5714285714285714, 0.4285714285714286]},
    {"", "", [0, 0, 0.0, 1.0], [0, 0, 0.0, 1.0], [0, 0, 0.0, 1.0]},
    {"abc", "", [3, 0, 1.0, 0.0], [3, 0, 1.0, 0.0], [3, 0, 1.0, 0.0]}
  ]

  test "rapidfuzz-cpp's answers" do
    for {a, b, lcs_seq, prefix, postfix} <- @parity,
        {scorer, want} <- [lcs_seq: lcs_seq, prefix: prefix, postfix: postfix],
        {kind, w} <- Enum.zip(@kinds, want),
        mode <- [:auto, :normal] do
      got = Fuzzy.score(a, b, scorer: scorer, score: kind, schedule: mode)
      assert got == w and is_integer(got) == is_integer(w), "#{scorer} #{kind} #{a} #{b}"
    end

    # its cutoffs: the cutoff + 1 past an integer distance, 0 below a
    # similarity, 1.0 and 0.0 for the normalized kinds
    a = "South Korea"
    b = "North Korea"

    for {k, want} <- [{0, 1}, {1, 2}, {2, 2}, {3, 2}, {4, 2}],
        do: assert(Fuzzy.score(a, b, scorer: :lcs_seq, score: :distance, score_cutoff: k) == want)

    assert Fuzzy.score(a, b, scorer: :lcs_seq, score: :similarity, score_cutoff: 9) == 9
    assert Fuzzy.score(a, b, scorer: :lcs_seq, score: :similarity, score_cutoff: 10) == 0
    assert Fuzzy.score(a, b, scorer: :lcs_seq, score_cutoff: 0.9) == 0.0

    assert Fuzzy.score(a, b, scorer: :lcs_seq, score: :normalized_distance, score_cutoff: 0.1) ==
             1.0

    assert Fuzzy.score("hello", "help", scorer: :prefix, score: :distance, score_cutoff: 1) == 2
    assert Fuzzy.score("hello", "help", scorer: :prefix, score: :similarity, score_cutoff: 4) == 0
  end

  ## Searches and cdist

  # a search's hits: every candidate's score/3, those within the cutoff,
  # best first, ties in the candidates' order
  defp hits_by_score(query, texts, opts) do
    distance? = opts[:score] in [:distance, :normalized_distance]
    cutoff = opts[:score_cutoff]

    texts
    |> Enum.with_index()
    |> Enum.map(fn {text, at} -> {text, Fuzzy.score(query, text, opts), at} end)
    |> Enum.filter(fn {_, s, _} ->
      cutoff == nil or if(distance?, do: s <= cutoff, else: s >= cutoff)
    end)
    |> Enum.sort_by(fn {_, s, at} -> {if(distance?, do: s, else: -s), at} end)
  end

  test "extract, extract_one, an index and cdist agree with score/3 per candidate" do
    for unit <- [:byte, :codepoint] do
      w = fn n -> word(n, @alphabets[unit]) end
      query = w.(6)
      texts = for _ <- 1..30, do: Enum.random([w.(Enum.random(0..9)), query <> w.(2), w.(70)])
      index = Index.new(texts)

      for scorer <- @scorers, kind <- @kinds do
        plain = [scorer: scorer, score: kind, unit: unit]
        [{_, best, _} | _] = hits_by_score(query, texts, plain)

        for cutoff <- [nil, best] do
          opts = [score_cutoff: cutoff] ++ plain
          want = hits_by_score(query, texts, opts)
          where = "#{scorer} #{kind} #{unit} cutoff #{inspect(cutoff)}"

          assert Fuzzy.extract(query, texts, [limit: :all] ++ opts) == want, where
          assert Fuzzy.extract(query, texts, [limit: 3] ++ opts) == Enum.take(want, 3), where
          assert Fuzzy.extract(query, index, [limit: :all] ++ opts) == want, where
          assert Fuzzy.extract_one(query, texts, opts) == List.first(want), where

          cells = for text <- texts, do: Fuzzy.score(query, text, opts)
          assert Fuzzy.cdist([query, query], texts, opts) == [cells, cells], where
          assert Fuzzy.cdist([query], index, opts) == [cells], where
        end
      end
    end
  end

  test "cdist as a binary: 32-bit cells, integers for the integer kinds" do
    texts = ["abcd", "abxd", "zzcd", ""]
    opts = [scorer: :postfix, score: :similarity]
    binary = Fuzzy.cdist(["abcd"], texts, [as: :binary] ++ opts)
    assert for(<<v::32-native <- binary>>, do: v) == [4, 1, 2, 0]

    binary = Fuzzy.cdist(["abcd"], texts, as: :binary, scorer: :prefix)
    assert for(<<v::float-32-native <- binary>>, do: v) == [1.0, 0.5, 0.0, 0.0]
  end

  ## Long inputs, every mode, one unit a slice

  test "long pairs in every mode with tiny slices, and on the external server" do
    # a prefix or suffix of 20,000 symbols (1,250 chunks of the scan); an
    # LCS of 3,000 symbols against 200 (4 blocks of 64 a column)
    for unit <- [:byte, :codepoint] do
      w = fn n -> word(n, @alphabets[unit]) end
      shared = w.(20_000)
      pairs = [{shared <> "x" <> w.(5), shared <> "y"}, {w.(7) <> shared, "q" <> shared}]
      lcs_pair = {w.(3000), w.(200)}

      for {scorer, {a, b}} <-
            [{:prefix, hd(pairs)}, {:postfix, List.last(pairs)}, {:lcs_seq, lcs_pair}] ++
              [{:prefix, List.last(pairs)}],
          kind <- [:distance, :normalized_similarity] do
        want = reference(scorer, a, b, unit, kind)
        opts = [scorer: scorer, score: kind, unit: unit]

        for mode <- Runtime.modes() do
          assert Fuzzy.score(a, b, [schedule: mode, tiny_slices: true] ++ opts) === want,
                 "#{scorer} #{kind} #{unit} #{mode}"
        end

        assert Fuzzy.score(a, b, [schedule: :external, tiny_slices: true] ++ opts) === want,
               "#{scorer} #{kind} #{unit} external"
      end
    end
  end

  test "searches and cdist of long candidates in every mode with tiny slices" do
    # a query of 600 symbols (10 blocks of the LCS's pattern) against
    # candidates sharing its prefix or suffix: past the quick scores, the
    # pair scorer a unit a slice
    shared = word(600, ~c"ab")
    query = shared <> "q"
    texts = [shared <> "r", "x" <> shared, query, word(300, ~c"ab"), ""]
    index = Index.new(texts)

    for {scorer, kind} <- Enum.zip(@scorers, [:similarity, :normalized_distance, :distance]) do
      opts = [scorer: scorer, score: kind]
      want = hits_by_score(query, texts, opts)
      cells = for text <- texts, do: Fuzzy.score(query, text, opts)

      for mode <- Runtime.modes() do
        sliced = [schedule: mode, tiny_slices: true] ++ opts
        assert Fuzzy.extract(query, texts, [limit: :all] ++ sliced) == want, "#{scorer} #{mode}"
        assert Fuzzy.extract(query, index, [limit: 2] ++ sliced) == Enum.take(want, 2)
        assert Fuzzy.cdist([query], texts, sliced) == [cells], "#{scorer} #{mode} cdist"
      end
    end
  end

  test "the external server decodes the same options: every kind and a cutoff" do
    for scorer <- @scorers,
        kind <- @kinds,
        {a, b} <- [{"kitten", "sitting"}, {"abcde", "abxde"}] do
      opts = [scorer: scorer, score: kind]
      assert Fuzzy.score(a, b, [schedule: :external] ++ opts) === Fuzzy.score(a, b, opts)

      cutoff = if kind in [:distance, :similarity], do: 2, else: 0.5

      assert Fuzzy.score(a, b, [schedule: :external, score_cutoff: cutoff] ++ opts) ===
               reference(scorer, a, b, :byte, kind, cutoff)
    end
  end
end
