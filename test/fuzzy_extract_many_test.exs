defmodule WellBehaved.FuzzyExtractManyTest do
  # Fuzzy.extract_many/3 against extract/3 query by query: the same hits,
  # on lists, maps, keyed pairs and indexes, in every mode, in order or
  # not; a stream that stops its searches when halted or killed.
  use ExUnit.Case, async: false

  alias WellBehaved.{Fuzzy, Runtime, Testing}
  alias WellBehaved.Fuzzy.Index

  @many "WellBehaved.Fuzzy.extract_many/3"

  setup do
    :rand.seed(:exsss, {48, 3, 1})
    :ok
  end

  defp word(min, max) do
    len = min + :rand.uniform(max - min + 1) - 1
    for _ <- 1..len, into: "", do: <<Enum.random(~c"abcdeiou ")>>
  end

  defp words(n, min \\ 3, max \\ 14), do: for(_ <- 1..n, do: word(min, max))

  defp each_extract(queries, choices, opts),
    do: Enum.map(queries, &{&1, Fuzzy.extract(&1, choices, opts)})

  test "every query's hits are extract/3's, on every shape of candidates" do
    queries = words(25)
    texts = words(300)
    keyed = texts |> Enum.with_index() |> Enum.map(fn {t, i} -> {{:k, rem(i * 7, 300)}, t} end)
    map = Map.new(Enum.with_index(texts), fn {t, i} -> {i * 3, t} end)
    with_nils = Enum.intersperse(texts, nil)

    for choices <- [texts, keyed, map, with_nils, Index.new(texts), Index.new(map)],
        opts <- [
          [],
          [scorer: :levenshtein, score: :distance, limit: 3],
          [scorer: :token_sort_ratio, score: :similarity, score_cutoff: 40, limit: nil],
          [scorer: :partial_ratio, limit: 0],
          [scorer: :jaro_winkler, limit: 7],
          [scorer: :partial_ratio, alignment: true, limit: 3]
        ] do
      want = each_extract(queries, choices, opts)
      assert Enum.to_list(Fuzzy.extract_many(queries, choices, opts)) == want

      for workers <- [1, 3] do
        got = Fuzzy.extract_many(queries, choices, [workers: workers, ordered: false] ++ opts)
        assert Enum.sort(Enum.to_list(got)) == Enum.sort(want)
      end
    end
  end

  test "a processor is run once per candidate and on every query" do
    queries = ["NEW YORK", "los-angeles!"]
    choices = %{nyc: "New York City", la: "Los Angeles", sf: "San Francisco"}
    parent = self()

    counted = fn text ->
      send(parent, {:processed, text})
      Fuzzy.Processor.default(text)
    end

    opts = [processor: counted, scorer: :partial_ratio, limit: 1]
    got = Enum.to_list(Fuzzy.extract_many(queries, choices, opts))
    assert got == each_extract(queries, choices, opts)
    assert [{"NEW YORK", [{"New York City", 1.0, :nyc}]}, {"los-angeles!", [{_, 1.0, :la}]}] = got

    # the three candidates once for the stream (and once each for the two
    # extract/3 calls above), the queries once each
    processed = collect_processed([])
    assert Enum.count(processed, &(&1 == "San Francisco")) == 3
    assert Enum.count(processed, &(&1 == "NEW YORK")) == 2
  end

  defp collect_processed(acc) do
    receive do
      {:processed, text} -> collect_processed([text | acc])
    after
      0 -> acc
    end
  end

  test "every mode gives the same hits, with tiny slices too" do
    queries = words(6)
    choices = words(500, 20, 60)
    opts = [scorer: :ratio, limit: 4]
    want = each_extract(queries, choices, opts)

    Testing.modes_agree(
      fn mode -> queries |> Fuzzy.extract_many(choices, mode ++ opts) |> Enum.to_list() end,
      want
    )
  end

  test "graphemes: each query's clusters numbered with its candidates" do
    # a flag, a letter with two marks, a family emoji: one unit each
    choices = ["🇫🇷e\u0301\u0302x", "🇩🇪ex", "👨‍👩‍👧abc", nil, "e\u0301x"]
    queries = ["🇫🇷e\u0301\u0302x", "👨‍👩‍👧ab", "ex"]
    opts = [unit: :grapheme, scorer: :levenshtein, score: :distance, limit: 2]
    got = Enum.to_list(Fuzzy.extract_many(queries, choices, opts))
    assert got == each_extract(queries, choices, opts)
    assert [{_, [{"🇫🇷e\u0301\u0302x", 0, 0}, _]}, {_, [{"👨‍👩‍👧abc", 1, 2}, _]}, _] = got

    assert Fuzzy.dedupe(["🇫🇷ab", "🇫🇷ab", "🇩🇪ab"],
             unit: :grapheme,
             scorer: :ratio,
             numbers: :ignore,
             processor: nil
           ) ==
             [[{"🇫🇷ab", 0}, {"🇫🇷ab", 1}], [{"🇩🇪ab", 2}]]
  end

  test "a function scorer ranks as its kind says" do
    fun = fn a, b -> String.jaro_distance(a, b) end
    queries = ["martha", "dixon"]
    choices = ["marhta", "dicksonx", "martha", nil, "dwayne"]

    got = Fuzzy.extract_many(queries, choices, scorer: fun, limit: 2) |> Enum.to_list()
    assert got == each_extract(queries, choices, scorer: fun, limit: 2)

    assert [
             {"martha", [{"martha", 1.0, 2}, {"marhta", _, 0}]},
             {"dixon", [{"dicksonx", _, 1}, _]}
           ] = got
  end

  test "queries may be a stream, read as the hits are; halting stops the searches" do
    parent = self()
    queries = Stream.map(1..1_000_000, fn i -> send(parent, {:query, i}) && "q#{i}" end)
    choices = words(2000)
    assert [{"q1", _}, {"q2", _}, {"q3", _}] = Enum.take(Fuzzy.extract_many(queries, choices), 3)
    # the queries are read as the workers take them, not the million up
    # front (how many beyond the three depends on how fast the workers
    # were: a few)
    read =
      Enum.count(1..1_000, fn _ -> receive(do: ({:query, _} -> true), after: (0 -> false)) end)

    assert read < 1_000
    Testing.assert_no_live_jobs()
  end

  test "a caller killed mid-stream leaves no job and no memory behind" do
    queries = words(50, 200, 400)
    choices = words(3000, 100, 300)

    Testing.kill_mid_job(fn ->
      queries
      |> Fuzzy.extract_many(choices, scorer: :levenshtein, tiny_slices: true, schedule: :yielding)
      |> Stream.run()
    end)

    assert Runtime.stats().live_jobs == 0
  end

  test "bad arguments raise, naming the function" do
    assert_raise ArgumentError, ~r/#{@many}.*queries.*an enumerable of binaries/, fn ->
      Fuzzy.extract_many(:nope, ["a"])
    end

    assert_raise ArgumentError, ~r/#{@many}.*:ordered/, fn ->
      Fuzzy.extract_many(["a"], ["a"], ordered: :yes)
    end

    assert_raise ArgumentError, ~r/#{@many}.*:workers/, fn ->
      Fuzzy.extract_many(["a"], ["a"], workers: 0)
    end

    # checked as the stream runs, raised in the caller
    stream = Fuzzy.extract_many(["a", 42], ["a"])
    assert_raise ArgumentError, ~r/#{@many}.*queries.*42/, fn -> Enum.to_list(stream) end

    assert_raise ArgumentError, ~r/#{@many}.*:not_a_binary|#{@many}.*position 1/, fn ->
      Enum.to_list(Fuzzy.extract_many(["a"], ["a", 7]))
    end

    boom = fn _ -> raise ArgumentError, "boom" end

    assert_raise ArgumentError, "boom", fn ->
      Enum.to_list(Fuzzy.extract_many(["a", "b"], ["a"], processor: boom, workers: 2))
    end

    Testing.assert_no_live_jobs()
  end
end
