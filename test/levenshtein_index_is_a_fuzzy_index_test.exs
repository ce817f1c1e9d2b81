defmodule WellBehaved.LevenshteinIndexIsAFuzzyIndexTest do
  # One index type: Levenshtein.Index.new/2 makes a Fuzzy.Index, which
  # Fuzzy's searches take, and Levenshtein's searches take any Fuzzy.Index
  # (several segments, deleted entries, a processor), answering as the
  # textbook distance of the query to each live entry would.
  use ExUnit.Case, async: true

  alias WellBehaved.{Fuzzy, Levenshtein}
  alias WellBehaved.Test.Reference

  defp words(count, seed) do
    :rand.seed(:exsss, {seed, seed, seed})

    for _ <- 1..count do
      for _ <- 1..(1 + :rand.uniform(9)), into: "", do: <<Enum.random(~c"abcAB ")>>
    end
  end

  # the live entries' texts as given, and each one's distance to the
  # query, by the reference, after the processor (if any)
  defp reference(query, index, unit, processor) do
    prepare = Fuzzy.Processor.function(processor) || (& &1)
    distance = if unit == :byte, do: &Reference.bytes/2, else: &Reference.codepoints/2
    q = prepare.(query)
    for {_key, text} <- Enum.to_list(index), do: {text, distance.(q, prepare.(text))}
  end

  defp nearest_reference(pairs, limit, max) do
    pairs
    |> Enum.with_index()
    |> Enum.filter(fn {{_t, d}, _at} -> max == nil or d <= max end)
    |> Enum.sort_by(fn {{_t, d}, at} -> {d, at} end)
    |> Enum.take(limit)
    |> Enum.map(&elem(&1, 0))
  end

  defp distances_reference(pairs, max),
    do: for({_t, d} <- pairs, do: if(max != nil and d > max, do: max + 1, else: d))

  test "Levenshtein's functions answer as Fuzzy's with scorer: :levenshtein" do
    cands = words(150, 8) ++ ["", "héllo", "hello"]

    for unit <- [:byte, :codepoint], max <- [nil, 0, 3], query <- ["", "abc", "hêllo", "A b"] do
      fuzzy = [scorer: :levenshtein, score: :distance, unit: unit, score_cutoff: max]
      lev = [unit: unit, max_distance: max]

      for text <- Enum.take(cands, 40) do
        a = Levenshtein.distance(query, text, lev)
        b = Fuzzy.score(query, text, fuzzy)
        assert a == b, "#{inspect({query, text, unit, max})}: #{a} vs #{b}"
      end

      [row] = Fuzzy.cdist([query], cands, fuzzy)
      assert Levenshtein.distances(query, cands, lev) == row

      for limit <- [1, 10, 200] do
        hits =
          for {text, d, _key} <- Fuzzy.extract(query, cands, [limit: limit] ++ fuzzy),
              do: {text, d}

        got = Levenshtein.nearest(query, cands, [limit: limit] ++ lev)
        assert got == hits, "#{inspect({query, unit, max, limit})}: #{inspect({got, hits})}"
      end
    end
  end

  test "Levenshtein.Index.new/2 makes a Fuzzy.Index that both searches take" do
    cands = words(300, 1)
    index = Levenshtein.Index.new(cands)
    assert %Fuzzy.Index{processor: nil, sorted_tokens: false} = index
    assert Levenshtein.Index.size(index) == 300
    assert Enum.to_list(index) == Enum.with_index(cands, &{&2, &1})

    for query <- ["", "abc", "AB ba", "cccccccccccc"], limit <- [1, 7, 300] do
      opts = [scorer: :levenshtein, score: :distance, limit: limit]
      on_list = Fuzzy.extract(query, cands, opts)
      on_index = Fuzzy.extract(query, index, opts)
      assert on_index == on_list, "#{inspect(query)} #{limit}: #{inspect({on_index, on_list})}"

      nearest = Levenshtein.nearest(query, index, limit: limit)
      from_fuzzy = for {text, d, _key} <- on_list, do: {text, d}
      assert nearest == from_fuzzy, "#{inspect(nearest)} vs #{inspect(from_fuzzy)}"
    end
  end

  test "without sorted tokens, the token sort scores are the same" do
    cands = words(200, 2)
    with_tokens = Fuzzy.Index.new(cands)
    without = Fuzzy.Index.new(cands, sorted_tokens: false)
    levenshtein = Levenshtein.Index.new(cands)

    for scorer <- [:token_sort_ratio, :partial_token_sort_ratio], unit <- [:byte, :codepoint] do
      opts = [scorer: scorer, unit: unit, limit: 20]
      expected = Fuzzy.extract("ba ab c", cands, opts)
      assert Fuzzy.extract("ba ab c", with_tokens, opts) == expected
      got = Fuzzy.extract("ba ab c", without, opts)
      assert got == expected, "#{scorer} #{unit}: #{inspect(got)} vs #{inspect(expected)}"
      assert Fuzzy.extract("ba ab c", levenshtein, opts) == expected
    end

    # what it keeps goes on with additions and deletions, and merges
    grown = without |> Fuzzy.Index.add(words(300, 3)) |> Fuzzy.Index.delete(Enum.to_list(0..150))
    assert grown.sorted_tokens == false
    assert Enum.all?(grown.segments, &(&1.sorted == false))
    all = Enum.to_list(grown)
    opts = [scorer: :token_sort_ratio, limit: 30]
    hits = Fuzzy.extract("a b", grown, opts)
    expected = Fuzzy.extract("a b", all, opts)
    assert hits == expected, "#{inspect(hits)} vs #{inspect(expected)}"

    assert_raise ArgumentError, ~r/Fuzzy.Index.new\/2.*sorted_tokens.*true or false/, fn ->
      Fuzzy.Index.new(cands, sorted_tokens: :no)
    end
  end

  test "Levenshtein's searches on an index of several segments, deletions, a processor" do
    base = Fuzzy.Index.new(words(120, 4))
    # segments: additions keep their own while smaller than half the last
    grown = base |> Fuzzy.Index.add(words(40, 5)) |> Fuzzy.Index.add(words(15, 6))
    assert length(grown.segments) >= 2
    deleted = Fuzzy.Index.delete(grown, [0, 3, 121, 150, 170])
    assert Enum.any?(deleted.segments, &(MapSet.size(&1.dead) > 0))
    processed = Fuzzy.Index.new(words(90, 7) ++ ["ABC", "aBc!"], processor: :default)

    cases = [{grown, nil}, {deleted, nil}, {processed, :default}]

    for {index, processor} <- cases,
        unit <- [:byte, :codepoint],
        query <- ["", "abc", "B a", "AAAAAAAA"],
        max <- [nil, 0, 2] do
      pairs = reference(query, index, unit, processor)
      opts = [unit: unit, max_distance: max]

      for limit <- [1, 5, 400] do
        got = Levenshtein.nearest(query, index, [limit: limit] ++ opts)
        want = nearest_reference(pairs, limit, max)
        assert got == want, "#{inspect({query, unit, max, limit})}: #{inspect({got, want})}"
      end

      want = distances_reference(pairs, max)
      got = Levenshtein.distances(query, index, opts)
      assert got == want, "#{inspect({query, unit, max})}: #{inspect({got, want})}"
      binary = Levenshtein.distances(query, index, [as: :binary] ++ opts)
      assert binary == for(d <- want, into: <<>>, do: <<d::32-native>>)
    end
  end

  test "an index with no entry left, and errors naming Levenshtein's functions" do
    empty = Fuzzy.Index.delete(Levenshtein.Index.new(["a", "b"]), [0, 1])
    assert Levenshtein.nearest("a", empty) == []
    assert Levenshtein.distances("a", empty) == []
    assert Levenshtein.distances("a", empty, as: :binary) == <<>>
    assert Levenshtein.nearest("a", Levenshtein.Index.new([])) == []

    assert_raise ArgumentError, ~r/^WellBehaved.Levenshtein.Index.new\/2: .*position 1/, fn ->
      Levenshtein.Index.new(["a", nil])
    end

    assert_raise ArgumentError, ~r/^WellBehaved.Levenshtein.Index.new\/2: .*position 0/, fn ->
      Levenshtein.Index.new([{:key, "a"}])
    end

    # each function names itself
    assert_raise ArgumentError, ~r/^WellBehaved.Fuzzy.Index.new\/2: .*position 1 is not/, fn ->
      Fuzzy.Index.new(["a", 3])
    end

    assert_raise ArgumentError, ~r/^WellBehaved.Fuzzy.Index.add\/2: .*position 0 is not/, fn ->
      Fuzzy.Index.add(Fuzzy.Index.new([]), [3])
    end

    # an invalid candidate in the second segment is named by its position
    # in the index
    index = Levenshtein.Index.new(["a", "b", "c", "d", "f"]) |> Fuzzy.Index.add(["e", <<0xFF>>])
    assert length(index.segments) == 2

    # and with an entry deleted (the nearest then come through Fuzzy's
    # extract), the same
    deleted = Fuzzy.Index.delete(index, 1)

    for f <- [:nearest, :distances], index <- [index, deleted] do
      assert_raise ArgumentError,
                   ~r/^WellBehaved.Levenshtein.#{f}\/3: the candidate at position 6 is not valid/,
                   fn -> apply(Levenshtein, f, ["a", index, [unit: :codepoint]]) end
    end
  end
end
