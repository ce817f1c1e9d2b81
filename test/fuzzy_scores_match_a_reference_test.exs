defmodule WellBehaved.FuzzyScoresMatchAReferenceTest do
  # Every scorer, every kind of score, against the slow textbook reference
  # (c_src/test/fuzzy_reference.h, through test/support/fuzzy_reference.exs),
  # exactly (floats included, as both compute them in the same order):
  # random and adversarial pairs in both units, every mode with tiny
  # slices, cutoffs at their boundaries.
  use ExUnit.Case, async: true

  alias WellBehaved.{Fuzzy, Native, Runtime}
  alias WellBehaved.Fuzzy.Call
  alias WellBehaved.Test.FuzzyReference, as: Ref

  doctest WellBehaved.Fuzzy
  doctest WellBehaved.Fuzzy.Processor

  @edit [:levenshtein, :indel, :osa, :damerau_levenshtein, :hamming]
  @kinds [:distance, :similarity, :normalized_distance, :normalized_similarity]

  defp word(n, alphabet), do: for(_ <- 1..n//1, into: "", do: <<Enum.random(alphabet)>>)

  defp uword(n, alphabet), do: for(_ <- 1..n//1, into: "", do: <<Enum.random(alphabet)::utf8>>)

  # pairs that reach every path: empty, one symbol, identical, disjoint,
  # words with spaces (tokens), both sides of 64 symbols (one word, blocks)
  defp pairs(unit) do
    {gen, alphabet} =
      case unit do
        :byte -> {&word/2, ~c"ab c"}
        :codepoint -> {&uword/2, [?a, ?é, ?\s, 0x4E2D, 0x3000, ?b]}
      end

    fixed = [
      {"", ""},
      {"", "a"},
      {"a", ""},
      {"a", "a"},
      {"a", "b"},
      {"abc", "abc"},
      {"abc", "xyz"},
      {"ab", "ba"},
      {"ca", "abc"}
    ]

    random =
      for _ <- 1..25 do
        {gen.(Enum.random(0..12), alphabet), gen.(Enum.random(0..12), alphabet)}
      end

    long =
      for n <- [63, 64, 65, 130] do
        {gen.(Enum.random(div(n, 3)..n), alphabet), gen.(n, alphabet)}
      end

    fixed ++ random ++ long
  end

  test "the native and the Elixir side name the same scorers and kinds, and bound prefix weights alike" do
    most = Call.prefix_weight_most()
    assert Native.fuzzy_names() == {Call.scorers(), Call.kinds(), most}

    # the native side takes what Elixir does, and refuses the rest
    native = fn w ->
      call = struct(Call, scorer: :jaro_winkler, prefix_weight: w)
      args = ["ab", "ba", :byte, put_elem(Call.native(call), 6, w)]
      WellBehaved.Job.checked(&Native.fuzzy_score/7, args, :normal, false, :infinity, "test")
    end

    assert is_float(native.(0.0)) and is_float(native.(most))
    assert native.(most * 1.0001) == {:error, :badarg}
    assert native.(-0.01) == {:error, :badarg}
  end

  for unit <- [:byte, :codepoint], scorer <- Call.scorers() do
    @tag timeout: 300_000
    test "#{scorer}, #{unit}: every kind equals the reference" do
      scorer = unquote(scorer)
      unit = unquote(unit)

      # the reference once a pair, every kind from it
      for {a, b} <- pairs(unit), ref = Ref.reference(scorer, a, b, unit), kind <- @kinds do
        want = Ref.kind_of(ref, kind)
        got = Fuzzy.score(a, b, scorer: scorer, score: kind, unit: unit)

        assert got === want,
               "#{scorer} #{kind} of #{inspect(a)} and #{inspect(b)}: #{inspect(got)}, " <>
                 "expected #{inspect(want)}"
      end
    end
  end

  test "long inputs: several blocks of 64, partial windows of a long needle" do
    # a needle of 3 blocks (a first, a middle and a last one), 51 windows
    a = word(200, ~c"abcd ")
    b = word(150, ~c"abcd ")

    for scorer <- Call.scorers() -- [:damerau_levenshtein] do
      want = Ref.kind_of(Ref.reference(scorer, a, b, :byte), :similarity)
      assert Fuzzy.score(a, b, scorer: scorer, score: :similarity) === want, "#{scorer}"
    end
  end

  test "levenshtein with weights, jaro_winkler with a prefix weight" do
    for {a, b} <- pairs(:byte), w <- [{1, 1, 2}, {2, 3, 1}, {0, 1, 5}, {7, 7, 7}] do
      want =
        Ref.kind_of(Ref.reference(:levenshtein, a, b, :byte, weights: w), :normalized_distance)

      assert Fuzzy.score(a, b, scorer: :levenshtein, weights: w, score: :normalized_distance) ===
               want
    end

    for {a, b} <- pairs(:byte), p <- [0.0, 0.25] do
      want = Ref.kind_of(Ref.reference(:jaro_winkler, a, b, :byte, prefix_weight: p), :similarity)

      assert Fuzzy.score(a, b, scorer: :jaro_winkler, prefix_weight: p, score: :similarity) ===
               want
    end
  end

  test "every mode, tiny slices: the same scores" do
    a = word(70, ~c"ab c")
    b = word(90, ~c"ab c")

    for scorer <- Call.scorers() do
      want = Fuzzy.score(a, b, scorer: scorer)

      for mode <- Runtime.modes() do
        assert Fuzzy.score(a, b, scorer: scorer, schedule: mode, tiny_slices: true) === want,
               "#{scorer} #{mode}"
      end
    end
  end

  test "hamming on bytes of 0x80 and up: bytes in byte mode, symbols in codepoint mode" do
    # byte mode compares the bytes themselves (no symbols decoded), in the
    # call (up to 64 bytes) and in a job of tiny slices (the bytes read
    # where the binaries are at each step); codepoint mode counts a
    # multibyte symbol once
    texts = fn n -> uword(n, [?a, ?é, 0x4E2D, ?b, 0xFF]) end

    pairs =
      [{"caf\u00e9", "cafe"}, {"\u4E2Da", "a\u4E2D"}, {<<0x80, 0xFF>>, <<0x81, 0xFF>>}] ++
        for n <- [1, 7, 16, 33, 64, 200], do: {texts.(n), texts.(n)}

    for {a, b} <- pairs,
        unit <- [:byte, :codepoint],
        unit == :byte or (String.valid?(a) and String.valid?(b)),
        kind <- [:distance, :normalized_similarity] do
      want = Ref.kind_of(Ref.reference(:hamming, a, b, unit), kind)

      for mode <- [:normal | Runtime.modes()] |> Enum.uniq() do
        got =
          Fuzzy.score(a, b,
            scorer: :hamming,
            unit: unit,
            score: kind,
            schedule: mode,
            tiny_slices: true
          )

        assert got === want,
               "hamming #{unit} #{kind} #{mode} of #{inspect(a)} and #{inspect(b)}: " <>
                 "#{inspect(got)}, expected #{inspect(want)}"
      end
    end

    assert Fuzzy.score("caf\u00e9", "cafe", scorer: :hamming, score: :distance) == 2

    assert Fuzzy.score("caf\u00e9", "cafe", scorer: :hamming, score: :distance, unit: :codepoint) ==
             1
  end

  test "a short pair scored in the call gives the job's answer, errors included" do
    pairs =
      for n <- [0, 1, 5, 20, 64], m <- [0, 3, 40, 64], do: {word(n, ~c"ab c"), word(m, ~c"abc ")}

    invalid = [{"ab\xFF", "abc"}, {"abc", "a\xC3"}]

    for {a, b} <- pairs ++ invalid, scorer <- Call.scorers(), unit <- [:byte, :codepoint] do
      call = Call.options!("test", [scorer: scorer, score: :similarity], [:scorer, :score])
      options = Call.native(call)
      short = Native.fuzzy_score_short(a, b, unit, options)

      want =
        WellBehaved.Job.checked(
          &Native.fuzzy_score/7,
          [a, b, unit, options],
          :normal,
          false,
          :infinity,
          "test"
        )

      if (String.valid?(a) and String.valid?(b)) or unit == :byte do
        # answered in the call as the job answers, or (more work than the
        # call takes) the job's; the shortest always in the call
        assert short === want or (short == :long and byte_size(a) + byte_size(b) > 10),
               "#{scorer} #{unit} #{inspect({a, b})}: #{inspect(short)} vs #{inspect(want)}"
      else
        # not UTF-8: the job answers, with the argument it names
        assert short == :long and match?({:error, {:invalid_utf8, _}}, want),
               "#{scorer} #{inspect({a, b})}: #{inspect(short)}, the job #{inspect(want)}"
      end
    end

    # longer than 64 bytes a side: the job's
    long = word(65, ~c"ab")
    assert Native.fuzzy_score_short(long, "ab", :byte, Call.native(%Call{})) == :long
  end

  test "a cutoff passes a score at the boundary and not beyond it" do
    for {a, b} <- pairs(:byte),
        scorer <- Call.scorers(),
        ref = Ref.reference(scorer, a, b, :byte),
        kind <- @kinds do
      score = Ref.kind_of(ref, kind)
      opts = [scorer: scorer, score: kind]
      distance? = kind in [:distance, :normalized_distance]
      top = if elem(ref, 0) == :percent and kind in [:distance, :similarity], do: 100, else: 1

      # exactly at the score: it passes
      cutoff_ok = if is_integer(score) or score in [0, 1, 100], do: score, else: score

      if cutoff_ok <= top or is_integer(score) do
        assert Fuzzy.score(a, b, [score_cutoff: cutoff_ok] ++ opts) === score,
               "#{scorer} #{kind} #{inspect(a)} #{inspect(b)} at #{cutoff_ok}"
      end

      # just beyond: the worst score of the kind
      beyond =
        cond do
          is_integer(score) and distance? -> if score > 0, do: score - 1
          is_integer(score) -> score + 1
          distance? and score > 0 -> score * (1 - 1.0e-12)
          not distance? and score < top -> min(score * (1 + 1.0e-12) + 1.0e-12, top)
          true -> nil
        end

      if beyond != nil do
        got = Fuzzy.score(a, b, [score_cutoff: beyond] ++ opts)

        # rapidfuzz's: the cutoff + 1 for an integer distance, else the
        # worst of the kind
        worst =
          case {ref, kind} do
            {{:edit, _, _}, :distance} -> beyond + 1
            {{:edit, _, _}, :similarity} -> 0
            {{:percent, _}, :distance} -> 100.0
            {_, k} when k in [:distance, :normalized_distance] -> 1.0
            _ -> 0.0
          end

        assert got === worst,
               "#{scorer} #{kind} #{inspect(a)} #{inspect(b)} beyond #{beyond}: #{inspect(got)}"
      end
    end
  end

  test "edit distances stop early under a cutoff with the same verdicts" do
    a = word(200, ~c"ab")
    b = word(180, ~c"ab")

    for scorer <- @edit, k <- [0, 5, 40, 1000] do
      {:edit, d, _max} = Ref.reference(scorer, a, b, :byte)
      got = Fuzzy.score(a, b, scorer: scorer, score: :distance, score_cutoff: k)
      assert got == if(d <= k, do: d, else: k + 1), "#{scorer} k=#{k}"
    end
  end
end
