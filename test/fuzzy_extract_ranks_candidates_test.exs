defmodule WellBehaved.FuzzyExtractRanksCandidatesTest do
  # extract/3 and extract_one/3 rank what score/3 would give each
  # candidate (from the reference): best first, ties in input order, keys
  # from positions, pairs or maps, the cutoff and the limit (:all
  # included), processors, every mode; bad input raises naming it; a
  # killed caller leaves no job.
  use ExUnit.Case, async: false

  alias WellBehaved.{Fuzzy, Runtime}
  alias WellBehaved.Fuzzy.Call
  alias WellBehaved.Test.FuzzyReference, as: Ref
  import WellBehaved.Test.RuntimeHelpers

  @extract "WellBehaved.Fuzzy.extract/3"

  defp word(n, alphabet), do: for(_ <- 1..n//1, into: "", do: <<Enum.random(alphabet)>>)

  defp candidates(count) do
    words = for _ <- 1..count, do: word(Enum.random([0, 1, 3, 8, 15, 30, 70]), ~c"abc ")
    # duplicates, to tell apart by key
    words ++ Enum.take(words, 4)
  end

  # what extract/3 must return, from the reference on every pair
  defp expected(query, pairs, opts) do
    scorer = Keyword.get(opts, :scorer, :wratio)
    kind = Keyword.get(opts, :score, :normalized_similarity)
    unit = Keyword.get(opts, :unit, :byte)
    fun = fn q, text -> Ref.kind_of(Ref.reference(scorer, q, text, unit), kind) end
    better = if kind in [:distance, :normalized_distance], do: :lower, else: :higher

    Ref.extract(query, pairs, fun,
      cutoff: opts[:score_cutoff],
      better: better,
      limit: Keyword.get(opts, :limit, 5)
    )
  end

  defp indexed(list), do: list |> Enum.with_index() |> Enum.map(fn {t, i} -> {i, t} end)

  # extract/3 on the index of list with a limit keeps the best by
  # score/3 (its kind's better first, past the cutoff none), ties by position
  defp keeps_best(query, {index, list}, opts, limit, label) do
    assert Fuzzy.extract(query, index, [limit: limit] ++ opts) ===
             best_by_score(query, list, opts, limit),
           "#{label} limit #{limit}"
  end

  defp best_by_score(query, list, opts, limit) do
    cutoff = opts[:score_cutoff]
    lower = Keyword.get(opts, :score, :normalized_similarity) in [:distance, :normalized_distance]

    list
    |> Enum.with_index()
    |> Enum.map(fn {text, at} -> {text, Fuzzy.score(query, text, opts), at} end)
    |> Enum.filter(fn {_, s, _} ->
      cutoff == nil or if(lower, do: s <= cutoff, else: s >= cutoff)
    end)
    |> Enum.sort_by(fn {_, s, at} -> {if(lower, do: s, else: -s), at} end)
    |> Enum.take(limit)
  end

  test "every scorer and kind ranks like the reference, cutoffs and limits included" do
    list = candidates(40)
    index = Fuzzy.Index.new(list)
    query = word(12, ~c"abc ")

    for scorer <- Call.scorers(),
        kind <- [:distance, :normalized_similarity],
        limit <- [1, 7, :all] do
      opts = [scorer: scorer, score: kind, limit: limit]
      want = expected(query, indexed(list), opts)
      assert Fuzzy.extract(query, list, opts) === want, "#{scorer} #{kind} #{limit}"
      # an index's search, its bars on the batches' values (a distance's
      # the most that may rank, the others' the least)
      assert Fuzzy.extract(query, index, opts) === want, "index: #{scorer} #{kind} #{limit}"

      # the cutoff: the score of the middle hit, which then passes
      {_, middle, _} = Enum.at(want, div(length(want), 2))
      opts = [score_cutoff: middle] ++ opts
      assert Fuzzy.extract(query, list, opts) === expected(query, indexed(list), opts)
    end
  end

  test "short queries take quick scores and batches: the same as score/3's, at every length and cutoff" do
    # queries of 1..64 bytes (of one token, or with spaces), candidates
    # around 64 (Jaro's bound, the batches'), beyond 256 (Damerau's quick
    # bound) and beyond 4096 (the quick scores' bound), some with whitespace, in bytes and ASCII codepoints;
    # as a list and through an index (its batches made once)
    list =
      for(n <- [0, 1, 2, 5, 20, 63, 64, 65, 100, 257, 4097], do: word(n, ~c"abc ")) ++
        for(_ <- 1..30, do: word(Enum.random(0..70), ~c"ab")) ++
        for(_ <- 1..10, do: word(Enum.random(1..20), ~c"ab\t\n"))

    index = Fuzzy.Index.new(list)

    for qlen <- [1, 7, 33, 64],
        alphabet <- [~c"abc ", ~c"abc"],
        scorer <-
          [:levenshtein, :indel, :ratio, :qratio, :osa, :hamming, :jaro, :jaro_winkler] ++
            [:damerau_levenshtein, :lcs_seq, :prefix, :postfix] ++
            [:token_sort_ratio, :token_set_ratio, :token_ratio, :partial_ratio, :wratio] ++
            [:partial_token_sort_ratio, :partial_token_set_ratio, :partial_token_ratio],
        unit <- [:byte, :codepoint],
        cutoff <- [nil, 0.5],
        candidates <- [list, index] do
      query = word(qlen, alphabet)
      opts = [scorer: scorer, unit: unit, score_cutoff: cutoff]

      want =
        list
        |> Enum.with_index()
        |> Enum.map(fn {text, at} -> {text, Fuzzy.score(query, text, opts), at} end)
        |> Enum.filter(fn {_, score, _} -> cutoff == nil or score >= cutoff end)
        |> Enum.sort_by(fn {_, score, at} -> {-score, at} end)

      assert Fuzzy.extract(query, candidates, [limit: :all] ++ opts) === want,
             "#{scorer} #{unit} query #{inspect(query)}, cutoff #{inspect(cutoff)}"

      # the best few, as a search with a limit keeps them (the bar)
      assert Fuzzy.extract(query, candidates, [limit: 3] ++ opts) === Enum.take(want, 3)
    end
  end

  test "an index's token sort scores (its tokens sorted once) are score/3's, Unicode spaces too" do
    # ASCII whitespace of every kind, doubled and at the ends; no-break
    # and ideographic spaces (tokens apart in codepoints, not in bytes)
    list =
      ["b a", " a  b ", "a\tb\nc", "c b a", "ab", "", " ", "b\u00A0a", "b\u3000a c", "é b a"] ++
        for(_ <- 1..40, do: word(Enum.random(0..25), ~c"ab \t"))

    index = Fuzzy.Index.new(list)

    for query <- ["a b", "b  a", "ab", " ", "a\u00A0b", "é a", "b a c"],
        scorer <- [:token_sort_ratio, :partial_token_sort_ratio],
        unit <- [:byte, :codepoint],
        limit <- [:all, 4] do
      opts = [scorer: scorer, unit: unit]

      want =
        list
        |> Enum.with_index()
        |> Enum.map(fn {text, at} -> {text, Fuzzy.score(query, text, opts), at} end)
        |> Enum.sort_by(fn {_, score, at} -> {-score, at} end)
        |> then(&if(limit == :all, do: &1, else: Enum.take(&1, limit)))

      assert Fuzzy.extract(query, index, [limit: limit] ++ opts) === want,
             "#{scorer} #{unit} #{inspect(query)}"
    end
  end

  test "keys: positions, {key, text} pairs and maps; duplicates told apart" do
    assert Fuzzy.extract("ab", ["ab", "ab", "b"], scorer: :ratio, limit: :all) ==
             [{"ab", 1.0, 0}, {"ab", 1.0, 1}, {"b", Ref.ratio(~c"ab", ~c"b") / 100, 2}]

    pairs = [{:x, "ab"}, {"y", "abc"}, {{1, 2}, "zz"}]

    assert Fuzzy.extract("ab", pairs, scorer: :indel, score: :distance, limit: :all) ==
             [{"ab", 0, :x}, {"abc", 1, "y"}, {"zz", 4, {1, 2}}]

    map = %{1 => "apple", 2 => "maple", 3 => "apply"}

    assert Fuzzy.extract("appel", map, scorer: :levenshtein, score: :distance, limit: :all) ==
             [{"apple", 2, 1}, {"apply", 2, 3}, {"maple", 3, 2}]

    # mixed: binaries keep their position as the key
    assert Fuzzy.extract("a", ["a", {:k, "a"}], scorer: :ratio) == [{"a", 1.0, 0}, {"a", 1.0, :k}]
    assert Fuzzy.extract_one("zzz", %{}, []) == nil
    assert Fuzzy.extract("zzz", [], limit: :all) == []
    assert Fuzzy.extract("zzz", ["a"], limit: 0) == []
  end

  test "extract_one: the best, or nil when none is within the cutoff" do
    list = ["apple", "maple", "apply"]
    assert Fuzzy.extract_one("aple", list, scorer: :indel, score: :distance) == {"apple", 1, 0}

    assert Fuzzy.extract_one("zzzz", list,
             scorer: :ratio,
             score: :similarity,
             score_cutoff: 50
           ) == nil
  end

  test "processors: applied to the query and every candidate; the candidate comes back as given" do
    list = ["New York City", "NEW-YORK", "Boston"]

    assert Fuzzy.extract("new york", list, processor: :default, scorer: :ratio, limit: 2) ==
             [
               {"NEW-YORK", 1.0, 1},
               {"New York City", Ref.ratio(~c"new york", ~c"new york city") / 100, 0}
             ]

    upcase = &String.upcase/1

    assert Fuzzy.extract("boston", list, processor: upcase, scorer: :ratio, limit: 1) ==
             [{"Boston", 1.0, 2}]

    assert Fuzzy.score("Hello World!", "hello world", processor: :default, scorer: :ratio) == 1.0
    assert Fuzzy.Processor.default("ÉCOLE, Zürich!") == "école  zürich"
    assert Fuzzy.Processor.default("--") == ""

    assert_raise ArgumentError,
                 ~r/Processor.default\/1: .* is neither ASCII nor valid UTF-8/,
                 fn ->
                   Fuzzy.Processor.default("caf" <> <<0xE9>>)
                 end
  end

  test "codepoints: Unicode candidates, and invalid UTF-8 named by its position" do
    list = ["héllo", "hello", "日本語"]

    assert Fuzzy.extract("héllo", list, scorer: :levenshtein, score: :distance, unit: :codepoint) ==
             [{"héllo", 0, 0}, {"hello", 1, 1}, {"日本語", 5, 2}]

    assert_raise ArgumentError,
                 ~r/#{Regex.escape(@extract)}: the candidate at position 1 is not valid UTF-8/,
                 fn ->
                   Fuzzy.extract("a", ["a", <<0xFF>>], unit: :codepoint)
                 end

    # Levenshtein's distances come from the search core: the same refusal
    assert_raise ArgumentError, ~r/the candidate at position 2 is not valid UTF-8/, fn ->
      Fuzzy.extract("a", ["a", "é", <<0xE9>>], unit: :codepoint, scorer: :levenshtein)
    end

    assert_raise ArgumentError, ~r/the query is not valid UTF-8/, fn ->
      Fuzzy.extract(<<0xC0, 0x80>>, ["a"], unit: :codepoint)
    end
  end

  test "Damerau-Levenshtein through an index with a limit keeps score/3's best, ties by position" do
    # a search with a limit of at most 64 first takes the OSA distance of
    # the candidates of the best LCS bounds, and drops those past the
    # limit-th best of them: on
    # a small alphabet (many ties, swaps apart) and edits of the query,
    # every limit near and past 64, each kind and cutoff
    query = word(20, ~c"abcd")

    near =
      for _ <- 1..150 do
        <<head::binary-size(8), mid::binary-size(2), tail::binary>> = query
        <<a, b>> = mid
        # a symbol moved: a distance of 2 over an LCS bound of 1
        moved = String.slice(query, 1..5) <> String.first(query) <> String.slice(query, 6..19)

        Enum.random([
          head <> <<b, a>> <> tail,
          head <> <<b>> <> "d" <> <<a>> <> tail,
          query,
          moved,
          String.replace(moved, "a", "b", global: false)
        ])
      end

    # more than twice the 512 picks the seeds come from pass their bound
    list = near ++ for(_ <- 1..1_450, do: word(Enum.random(10..30), ~c"abcd"))
    index = Fuzzy.Index.new(Enum.shuffle(list))
    list = Enum.to_list(index) |> Enum.map(fn {_, text} -> text end)

    for score <- [:normalized_similarity, :normalized_distance, :distance],
        cutoff <- [nil, 0.4],
        score != :distance or cutoff == nil,
        limit <- [1, 2, 5, 64, 65] do
      opts = [scorer: :damerau_levenshtein, score: score, score_cutoff: cutoff]

      keeps_best(query, {index, list}, opts, limit, "#{score} cutoff #{inspect(cutoff)}")
    end
  end

  test "the partial ratios through an index with a limit keep score/3's best, ties by position" do
    # a search with a limit of at most 64 first scores the candidates of
    # the best LCS bounds, and passes over those whose bound is below the
    # limit-th best of them: windows of the query among others, small
    # alphabets (many ties), more than twice the 128 picks past their bar
    query = word(16, ~c"abcd")

    near =
      for _ <- 1..100 do
        from = Enum.random(0..12)
        String.slice(query, from, Enum.random(3..8)) <> word(Enum.random(0..6), ~c"abcd")
      end

    list = near ++ for(_ <- 1..900, do: word(Enum.random(4..24), ~c"abcd"))
    index = Fuzzy.Index.new(Enum.shuffle(list))
    list = Enum.to_list(index) |> Enum.map(fn {_, text} -> text end)

    for scorer <- [:partial_ratio, :partial_token_sort_ratio, :partial_token_ratio],
        score <- [:similarity, :normalized_distance],
        cutoff <- [nil, 70],
        score == :similarity or cutoff == nil,
        limit <- [1, 2, 5, 64, 65],
        scorer == :partial_ratio or limit == 5 do
      opts = [scorer: scorer, score: score, score_cutoff: cutoff]
      keeps_best(query, {index, list}, opts, limit, "#{scorer} #{score} #{inspect(cutoff)}")
    end
  end

  test "Jaro and Jaro-Winkler through an index with a limit keep score/3's best, ties by position" do
    # the search passes over a candidate whose matches and transpositions
    # cannot beat the worst kept, with the longest prefix bonus for
    # Jaro-Winkler: small alphabets (many ties), each prefix weight and kind
    query = word(12, ~c"abc")
    list = for _ <- 1..800, do: word(Enum.random(8..16), ~c"abc")
    index = Fuzzy.Index.new(list)

    for scorer <- [:jaro, :jaro_winkler],
        weight <- [0.0, 0.1, 0.25],
        scorer == :jaro_winkler or weight == 0.0,
        score <- [:similarity, :normalized_distance],
        limit <- [1, 7, 40] do
      opts =
        [scorer: scorer, score: score] ++
          if scorer == :jaro_winkler, do: [prefix_weight: weight], else: []

      keeps_best(query, {index, list}, opts, limit, "#{scorer} #{weight} #{score}")
    end
  end

  test "every mode and tiny slices give the same result" do
    list = candidates(60)
    query = word(20, ~c"abc ")
    # through an index with a limit, the bars pass over candidates in
    # runs a slice can end inside
    index = Fuzzy.Index.new(list)

    for scorer <-
          [:levenshtein, :wratio, :jaro_winkler, :partial_ratio, :token_set_ratio] ++
            [:ratio, :damerau_levenshtein, :jaro],
        {candidates, limit} <- [{list, :all}, {index, 3}] do
      want = Fuzzy.extract(query, candidates, scorer: scorer, limit: limit)

      for mode <- Runtime.modes() do
        got =
          Fuzzy.extract(query, candidates,
            scorer: scorer,
            limit: limit,
            schedule: mode,
            tiny_slices: true
          )

        assert got === want, "#{scorer} #{mode} #{limit}"
      end
    end
  end

  test "bad arguments raise ArgumentError naming the function and what is accepted" do
    for {args, message} <- [
          {[1, ["a"], []], ~r/invalid query 1, expected a binary/},
          {["a", :nope, []], ~r/invalid choices :nope/},
          {["a", ["a", 3], []], ~r/the candidate at position 1 is not a binary/},
          {["a", ["a"], [scorer: :nope]], ~r/invalid :scorer :nope/},
          {["a", ["a"], [score: :best]], ~r/invalid :score :best/},
          {["a", ["a"], [limit: -1]], ~r/invalid :limit -1/},
          {["a", ["a"], [score_cutoff: 1.5]],
           ~r/invalid :score_cutoff 1.5, expected a number in 0..1/},
          {["a", ["a"], [scorer: :levenshtein, score: :distance, score_cutoff: 1.5]],
           ~r/a non-negative integer/},
          {["a", ["a"], [weights: {1, 1, 1}]], ~r/only :levenshtein takes them/},
          {["a", ["a"], [scorer: :jaro, prefix_weight: 0.1]], ~r/only :jaro_winkler/},
          {["a", ["a"], [scorer: :jaro_winkler, prefix_weight: 0.5]], ~r/in 0.0..0.25/},
          {["a", ["a"], [processor: :upcase]], ~r/invalid :processor :upcase/},
          {["a", ["a"], [bogus: 1]], ~r/unknown option :bogus/},
          {["a", ["a"], :nope], ~r/expected a keyword list/}
        ] do
      assert_raise ArgumentError, message, fn -> apply(Fuzzy, :extract, args) end
    end

    assert_raise ArgumentError, ~r/score\/3: invalid second argument 7/, fn ->
      Fuzzy.score("a", 7)
    end
  end

  test "callers killed mid-search leave no live job" do
    list = for _ <- 1..20_000, do: word(25, ~c"abcdefgh ")

    for mode <- Runtime.modes() -- [:normal], round <- 1..3 do
      scorer = Enum.at([:wratio, :levenshtein, :jaro], round - 1)

      kill_during(
        fn -> Fuzzy.extract(word(30, ~c"abcdefgh "), list, scorer: scorer, schedule: mode) end,
        rem(round, 3)
      )
    end

    assert_no_live_jobs()
  end
end
