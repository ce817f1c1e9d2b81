defmodule WellBehaved.FuzzyPortingOptionsTest do
  # Issue 48, item 5: what rapidfuzz users expect. cdist/3 scores with
  # :ratio unless told; limit: nil is every candidate; a nil among the
  # candidates is skipped; a map's candidates tie in the order of their
  # keys; a scorer may be a function of two binaries.
  use ExUnit.Case, async: true

  alias WellBehaved.Fuzzy
  alias WellBehaved.Fuzzy.Index

  test "cdist/3 scores with :ratio by default, as rapidfuzz's process.cdist" do
    queries = ["this is a test", "fuzzy wuzzy"]
    choices = ["this is a test!", "is a", "wuzzy fuzzy was a bear"]
    got = Fuzzy.cdist(queries, choices)
    assert got == Fuzzy.cdist(queries, choices, scorer: :ratio)

    assert got ==
             for(q <- queries, do: for(c <- choices, do: Fuzzy.score(q, c, scorer: :ratio)))

    # not :wratio's (the default of the other functions)
    refute got == Fuzzy.cdist(queries, choices, scorer: :wratio)
    # the scorer given wins, wherever it stands among the options
    assert Fuzzy.cdist(["ab"], ["ba"], score: :distance, scorer: :osa) == [[1]]
  end

  test "limit: nil means every candidate, as :all" do
    choices = ["apple", "apply", "maple", "ample", "pale"]

    for opts <- [[], [score_cutoff: 0.5], [scorer: :indel, score: :distance]] do
      all = Fuzzy.extract("appel", choices, [limit: :all] ++ opts)
      assert Fuzzy.extract("appel", choices, [limit: nil] ++ opts) == all
      assert Fuzzy.extract("appel", Index.new(choices), [limit: nil] ++ opts) == all
    end

    assert length(Fuzzy.extract("appel", choices, limit: nil)) == 5

    assert_raise ArgumentError, ~r/:limit.*a non-negative integer, :all or nil/, fn ->
      Fuzzy.extract("a", ["a"], limit: -1)
    end
  end

  test "a nil candidate is skipped; the others keep their positions and keys" do
    choices = [nil, "apple", nil, "apply", {:k, nil}, {:m, "maple"}]
    hits = Fuzzy.extract("apple", choices, scorer: :indel, score: :distance, limit: :all)
    assert hits == [{"apple", 0, 1}, {"apply", 2, 3}, {"maple", 2, :m}]

    assert Fuzzy.extract_one("x", [nil, nil], score_cutoff: 0.0) == nil
    assert Fuzzy.extract("x", [nil], limit: :all) == []

    map = %{a: nil, b: "apple", c: "apply"}
    assert [{"apple", 1.0, :b}, {"apply", _, :c}] = Fuzzy.extract("apple", map, scorer: :ratio)

    index = Index.new([nil, "apple", {:x, nil}, "apply"])
    assert Enum.to_list(index) == [{1, "apple"}, {3, "apply"}]
    assert [{"apple", 1.0, 1}, {"apply", _, 3}] = Fuzzy.extract("apple", index)

    # anything else still raises, naming its position
    assert_raise ArgumentError, ~r/extract\/3.*position 2|extract\/3.*at 2/, fn ->
      Fuzzy.extract("a", ["a", nil, 7])
    end
  end

  test "score_hint: is taken and changes nothing" do
    assert Fuzzy.score("abc", "abd", score_hint: 0.5) == Fuzzy.score("abc", "abd")

    assert Fuzzy.extract("abc", ["abd", "x"], score_hint: 90) ==
             Fuzzy.extract("abc", ["abd", "x"])

    assert Fuzzy.cdist(["abc"], ["abd"], score_hint: nil) == Fuzzy.cdist(["abc"], ["abd"])

    assert_raise ArgumentError, ~r/:score_hint.*a number or nil/, fn ->
      Fuzzy.score("a", "b", score_hint: :high)
    end
  end

  test "a map's candidates of equal score rank in the order of their keys" do
    # 40 keys: past 32, a map's own order is its hash order
    map = Map.new(1..40, fn k -> {(k * 7919) |> rem(1000), "same"} end)
    keys = Map.keys(map)
    refute Map.to_list(map) |> Enum.map(&elem(&1, 0)) == Enum.sort(keys)

    hits = Fuzzy.extract("same", map, limit: :all)
    assert Enum.map(hits, &elem(&1, 2)) == Enum.sort(keys)

    assert Enum.map(Fuzzy.extract("same", Index.new(map), limit: :all), &elem(&1, 2)) ==
             Enum.sort(keys)

    # keys of different types: Erlang's term order (numbers, atoms, tuples, binaries)
    mixed = %{"b" => "x", :a => "x", {1} => "x", 2 => "x"}
    assert Enum.map(Fuzzy.extract("x", mixed, limit: :all), &elem(&1, 2)) == [2, :a, {1}, "b"]
  end

  describe "a scorer given as a function" do
    setup do
      # common prefix length: a measure no native scorer has by that name
      prefix = fn a, b ->
        Enum.zip(String.graphemes(a), String.graphemes(b))
        |> Enum.take_while(fn {x, y} -> x == y end)
        |> length()
      end

      {:ok, prefix: prefix}
    end

    test "score/3, extract/3, extract_one/3, cdist/3 call it", %{prefix: prefix} do
      assert Fuzzy.score("prefix", "preface", scorer: prefix) == 4
      assert Fuzzy.score("PREfix", "preface", scorer: prefix, processor: :default) == 4

      choices = ["prelude", "preface", "post", nil, "prefixed"]

      assert Fuzzy.extract("prefix", choices, scorer: prefix) ==
               [{"prefixed", 6, 4}, {"preface", 4, 1}, {"prelude", 3, 0}, {"post", 1, 2}]

      assert Fuzzy.extract("prefix", choices, scorer: prefix, score_cutoff: 4, limit: nil) ==
               [{"prefixed", 6, 4}, {"preface", 4, 1}]

      # a distance kind: lower is better, a cutoff keeps those at most it
      assert Fuzzy.extract("prefix", choices, scorer: prefix, score: :distance, limit: 2) ==
               [{"post", 1, 2}, {"prelude", 3, 0}]

      assert Fuzzy.extract_one("prefix", choices, scorer: prefix) == {"prefixed", 6, 4}
      assert Fuzzy.extract_one("zzz", choices, scorer: prefix, score_cutoff: 1) == nil

      assert Fuzzy.cdist(["pre", "po"], ["prefix", "post"], scorer: prefix) == [[3, 1], [1, 2]]

      assert Fuzzy.cdist(["pre"], ["prefix", "post"], scorer: prefix, as: :binary) ==
               <<3.0::float-32-native, 1.0::float-32-native>>
    end

    test "on an index, with the index's processor", %{prefix: prefix} do
      index = Index.new(%{a: "PREFACE", b: "Post"}, processor: :default)
      assert Fuzzy.extract("PRE", index, scorer: prefix) == [{"PREFACE", 3, :a}, {"Post", 1, :b}]
      assert Fuzzy.cdist(["Po"], index, scorer: prefix, workers: 1) == [[1, 2]]
    end

    test "a result that is not a number raises, naming the scorer" do
      bad = fn _a, _b -> :nope end

      for f <- [
            fn -> Fuzzy.score("a", "b", scorer: bad) end,
            fn -> Fuzzy.extract("a", ["b"], scorer: bad) end,
            fn -> Fuzzy.cdist(["a"], ["b"], scorer: bad) end
          ] do
        assert_raise ArgumentError, ~r/the scorer function returned :nope/, f
      end

      assert_raise ArgumentError, ~r/:scorer.*or a function of two binaries/, fn ->
        Fuzzy.score("a", "b", scorer: fn a -> a end)
      end

      assert_raise ArgumentError, ~r/:score_cutoff.*a number or nil/, fn ->
        Fuzzy.extract("a", ["b"], scorer: fn _, _ -> 1 end, score_cutoff: :high)
      end
    end
  end
end
