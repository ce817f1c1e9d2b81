defmodule WellBehaved.FuzzyAlignmentTest do
  # alignment: true (issue 48): where a ratio's score is, as rapidfuzz's
  # fuzz.partial_ratio_alignment reports it. The partial ratio's window
  # against an independent reference (every window scored by a textbook
  # LCS table, then rapidfuzz-cpp's steps followed to pick among equal
  # windows: test/support/alignment_reference.exs), on random pairs over
  # few letters (many equal windows) in bytes and codepoints; the score
  # is the one without the alignment, and the spans score it again as a
  # plain ratio. Every mode, long pairs in one-unit slices, the external
  # server; the searches' hits (lists, maps, indexes, an index split over
  # nodes) against score/3; every error.
  use ExUnit.Case, async: false

  alias WellBehaved.{External, Fuzzy, Native}
  alias WellBehaved.Fuzzy.{Alignment, Call, Index}
  alias WellBehaved.Test.AlignmentReference, as: Ref
  alias WellBehaved.Test.FuzzyReference

  @moduletag timeout: 600_000

  doctest WellBehaved.Fuzzy.Alignment

  @modes [:normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded, :auto]
  @letters %{byte: [~c"ab", ~c"abc", ~c"abcde", ~c"a"], codepoint: [~c"aé", ~c"中é😀", ~c"a中"]}

  defp partial(a, b, opts \\ []),
    do: Fuzzy.score(a, b, [scorer: :partial_ratio, score: :similarity, alignment: true] ++ opts)

  defp spans(%Alignment{} = x), do: {x.src_start, x.src_end, x.dest_start, x.dest_end}

  defp text(n, letters), do: for(_ <- 1..n//1, into: "", do: <<Enum.random(letters)::utf8>>)

  # a random pair, the shorter planted in the longer now and then
  defp pair(unit, most_a, most_b) do
    letters = Enum.random(@letters[unit])
    a = text(Enum.random(0..most_a), letters)
    b = text(Enum.random(0..most_b), letters)

    b =
      if a != "" and Enum.random(1..3) == 1,
        do: Enum.random([a <> b, b <> a, text(3, letters) <> a <> b]),
        else: b

    if Enum.random([true, false]), do: {a, b}, else: {b, a}
  end

  defp reference(a, b, unit) do
    {score, spans} = Ref.partial(FuzzyReference.symbols(a, unit), FuzzyReference.symbols(b, unit))

    {score, spans}
  end

  # the span of the symbols of s
  defp span(s, from, to, unit),
    do:
      Alignment.slice(
        %Alignment{src_start: from, src_end: to, dest_start: 0, dest_end: 0},
        :src,
        s,
        unit
      )

  # what holds of every alignment: the score without it, and the spans
  # scored again as a ratio give it (a partial ratio's: the shorter side
  # whole)
  defp consistent(a, b, unit, {score, %Alignment{} = at}) do
    assert score ==
             Fuzzy.score(a, b, scorer: :partial_ratio, score: :similarity, unit: unit)

    sa = span(a, at.src_start, at.src_end, unit)
    sb = span(b, at.dest_start, at.dest_end, unit)
    la = length(FuzzyReference.symbols(a, unit))
    lb = length(FuzzyReference.symbols(b, unit))

    cond do
      la < lb -> assert sa == a
      la > lb -> assert sb == b
      true -> assert sa == a or sb == b
    end

    if a != "" and b != "",
      do: assert(Fuzzy.score(sa, sb, scorer: :ratio, score: :similarity, unit: unit) == score)
  end

  test "rapidfuzz's documented examples and choices among equal windows" do
    cases = [
      # its documentation's example, both ways
      {"a certain string", "cetain", 100 * 10 / 12, {2, 8, 0, 6}},
      {"cetain", "a certain string", 100 * 10 / 12, {0, 6, 2, 8}},
      # its test of issue 231
      {"er merkantilismus f/rderte handel und verkehr mit teils marktkonformen, teils " <>
         "dirigistischen ma_nahmen.",
       "ils marktkonformen, teils dirigistischen ma_nahmen. an der schwelle zum 19. " <>
         "jahrhundert entstand ein neu", 100 * 102 / 154, {0, 103, 0, 51}},
      {"001", "220222", 100 / 3, {0, 3, 0, 3}},
      {"physics 2 vid", "study physics physics 2 video", 100.0, {0, 13, 14, 27}},
      # a needle found twice: the window rapidfuzz's halving visits first,
      # not the leftmost
      {"ab", "axabaxaba", 100.0, {0, 2, 6, 8}},
      {"ab", "xbxaxab", 100.0, {0, 2, 5, 7}},
      {"bb", "babbbxaabbb", 100.0, {0, 2, 8, 10}},
      {"bbab", "xxabbbaxaabb", 75.0, {0, 4, 3, 7}},
      {"ab", "xabxxxxxxab", 100.0, {0, 2, 1, 3}},
      # nothing in common: the needle against the start
      {"abc", "xyz", 0.0, {0, 3, 0, 3}},
      {"xyzw", "abc", 0.0, {0, 3, 0, 3}},
      {"", "", 100.0, {0, 0, 0, 0}},
      {"", "abc", 0.0, {0, 0, 0, 0}},
      {"abc", "", 0.0, {0, 0, 0, 0}}
    ]

    for {a, b, score, want} <- cases, mode <- @modes do
      assert {got, at} = partial(a, b, schedule: mode)
      assert_in_delta got, score, 1.0e-9
      assert spans(at) == want, "#{inspect({a, b, mode})}: #{inspect(at)}"
      # and the reference agrees
      assert {^got, ^want} = reference(a, b, :byte)
    end
  end

  test "random pairs in bytes and codepoints: the reference's window, the same score" do
    for unit <- [:byte, :codepoint], _ <- 1..700 do
      {a, b} = pair(unit, 10, 25)
      {score, at} = result = partial(a, b, unit: unit)
      assert {score, spans(at)} == reference(a, b, unit), "#{inspect({a, b, unit})}"
      consistent(a, b, unit, result)
    end
  end

  test "needles of more than a word, against the reference" do
    for unit <- [:byte, :codepoint], _ <- 1..12 do
      {a, b} = pair(unit, 90, 160)
      {score, at} = partial(a, b, unit: unit)
      assert {score, spans(at)} == reference(a, b, unit), "#{inspect({a, b, unit})}"
    end
  end

  test "the ratio's alignment is the whole of both, in the unit's symbols" do
    assert {_, at} = Fuzzy.score("héllo", "hallo!", scorer: :ratio, alignment: true)
    assert spans(at) == {0, 6, 0, 6}

    for mode <- [:auto, :normal, :external] do
      assert {score, at} =
               Fuzzy.score("héllo", "hallo!",
                 scorer: :ratio,
                 unit: :codepoint,
                 alignment: true,
                 schedule: mode
               )

      assert score == Fuzzy.score("héllo", "hallo!", scorer: :ratio, unit: :codepoint)
      assert spans(at) == {0, 5, 0, 6}
    end
  end

  test "a cutoff: the worst score and no alignment when it does not pass" do
    assert partial("cetain", "a certain string", score_cutoff: 90) == {0.0, nil}

    assert partial("cetain", "a certain string", score: :distance, score_cutoff: 10) ==
             {100.0, nil}

    assert {_, %Alignment{}} = partial("cetain", "a certain string", score_cutoff: 83)

    assert Fuzzy.score("a", "b", scorer: :ratio, alignment: true, score_cutoff: 0.5) ==
             {0.0, nil}

    # a cutoff at the score passes, with the window found without it
    {score, at} = partial("ab", "axabaxaba")
    assert partial("ab", "axabaxaba", score_cutoff: score) == {score, at}
  end

  test "every mode, long pairs in one-unit slices: the same answers" do
    # needles of two words and of more than 256 symbols (their patterns
    # made a budget at a time), found whole (the halving's earlier
    # windows looked at); a short needle in a long haystack; equal
    # lengths (both directions); codepoints
    two_words = text(70, ~c"abc")
    long_needle = text(260, ~c"ab")

    pairs = [
      {two_words, text(60, ~c"abc") <> two_words <> text(90, ~c"abc") <> two_words},
      {"x" <> long_needle <> "xx", long_needle},
      {long_needle, "xy" <> long_needle <> "x" <> long_needle <> "yy"},
      {text(8, ~c"ab"), text(3000, ~c"abc")},
      {text(100, ~c"ab"), text(100, ~c"ab")},
      {"héllo wörld", String.duplicate("hello wörld héllo ", 100)}
    ]

    for {a, b} <- pairs, unit <- [:byte, :codepoint] do
      want = partial(a, b, unit: unit, schedule: :normal)
      consistent(a, b, unit, want)

      for mode <- @modes,
          do:
            assert(
              partial(a, b, unit: unit, schedule: mode, tiny_slices: true) == want,
              "#{mode} #{unit}"
            )
    end
  end

  test "schedule: :external answers as the VM does" do
    External.stop()
    on_exit(fn -> External.stop() end)

    for unit <- [:byte, :codepoint], _ <- 1..60 do
      {a, b} = pair(unit, 12, 30)

      for tiny <- [false, true] do
        opts = [unit: unit, tiny_slices: tiny]

        assert partial(a, b, [schedule: :external] ++ opts) ==
                 partial(a, b, [schedule: :normal] ++ opts)
      end
    end

    a = text(300, ~c"ab")
    b = text(3000, ~c"ab") <> a

    assert partial(a, b, schedule: :external, tiny_slices: true) ==
             partial(a, b, schedule: :normal)

    assert partial("cetain", "a certain string", schedule: :external, score_cutoff: 90) ==
             {0.0, nil}
  end

  # each hit with its alignment, as score/3 gives it for the query and
  # the candidate as processed
  defp hits_aligned(query, hits, opts, processor \\ & &1) do
    for {text, score, _key, at} <- hits do
      assert {^score, ^at} =
               Fuzzy.score(processor.(query), processor.(text), [alignment: true] ++ opts)
    end
  end

  defp without(hits), do: Enum.map(hits, &Tuple.delete_at(&1, 3))

  test "extract/3 and extract_one/3 on lists and maps: each hit's alignment, every mode" do
    for unit <- [:byte, :codepoint], scorer <- [:partial_ratio, :ratio], _ <- 1..6 do
      letters = Enum.random(@letters[unit])
      query = text(Enum.random(1..12), letters)
      choices = for _ <- 1..40, do: text(Enum.random([0, 2, 5, 12, 30, 80]), letters)
      pairs = Enum.with_index(choices, fn t, i -> {{:k, i}, t} end)
      base = [scorer: scorer, unit: unit]

      for mode <- @modes, limit <- [1, 5, :all] do
        opts = base ++ [schedule: mode, limit: limit, tiny_slices: mode != :auto]
        hits = Fuzzy.extract(query, choices, [alignment: true] ++ opts)
        assert without(hits) == Fuzzy.extract(query, choices, opts)
        hits_aligned(query, hits, base)
        keyed = Fuzzy.extract(query, pairs, [alignment: true] ++ opts)
        assert without(keyed) == Fuzzy.extract(query, pairs, opts)
        hits_aligned(query, keyed, base)
      end

      map = Map.new(pairs)
      opts = base ++ [score_cutoff: 0.4, processor: &String.reverse/1]
      hits = Fuzzy.extract(query, map, [alignment: true, limit: :all] ++ opts)
      assert without(hits) == Fuzzy.extract(query, map, [limit: :all] ++ opts)
      hits_aligned(query, hits, base, &String.reverse/1)

      case Fuzzy.extract_one(query, choices, [alignment: true] ++ base) do
        nil -> assert Fuzzy.extract_one(query, choices, base) == nil
        hit -> assert [hit] == Fuzzy.extract(query, choices, [alignment: true, limit: 1] ++ base)
      end
    end

    # a long candidate among short ones, its alignment in one-unit slices
    long = text(5000, ~c"ne") <> "needle" <> text(3000, ~c"nel")
    choices = ["nee", long, "needles", "x"]

    for mode <- @modes do
      hits =
        Fuzzy.extract("needle", choices,
          scorer: :partial_ratio,
          alignment: true,
          schedule: mode,
          tiny_slices: true,
          limit: :all
        )

      hits_aligned("needle", hits, scorer: :partial_ratio)

      assert {^long, 1.0, 1, %Alignment{src_start: 0, src_end: 6, dest_start: 5000}} =
               Enum.find(hits, &(elem(&1, 0) == long))
    end
  end

  test "extract/3 on an index of segments with deletions: each hit's alignment" do
    pieces =
      for n <- [120, 1, 7, 150, 3, 3, 16],
          do: for(_ <- 1..n, do: text(Enum.random(0..25), ~c"abcd "))

    index = Enum.reduce(pieces, Index.new([], processor: :default), &Index.add(&2, &1))
    index = Index.delete(index, [3, 150, 299])
    assert length(index.segments) > 1
    list = Enum.to_list(index)
    processor = &Fuzzy.Processor.default/1

    for scorer <- [:partial_ratio, :ratio], limit <- [3, :all], _ <- 1..3 do
      query = text(Enum.random(1..10), ~c"ABCD ")
      opts = [scorer: scorer, limit: limit]
      hits = Fuzzy.extract(query, index, [alignment: true] ++ opts)
      assert without(hits) == Fuzzy.extract(query, index, opts)

      assert hits ==
               Fuzzy.extract(query, list, [alignment: true, processor: :default] ++ opts)

      hits_aligned(query, hits, [scorer: scorer], processor)
    end
  end

  test "an index split over nodes: the hits' alignments as here" do
    {_peer, other} = start_peer()
    words = for _ <- 1..200, do: text(Enum.random(1..20), ~c"abc ")
    split = Index.new(words, nodes: [other, node()])
    here = Index.new(words)

    for scorer <- [:partial_ratio, :ratio], limit <- [4, :all] do
      opts = [scorer: scorer, limit: limit, alignment: true]
      assert Fuzzy.extract("abca", split, opts) === Fuzzy.extract("abca", here, opts)
    end

    assert Fuzzy.extract_one("abca", split, scorer: :partial_ratio, alignment: true) ===
             Fuzzy.extract_one("abca", here, scorer: :partial_ratio, alignment: true)
  end

  defp start_peer do
    if not Node.alive?() do
      {_, 0} = System.cmd("epmd", ["-daemon"])

      {:ok, _} =
        Node.start(:"wb_align_#{System.unique_integer([:positive])}@127.0.0.1", :longnames)
    end

    paths = Enum.flat_map(:code.get_path(), &[~c"-pa", &1])

    {:ok, peer, node} =
      :peer.start(%{
        name: :"wb_peer_#{System.unique_integer([:positive])}",
        host: ~c"127.0.0.1",
        longnames: true,
        args: paths
      })

    on_exit(fn -> if Process.alive?(peer), do: :peer.stop(peer) end)
    {:ok, _} = :erpc.call(node, :application, :ensure_all_started, [:well_behaved])
    {peer, node}
  end

  test "errors: other scorers, values that are not booleans, functions without the option" do
    for scorer <- [:wratio, :levenshtein, :token_set_ratio, :partial_token_ratio, :jaro] do
      message =
        ~r/invalid :alignment true, expected no alignment for #{inspect(scorer)}: only :ratio or :partial_ratio/

      assert_raise ArgumentError, ~r/Fuzzy.score\/3: /, fn ->
        Fuzzy.score("a", "b", scorer: scorer, alignment: true)
      end

      assert_raise ArgumentError, message, fn ->
        Fuzzy.score("a", "b", scorer: scorer, alignment: true, schedule: :external)
      end

      assert_raise ArgumentError, ~r/Fuzzy.extract\/3: .*only :ratio or :partial_ratio/, fn ->
        Fuzzy.extract("a", ["b"], scorer: scorer, alignment: true)
      end

      assert_raise ArgumentError, ~r/Fuzzy.extract_one\/3: .*only :ratio or :partial_ratio/, fn ->
        Fuzzy.extract_one("a", Index.new(["b"]), scorer: scorer, alignment: true)
      end
    end

    # the default scorer (:wratio) has none
    assert_raise ArgumentError, ~r/no alignment for :wratio/, fn ->
      Fuzzy.score("a", "b", alignment: true)
    end

    for bad <- [1, nil, "true", :yes] do
      assert_raise ArgumentError,
                   ~r/invalid :alignment #{inspect(bad)}, expected a boolean/,
                   fn ->
                     Fuzzy.score("a", "b", scorer: :ratio, alignment: bad)
                   end
    end

    assert_raise ArgumentError, ~r/cdist\/3: unknown option :alignment/, fn ->
      Fuzzy.cdist(["a"], ["b"], scorer: :ratio, alignment: true)
    end

    # alignment: false is the plain score
    assert Fuzzy.score("a", "ab", scorer: :partial_ratio, alignment: false) == 1.0

    assert Fuzzy.extract("a", ["ab"], scorer: :partial_ratio, alignment: false) == [
             {"ab", 1.0, 0}
           ]

    # invalid UTF-8 still raises
    assert_raise ArgumentError, ~r/first argument is not valid UTF-8/, fn ->
      partial(<<0xFF>>, "a", unit: :codepoint)
    end
  end

  test "the native side takes the alignment from the same scorers as the options" do
    for scorer <- Call.scorers(), flag <- [true, false] do
      options = put_elem(Call.native(%Call{scorer: scorer}), 8, flag)

      got =
        try do
          Native.fuzzy_score_short("abc", "b", :byte, options)
        rescue
          ArgumentError -> :badarg
        end

      if flag and scorer not in Call.aligned(),
        do: assert(got == :badarg, inspect(scorer)),
        else: assert(got != :badarg, inspect({scorer, flag}))
    end

    # the flag a boolean
    options = put_elem(Call.native(%Call{scorer: :ratio}), 8, :yes)
    assert_raise ArgumentError, fn -> Native.fuzzy_score_short("a", "b", :byte, options) end
  end

  test "Alignment.slice/4: the spans' text, its errors" do
    {_, at} = partial("a certain string", "cetain")
    assert Alignment.slice(at, :src, "a certain string") == "certai"
    assert Alignment.slice(at, :dest, "cetain") == "cetain"
    {_, at} = partial("ça certain", "cetain", unit: :codepoint)
    assert Alignment.slice(at, :src, "ça certain", :codepoint) == "certai"

    assert_raise ArgumentError, ~r/slice\/4: invalid side :both, expected :src or :dest/, fn ->
      Alignment.slice(at, :both, "x")
    end

    assert_raise ArgumentError, ~r/slice\/4: invalid alignment/, fn ->
      Alignment.slice({0, 1, 0, 1}, :src, "x")
    end

    assert_raise ArgumentError, ~r/slice\/4: invalid string "ab"/, fn ->
      Alignment.slice(at, :src, "ab")
    end

    assert_raise ArgumentError, ~r/slice\/4: invalid unit :grapheme/, fn ->
      Alignment.slice(at, :src, "ça certain", :grapheme)
    end
  end
end
