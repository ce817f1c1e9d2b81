defmodule WellBehaved.FuzzyScoreDecodesInStepsTest do
  # Fuzzy.score/3 decodes its binaries in the job's steps, a budget at a
  # time, not in its init: invalid UTF-8 found there, in either argument,
  # at its start or far into it, still raises as it did when init found
  # it, in every mode with tiny slices; and the scores of long token
  # inputs (their token work split over many steps) are those of the
  # reference in every mode.
  use ExUnit.Case, async: true

  alias WellBehaved.{Fuzzy, Runtime}
  alias WellBehaved.Test.FuzzyReference, as: Ref

  @token_scorers [
    :token_sort_ratio,
    :token_set_ratio,
    :token_ratio,
    :partial_token_sort_ratio,
    :partial_token_set_ratio,
    :partial_token_ratio,
    :wratio
  ]

  # valid UTF-8 words (2-byte and 3-byte sequences, Unicode spaces), long
  # enough that decoding takes many tiny slices
  @long String.duplicate("ab é 中 \u3000", 2_000)

  # {a, b, which}: which argument holds the invalid UTF-8
  defp invalid_pairs(long \\ @long) do
    [
      {<<0xC3>>, "x", 1},
      {"x", <<0xED, 0xA0, 0x80>>, 2},
      {long <> <<0xFF>>, "abc", 1},
      {"abc", long <> <<0xE3, 0x80>>, 2},
      {long <> <<0xC0, 0x80>>, long, 1},
      {long, <<0xF4, 0x90, 0x80, 0x80>> <> long, 2}
    ]
  end

  for scorer <- [:levenshtein, :osa, :jaro_winkler, :ratio, :partial_ratio | @token_scorers] do
    test "#{scorer}: invalid UTF-8 in either argument raises, in every mode with tiny slices" do
      scorer = unquote(scorer)

      for {a, b, which} <- invalid_pairs(), mode <- Runtime.modes() do
        arg = if which == 1, do: "first", else: "second"

        error =
          assert_raise ArgumentError, fn ->
            Fuzzy.score(a, b, scorer: scorer, unit: :codepoint, schedule: mode, tiny_slices: true)
          end

        assert error.message =~ "#{arg} argument is not valid UTF-8",
               "#{scorer} #{mode} (#{byte_size(a)} and #{byte_size(b)} bytes): " <>
                 "#{inspect(error.message)}, expected the #{arg} argument named"
      end
    end
  end

  test "the same binaries score as bytes, invalid UTF-8 or not" do
    # shorter long sides: two long sides in bytes are one Indel of their
    # whole texts, thousands of tiny slices in each mode
    long = String.duplicate("ab é 中 \u3000", 100)

    for {a, b, _} <- invalid_pairs(long), mode <- Runtime.modes() do
      got = Fuzzy.score(a, b, scorer: :token_sort_ratio, schedule: mode, tiny_slices: true)
      want = Fuzzy.score(a, b, scorer: :token_sort_ratio, schedule: :normal)
      assert got === want, "#{mode}: #{inspect(got)}, :normal #{inspect(want)}"
    end
  end

  test "long token inputs score as the reference in every mode with tiny slices" do
    words = ~w(ab é ba 中 abc cab b a)
    sentence = fn n -> Enum.map_join(1..n, " ", fn _ -> Enum.random(words) end) end
    a = sentence.(300)
    b = sentence.(250) <> "  \u3000 " <> sentence.(40)
    short = "é ab 中"

    for scorer <- @token_scorers,
        {x, y} <- [{a, b}, {short, b}, {a, short}],
        # the partial scores of two long sides are quadratic in the
        # reference: one side short
        x == short or y == short or scorer not in [:partial_token_sort_ratio] do
      want = Ref.kind_of(Ref.reference(scorer, x, y, :codepoint), :similarity)

      for mode <- Runtime.modes() do
        got =
          Fuzzy.score(x, y,
            scorer: scorer,
            score: :similarity,
            unit: :codepoint,
            schedule: mode,
            tiny_slices: true
          )

        assert got === want,
               "#{scorer} #{mode} (#{byte_size(x)} and #{byte_size(y)} bytes): " <>
                 "#{inspect(got)}, reference #{inspect(want)}"
      end
    end
  end
end
