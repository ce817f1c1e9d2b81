defmodule WellBehaved.FuzzyGraphemesTest do
  # unit: :grapheme (WellBehaved.Fuzzy.Graphemes): every scorer and kind,
  # the searches, cdist and Levenshtein's functions against the textbook
  # reference (test/support/fuzzy_reference.exs) over String.graphemes/1
  # lists numbered here, apart from the library: random texts of combining
  # marks, emoji ZWJ sequences, flags, skin tones, Hangul jamo and
  # syllables, CR LF; long texts (past a native call's chunk), every mode
  # with tiny slices; the native check of text that needs no clusters
  # against String.graphemes/1 on every codepoint; every error.
  use ExUnit.Case, async: true

  alias WellBehaved.{Fuzzy, Levenshtein, Native, Runtime}
  alias WellBehaved.Fuzzy.{Call, Graphemes, Index}
  alias WellBehaved.Test.FuzzyReference, as: Ref

  @kinds [:distance, :similarity, :normalized_distance, :normalized_similarity]
  @modes Runtime.modes()

  # Unicode's White_Space and U+001C..U+001F: the reference's white space
  # in codepoints (c_src/test/fuzzy_reference.h)
  @white Enum.to_list(9..13) ++
           [0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680] ++
           Enum.to_list(0x2000..0x200A) ++ [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]

  # pieces of text; neighbours may join into one cluster (a lone mark, a
  # lone regional indicator, a jamo, a joiner), which the reference reads
  # from String.graphemes/1 as the library does
  @pieces [
    "a",
    "b",
    "c",
    " ",
    "é",
    "e\u0301",
    "e\u0301\u0323",
    "\u0301",
    "\r\n",
    "\r",
    "\n",
    "👨‍👩‍👧",
    "👨‍👩‍👦",
    "👨",
    "\u200D",
    "🇫🇷",
    "🇩🇪",
    "🇫",
    "👍🏽",
    "👍",
    "가",
    "\u1100\u1161",
    "\u11A8",
    "\u{F0001}",
    "\u{E0100}",
    "क्ष"
  ]

  defp text(n), do: Enum.map_join(1..n//1, fn _ -> Enum.random(@pieces) end)

  # the reference's symbols of the texts of a call: a cluster of one
  # codepoint below U+40000 is that codepoint; a cluster of white space
  # only (CR LF) a white space codepoint no text holds (or, when none is
  # left, a symbol of its own); any other 0x200000 + its rank among
  # them as binaries (the order the documentation gives words)
  defp symbols(texts) do
    lists = Enum.map(texts, &String.graphemes/1)

    others =
      lists
      |> List.flatten()
      |> Enum.uniq()
      |> Enum.reject(&match?([c] when c < 0x40000, String.to_charlist(&1)))

    {spacing, others} =
      Enum.split_with(others, &Enum.all?(String.to_charlist(&1), fn c -> c in @white end))

    free = Enum.reject(@white, fn c -> Enum.any?(texts, &String.contains?(&1, <<c::utf8>>)) end)
    others = Enum.sort(Enum.drop(Enum.sort(spacing), length(free)) ++ others)

    table =
      Map.merge(
        Map.new(Enum.with_index(others, 0x200000)),
        Map.new(Enum.zip(Enum.sort(spacing), free))
      )

    for list <- lists do
      for g <- list do
        Map.get_lazy(table, g, fn -> hd(String.to_charlist(g)) end)
      end
    end
  end

  defp reference(scorer, a, b, kind) do
    [sa, sb] = symbols([a, b])
    Ref.kind_of(Ref.reference_symbols(scorer, sa, sb, :codepoint), kind)
  end

  defp pairs do
    fixed = [
      {"", ""},
      {"e\u0301", "é"},
      {"🇫🇷🇩🇪", "🇩🇪🇫🇷"},
      {"a\r\nb", "a\nb"},
      {"a\r\nb", "b a"},
      {"👨‍👩‍👧 x", "x 👨‍👩‍👦"},
      {"\u1100\u1161\u11A8", "각"}
    ]

    fixed ++ for(_ <- 1..40, do: {text(Enum.random(0..10)), text(Enum.random(0..10))})
  end

  for scorer <- Call.scorers() do
    @tag timeout: 300_000
    test "#{scorer}: every kind in graphemes equals the reference over String.graphemes/1" do
      scorer = unquote(scorer)

      for {a, b} <- pairs(), kind <- @kinds do
        want = reference(scorer, a, b, kind)
        got = Fuzzy.score(a, b, scorer: scorer, score: kind, unit: :grapheme)

        assert got === want,
               "#{scorer} #{kind} of #{inspect(a)} and #{inspect(b)}: #{inspect(got)}, " <>
                 "expected #{inspect(want)}"
      end
    end
  end

  test "graphemes are not codepoints: a flag, a decomposed letter, a family, CR LF" do
    opts = [scorer: :levenshtein, score: :distance]
    assert Fuzzy.score("🇫🇷🇩🇪", "🇫🇷", [unit: :grapheme] ++ opts) == 1
    assert Fuzzy.score("🇫🇷🇩🇪", "🇫🇷", [unit: :codepoint] ++ opts) == 2
    assert Fuzzy.score("e\u0301te", "ete", [unit: :grapheme] ++ opts) == 1
    assert Fuzzy.score("👨‍👩‍👧", "👨‍👩‍👦", [unit: :grapheme] ++ opts) == 1
    assert Fuzzy.score("a\r\nb", "a\nb", [unit: :grapheme] ++ opts) == 1
    # CR LF splits words and stays apart from LF
    assert Fuzzy.score("a\r\nb", "b a", scorer: :token_sort_ratio, unit: :grapheme) == 1.0
    assert Fuzzy.score("a\r\nb", "a\nb", scorer: :ratio, unit: :grapheme) < 1.0
    # text of single codepoints: the same as in codepoints
    assert Fuzzy.score("Łódź 東京", "Lodz 東京", [unit: :grapheme] ++ opts) ==
             Fuzzy.score("Łódź 東京", "Lodz 東京", [unit: :codepoint] ++ opts)
  end

  test "extract, extract_one and cdist on lists rank graphemes as the reference" do
    for _ <- 1..15 do
      query = text(Enum.random(1..6))
      texts = for _ <- 1..Enum.random(1..12), do: text(Enum.random(0..8))
      choices = Enum.with_index(texts, fn t, i -> {i, t} end)

      for {scorer, kind, cutoff, better} <- [
            {:levenshtein, :distance, 4, :lower},
            {:ratio, :normalized_similarity, 0.3, :higher},
            {:wratio, :similarity, nil, :higher},
            {:jaro_winkler, :normalized_similarity, 0.5, :higher},
            {:token_set_ratio, :similarity, 20, :higher}
          ] do
        opts = [scorer: scorer, score: kind, unit: :grapheme, score_cutoff: cutoff]
        score = fn q, t -> reference(scorer, q, t, kind) end
        want = Ref.extract(query, choices, score, cutoff: cutoff, better: better, limit: 3)
        assert Fuzzy.extract(query, texts, [limit: 3] ++ opts) == want, inspect({query, texts})

        assert Fuzzy.extract_one(query, Map.new(choices), opts) ==
                 Ref.extract(query, Enum.sort(choices), score,
                   cutoff: cutoff,
                   better: better,
                   limit: 1
                 )
                 |> List.first()

        cells = for t <- texts, do: reference(scorer, query, t, kind)
        assert Fuzzy.cdist([query], texts, Keyword.delete(opts, :score_cutoff)) == [cells]
      end
    end
  end

  test "Levenshtein's distance, distances and nearest in graphemes" do
    for _ <- 1..20 do
      query = text(Enum.random(0..6))
      texts = for _ <- 1..Enum.random(1..10), do: text(Enum.random(0..8))
      want = for t <- texts, do: reference(:levenshtein, query, t, :distance)

      assert Levenshtein.distances(query, texts, unit: :grapheme) == want

      assert Levenshtein.distance(query, hd(texts), unit: :grapheme, max_distance: 2) ==
               min(hd(want), 3)

      nearest =
        texts
        |> Enum.zip(want)
        |> Enum.with_index()
        |> Enum.sort_by(fn {{_t, d}, i} -> {d, i} end)
        |> Enum.map(&elem(&1, 0))
        |> Enum.take(3)

      # the candidates as given, not as numbered
      assert Levenshtein.nearest(query, texts, unit: :grapheme, limit: 3) == nearest
    end
  end

  @tag timeout: 600_000
  test "every mode, tiny slices: scores, searches and cdist in graphemes" do
    a = text(60)
    b = text(50)
    texts = for _ <- 1..6, do: text(Enum.random(5..40))

    for scorer <- Call.scorers() do
      want = reference(scorer, a, b, :normalized_similarity)

      for mode <- @modes ++ [:external] do
        got =
          Fuzzy.score(a, b, scorer: scorer, unit: :grapheme, schedule: mode, tiny_slices: true)

        assert got === want, "#{scorer} #{mode}"
      end
    end

    for scorer <- [:levenshtein, :token_sort_ratio, :partial_ratio], mode <- @modes do
      opts = [scorer: scorer, unit: :grapheme, schedule: mode, tiny_slices: true]
      cells = for t <- texts, do: reference(scorer, a, t, :normalized_similarity)
      assert Fuzzy.cdist([a], texts, opts) == [cells], "#{scorer} #{mode}"

      best = cells |> Enum.with_index() |> Enum.sort_by(fn {s, i} -> {-s, i} end) |> hd()
      assert {_, score, key} = Fuzzy.extract_one(a, texts, opts)
      assert {score, key} == best, "#{scorer} #{mode}"
    end

    # Levenshtein's pair on a server of the external pool
    d = reference(:levenshtein, a, b, :distance)
    assert Levenshtein.distance(a, b, unit: :grapheme, schedule: :external) == d
    assert WellBehaved.External.levenshtein(a, b, :grapheme, nil) == {:ok, d}

    assert WellBehaved.External.levenshtein(a, "x\xFF", :grapheme, nil) ==
             {:error, {:invalid_utf8, 2}}

    for mode <- @modes do
      want = for t <- texts, do: reference(:levenshtein, a, t, :distance)

      assert Levenshtein.distances(a, texts, unit: :grapheme, schedule: mode, tiny_slices: true) ==
               want
    end
  end

  test "long texts: the check goes a chunk a call, CR LF read across a chunk's end" do
    # a native call checks 64 KiB (c_src/nif/fuzzy_text.c)
    long = String.duplicate("a", 100_000)
    assert {:more, 65_536} = Native.fuzzy_graphemes_scan(long, 0)
    assert Native.fuzzy_graphemes_scan(long, 65_536) == :single

    x = String.duplicate("a", 65_535)
    a = x <> "\r\n" <> "tail"
    b = x <> "\n" <> "tail"
    opts = [scorer: :levenshtein, score: :similarity]
    # 65,540 graphemes a side, one edit; 65,541 codepoints in a
    assert Fuzzy.score(a, b, [unit: :grapheme] ++ opts) == 65_539
    assert Fuzzy.score(a, b, [unit: :codepoint] ++ opts) == 65_540

    # every mode, tiny slices: a cluster past the first chunk, and text of
    # single codepoints (a cutoff: the kernel's band, not 140,000 squared)
    c = String.duplicate("Łódź 東京 ", 20_000)
    d = c <> "e\u0301"
    e = c <> "é"

    for mode <- @modes do
      o = [
        scorer: :levenshtein,
        score: :distance,
        score_cutoff: 2,
        schedule: mode,
        tiny_slices: true
      ]

      assert Fuzzy.score(d, e, [unit: :grapheme] ++ o) == 1, "#{mode}"
      assert Fuzzy.score(d, e, [unit: :codepoint] ++ o) == 2, "#{mode}"

      assert Fuzzy.score(c, c <> "x", [unit: :grapheme] ++ o) ==
               Fuzzy.score(c, c <> "x", [unit: :codepoint] ++ o)
    end
  end

  test "the native check says 'single' only for codepoints that never join, as String.graphemes/1 splits" do
    two = fn x -> length(String.graphemes(x)) == 2 end
    # before: a regional indicator, V and T jamo (not L, which a syllable
    # LV or LVT follows in one cluster: they are the text's own)
    joiners = [0x1F1E6, 0x1161, 0x11A8]

    single =
      for c <- Enum.concat(0..0xD7FF, 0xE000..0x10FFFF),
          Native.fuzzy_graphemes_scan(<<c::utf8>>, 0) == :single,
          do: c

    # the blocks of c_src/text/graphemes.c: Latin to CJK, Hangul, emoji
    assert length(single) > 100_000

    for c <- single do
      s = <<c::utf8>>
      # not Extend, ZWJ, SpacingMark (after a letter), Prepend (before
      # one), Regional_Indicator, L, V or T (around jamo and indicators)
      ok =
        two.("a" <> s) and two.(s <> "a") and
          Enum.all?(joiners, fn j -> two.(<<j::utf8>> <> s) end) and
          two.(s <> <<0x1100::utf8>>) and two.(s <> <<0x1F1E6::utf8>>)

      assert ok, "U+#{Integer.to_string(c, 16)} joins its neighbours"
    end

    for c <- [0x0301, 0x200D, 0x1F3FB, 0x1F1E6, 0x1100, 0xFE0F, 0x40000],
        do: assert(Native.fuzzy_graphemes_scan(<<?a, c::utf8>>, 0) == :clusters)

    assert Native.fuzzy_graphemes_scan("a\r\n", 0) == :clusters
    assert Native.fuzzy_graphemes_scan("a\n\r", 0) == :single
    assert Native.fuzzy_graphemes_scan("a\xFF", 0) == :invalid
  end

  test "random texts the check calls single are one codepoint a cluster" do
    pool = ["a", "\r", "\n", "é", "Ж", "東", "가", "😀", " ", "\u00AD", "\u2060"]

    for _ <- 1..2000 do
      t = Enum.map_join(1..Enum.random(0..20), fn _ -> Enum.random(pool) end)

      if Native.fuzzy_graphemes_scan(t, 0) == :single,
        do: assert(length(String.graphemes(t)) == String.length(t) and not (t =~ "\r\n")),
        else: assert(t =~ "\r\n")
    end
  end

  test "white space clusters: a white space codepoint of their own, or an error for word scorers" do
    # every codepoint Graphemes may give CR LF splits words natively
    for c <- Graphemes.spaces() do
      assert Fuzzy.score("a" <> <<c::utf8>> <> "b", "b a",
               scorer: :token_sort_ratio,
               unit: :codepoint
             ) ==
               1.0,
             "U+#{Integer.to_string(c, 16)}"
    end

    assert Fuzzy.score("a_b", "b a", scorer: :token_sort_ratio, unit: :codepoint) < 1.0
    assert Enum.sort(Graphemes.spaces()) == Enum.sort(@white)

    # texts that hold every white space codepoint and CR LF
    all = Enum.map_join(@white, &<<&1::utf8>>)
    a = "x\r\ny" <> all
    b = "x\ny" <> all

    for scorer <- [:levenshtein, :ratio, :jaro] do
      assert Fuzzy.score(a, b, scorer: scorer, unit: :grapheme) ==
               reference(scorer, a, b, :normalized_similarity)
    end

    for scorer <- [:wratio, :token_sort_ratio] do
      assert_raise ArgumentError,
                   ~r/score\/3: unit: :grapheme with #{inspect(scorer)}.*CR LF/,
                   fn ->
                     Fuzzy.score(a, b, scorer: scorer, unit: :grapheme)
                   end
    end
  end

  @tag timeout: 300_000
  test "a call with more distinct clusters than its table holds raises" do
    # 851,968 symbols (U+40000..U+10FFFF): one more cluster than that
    bases = Enum.concat(0x4E00..0x9FFF, 0x20000..0x2A6DF) |> Enum.take(8_000)
    marks = Enum.to_list(0x0300..0x036F)

    clusters = for b <- bases, m <- marks, into: <<>>, do: <<b::utf8, m::utf8>>

    assert div(byte_size(clusters), 5) >= 851_969

    assert_raise ArgumentError, ~r/extract\/3: unit: :grapheme numbers at most 851968/, fn ->
      Fuzzy.extract("a", [clusters], unit: :grapheme)
    end
  end

  test "invalid UTF-8 raises, naming the argument or the candidate" do
    bad = "ab\xFF"

    assert_raise ArgumentError, ~r/score\/3: the first argument is not valid UTF-8/, fn ->
      Fuzzy.score(bad, "e\u0301", unit: :grapheme)
    end

    # invalid after a cluster (the check stops at the cluster)
    assert_raise ArgumentError, ~r/score\/3: the second argument is not valid UTF-8/, fn ->
      Fuzzy.score("a", "e\u0301\xFF", unit: :grapheme)
    end

    assert_raise ArgumentError, ~r/extract\/3: the query is not valid UTF-8/, fn ->
      Fuzzy.extract(bad, ["a"], unit: :grapheme)
    end

    assert_raise ArgumentError,
                 ~r/extract_one\/3: the candidate at position 1 is not valid/,
                 fn ->
                   Fuzzy.extract_one("a", ["b", bad], unit: :grapheme)
                 end

    assert_raise ArgumentError, ~r/cdist\/3: the query is not valid UTF-8/, fn ->
      Fuzzy.cdist(["a", bad], ["b"], unit: :grapheme)
    end

    assert_raise ArgumentError, ~r/cdist\/3: the candidate at position 2 is not valid/, fn ->
      Fuzzy.cdist(["a"], ["b", "c", bad], unit: :grapheme)
    end

    assert_raise ArgumentError, ~r/cdist\/3: the candidate at position 1 is not a binary/, fn ->
      Fuzzy.cdist(["a"], ["b", :c], unit: :grapheme)
    end

    assert_raise ArgumentError, ~r/distance\/3: the second argument is not valid UTF-8/, fn ->
      Levenshtein.distance("a", bad, unit: :grapheme)
    end

    assert_raise ArgumentError, ~r/nearest\/3: the candidate at position 0 is not valid/, fn ->
      Levenshtein.nearest("a", [bad], unit: :grapheme)
    end

    assert_raise ArgumentError, ~r/distances\/3: the query is not valid UTF-8/, fn ->
      Levenshtein.distances(bad, ["a"], unit: :grapheme)
    end
  end

  test "an index refuses unit: :grapheme; unknown units list it" do
    index = Index.new(["a", "b"])
    split = %Index{segments: [], size: 1, next: 1, processor: nil, shards: [{node(), self(), 1}]}

    for {name, fun} <- [
          {"extract/3", fn -> Fuzzy.extract("a", index, unit: :grapheme) end},
          {"extract/3", fn -> Fuzzy.extract("a", split, unit: :grapheme) end},
          {"extract_one/3", fn -> Fuzzy.extract_one("a", index, unit: :grapheme) end},
          {"cdist/3", fn -> Fuzzy.cdist(["a"], index, unit: :grapheme) end},
          {"nearest/3", fn -> Levenshtein.nearest("a", index, unit: :grapheme) end},
          {"distances/3", fn -> Levenshtein.distances("a", index, unit: :grapheme) end}
        ] do
      assert_raise ArgumentError,
                   ~r/#{Regex.escape(name)}: invalid :unit :grapheme, expected :byte or :codepoint on an index/,
                   fun
    end

    assert_raise ArgumentError, ~r/expected :byte, :codepoint or :grapheme/, fn ->
      Fuzzy.score("a", "b", unit: :cluster)
    end

    assert_raise ArgumentError, ~r/expected :byte, :codepoint or :grapheme/, fn ->
      Levenshtein.distance("a", "b", unit: :cluster)
    end
  end
end
