defmodule WellBehaved.LevenshteinSearchTest do
  # distances/3 and nearest/3 give what distance/3 gives on every pair, over
  # lists and indexes, in every mode; ties keep input order; bad input
  # raises naming the problem; killed callers leave no job and indexes free
  # their memory when collected.
  use ExUnit.Case, async: false

  alias WellBehaved.{Levenshtein, Runtime}
  alias WellBehaved.Levenshtein.Index
  import WellBehaved.Test.RuntimeHelpers

  doctest WellBehaved.Levenshtein.Index

  @modes Runtime.modes()

  defp word(n, alphabet), do: for(_ <- 1..n//1, into: "", do: <<Enum.random(alphabet)>>)

  # random candidates around the one-word boundary, duplicates and empties
  defp candidates(count, alphabet \\ ~c"abcd") do
    words =
      for _ <- 1..count do
        n = Enum.random([0, 1, 5, 10, 20, 30, 63, 64, 65, 100])
        word(n, alphabet)
      end

    words ++ Enum.take(words, 3) ++ [""]
  end

  # what nearest/3 must return, from distance/3 on every pair
  defp expected_nearest(query, list, opts) do
    limit = Keyword.get(opts, :limit, 10)
    max = Keyword.get(opts, :max_distance)
    pair_opts = Keyword.take(opts, [:unit, :max_distance])

    list
    |> Enum.with_index()
    |> Enum.map(fn {c, i} -> {c, Levenshtein.distance(query, c, pair_opts), i} end)
    |> Enum.filter(fn {_, d, _} -> is_nil(max) or d <= max end)
    |> Enum.sort_by(fn {_, d, i} -> {d, i} end)
    |> Enum.take(limit)
    |> Enum.map(fn {c, d, _} -> {c, d} end)
  end

  test "distances and nearest equal distance/3 on every pair, list and index" do
    for round <- 1..12 do
      list = candidates(150)
      index = Index.new(list)
      query = word(Enum.at([0, 1, 7, 20, 63, 64, 65, 90, 20, 20, 3, 40], round - 1), ~c"abcd")

      for max <- [nil, 0, 2, 10, 64, 1000], limit <- [1, 3, 10, 500] do
        opts = [max_distance: max]
        want = Enum.map(list, &Levenshtein.distance(query, &1, opts))
        assert Levenshtein.distances(query, list, opts) == want
        assert Levenshtein.distances(query, index, opts) == want

        nopts = [max_distance: max, limit: limit]
        want_n = expected_nearest(query, list, nopts)
        assert Levenshtein.nearest(query, list, nopts) == want_n, "#{inspect(nopts)}"
        assert Levenshtein.nearest(query, index, nopts) == want_n
      end
    end
  end

  test "a long answer of distances, made a slice at a time, equals distance/3 in order" do
    # over 2,048 candidates the list is made from a binary by
    # Native.distances_more, several NIF calls for 300,000
    list = for i <- 1..300_000, do: word(rem(i * 7, 23), ~c"abcd")
    query = word(12, ~c"abcd")
    want = Enum.map(list, &Levenshtein.distance(query, &1))
    assert Levenshtein.distances(query, list) == want
    assert Levenshtein.distances(query, Index.new(list), schedule: :threaded) == want

    # every count of what is left, to the binary's end, and no further
    bin = for d <- [5, 6, 7], into: <<>>, do: <<d::32-native>>
    assert WellBehaved.Native.distances_more(bin, 3, [:tail]) == {:done, [5, 6, 7, :tail]}
    assert WellBehaved.Native.distances_more(bin, 1, []) == {:done, [5]}
    assert WellBehaved.Native.distances_more(bin, 0, []) == {:done, []}
    assert_raise ArgumentError, fn -> WellBehaved.Native.distances_more(bin, 4, []) end
  end

  test "codepoints: multibyte text against distance/3" do
    alphabet = [~c"é", ~c"ß", ~c"a", ~c"中", ~c"😀"] |> Enum.map(&List.to_string/1)
    text = fn n -> Enum.map_join(1..n//1, fn _ -> Enum.random(alphabet) end) end
    list = for _ <- 1..200, do: text.(Enum.random([0, 3, 10, 40, 70]))
    query = text.(12)

    for max <- [nil, 3] do
      opts = [unit: :codepoint, max_distance: max]
      want = Enum.map(list, &Levenshtein.distance(query, &1, opts))
      assert Levenshtein.distances(query, list, opts) == want

      assert Levenshtein.nearest(query, list, opts ++ [limit: 5]) ==
               expected_nearest(query, list, opts ++ [limit: 5])
    end
  end

  test "codepoints on ASCII text: the byte answers; one non-ASCII candidate or query keeps codepoints" do
    # an ASCII list or index is searched in byte mode under unit: :codepoint
    # (the native side marks it while packing); one multibyte character
    # anywhere takes the codepoint path again
    ascii = for _ <- 1..500, do: word(Enum.random(0..40), ~c"abcdefg")
    query = word(15, ~c"abcdefg")
    accented = List.replace_at(ascii, 250, "ab\u00e9cd")

    for list <- [ascii, accented], query <- [query, "ab\u00e9" <> query], max <- [nil, 4] do
      opts = [unit: :codepoint, max_distance: max]
      want = Enum.map(list, &Levenshtein.distance(query, &1, opts))
      assert Levenshtein.distances(query, list, opts) == want
      assert Levenshtein.distances(query, Index.new(list), opts) == want

      assert Levenshtein.nearest(query, Index.new(list), opts ++ [limit: 7]) ==
               expected_nearest(query, list, opts ++ [limit: 7])
    end
  end

  test "as: :binary answers the distances as native 32-bit integers, short answers and long alike" do
    for n <- [0, 1, 2048, 2049, 30_000], max <- [nil, 2] do
      list = for _ <- 1..n//1, do: word(Enum.random(0..12), ~c"abc")

      want =
        for d <- Levenshtein.distances("abcab", list, max_distance: max),
            into: <<>>,
            do: <<d::32-native>>

      assert Levenshtein.distances("abcab", list, max_distance: max, as: :binary) == want

      assert Levenshtein.distances("abcab", Index.new(list), max_distance: max, as: :binary) ==
               want

      assert Levenshtein.distances("abcab", list, max_distance: max, as: :list) ==
               Levenshtein.distances("abcab", list, max_distance: max)
    end

    assert_raise ArgumentError, ~r/distances\/3.*:as.*:list or :binary/s, fn ->
      Levenshtein.distances("a", ["b"], as: :map)
    end

    # nearest has no such option
    assert_raise ArgumentError, ~r/nearest\/3.*:as/s, fn ->
      Levenshtein.nearest("a", ["b"], as: :binary)
    end
  end

  test "ties are kept in input order" do
    list = ["xbc", "abc", "abd", "abc", "abx"]
    want = [{"abc", 0}, {"abc", 0}, {"xbc", 1}, {"abd", 1}]
    assert Levenshtein.nearest("abc", list, limit: 4) == want
    assert Levenshtein.nearest("abc", Index.new(list), limit: 4) == want
  end

  test "every mode and tiny slices agree" do
    list = candidates(60)
    index = Index.new(list)
    query = word(20, ~c"abcd")
    want = Levenshtein.distances(query, list, schedule: :normal)
    want_n = Levenshtein.nearest(query, list, schedule: :normal, limit: 7)

    for mode <- @modes, tiny <- [false, true], set <- [list, index] do
      opts = [schedule: mode, tiny_slices: tiny]
      assert Levenshtein.distances(query, set, opts) == want, "#{mode} #{tiny}"
      assert Levenshtein.nearest(query, set, [limit: 7] ++ opts) == want_n, "#{mode} #{tiny}"
    end

    assert_no_live_jobs()
  end

  test "callers killed mid-search leave no live job; an index frees its memory" do
    list = for _ <- 1..300_000, do: word(20, ~c"abcdefgh")
    index = Index.new(list)
    assert Runtime.stats().resident_bytes >= 300_000 * 20

    for mode <- @modes -- [:normal], set <- [list, index], round <- 1..3 do
      kill_during(
        fn -> Levenshtein.distances(word(30, ~c"abcdefgh"), set, schedule: mode) end,
        rem(round, 3)
      )
    end

    assert_no_live_jobs()
    before = Runtime.stats().resident_bytes
    _ = index
    # the index goes with the last reference to it
    index = nil
    :erlang.garbage_collect()
    eventually(fn -> Runtime.stats().resident_bytes <= before - 300_000 * 20 end)
    assert index == nil
  end

  test "bad input raises ArgumentError naming the problem" do
    for {fun, pattern} <- [
          {fn -> Levenshtein.distances("a", "abc") end,
           ~r/distances\/3: invalid candidates "abc", expected a list of binaries or an index/},
          {fn -> Levenshtein.distances("a", ["b", :c, "d"]) end,
           ~r/distances\/3: the candidate at position 1 is not a binary/},
          {fn -> Levenshtein.nearest("a", ["b" | "c"]) end,
           ~r/nearest\/3: the candidates are not a proper list/},
          {fn -> Levenshtein.nearest(:a, ["b"]) end, ~r/nearest\/3: invalid query :a/},
          {fn -> Levenshtein.nearest("a", ["b"], limit: 0) end,
           ~r/nearest\/3: invalid :limit 0, expected an integer in 1../},
          {fn -> Levenshtein.nearest("a", ["b"], limit: :all) end, ~r/invalid :limit :all/},
          {fn -> Levenshtein.distances("a", ["b"], limit: 3) end,
           ~r/distances\/3: unknown option :limit/},
          {fn -> Levenshtein.distances("a", ["b"], schedule: :external) end,
           ~r/distances\/3: invalid :schedule :external/},
          {fn -> Levenshtein.distances("a", ["b"], max_distance: -1) end,
           ~r/invalid :max_distance -1/},
          {fn -> Levenshtein.distances("a", ["b"], unit: :cluster) end,
           ~r/invalid :unit :cluster/},
          {fn -> Levenshtein.distances(<<0xFF>>, ["b"], unit: :codepoint) end,
           ~r/the query is not valid UTF-8/},
          {fn -> Levenshtein.nearest("a", ["b", <<0xFF>>], unit: :codepoint) end,
           ~r/the candidate at position 1 is not valid UTF-8/},
          {fn -> Index.new(["a", 1]) end, ~r/Index.new\/2: the candidate at position 1/},
          {fn -> Index.new("a") end, ~r/Index.new\/2: invalid candidates "a"/}
        ] do
      assert_raise ArgumentError, pattern, fun
    end
  end
end
