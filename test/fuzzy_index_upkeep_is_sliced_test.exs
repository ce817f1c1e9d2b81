defmodule WellBehaved.FuzzyIndexUpkeepIsSlicedTest do
  # Issue 44, item 1 (the index). Fuzzy.Index upkeep held the scheduler
  # and cost what the index holds: delete/2 read every key of every
  # segment and packed again every segment holding one (1.5-2.7 s for one
  # key of 200,000 names); dump/1 deflated the term in one call and
  # load/2 inflated it in one (a 16 MB text dumped held a scheduler 80
  # ms, a 64 MB dump loaded 150 ms); packing 64 MB copied it whole when
  # sealed (12-42 ms).
  #
  # Now a deletion marks its entries dead in their segment (found by
  # arithmetic, or by the native hash of keys of their own), a segment is
  # packed again once half of it is dead, and dumps are deflated,
  # inflated and decoded by code that yields. Asserted here: the answers
  # (deletions against a fresh index of what is left and against the
  # list of it, dumps against what binary_to_term/2 reads), the mechanism
  # (a deletion leaves the segment's native memory as it was), and, in a
  # child VM with one normal scheduler, each call's longest turn against
  # pure Erlang's.
  use ExUnit.Case, async: false

  alias WellBehaved.Fuzzy
  alias WellBehaved.Fuzzy.Index
  alias WellBehaved.Test.Holds
  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 300_000

  defp word(n), do: for(_ <- 1..n//1, into: "", do: <<Enum.random(~c"abcdAB ,")>>)

  # a few segments: positions, keys of their own, a map
  defp entries do
    :rand.seed(:exsss, {44, 7, 1})
    own = for i <- 1..40, do: {Enum.random([{:k, i}, "s#{i}", -i, i * 1.0]), word(12)}
    {for(_ <- 1..300, do: word(Enum.random(0..20))), own, %{x: "Xylo Phone", y: "Yellow"}}
  end

  defp build(processor) do
    {plain, own, map} = entries()

    Index.new(plain, processor: processor)
    |> Index.add(own)
    |> Index.add(map)
    |> Index.add(Enum.take(plain, 50))
  end

  # the index answers as a fresh index of what is left, and as the list
  # of what is left
  defp answers_as_left(index, left, processor) do
    assert Enum.to_list(index) == left,
           "entries: #{inspect(Enum.to_list(index))} vs #{inspect(left)}"

    assert Index.size(index) == length(left)
    fresh = Index.new(left, processor: processor)

    for scorer <- [:wratio, :levenshtein, :token_sort_ratio, :partial_ratio, :jaro_winkler],
        limit <- [1, 3, 25, :all],
        query <- ["abc d", "AB ,ca"] do
      opts = [scorer: scorer, limit: limit]
      got = Fuzzy.extract(query, index, opts)
      want = Fuzzy.extract(query, left, [processor: processor] ++ opts)
      assert got === want, "#{scorer} #{limit} #{query}: #{inspect(got)} vs #{inspect(want)}"
      assert Fuzzy.extract(query, fresh, opts) === want
    end

    if left != [] do
      scored = Enum.map(left, &elem(&1, 1))
      scored = if processor, do: Enum.map(scored, &Fuzzy.Processor.default/1), else: scored
      queries = ["abc", "d a"]
      got = Fuzzy.cdist(queries, index, scorer: :ratio)
      want = Fuzzy.cdist(queries, scored, scorer: :ratio)
      assert got == want, "cdist: #{inspect(got)} vs #{inspect(want)}"
    end
  end

  test "deletions answer as a fresh index without those keys" do
    for processor <- [nil, :default] do
      index = build(processor)
      all = Enum.to_list(index)
      keys = Enum.map(all, &elem(&1, 0))

      for gone <- [
            [7],
            [0, 299, :nope, 7.0],
            [hd(tl(keys -- Enum.to_list(0..299)))],
            [:x, :y, "s3", -5, 5.0, {:k, 9}],
            # keys in several segments, and twice
            [5, 5, 301, Enum.at(keys, 360)],
            # the first segment more than half gone: packed again
            Enum.to_list(0..200),
            # a whole segment gone
            [:x, :y] ++ Enum.to_list(0..400)
          ] do
        left = Enum.reject(all, fn {key, _} -> key in gone end)
        answers_as_left(Index.delete(index, gone), left, processor)
      end

      # deletions one after another, the old values untouched
      stepwise =
        Enum.reduce(Enum.chunk_every(Enum.shuffle(keys), 37), {index, all}, fn gone, {i, left} ->
          deleted = Index.delete(i, gone)
          assert Enum.to_list(i) == left
          left = Enum.reject(left, fn {key, _} -> key in gone end)
          assert Enum.to_list(deleted) == left
          {deleted, left}
        end)

      {last, []} = stepwise
      assert Index.size(last) == 0 and Enum.to_list(last) == []
      assert Fuzzy.extract("a", last, limit: :all) == []
    end
  end

  test "a deletion marks its entries: the segment's native memory stays as it was" do
    own = Map.new(1..20, &{{:own, &1}, "own #{&1}"}) |> Map.put(:a, "x")
    index = Index.new(for(i <- 1..1000, do: "name #{i}")) |> Index.add(own)
    [first, second] = index.segments

    # a position, and a key of its own (found by the native hash)
    deleted = Index.delete(index, [10, :a])
    [first2, second2] = deleted.segments

    assert {first2.ref, first2.keys, second2.ref, second2.keys} ==
             {first.ref, first.keys, second.ref, second.keys}

    assert MapSet.to_list(first2.dead) == [10]

    assert MapSet.to_list(second2.dead) == [
             Enum.find_index(Enum.to_list(second_pairs(index)), &(&1 == :a))
           ]

    # half of it dead: packed again without them
    half = Index.delete(deleted, Enum.to_list(0..499))
    [packed | _] = half.segments
    assert packed.ref != first.ref and packed.count == 500 and MapSet.size(packed.dead) == 0
    assert Enum.take(half, 2) == [{500, "name 501"}, {501, "name 502"}]
  end

  defp second_pairs(index), do: index |> Enum.drop(1000) |> Enum.map(&elem(&1, 0))

  test "dumps round trip and read as binary_to_term/2 reads them" do
    for processor <- [nil, :default] do
      index = build(processor) |> Index.delete([3, :x, "s2"])
      dump = Index.dump(index)

      # the format is the term, compressed, as before
      <<131, 80, size::32, _::binary>> = dump
      {Index, 2, ^processor, next, rows} = :erlang.binary_to_term(dump)
      assert next == index.next
      assert Enum.flat_map(rows, fn {k, t, _} -> Enum.zip(k, t) end) == Enum.to_list(index)
      assert byte_size(:erlang.term_to_binary(elem(:erlang.binary_to_term(dump), 4))) <= size

      loaded = Index.load(dump)
      assert Enum.to_list(loaded) == Enum.to_list(index)
      assert {loaded.next, loaded.processor} == {index.next, processor}

      for scorer <- [:wratio, :token_sort_ratio] do
        assert Fuzzy.extract("ab cd", loaded, scorer: scorer, limit: 5) ===
                 Fuzzy.extract("ab cd", index, scorer: scorer, limit: 5)
      end
    end

    # keys of every kind, compressed or not: what binary_to_term/2 reads
    keys = [
      0,
      255,
      256,
      -1,
      2 ** 31,
      -(2 ** 31) - 1,
      2 ** 64,
      -(2 ** 300),
      :atom,
      :ünï,
      "bin",
      <<>>,
      {},
      {:t, [1 | 2]},
      [],
      ~c"abc",
      [1, [2, "x"]],
      1.5,
      %{a: 1},
      self()
    ]

    texts = Enum.map(keys, &"text #{inspect(&1)}")

    for options <- [[], [:compressed], [compressed: 1]] do
      term = {Index, 2, nil, 2 ** 40, [{keys, texts, nil}]}
      loaded = Index.load(:erlang.term_to_binary(term, options))
      assert Enum.to_list(loaded) == Enum.zip(keys, texts)
    end
  end

  test "a dump with bytes after its stream is refused as before" do
    dump = Index.dump(Index.new(["a", "b"]))
    <<131, 80, _::32, deflated::binary>> = dump
    <<sum::32>> = binary_part(deflated, byte_size(deflated) - 4, 4)

    # after the stream: anything, or its own checksum again
    for tail <- ["xy", <<sum::32>>, <<0, sum::32>>] do
      error = assert_raise ArgumentError, fn -> Index.load(dump <> tail) end

      assert error.message =~ "#{byte_size(tail)} bytes follow its term",
             "#{inspect(tail)}: #{error.message}"
    end
  end

  # ---- the scheduler, in a child VM -------------------------------------------

  @prelude """
  alias WellBehaved.{Fuzzy, Probe}
  alias WellBehaved.Fuzzy.Index
  probe = fn label, f ->
    for _ <- 1..2, do: f.()
    r = Probe.turns(f, workers: 1, duration_ms: 200)
    {label, Map.take(r.function, [:turns, :cpu_max_us]), Map.take(r.control, [:turns, :cpu_max_us])}
  end
  """

  # in a fresh child VM; a call over its bound fails when it is over in
  # every run (WellBehaved.Test.Holds)
  test "new, add, delete, dump and load hold no scheduler longer than Erlang code" do
    run = fn ->
      assert {:ok, {results, _}} =
               ChildVM.run(
                 {Code, :eval_string,
                  [
                    @prelude <>
                      """
                      text = :binary.copy("ab", 8_000_000)
                      long = Index.new([text])
                      four = Index.new(for c <- ~c"abcd", do: :binary.copy(<<c>>, 16_000_000))
                      # made here, not in the call probed: copying 16 MB is
                      # one step of Erlang's own (about 3 ms of CPU)
                      texts = for c <- ~c"wxyz", do: :binary.copy(<<c>>, 16_000_000)
                      dump64 = Index.dump(four)
                      :rand.seed(:exsss, {44, 7, 2})
                      names = for i <- 1..20_000, do: "Name #\{i} " <> Integer.to_string(:rand.uniform(1_000_000), 36)
                      index = Index.new(names, processor: :default)
                      dump = Index.dump(index)
                      words = for _ <- 1..600_000, do: Integer.to_string(:rand.uniform(1_000_000_000), 36)
                      many = Enum.join(words, " ")
                      [
                        probe.("dump of a 16 MB text", fn -> Index.dump(long) end),
                        probe.("load of a 64 MB dump", fn -> Index.load(dump64) end),
                        probe.("new of 4 texts of 16 MB", fn -> Index.new(texts) end),
                        probe.("new of 20,000 names", fn -> Index.new(names, processor: :default) end),
                        probe.("new of a text of 600,000 words", fn -> Index.new([many]) end),
                        probe.("add of 20,000 names", fn -> Index.add(index, names) end),
                        probe.("delete of 12,000 keys", fn -> Index.delete(index, Enum.to_list(0..11_999)) end),
                        probe.("dump of 20,000 names", fn -> Index.dump(index) end),
                        probe.("load of 20,000 names", fn -> Index.load(dump) end)
                      ]
                      """
                  ]},
                 bound_ms: 240_000,
                 erl_flags: ["+S", "1:1"]
               )

      results
    end

    {results, held} = Holds.recurring(run, &Holds.over_erlang/1)
    assert length(results) == 9

    for {label, function, control} <- results do
      assert function.turns > 0 and control.turns > 0,
             "#{label}: no turns traced: #{inspect(function)} #{inspect(control)}"
    end

    assert held == [], Holds.message(held)
  end
end
