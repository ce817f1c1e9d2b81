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
      assert_raise ArgumentError, ~r/Index.load\/2: invalid/, fn -> Index.load(bad) end
    end

    assert_raise ArgumentError, fn -> Index.load(:atom) end
  end

  defp start_peer do
    if not Node.alive?() do
      {_, 0} = System.cmd("epmd", ["-daemon"])

      {:ok, _} =
        Node.start(:"wb_fuzzy_#{System.unique_integer([:positive])}@127.0.0.1", :longnames)
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

  test "a dump loads on another node" do
    {_peer, node} = start_peer()
    index = Index.new(words(500) ++ ["needle in a haystack"])
    dump = Index.dump(index)

    {there, _binding} =
      :erpc.call(node, Code, :eval_string, [
        "WellBehaved.Fuzzy.extract(\"needle haystack\", WellBehaved.Fuzzy.Index.load(dump), scorer: :token_set_ratio)",
        [dump: dump]
      ])

    assert there === Fuzzy.extract("needle haystack", index, scorer: :token_set_ratio)
    assert hd(there) |> elem(0) == "needle in a haystack"
  end

  test "an index split over nodes answers as one here; dumps, loads, enumerates; partial answers" do
    {_, a} = start_peer()
    {peer_b, b} = start_peer()
    entries = words(700) ++ [{:k, "Key Word"}] ++ words(300)
    here = Index.new(entries, processor: :default)
    split = Index.new(entries, processor: :default, nodes: [a, node(), b])

    assert [{^a, _, 334}, {_, _, 334}, {^b, _, 333}] = split.shards
    assert Index.size(split) == 1001
    assert Enum.to_list(split) == Enum.to_list(here)

    for scorer <- [:wratio, :levenshtein, :jaro_winkler], limit <- [3, :all] do
      q = word(12)
      opts = [scorer: scorer, limit: limit]
      assert Fuzzy.extract(q, split, opts) === Fuzzy.extract(q, here, opts), "#{scorer} #{limit}"
    end

    assert Fuzzy.extract_one("KEY-WORD", split, scorer: :ratio) == {"Key Word", 1.0, :k}

    # its dump is the same entries; loaded split again, or here
    dump = Index.dump(split)
    assert Enum.to_list(Index.load(dump)) == Enum.to_list(here)
    again = Index.load(dump, nodes: [b, a])
    assert Enum.to_list(again) == Enum.to_list(here)

    assert Fuzzy.extract("key", again, scorer: :partial_ratio) ===
             Fuzzy.extract("key", here, scorer: :partial_ratio)

    # a node that stops: an error naming it, or the others' hits
    :peer.stop(peer_b)
    assert {:error, {:nodedown, ^b}} = Fuzzy.extract("key", split, timeout: 60_000)

    assert {:partial, hits, [{^b, :nodedown}]} =
             Fuzzy.extract("key", split, partial: true, limit: :all)

    assert length(hits) == 334 + 334

    # so do an addition to its shard (the smallest), a deletion, a cdist
    assert Index.add(split, ["x"]) == {:error, {:nodedown, b}}
    assert Index.delete(split, :k) == {:error, {:nodedown, b}}
    assert Fuzzy.cdist(["key"], split) == {:error, {:nodedown, b}}

    assert_raise ArgumentError, ~r/only for an index split over nodes/, fn ->
      Fuzzy.extract("x", here, partial: true)
    end

    # a call's own timeout is checked (and used), not the index's
    {_, c} = start_peer()
    small = Index.new(["apple", "maple"], nodes: [c, a])

    assert_raise ArgumentError, ~r/invalid :timeout :bad/, fn ->
      Fuzzy.extract("x", small, timeout: :bad)
    end

    assert [{"apple", 1.0, 0} | _] = Fuzzy.extract("apple", small, timeout: 60_000)

    assert_raise ArgumentError, ~r/none with an index/, fn ->
      Fuzzy.extract("x", small, processor: :default)
    end

    # more nodes than entries: the nodes without any hold an empty shard
    one = Index.load(Index.dump(Index.new(["only"])), nodes: [c, a, node()])
    assert Enum.to_list(one) == [{0, "only"}]
    assert Fuzzy.extract_one("only", one) == {"only", 1.0, 0}
  end

  # what a shard holds, read on its node
  defp shard_entries({node, pid, _size}),
    do: :erpc.call(node, WellBehaved.Search.Shard, :with_value, [pid, Enum, :to_list, []])

  test "a split index takes additions and deletions where its shards are" do
    {_, a} = start_peer()
    {peer_b, b} = start_peer()
    entries = ["apple", "Maple", {:k, "Key Word"}, "grape", "pear", "plum", "Peach"]
    split = Index.new(entries, processor: :default, nodes: [a, node(), b])
    assert [{^a, _, 3}, {_, _, 2}, {^b, _, 2}] = split.shards

    # to the first of the smallest shards (this node's), keys from next
    added = Index.add(split, ["Kiwi Fruit", {:lemon, "Lemon"}])
    assert [{^a, _, 3}, {_, _, 4}, {^b, _, 2}] = added.shards
    assert {Index.size(added), added.next} == {9, 9}

    assert Enum.map(added.shards, &shard_entries/1) == [
             [{0, "apple"}, {1, "Maple"}, {:k, "Key Word"}],
             [{3, "grape"}, {4, "pear"}, {7, "Kiwi Fruit"}, {:lemon, "Lemon"}],
             [{5, "plum"}, {6, "Peach"}]
           ]

    # the index's processor ran on the shard's node: on the new candidates and the query
    assert Fuzzy.extract_one("KIWI-FRUIT", added, scorer: :ratio) == {"Kiwi Fruit", 1.0, 7}
    assert Fuzzy.extract_one("lemon!", added, scorer: :ratio) == {"Lemon", 1.0, :lemon}

    # then to b's, the smallest now; a map's keys are kept, next moves on as here
    added = added |> Index.add(["Fig"]) |> Index.add(%{m: "Mango"})
    assert [{^a, _, 4}, {_, _, 4}, {^b, _, 3}] = added.shards
    assert {Index.size(added), added.next} == {11, 11}

    assert Enum.to_list(added) ==
             [{0, "apple"}, {1, "Maple"}, {:k, "Key Word"}, {:m, "Mango"}] ++
               [{3, "grape"}, {4, "pear"}, {7, "Kiwi Fruit"}, {:lemon, "Lemon"}] ++
               [{5, "plum"}, {6, "Peach"}, {9, "Fig"}]

    # the same answers as the list of its entries
    for scorer <- [:wratio, :levenshtein], q <- ["fig", "MANGO", "pea"] do
      opts = [scorer: scorer, limit: :all]

      assert Fuzzy.extract(q, added, opts) ===
               Fuzzy.extract(q, Enum.to_list(added), [processor: :default] ++ opts)
    end

    # a deletion: every shard drops the keys it holds, where it is
    deleted = Index.delete(added, [0, :m, 7, :lemon, 9, :nope])
    assert [{^a, _, 2}, {_, _, 2}, {^b, _, 2}] = deleted.shards
    assert {Index.size(deleted), deleted.next} == {6, 11}

    assert Enum.map(deleted.shards, &shard_entries/1) == [
             [{1, "Maple"}, {:k, "Key Word"}],
             [{3, "grape"}, {4, "pear"}],
             [{5, "plum"}, {6, "Peach"}]
           ]

    assert Fuzzy.extract("kiwi fruit", deleted, scorer: :ratio, score_cutoff: 0.9) == []
    # one key; keys not held change nothing
    deleted = deleted |> Index.delete(:k) |> Index.delete(:nope)
    assert [{^a, _, 1}, {_, _, 2}, {^b, _, 2}] = deleted.shards
    assert Index.size(deleted) == 5

    # positions go on from next, never reused; a dump keeps it
    again = Index.add(deleted, ["Olive"])
    assert [{^a, _, 2}, {_, _, 2}, {^b, _, 2}] = again.shards
    assert shard_entries(hd(again.shards)) == [{1, "Maple"}, {11, "Olive"}]
    assert again |> Index.dump() |> Index.load() |> Index.add(["z"]) |> Enum.member?({12, "z"})
    assert Index.add(again, []) == again

    # a node down: its shard's addition, or any deletion, names it
    smaller = Index.delete(again, 5)
    assert [{^a, _, 2}, {_, _, 2}, {^b, _, 1}] = smaller.shards
    :peer.stop(peer_b)
    assert Index.add(smaller, ["x"]) == {:error, {:nodedown, b}}
    assert Index.delete(smaller, [1]) == {:error, {:nodedown, b}}
    # the bad choice raises here, before any node is asked
    assert_raise ArgumentError,
                 ~r/Index.add\/2: the candidate at position 1 is not a binary/,
                 fn ->
                   Index.add(smaller, ["x", :y])
                 end
  end

  test "cdist on a split index: the matrix of its entries in its order, as here" do
    {_, a} = start_peer()
    {_, b} = start_peer()

    for processor <- [nil, :default, &String.upcase/1] do
      split =
        (words(120) ++ [{:k, "Key Word"}] ++ words(60))
        |> Index.new(processor: processor, nodes: [a, node(), b])
        |> Index.add(words(25))
        |> Index.add(words(40))
        |> Index.delete([3, 100, :k, 190])

      entries = Enum.to_list(split)
      assert length(entries) == 242
      here = Index.new(entries, processor: processor)
      texts = Enum.map(entries, &elem(&1, 1))
      queries = Enum.take(texts, 5) ++ [word(8), "KEY word"]

      for opts <- [
            [scorer: :levenshtein, score: :distance],
            [scorer: :wratio],
            [scorer: :token_set_ratio, as: :binary]
          ] do
        matrix = Fuzzy.cdist(queries, split, opts)
        assert matrix == Fuzzy.cdist(queries, here, opts), inspect({processor, opts})

        assert matrix == Fuzzy.cdist(queries, texts, [processor: processor] ++ opts),
               inspect({processor, opts})
      end

      # a column per entry, in the index's order
      [row] = Fuzzy.cdist([Enum.at(texts, 200)], split, scorer: :ratio)
      assert length(row) == 242
      assert Enum.at(row, 200) == 1.0
    end

    split = Index.new(["a", "b"], nodes: [a, b])

    assert_raise ArgumentError, ~r/Fuzzy.cdist\/3: invalid :processor/, fn ->
      Fuzzy.cdist(["a"], split, processor: :default)
    end

    empty = Index.new([], nodes: [a, b])
    assert Fuzzy.cdist(["a"], empty) == Fuzzy.cdist(["a"], [])
  end

  test "hits outlive their index: texts are binaries over its memory, freed with the last of them" do
    list = for i <- 1..20_000, do: "candidate number #{i} " <> word(20)
    before = WellBehaved.Runtime.stats().resident_bytes

    hits =
      (fn ->
         index = Index.new(list, processor: :default) |> Index.add([{:k, "Odd One"}])
         assert WellBehaved.Runtime.stats().resident_bytes > before + 20_000 * 30
         Fuzzy.extract(Enum.at(list, 6), index, scorer: :ratio, limit: 3)
       end).()

    # the index is gone from every process; its memory stays for the hits
    :erlang.garbage_collect()
    assert [{"candidate number 7 " <> _, 1.0, 6} | _] = hits
    assert Enum.all?(hits, fn {text, _, key} -> text == Enum.at(list, key) end)

    # and goes with them
    hits = nil
    _ = hits
    :erlang.garbage_collect()

    WellBehaved.Testing.eventually(fn ->
      WellBehaved.Runtime.stats().resident_bytes < before + 20_000 * 30
    end)
  end

  test "an invalid candidate is named by its position in the index, past its first segment" do
    index = Index.new(["a", "b", "c"]) |> Index.add([<<0xFF>>])
    assert length(index.segments) == 2

    assert_raise ArgumentError, ~r/the candidate at position 3 is not valid UTF-8/, fn ->
      Fuzzy.extract("a", index, unit: :codepoint)
    end
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

    assert_raise ArgumentError, ~r/invalid :nodes \[\]/, fn -> Index.new([], nodes: []) end
    assert_raise ArgumentError, ~r/unknown option :bogus/, fn -> Index.new([], bogus: 1) end
  end
end
