defmodule WellBehaved.FuzzyDedupeTest do
  # Fuzzy.dedupe/2 against every pair scored by score/3: the groups are
  # the connected pairs within the cutoff (with numbers: :exact, among
  # candidates whose words holding a digit are the same).
  use ExUnit.Case, async: false

  alias WellBehaved.{Fuzzy, Testing}

  @dedupe "WellBehaved.Fuzzy.dedupe/2"

  setup do
    :rand.seed(:exsss, {48, 4, 2})
    :ok
  end

  # titles with near-duplicates: words reordered, upper case, a typo, a
  # word added; model numbers that differ by one digit
  defp titles(n) do
    base =
      for _ <- 1..div(n * 2, 3) do
        words = Enum.take_random(~w(alpha beta gamma delta omega sigma kappa zeta), 3)
        Enum.join(words ++ ["x#{:rand.uniform(12)}"], " ")
      end

    variants =
      for _ <- 1..(n - length(base)) do
        t = Enum.random(base)

        case :rand.uniform(4) do
          1 -> t |> String.split() |> Enum.shuffle() |> Enum.join(" ")
          2 -> String.upcase(t)
          3 -> String.replace(t, "a", "e", global: false)
          4 -> t <> " new"
        end
      end

    Enum.shuffle(base ++ variants)
  end

  defp digit_words(text) do
    text |> String.split() |> Enum.filter(&String.match?(&1, ~r/[0-9]/)) |> Enum.sort()
  end

  # the groups from every pair, scored one by one
  defp reference(texts, opts, numbers) do
    proc = Keyword.get(opts, :processor, :default)
    p = if proc, do: WellBehaved.Fuzzy.Processor.function(proc), else: & &1

    score_opts =
      [scorer: :token_sort_ratio]
      |> Keyword.merge(Keyword.drop(opts, [:workers, :numbers]))
      |> Keyword.put(:processor, nil)

    cutoff = Keyword.get(opts, :score_cutoff, 0.9)
    lower = Keyword.get(opts, :score) in [:distance, :normalized_distance]
    scored = texts |> Enum.map(p) |> List.to_tuple()
    n = length(texts)

    edges =
      for i <- 0..(n - 1),
          j <- (i + 1)..(n - 1)//1,
          a = elem(scored, i),
          b = elem(scored, j),
          numbers == :ignore or digit_words(a) == digit_words(b),
          s = Fuzzy.score(a, b, Keyword.delete(score_opts, :score_cutoff)),
          if(lower, do: s <= cutoff, else: s >= cutoff),
          do: {i, j}

    components(n, edges)
    |> Enum.map(fn members -> Enum.map(members, &{Enum.at(texts, &1), &1}) end)
  end

  defp components(n, edges) do
    graph =
      Enum.reduce(edges, Map.new(0..(n - 1), &{&1, []}), fn {a, b}, g ->
        g |> Map.update!(a, &[b | &1]) |> Map.update!(b, &[a | &1])
      end)

    {groups, _} =
      Enum.reduce(0..(n - 1), {[], MapSet.new()}, fn i, {groups, seen} ->
        if MapSet.member?(seen, i) do
          {groups, seen}
        else
          group = reach(graph, [i], MapSet.new([i]))
          {[Enum.sort(group) | groups], MapSet.union(seen, group)}
        end
      end)

    Enum.reverse(groups)
  end

  defp reach(_graph, [], seen), do: seen

  defp reach(graph, [x | rest], seen) do
    new = Enum.reject(graph[x], &MapSet.member?(seen, &1))
    reach(graph, new ++ rest, Enum.reduce(new, seen, &MapSet.put(&2, &1)))
  end

  test "the groups are the connected pairs within the cutoff, for every kind of scorer" do
    texts = titles(150)

    for {opts, numbers} <- [
          {[], :exact},
          {[], :ignore},
          {[scorer: :ratio, score_cutoff: 0.8], :ignore},
          {[scorer: :qratio, score: :similarity, score_cutoff: 85], :exact},
          {[scorer: :token_sort_ratio, score: :normalized_distance, score_cutoff: 0.15], :ignore},
          {[scorer: :partial_ratio, score_cutoff: 0.95], :ignore},
          {[scorer: :levenshtein, score: :distance, score_cutoff: 2, processor: nil], :ignore},
          {[scorer: :token_set_ratio, score_cutoff: 0.9, workers: 1], :exact}
        ] do
      want = reference(texts, opts, numbers)
      got = Fuzzy.dedupe(texts, [numbers: numbers] ++ opts)
      assert got == want, "#{inspect(opts)}, numbers: #{numbers}"
      # every candidate once
      assert got |> Enum.concat() |> Enum.map(&elem(&1, 1)) |> Enum.sort() == Enum.to_list(0..149)
    end
  end

  test "lengths far past a chunk of the index, in codepoints" do
    # more candidates than one index chunk holds, of every length
    texts =
      for i <- 1..2500 do
        len = rem(i * 37, 90) + 1
        String.duplicate("é", len) <> if(rem(i, 3) == 0, do: "x", else: "")
      end

    opts = [scorer: :ratio, unit: :codepoint, score_cutoff: 0.97, numbers: :ignore]
    got = Fuzzy.dedupe(texts, opts)

    # the ratio of "é" x a (+ "x") and "é" x b (+ "x") in codepoints,
    # worked out: the LCS is the shorter run of "é", and the x when both
    # have one
    shape = texts |> Enum.map(&{String.length(&1), String.ends_with?(&1, "x")}) |> List.to_tuple()
    n = length(texts)

    edges =
      for i <- 0..(n - 1),
          j <- (i + 1)..(n - 1)//1,
          {la, xa} = elem(shape, i),
          {lb, xb} = elem(shape, j),
          lcs = min(la - bit(xa), lb - bit(xb)) + bit(xa and xb),
          2 * lcs / (la + lb) >= 0.97,
          do: {i, j}

    want =
      components(n, edges)
      |> Enum.map(fn members -> Enum.map(members, &{Enum.at(texts, &1), &1}) end)

    assert got == want
    assert length(got) > 1 and length(got) < n
  end

  defp bit(true), do: 1
  defp bit(false), do: 0

  test "keys, maps and nils; model numbers kept apart" do
    products = %{
      10 => "Apple iPhone 14 Pro",
      11 => "iphone 14 pro (apple)",
      12 => "Apple iPhone 15 Pro",
      13 => nil,
      14 => "Samsung Galaxy S24",
      15 => "SAMSUNG galaxy s24"
    }

    assert Fuzzy.dedupe(products) == [
             [{"Apple iPhone 14 Pro", 10}, {"iphone 14 pro (apple)", 11}],
             [{"Apple iPhone 15 Pro", 12}],
             [{"Samsung Galaxy S24", 14}, {"SAMSUNG galaxy s24", 15}]
           ]

    # the score alone joins 14 and 15
    assert [[{_, 10}, {_, 11}, {_, 12}] | _] = Fuzzy.dedupe(products, numbers: :ignore)

    assert Fuzzy.dedupe([{:a, "x"}, nil, {:b, "x"}, "y"]) == [[{"x", :a}, {"x", :b}], [{"y", 3}]]
    assert Fuzzy.dedupe([]) == []
  end

  test "a scorer function, every mode" do
    texts = titles(40)

    same_words = fn a, b ->
      if Enum.sort(String.split(a)) == Enum.sort(String.split(b)), do: 1, else: 0
    end

    opts = [scorer: same_words, score_cutoff: 1, numbers: :ignore]
    assert Fuzzy.dedupe(texts, opts) == reference(texts, opts, :ignore)

    want = Fuzzy.dedupe(texts)
    Testing.modes_agree(fn mode -> Fuzzy.dedupe(texts, mode) end, want)
  end

  test "a caller killed mid-way leaves no job behind" do
    texts = for i <- 1..3000, do: String.duplicate("ab", 40 + rem(i, 50)) <> "#{rem(i, 2)}"

    Testing.kill_mid_job(fn ->
      Fuzzy.dedupe(texts, scorer: :ratio, numbers: :ignore, tiny_slices: true, schedule: :yielding)
    end)
  end

  test "bad arguments raise, naming the function" do
    assert_raise ArgumentError, ~r/#{@dedupe}.*:numbers.*:exact or :ignore/, fn ->
      Fuzzy.dedupe(["a"], numbers: :some)
    end

    assert_raise ArgumentError, ~r/#{@dedupe}.*:score_cutoff.*a cutoff/, fn ->
      Fuzzy.dedupe(["a"], score: :distance)
    end

    assert_raise ArgumentError, ~r/#{@dedupe}.*:score_cutoff.*a cutoff/, fn ->
      Fuzzy.dedupe(["a"], scorer: fn _, _ -> 1 end)
    end

    assert_raise ArgumentError, ~r/#{@dedupe}/, fn -> Fuzzy.dedupe(["a", 3]) end
    assert_raise ArgumentError, ~r/#{@dedupe}/, fn -> Fuzzy.dedupe(:x) end
    assert_raise ArgumentError, ~r/#{@dedupe}/, fn -> Fuzzy.dedupe(["a"], :x) end
    assert_raise ArgumentError, ~r/#{@dedupe}.*:limit/, fn -> Fuzzy.dedupe(["a"], limit: 3) end
  end
end
