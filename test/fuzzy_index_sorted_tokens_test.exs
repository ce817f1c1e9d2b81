defmodule WellBehaved.FuzzyIndexSortedTokensTest do
  # Issue 44, item 1 (Fuzzy.Index.new as fast as Levenshtein.Index.new).
  # An index kept its candidates' tokens sorted (for the token sort
  # scores) by splitting, sorting and joining each in Elixir, then packing
  # the result: on 200,000 two-word names that took ~110 ms of new/2's
  # ~170 (one-word names: ~18 ms spent finding each was its own). The
  # sorted forms are now made natively by a job (search_sorted), a budget
  # at a time, from the packed candidates.
  #
  # Asserted: the sorted forms, byte for byte, against a reference of this
  # file (the tokens split at the separators by a regular expression on
  # bytes, sorted, joined by one space) and against the Elixir splitting
  # the index used (Tokens.sorted/1, still the query's): random and
  # worded candidates, Unicode, empty ones, runs of every separator, long
  # ones of many tokens, through a processor, after additions, deletions
  # and a load; none kept exactly when every candidate is its own; every
  # scheduling mode; callers killed mid-job leave no memory behind; bad
  # arguments are refused. Their batches, laid out as the candidates' (or
  # built anew where a sorted form is shorter or holds a byte its batch
  # lacks): searches on them score every candidate as the pair scorer.
  use ExUnit.Case, async: false

  alias WellBehaved.{Fuzzy, Native, Runtime}
  alias WellBehaved.Fuzzy.Index
  alias WellBehaved.Fuzzy.Index.{Segment, Tokens}
  alias WellBehaved.Search.Pack
  import WellBehaved.Test.RuntimeHelpers

  @moduletag timeout: 300_000

  # the separators in bytes: 0x09-0x0D, 0x1C-0x20
  @split ~r/[\x09-\x0d\x1c-\x20]+/

  defp reference(text),
    do: text |> then(&Regex.split(@split, &1, trim: true)) |> Enum.sort() |> Enum.join(" ")

  @pieces ["a", "b", "ab", "ba", "Zed", "é", "à", "ü", "\u00a0", "€", "😀", <<0x80>>, <<0xFF>>] ++
            [<<0>>, <<0x1B>>, <<0x7F>>, <<0x85>>, "!"] ++
            [" ", " ", "  ", "\t", "\n", "\v", "\f", "\r", <<0x1C>>, <<0x1D>>, <<0x1E>>, <<0x1F>>]

  defp random_text(max_pieces) do
    for _ <- 1..Enum.random(0..max_pieces)//1, into: "", do: Enum.random(@pieces)
  end

  defp word, do: for(_ <- 1..Enum.random(1..9), into: "", do: <<Enum.random(?a..?z)>>)

  defp worded(words), do: Enum.map_join(1..words, " ", fn _ -> word() end)

  # a segment's sorted forms: its scored texts when it keeps none of its own
  defp sorted_forms(%{sorted: nil} = segment), do: all(segment.ref, segment.count)
  defp sorted_forms(segment), do: all(segment.sorted, segment.count)

  defp all(ref, count) do
    0..(count - 1)//4096
    |> Enum.flat_map(&Native.pack_slice(ref, &1, min(4096, count - &1)))
  end

  # every segment of the index keeps the sorted forms of its scored texts
  defp assert_sorted(index, label) do
    for segment <- index.segments do
      scored = all(segment.ref, segment.count)
      got = sorted_forms(segment)
      want = Enum.map(scored, &reference/1)

      for {g, w, s} <- Enum.zip([got, want, scored]), g != w do
        flunk("#{label}: the sorted form of #{inspect(s)}: #{inspect(g)}, want #{inspect(w)}")
      end

      assert length(got) == length(want), "#{label}: #{length(got)} forms of #{length(want)}"
      assert Enum.map(scored, &Tokens.sorted/1) == want, "#{label}: Tokens.sorted/1 differs"
      # none kept exactly when every candidate is its own
      assert segment.sorted == nil == (want == scored),
             "#{label}: sorted #{inspect(segment.sorted)}, every one its own: #{want == scored}"
    end
  end

  test "the sorted forms are the reference's, byte for byte" do
    :rand.seed(:exsss, {44, 1, 9})

    lists = [
      {"random", for(_ <- 1..3000, do: random_text(12))},
      {"long random", for(_ <- 1..40, do: random_text(3000))},
      {"names", for(_ <- 1..3000, do: worded(Enum.random(1..3)))},
      {"empty and separators", ["", " ", "\t\n", <<0x1C, 0x1F>>, "", " a ", "a  b", "b\ta"]},
      {"unicode", ["éa àb", "ü é", "😀 😀a", "\u00a0b a", "€ ¢"]},
      {"prefixes", ["ab a", "a ab", "abc ab abd", "b bb bbb b"]},
      {"one long token", [String.duplicate("x", 200_000)]},
      {"many tokens", [Enum.map_join(1..50_000, " ", fn _ -> word() end)]}
    ]

    for {label, list} <- lists do
      # the processor runs first (the default one takes UTF-8 alone)
      other = if Enum.all?(list, &String.valid?/1), do: :default, else: &("b\t" <> &1 <> " a")

      for processor <- [nil, other] do
        index = Index.new(list, processor: processor)
        assert_sorted(index, "#{label}, processor #{inspect(processor)}")
      end
    end
  end

  test "none kept when every candidate is its own sorted form" do
    one = for _ <- 1..2000, do: word()
    assert [%{sorted: nil}] = Index.new(one).segments
    # tokens already in order, one space apart
    assert [%{sorted: nil}] = Index.new(one ++ ["a b", "ab b c", ""]).segments

    for other <- ["b a", "a  b", " a", "a ", "a\tb", "a\x1Fb", "   "] do
      %{segments: [segment]} = index = Index.new(one ++ [other])
      assert is_reference(segment.sorted), "#{inspect(other)}: #{inspect(segment.sorted)}"
      assert_sorted(index, inspect(other))
      # the first candidate differs, then the others are their own
      assert_sorted(Index.new([other | one]), "first #{inspect(other)}")
    end

    assert [%{sorted: false}] = Index.new(["b a"], sorted_tokens: false).segments
  end

  # The sorted forms' batches are laid out as the candidates' (their
  # lengths and bytes the same) unless one differs: a run of separators,
  # a tab, one at an end. Either way a search on them scores each
  # candidate as the pair scorer does.
  test "searches on the sorted forms score as the pair scorer, batches laid out or not" do
    :rand.seed(:exsss, {44, 1, 13})
    names = for _ <- 1..5000, do: worded(Enum.random(2..4))
    # one word each: their batches hold no space
    words = for _ <- 1..300, do: word()

    lists = [
      {"names", names},
      # its sorted form shorter, the next one's first byte after it
      {"a run of spaces", List.insert_at(names, 4000, "zz  ab") |> List.insert_at(4001, "xq xq")},
      {"a tab", List.insert_at(names, 2500, "b\tab")},
      {"a space at the end", names ++ ["ab cd "]},
      {"long ones", names ++ [Enum.map_join(1..30, " ", fn _ -> word() end)]},
      # a space in the sorted form, none in its batch
      {"a tab among words", List.insert_at(words, 100, "b\ta")}
    ]

    for {label, list} <- lists, query <- ["ab cd", "zz yx wv", "a", "ab zzx", "a b", "a!b"] do
      index = Index.new(list)
      texts = List.to_tuple(list)
      assert [%{sorted: sorted}] = index.segments
      assert is_reference(sorted), label
      hits = Fuzzy.extract(query, index, scorer: :token_sort_ratio, limit: :all)
      assert length(hits) == length(list), "#{label}: #{length(hits)} of #{length(list)}"

      for {text, score, key} <- hits do
        want = Fuzzy.score(query, text, scorer: :token_sort_ratio)

        assert score == want and elem(texts, key) == text,
               "#{label} #{inspect(query)} #{inspect(text)}: #{score}, want #{want}"
      end
    end
  end

  test "additions, deletions and loads keep the sorted forms" do
    :rand.seed(:exsss, {44, 1, 10})
    names = fn n -> for _ <- 1..n, do: worded(Enum.random(1..3)) end
    index = Index.new(names.(500), processor: :default)
    index = Enum.reduce(1..6, index, fn k, i -> Index.add(i, names.(40 * k)) end)
    assert length(index.segments) > 1
    assert_sorted(index, "added")
    deleted = Index.delete(index, Enum.to_list(0..300))
    assert_sorted(deleted, "deleted")
    assert_sorted(Index.load(Index.dump(deleted)), "loaded")

    for query <- ["ab cd", "zz a", "a"],
        scorer <- [:token_sort_ratio, :partial_token_sort_ratio] do
      list = Enum.to_list(deleted)
      want = Fuzzy.extract(query, list, scorer: scorer, processor: :default, limit: 7)
      got = Fuzzy.extract(query, deleted, scorer: scorer, limit: 7)
      assert got == want, "#{scorer} #{query}: #{inspect(got)} vs #{inspect(want)}"
    end
  end

  test "every scheduling mode makes the same sorted forms" do
    :rand.seed(:exsss, {44, 1, 11})

    list = [
      Enum.map_join(1..20_000, " ", fn _ -> word() end) | for(_ <- 1..500, do: random_text(8))
    ]

    count = length(list)
    want = Enum.map(list, &reference/1)

    one = for _ <- 1..500, do: word()

    for mode <- Runtime.modes(),
        tiny <- [false, true],
        not (tiny and mode in [:normal, :dirty_cpu]) do
      {:ok, packed, ^count} = Pack.pack(list, count)

      case Pack.sorted(packed, count, mode, tiny, "test") do
        {:ok, sorted, ^count} ->
          got = all_kept(sorted, count)
          assert got == want, "#{mode} tiny #{tiny}: the sorted forms differ"

        other ->
          flunk("#{mode} tiny #{tiny}: #{inspect(other)}")
      end

      # one-word names: none
      {:ok, packed, 500} = Pack.pack(one, 500)
      assert Pack.sorted(packed, 500, mode, tiny, "test") == {:ok, nil}, "#{mode} tiny #{tiny}"
    end
  end

  defp all_kept(ref, count) do
    :ok = Native.pack_keep(ref)
    all(ref, count)
  end

  test "bad arguments are refused" do
    {:ok, packed, 2} = Pack.pack(["b a", "c"], 2)
    assert {:error, :badarg} = Pack.sorted(packed, 3, :normal, false, "test")
    assert {:error, :badarg} = Native.search_sorted(make_ref(), 2, :normal, false, nil)
    assert {:error, :badarg} = Native.search_sorted(packed, -1, :normal, false, nil)
    # a packed list not sealed yet
    unsealed = Native.pack_new(2)
    assert {:error, :badarg} = Native.search_sorted(unsealed, 2, :normal, false, nil)
  end

  test "callers killed mid-job leave no job and no memory behind" do
    assert_no_live_jobs()
    :rand.seed(:exsss, {44, 1, 12})
    # 4 MB of two-word names, all of them out of order
    list = for _ <- 1..200_000, do: "zz" <> word() <> " a" <> word()
    count = length(list)
    {:ok, packed, ^count} = Pack.pack(list, count)
    :ok = Native.pack_keep(packed)
    # and an index: the sorted forms' batches laid out as its own
    {:ok, indexed, ^count} = Pack.index(list, count, :normal, false, "test")
    :ok = Native.pack_keep(indexed)
    :erlang.garbage_collect()
    before = :erlang.memory(:total)

    for round <- 1..30 do
      mode = Enum.at([:yielding, :yielding_dirty, :dirty_cpu, :threaded, :auto], rem(round, 5))
      from = if rem(round, 3) == 0, do: packed, else: indexed

      kill_during(
        fn -> Pack.sorted(from, count, mode, rem(round, 2) == 0, "test") end,
        rem(round, 7)
      )
    end

    assert_no_live_jobs()
    :erlang.garbage_collect()
    # each making holds up to ~60 MB of sorted forms and batches
    assert :erlang.memory(:total) - before < 64 * 1024 * 1024
  end

  test "the index's segments take the sorted forms made by Segment.new/4" do
    build = %{Segment.build(true) | schedule: :yielding, tiny_slices: true}
    {:ok, segment} = Segment.new(["b a", "c"], ["b a", "c"], {:positions, 0}, build)
    assert sorted_forms(segment) == ["a b", "c"]
  end
end
