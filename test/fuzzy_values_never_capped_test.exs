defmodule WellBehaved.FuzzyValuesNeverCappedTest do
  # An edit distance's integer scores are exact in every output: no cell
  # caps a value silently, no double rounds one on the way (weighted
  # distances past 2^53), and a value that does not fit where it goes
  # raises ArgumentError naming the cell. The reference: a big-integer
  # Wagner-Fischer over the weights, here.
  use ExUnit.Case, async: true

  alias WellBehaved.Fuzzy
  alias WellBehaved.Fuzzy.Index

  @u32_most 4_294_967_295
  @u64_most 18_446_744_073_709_551_615
  @two53 9_007_199_254_740_992

  # the weighted Levenshtein distance, in Elixir integers
  defp distance(a, b, {ins, del, sub}) do
    b = :binary.bin_to_list(b)
    first = for j <- 0..length(b), do: j * ins

    a
    |> :binary.bin_to_list()
    |> Enum.with_index(1)
    |> Enum.reduce(first, fn {ca, r}, prev ->
      {row, _} =
        b
        |> Enum.zip(Enum.zip(prev, tl(prev)))
        |> Enum.map_reduce(r * del, fn {cb, {diag, up}}, left ->
          v = Enum.min([up + del, left + ins, diag + if(ca == cb, do: 0, else: sub)])
          {v, v}
        end)

      [r * del | row]
    end)
    |> List.last()
  end

  # the largest distance the lengths allow (the similarity's base)
  defp maximum(a, b, {ins, del, sub}) do
    {m, n} = {byte_size(a), byte_size(b)}
    subs = if m >= n, do: n * sub + (m - n) * del, else: m * sub + (n - m) * ins
    min(m * del + n * ins, subs)
  end

  defp lev(opts), do: [scorer: :levenshtein, score: :distance] ++ opts

  defp cells32(binary), do: for(<<v::32-native <- binary>>, do: v)

  describe "the reported cases" do
    test "a value past a 32-bit cell of as: :binary raises, naming the cell; lists hold it" do
      m = @u32_most
      opts = lev(weights: {m, m, m})
      want = distance("aa", "", {m, m, m})

      assert want == 8_589_934_590
      assert Fuzzy.cdist(["aa"], [""], opts) == [[want]]

      error =
        assert_raise ArgumentError, fn -> Fuzzy.cdist(["aa"], [""], [as: :binary] ++ opts) end

      assert error.message =~ "8589934590"
      assert error.message =~ "32-bit unsigned integer cells of as: :binary"
    end

    test "a weighted distance past 2^53 is exact (not rounded through a double)" do
      # 2,097,153 deletions of 4294967295: 9007203547611135, odd, past 2^53
      k = 2_097_153
      a = String.duplicate("a", k)
      weights = {1, @u32_most, 2}
      want = k * @u32_most
      assert want > @two53 and rem(want, 2) == 1

      assert Fuzzy.score(a, "", lev(weights: weights)) == want
      assert Fuzzy.cdist([a], [""], lev(weights: weights)) == [[want]]

      assert [{_, ^want, 0}] = Fuzzy.extract("", [a], lev(weights: {@u32_most, 1, 2}))
    end
  end

  describe "as: :binary and as: :list agree" do
    test "on large weights whose values fit 32 bits, at the cell's end too" do
      :rand.seed(:exsss, {43, 4, 1})
      words = for _ <- 1..8, do: random_word(0..4)

      for weights <- [{@u32_most, @u32_most, @u32_most}, {1_000_000_007, 999_999_937, 7}] do
        # only the pairs whose distances fit: each row on its own
        for q <- words,
            fits = Enum.filter(words, &(distance(q, &1, weights) <= @u32_most)),
            fits != [] do
          opts = lev(weights: weights)
          list = Fuzzy.cdist([q], fits, opts)
          binary = Fuzzy.cdist([q], fits, [as: :binary] ++ opts)
          want = [for(c <- fits, do: distance(q, c, weights))]

          assert list == want, "list #{inspect(list)} want #{inspect(want)}"
          assert [cells32(binary)] == want, "binary #{inspect(cells32(binary))}"
        end
      end

      # 4294967295 is the last value a cell holds, 4294967296 the first it does not
      edge = {1, 2_147_483_648, 1}

      assert cells32(Fuzzy.cdist(["a"], [""], lev(weights: {1, @u32_most, 1}, as: :binary))) ==
               [@u32_most]

      assert Fuzzy.cdist(["aa"], [""], lev(weights: edge)) == [[4_294_967_296]]

      assert_raise ArgumentError, ~r/4294967296 does not fit the 32-bit/, fn ->
        Fuzzy.cdist(["aa"], [""], lev(weights: edge, as: :binary))
      end
    end

    test "the similarity's cells, and the value beyond a cutoff, are checked too" do
      w = {@u32_most, @u32_most, @u32_most}
      # similarity: maximum - distance, 2 * 4294967295 here
      want = maximum("ab", "ab", w) - distance("ab", "ab", w)

      assert Fuzzy.cdist(["ab"], ["ab"], scorer: :levenshtein, score: :similarity, weights: w) ==
               [[want]]

      assert_raise ArgumentError, ~r/#{want} does not fit the 32-bit/, fn ->
        Fuzzy.cdist(["ab"], ["ab"],
          scorer: :levenshtein,
          score: :similarity,
          weights: w,
          as: :binary
        )
      end

      # beyond the cutoff a distance reports the cutoff + 1: 4294967296 here
      assert Fuzzy.cdist(["aa"], [""], lev(weights: w, score_cutoff: @u32_most)) == [
               [@u32_most + 1]
             ]

      assert_raise ArgumentError, ~r/4294967296 does not fit/, fn ->
        Fuzzy.cdist(["aa"], [""], lev(weights: w, score_cutoff: @u32_most, as: :binary))
      end
    end
  end

  describe "weighted distances are exact up to 2^64 - 1" do
    test "near and past 2^53, and far past it, against the reference" do
      :rand.seed(:exsss, {43, 4, 2})

      for base <- [@two53 - 3, @two53 + 1, 3 * @two53 + 5, Bitwise.bsl(1, 60) + 11],
          _ <- 1..4 do
        weights = {base + :rand.uniform(7), base + :rand.uniform(7), base + :rand.uniform(9)}
        # at most 3 edits of at most 2^60 + 20 each: within 2^64 - 1
        words = for _ <- 1..6, do: random_word(0..3)

        for a <- words, b <- words do
          want = distance(a, b, weights)
          got = Fuzzy.score(a, b, lev(weights: weights))
          assert got == want, "#{inspect(a)} #{inspect(b)} #{inspect(weights)}: #{got} #{want}"
        end

        want = for a <- words, do: for(b <- words, do: distance(a, b, weights))
        assert Fuzzy.cdist(words, words, lev(weights: weights)) == want
        assert Fuzzy.cdist(words, words, lev(weights: weights, workers: 1)) == want
      end
    end

    test "the similarity, from the exact largest distance" do
      weights = {@two53 + 1, @two53 + 3, @two53 + 7}

      for {a, b} <- [{"abc", "abd"}, {"", "xy"}, {"abc", ""}, {"ab", "ba"}] do
        want = maximum(a, b, weights) - distance(a, b, weights)

        assert Fuzzy.score(a, b, scorer: :levenshtein, score: :similarity, weights: weights) ==
                 want
      end
    end

    test "at 2^64 - 1 exactly, also where the largest distance is past it" do
      # one deletion of 2^64 - 1
      assert Fuzzy.score("a", "", lev(weights: {1, @u64_most, 1})) == @u64_most
      # a substitution of 2^64 - 1 where deleting and inserting cost 2^64:
      # the largest distance of the pair (2^65 - 2) is past 64 bits
      half = Bitwise.bsl(1, 63)

      for weights <- [{half, half, @u64_most}, {half, half - 1, @u64_most}],
          {a, b} <- [{"ab", "ac"}, {"xay", "xby"}, {"a", "b"}] do
        want = distance(a, b, weights)
        assert want == @u64_most
        assert Fuzzy.score(a, b, lev(weights: weights)) == want
        assert Fuzzy.cdist([a], [b], lev(weights: weights)) == [[want]]
        assert [{^b, ^want, 0}] = Fuzzy.extract(a, [b], lev(weights: weights))
      end

      # substituting costs more than deleting and inserting: the LCS path
      weights = {half - 1, half, @u64_most}
      assert Fuzzy.score("a", "b", lev(weights: weights)) == distance("a", "b", weights)
    end

    test "past 2^64 - 1: an ArgumentError, never a wrong number" do
      half = Bitwise.bsl(1, 63)

      cases = [
        {"aa", "", {1, @u64_most, 1}},
        {"ab", "cd", {half, half, @u64_most}},
        {"", "xyz", {half, 1, 1}}
      ]

      for {a, b, weights} <- cases do
        assert distance(a, b, weights) > @u64_most

        assert_raise ArgumentError, ~r/past 18446744073709551615/, fn ->
          Fuzzy.score(a, b, lev(weights: weights))
        end

        assert_raise ArgumentError, ~r/past 18446744073709551615/, fn ->
          Fuzzy.cdist([a], [b], lev(weights: weights))
        end

        assert_raise ArgumentError, ~r/past 18446744073709551615/, fn ->
          Fuzzy.extract(a, ["x", b], lev(weights: weights))
        end
      end

      # a similarity past it: equal strings, the largest distance 3 * 2^63
      assert_raise ArgumentError, ~r/past 18446744073709551615/, fn ->
        Fuzzy.score("aaa", "aaa",
          scorer: :levenshtein,
          score: :similarity,
          weights: {half, half, half}
        )
      end

      # the normalized kinds need no integer: 1.0 for a distance past it
      assert Fuzzy.score("aa", "", scorer: :levenshtein, weights: {1, @u64_most, 1}) == 0.0
    end
  end

  describe "ranks and cutoffs in exact integers" do
    test "hits past 2^53 one apart rank by their exact distances" do
      # 2^53 + 1 and 2^53: as doubles both are 2^53, a tie the input order
      # would settle (the first, the worse, ahead)
      weights = {1, @two53, @two53 + 1}
      pair = ["ac", "b"]
      assert Enum.map(pair, &distance("ab", &1, weights)) == [@two53 + 1, @two53]
      want = [{"b", @two53, 1}, {"ac", @two53 + 1, 0}]

      assert Fuzzy.extract("ab", pair, lev(weights: weights)) == want
      assert Fuzzy.extract("ab", Index.new(pair), lev(weights: weights)) == want
      assert Fuzzy.extract_one("ab", pair, lev(weights: weights)) == {"b", @two53, 1}
      assert Fuzzy.cdist(["ab"], pair, lev(weights: weights)) == [[@two53 + 1, @two53]]
    end

    test "an integer cutoff past 2^53 is exact" do
      d = @two53 + 1
      weights = {1, d, 3}
      assert distance("a", "", weights) == d

      assert Fuzzy.score("a", "", lev(weights: weights, score_cutoff: d)) == d
      # beyond it: the cutoff + 1
      assert Fuzzy.score("a", "", lev(weights: weights, score_cutoff: d - 1)) == d
      assert Fuzzy.score("a", "", lev(weights: weights, score_cutoff: d - 2)) == d - 1
      assert Fuzzy.extract("a", [""], lev(weights: weights, score_cutoff: d - 1)) == []
      assert Fuzzy.extract("a", [""], lev(weights: weights, score_cutoff: d)) == [{"", d, 0}]

      # a similarity cutoff: the similarity of "ab", "ab" is 2 * (2^53 + 1)
      sim = [scorer: :levenshtein, score: :similarity, weights: {d, d, d}]
      assert Fuzzy.extract("ab", ["ab"], sim ++ [score_cutoff: 2 * d]) == [{"ab", 2 * d, 0}]
      assert Fuzzy.extract("ab", ["ab"], sim ++ [score_cutoff: 2 * d + 1]) == []

      # the cutoff at 2^64 - 1: every value passes
      assert Fuzzy.score("a", "", lev(weights: {1, @u64_most, 1}, score_cutoff: @u64_most)) ==
               @u64_most
    end

    test "weights and integer cutoffs past 64 bits are bad arguments" do
      assert_raise ArgumentError, ~r/integers in 0..18446744073709551615/, fn ->
        Fuzzy.score("a", "b", lev(weights: {1, @u64_most + 1, 1}))
      end

      assert_raise ArgumentError, ~r/a non-negative integer up to 18446744073709551615/, fn ->
        Fuzzy.score("a", "b", lev(score_cutoff: @u64_most + 1))
      end
    end
  end

  defp random_word(lengths) do
    len = Enum.random(lengths)
    for _ <- 1..len//1, into: "", do: <<Enum.random(~c"abc")>>
  end
end
