defmodule WellBehaved.FuzzyIndexesLiveTest do
  # A Fuzzy.Index answers as the list of its entries would, through
  # additions (segments merged), deletions, enumeration, and a dump loaded
  # back here and on another node; its processor runs once per candidate
  # and on every query.
  use ExUnit.Case, async: false

  alias WellBehaved.Fuzzy
  alias WellBehaved.Fuzzy.Index

  doctest WellBehaved.Fuzzy.Index

  @moduletag timeout: 180_000

  defp word(n), do: for(_ <- 1..n//1, into: "", do: <<Enum.random(~c"abcd ")>>)

  defp words(count), do: for(_ <- 1..count, do: word(Enum.random(0..30)))

  # the same search on the entries as a list of {key, text}
  defp same_as_list(index, query, opts) do
    assert Fuzzy.extract(query, index, opts) === Fuzzy.extract(query, Enum.to_list(index), opts)
  end

  test "additions in many pieces answer as one list, ties in the order they came in" do
    pieces = for n <- [50, 1, 7, 200, 3, 3, 3, 90], do: words(n)
    index = Enum.reduce(pieces, Index.new([]), &Index.add(&2, &1))

    assert Index.size(index) == 357
    assert length(index.segments) < 8

    assert Enum.to_list(index) ==
             pieces |> Enum.concat() |> Enum.with_index(fn t, i -> {i, t} end)

    for scorer <- [:levenshtein, :wratio, :jaro_winkler, :token_set_ratio],
        limit <- [1, 10, :all] do
      query = word(12)
      same_as_list(index, query, scorer: scorer, limit: limit)
      # the hits' keys are the positions they came in at
      list = Enum.concat(pieces)

      assert Fuzzy.extract(query, index, scorer: scorer, limit: limit) ===
               Fuzzy.extract(query, list, scorer: scorer, limit: limit)
    end
  end

  test "keys given, maps, deletions by key" do
    index = Index.new(%{a: "apple", b: "maple"}) |> Index.add([{:c, "apply"}, "grape"])

    assert Enum.sort(Enum.to_list(index)) ==
             Enum.sort([a: "apple", b: "maple", c: "apply"] ++ [{3, "grape"}])

    index = Index.delete(index, [:a, :nope])
    assert Index.size(index) == 3
    refute Enum.any?(index, fn {k, _} -> k == :a end)
    assert Fuzzy.extract_one("appl", index, scorer: :ratio) |> elem(2) == :c

    # the index before the deletion still has its entry
    index = Index.delete(index, 3) |> Index.add(["pear"])
    assert Enum.map(index, &elem(&1, 1)) |> Enum.sort() == ["apply", "maple", "pear"]
    # a candidate without a key takes the next position, never one used before
    assert {4, "pear"} in Enum.to_list(index)
    same_as_list(index, "appel", scorer: :osa, limit: :all)
  end

  test "the processor runs on candidates when they come in and on every query" do
    index = Index.new(["New York", "BOSTON!"], processor: :default)
    assert Fuzzy.extract_one("boston", index, scorer: :ratio) == {"BOSTON!", 1.0, 1}
    assert Fuzzy.extract_one("NEW-YORK", index, scorer: :ratio) == {"New York", 1.0, 0}

    assert_raise ArgumentError, ~r/none with an index/, fn ->
      Fuzzy.extract("x", index, processor: :default)
    end

    counting = fn text ->
      send(self(), :processed)
      String.downcase(text)
    end

    index = Index.new(["A", "B"], processor: counting)
    assert_received :processed
    assert_received :processed
    Fuzzy.extract("a", index)
    assert_received :processed
    refute_received :processed
  end

  test "a dump loads back into an index that answers the same" do
    index =
      Index.new(words(300), processor: :default) |> Index.add(%{k: "Key Word"}) |> Index.delete(5)

    loaded = index |> Index.dump() |> Index.load()
    assert Enum.to_list(loaded) == Enum.to_list(index)
    assert loaded.processor == :default

    for scorer <- [:indel, :partial_ratio, :wratio] do
      q = word(10)
      assert Fuzzy.extract(q, loaded, scorer: scorer) === Fuzzy.extract(q, index, scorer: scorer)
    end

    # later additions keep counting positions from where the dump was
    assert loaded |> Index.add(["x"]) |> Enum.member?({301, "x"})

    for bad <- [
          "",
          "nope",
          :erlang.term_to_binary({:other, 1}),
          :erlang.term_to_binary({Index, 1, nil, 0, [{[1], ["a", "b"], nil}]})
        ] do
      assert_raise ArgumentError, ~r/Index.load\/1: invalid/, fn -> Index.load(bad) end
    end

    assert_raise ArgumentError, fn -> Index.load(:atom) end
  end

  test "a dump loads on another node" do
    if not Node.alive?() do
      {_, 0} = System.cmd("epmd", ["-daemon"])

      {:ok, _} =
        Node.start(:"wb_fuzzy_#{System.unique_integer([:positive])}@127.0.0.1", :longnames)

      on_exit(fn -> Node.stop() end)
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

    index = Index.new(words(500) ++ ["needle in a haystack"])
    dump = Index.dump(index)

    there =
      :erpc.call(node, Code, :eval_string, [
        "WellBehaved.Fuzzy.extract(\"needle haystack\", WellBehaved.Fuzzy.Index.load(dump), scorer: :token_set_ratio)",
        [dump: dump]
      ])
      |> elem(0)

    assert there === Fuzzy.extract("needle haystack", index, scorer: :token_set_ratio)
    assert hd(there) |> elem(0) == "needle in a haystack"
  end

  test "bad arguments raise naming the function" do
    assert_raise ArgumentError, ~r/Index.new\/2: invalid :processor :up/, fn ->
      Index.new([], processor: :up)
    end

    assert_raise ArgumentError,
                 ~r/Index.add\/2: the candidate at position 1 is not a binary/,
                 fn ->
                   Index.add(Index.new([]), ["a", 1])
                 end

    assert_raise ArgumentError, ~r/unknown option :nodes/, fn -> Index.new([], nodes: []) end
  end
end
