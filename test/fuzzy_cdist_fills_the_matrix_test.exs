defmodule WellBehaved.FuzzyCdistFillsTheMatrixTest do
  # cdist/3: every cell is score/3 of its pair (the worst of its kind
  # beyond the cutoff), rows in the queries' order, columns in the
  # candidates', as lists or one binary; over lists and indexes, with any
  # number of workers, in every mode; a killed caller leaves no job.
  use ExUnit.Case, async: false

  alias WellBehaved.{Fuzzy, Runtime}
  alias WellBehaved.Fuzzy.Index
  import WellBehaved.Test.RuntimeHelpers

  defp word(n), do: for(_ <- 1..n//1, into: "", do: <<Enum.random(~c"abc ")>>)

  defp matrix(queries, candidates, opts) do
    for q <- queries, do: for(c <- candidates, do: Fuzzy.score(q, c, opts))
  end

  test "every cell is the pair's score, for every scorer and kind" do
    queries = for n <- [0, 3, 12, 64, 70], do: word(n)
    candidates = for n <- [0, 1, 5, 12, 30, 64, 65, 100], do: word(n)

    for scorer <- Fuzzy.Call.scorers(),
        kind <- [:distance, :normalized_similarity],
        cutoff <- [nil, :middle] do
      opts = [scorer: scorer, score: kind]

      opts =
        if cutoff == :middle do
          all = matrix(queries, candidates, opts) |> List.flatten() |> Enum.sort()
          [score_cutoff: Enum.at(all, div(length(all), 2))] ++ opts
        else
          opts
        end

      assert Fuzzy.cdist(queries, candidates, opts) === matrix(queries, candidates, opts),
             inspect(opts)
    end
  end

  test "as a binary: 32-bit cells, rows one after another" do
    queries = ["kitten", "mitt", ""]
    candidates = ["sitting", "mitten"]

    assert Fuzzy.cdist(queries, candidates, scorer: :levenshtein, score: :distance, as: :binary) ==
             <<3::32-native, 1::32-native, 4::32-native, 2::32-native, 7::32-native,
               6::32-native>>

    binary = Fuzzy.cdist(queries, candidates, scorer: :jaro, as: :binary)
    floats = for <<x::float-32-native <- binary>>, do: x
    want = matrix(queries, candidates, scorer: :jaro) |> List.flatten()
    assert length(floats) == 6
    for {x, y} <- Enum.zip(floats, want), do: assert(abs(x - y) < 1.0e-6)
  end

  test "indexes, processors, workers and modes give the same matrix" do
    queries = for _ <- 1..9, do: word(Enum.random(1..20))
    candidates = for _ <- 1..50, do: word(Enum.random(0..30))
    want = Fuzzy.cdist(queries, candidates, processor: :default)

    index = Index.new(Enum.take(candidates, 20), processor: :default)
    index = Index.add(index, Enum.drop(candidates, 20))
    assert Fuzzy.cdist(queries, index) === want
    assert Fuzzy.cdist(queries, Index.new(candidates, processor: :default)) === want

    for workers <- [1, 3], mode <- Runtime.modes() do
      assert Fuzzy.cdist(queries, candidates,
               processor: :default,
               workers: workers,
               schedule: mode,
               tiny_slices: true
             ) === want
    end

    assert Fuzzy.cdist([], candidates) == []
    assert Fuzzy.cdist(queries, []) == Enum.map(queries, fn _ -> [] end)
  end

  test "an index's sorted tokens give the token sort scores of every pair" do
    # one segment: its rows read the sorted tokens the index keeps, in
    # bytes, and in codepoints where the query is ASCII (a query of other
    # characters takes the candidates as they are)
    queries = ["b a", " c\tab  a ", "", "  ", "zz é b"] ++ for(_ <- 1..5, do: word(12))
    candidates = ["a b", "b  a", "", " ", "ab c a", "é b zz"] ++ for(_ <- 1..40, do: word(20))
    index = Index.new(candidates)

    for scorer <- [:token_sort_ratio, :partial_token_sort_ratio],
        unit <- [:byte, :codepoint],
        kind <- [:normalized_similarity, :distance] do
      opts = [scorer: scorer, unit: unit, score: kind]
      want = matrix(queries, candidates, opts)
      got = Fuzzy.cdist(queries, index, opts)
      assert got === want, "#{inspect(opts)}: #{inspect(got)} want #{inspect(want)}"
    end
  end

  test "bad arguments raise naming the function" do
    assert_raise ArgumentError, ~r/cdist\/3: invalid queries/, fn ->
      Fuzzy.cdist(["a", 1], ["b"])
    end

    assert_raise ArgumentError, ~r/position 1 is not a binary/, fn ->
      Fuzzy.cdist(["a"], ["b", :c])
    end

    assert_raise ArgumentError, ~r/invalid :workers 0/, fn ->
      Fuzzy.cdist(["a"], ["b"], workers: 0)
    end

    assert_raise ArgumentError, ~r/invalid :as :map/, fn ->
      Fuzzy.cdist(["a"], ["b"], as: :map)
    end
  end

  test "a caller killed mid-matrix leaves no live job" do
    queries = for _ <- 1..200, do: word(25)
    candidates = for _ <- 1..5_000, do: word(25)

    for mode <- Runtime.modes() -- [:normal] do
      kill_during(fn -> Fuzzy.cdist(queries, candidates, scorer: :wratio, schedule: mode) end, 20)
    end

    assert_no_live_jobs()
  end
end
