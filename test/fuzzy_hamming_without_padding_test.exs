defmodule WellBehaved.FuzzyHammingWithoutPaddingTest do
  # Issue 48: `pad: false` for :hamming, as rapidfuzz's Hamming takes
  # pad=False. Padding stays the default. Without it, strings of equal
  # length score as before (the positions whose symbols differ, checked
  # here against that definition), and strings of different lengths are
  # an error: score/3 raises naming the lengths, a search or cdist the
  # first candidate of another length (its position, or its key), in
  # every mode, on the external server, and for an index split over
  # nodes; an index's deleted entries never raise.
  use ExUnit.Case, async: false

  alias WellBehaved.{Fuzzy, Runtime}
  alias WellBehaved.Fuzzy.Index

  @kinds [:distance, :similarity, :normalized_distance, :normalized_similarity]
  @rule "WellBehaved.Fuzzy.extract/3: :hamming with pad: false compares strings of equal " <>
          "length only: "

  # the definition: the positions whose symbols differ (equal lengths)
  defp hamming(a, b, unit) do
    {a, b} =
      if unit == :byte,
        do: {:binary.bin_to_list(a), :binary.bin_to_list(b)},
        else: {String.to_charlist(a), String.to_charlist(b)}

    d = Enum.zip(a, b) |> Enum.count(fn {x, y} -> x != y end)
    {d, length(a)}
  end

  defp kind_of({d, most}, kind) do
    nd = if most == 0, do: 0.0, else: d / most

    case kind do
      :distance -> d
      :similarity -> most - d
      :normalized_distance -> nd
      :normalized_similarity -> 1.0 - nd
    end
  end

  defp word(n, alphabet), do: for(_ <- 1..n//1, into: "", do: <<Enum.random(alphabet)::utf8>>)

  test "padding is the default: the shorter side padded, pad: true the same" do
    assert Fuzzy.score("abc", "abcde", scorer: :hamming, score: :distance) == 2
    assert Fuzzy.score("abc", "abcde", scorer: :hamming, score: :distance, pad: true) == 2

    assert Fuzzy.extract("abc", ["abcde"], scorer: :hamming, score: :distance) == [
             {"abcde", 2, 0}
           ]
  end

  test "equal lengths score as the definition says, every kind, both units, cutoffs too" do
    for unit <- [:byte, :codepoint], _ <- 1..40 do
      alphabet = if unit == :byte, do: ~c"ab", else: [?a, ?é, 0x4E2D]
      n = Enum.random(0..70)
      {a, b} = {word(n, alphabet), word(n, alphabet)}
      raw = hamming(a, b, unit)

      for kind <- @kinds do
        want = kind_of(raw, kind)
        opts = [scorer: :hamming, pad: false, score: kind, unit: unit]
        assert Fuzzy.score(a, b, opts) === want, "#{kind} #{inspect(a)} #{inspect(b)}"
        assert Fuzzy.score(a, b, [score_cutoff: want] ++ opts) === want
      end
    end
  end

  test "score/3 raises naming the lengths, in every mode and on the external server" do
    # 3 and 4 bytes in the call; long pairs in jobs of one unit a slice
    long = String.duplicate("ab", 5000)

    for {a, b, unit, m, n, units} <- [
          {"abc", "abcd", :byte, 3, 4, "bytes"},
          {"café", "cafe", :byte, 5, 4, "bytes"},
          {"cafés", "cafe", :codepoint, 5, 4, "codepoints"},
          {long, long <> "é", :codepoint, 10_000, 10_001, "codepoints"}
        ],
        mode <- Runtime.modes() ++ [:external] do
      message =
        "WellBehaved.Fuzzy.score/3: :hamming with pad: false compares strings of equal length " <>
          "only: the first argument has #{m} #{units}, the second #{n}"

      error =
        assert_raise ArgumentError, fn ->
          Fuzzy.score(a, b, scorer: :hamming, pad: false, unit: unit, schedule: mode)
        end

      assert error.message == message, "#{mode}: #{error.message}"

      assert_raise ArgumentError, fn ->
        Fuzzy.score(a, b,
          scorer: :hamming,
          pad: false,
          unit: unit,
          schedule: mode,
          tiny_slices: true
        )
      end
    end

    # "café" and "cafe" have 4 codepoints each
    assert Fuzzy.score("café", "cafe", scorer: :hamming, pad: false, unit: :codepoint) == 0.75
  end

  test "a search raises at the first candidate of another length: its position or key" do
    opts = [scorer: :hamming, pad: false]

    assert_raise ArgumentError,
                 @rule <> "the candidate at position 2 has 2 bytes, the query 3",
                 fn ->
                   Fuzzy.extract("abc", ["abd", "abc", "ab", "abcd"], opts)
                 end

    # after a perfect hit, whatever the limit and kind
    for limit <- [1, 2, :all], kind <- @kinds, mode <- Runtime.modes() do
      assert_raise ArgumentError, ~r/position 3 has 4 bytes, the query 3/, fn ->
        Fuzzy.extract("abc", ["abc", "abd", "xyz", "abcd"],
          scorer: :hamming,
          pad: false,
          score: kind,
          limit: limit,
          schedule: mode,
          tiny_slices: true
        )
      end
    end

    # long candidates (the pair scorer's path), codepoints
    long = String.duplicate("é", 5000)

    assert_raise ArgumentError, ~r/position 1 has 4999 codepoints, the query 5000/, fn ->
      Fuzzy.extract(long, [long, String.duplicate("é", 4999)], [unit: :codepoint] ++ opts)
    end

    # keyed candidates are named by their keys
    assert_raise ArgumentError,
                 @rule <> "the candidate with key :b has 4 bytes, the query 3",
                 fn ->
                   Fuzzy.extract("abc", [{:a, "abd"}, {:b, "abcd"}], opts)
                 end

    assert_raise ArgumentError, ~r/the candidate with key "x" has 1 byte, the query 3/, fn ->
      Fuzzy.extract_one("abc", %{"x" => "a"}, opts)
    end

    # a limit of 0 scores nothing
    assert Fuzzy.extract("abc", ["ab"], [limit: 0] ++ opts) == []

    # equal lengths: the padded answers
    texts = ["abd", "abc", "xbc", "zzz"]
    want = Fuzzy.extract("abc", texts, scorer: :hamming, limit: :all)
    assert Fuzzy.extract("abc", texts, [limit: :all] ++ opts) == want
    assert Fuzzy.extract_one("abc", texts, opts) == hd(want)
  end

  test "cdist names the candidate and the query's row" do
    assert_raise ArgumentError,
                 "WellBehaved.Fuzzy.cdist/3: :hamming with pad: false compares strings of " <>
                   "equal length only: the candidate at position 1 has 2 bytes, the query at " <>
                   "position 0 has 3",
                 fn ->
                   Fuzzy.cdist(["abc"], ["abd", "ab"], scorer: :hamming, pad: false, workers: 1)
                 end

    assert Fuzzy.cdist(["abc", "xyz"], ["abd", "xyc"],
             scorer: :hamming,
             pad: false,
             score: :distance
           ) == [[1, 2], [3, 1]]
  end

  test "an index: a live entry of another length raises by its key, a deleted one never" do
    texts = for i <- 0..9, do: if(i == 4, do: "ab", else: word(3, ~c"abc"))
    index = Index.new(texts)
    opts = [scorer: :hamming, pad: false, limit: :all]

    assert_raise ArgumentError,
                 @rule <> "the candidate with key 4 has 2 bytes, the query 3",
                 fn ->
                   Fuzzy.extract("abc", index, opts)
                 end

    # deleted, it waits in its segment, dead: the live entries answer
    index = Index.delete(index, 4)
    assert [segment] = index.segments
    assert MapSet.member?(segment.dead, 4)

    want =
      for {text, key} <- Enum.with_index(texts), key != 4 do
        {text, Fuzzy.score("abc", text, scorer: :hamming), key}
      end
      |> Enum.sort_by(fn {_, s, key} -> {-s, key} end)

    for mode <- Runtime.modes() do
      assert Fuzzy.extract("abc", index, [schedule: mode, tiny_slices: true] ++ opts) == want
    end

    assert Fuzzy.extract("abc", index, Keyword.put(opts, :limit, 2)) == Enum.take(want, 2)
    cells = for text <- texts -- ["ab"], do: Fuzzy.score("abc", text, scorer: :hamming)
    assert Fuzzy.cdist(["abc"], index, scorer: :hamming, pad: false) == [cells]

    # the live entries searched again name the index's positions: here an
    # entry not UTF-8 after a deleted one of another length
    bad = Index.new(["abc", "ab", "a\xFFc", "abd"]) |> Index.delete(1)

    assert_raise ArgumentError, ~r/the candidate at position 2 is not valid UTF-8/, fn ->
      Fuzzy.extract("abc", bad, scorer: :hamming, pad: false, unit: :codepoint)
    end

    # a live entry of another length after the dead one still raises
    index = Index.add(index, [{:late, "abcd"}])

    assert_raise ArgumentError, ~r/the candidate with key :late has 4 bytes/, fn ->
      Fuzzy.extract("abc", index, opts)
    end
  end

  test "the native side takes pad true or false only, as the external server does" do
    call = %WellBehaved.Fuzzy.Call{scorer: :hamming, score: :distance}

    run = fn pad, mode ->
      options = put_elem(WellBehaved.Fuzzy.Call.native(call), 7, pad)

      if mode == :external,
        do: WellBehaved.External.score("abc", "abcd", :byte, options, false),
        else:
          WellBehaved.Job.checked(
            &WellBehaved.Native.fuzzy_score/7,
            ["abc", "abcd", :byte, options],
            mode,
            false,
            :infinity,
            "test"
          )
    end

    for mode <- [:normal, :external] do
      assert run.(true, mode) == 1
      assert run.(false, mode) == {:error, {:unequal_lengths, 3, 4}}
      assert run.(nil, mode) == {:error, :badarg}
      assert run.(:maybe, mode) == {:error, :badarg}
    end
  end

  test "pad: only for :hamming, true or false" do
    for scorer <- [:levenshtein, :indel, :prefix, :ratio] do
      assert_raise ArgumentError,
                   "WellBehaved.Fuzzy.score/3: invalid :pad false, expected no pad: only " <>
                     ":hamming takes it",
                   fn -> Fuzzy.score("a", "b", scorer: scorer, pad: false) end

      assert_raise ArgumentError, ~r/extract\/3: invalid :pad true/, fn ->
        Fuzzy.extract("a", ["b"], scorer: scorer, pad: true)
      end
    end

    for bad <- [nil, "false", 0, :no] do
      assert_raise ArgumentError, ~r/invalid :pad #{inspect(bad)}, expected true or false/, fn ->
        Fuzzy.score("a", "b", scorer: :hamming, pad: bad)
      end

      assert_raise ArgumentError, ~r/cdist\/3: invalid :pad/, fn ->
        Fuzzy.cdist(["a"], ["b"], scorer: :hamming, pad: bad)
      end
    end
  end
end
