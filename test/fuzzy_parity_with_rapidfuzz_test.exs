defmodule WellBehaved.FuzzyParityWithRapidfuzzTest do
  # Issue 44, item 4: cases where the scores differed from rapidfuzz-cpp.
  # The wanted values are what rapidfuzz-cpp's own headers (rapidfuzz/,
  # after its change of WRatio's length rule to `len_ratio <= 8.0`)
  # answer for the same pairs, from a program built against them.
  use ExUnit.Case, async: true

  alias WellBehaved.Fuzzy

  @modes [:normal, :yielding, :auto]

  defp score(a, b, scorer, mode),
    do: Fuzzy.score(a, b, scorer: scorer, score: :similarity, schedule: mode)

  test "WRatio scales partial scores by 0.9 at a length ratio of exactly 8" do
    for mode <- @modes do
      # ratio 22.2, partial 100 scaled by 0.9 (0.6 past 8)
      assert score("a", "abcdefgh", :wratio, mode) == 90.0
      assert score("a", "abcdefghi", :wratio, mode) == 60.0
      assert score("ab", "abcdefghijklmnop", :wratio, mode) == 90.0
    end
  end

  test "bytes 0x1C to 0x1F separate words, as Python's str.isspace says" do
    for sep <- 0x1C..0x1F, mode <- @modes, unit <- [:byte, :codepoint] do
      a = <<?a, sep, ?b>>
      opts = [score: :similarity, schedule: mode, unit: unit]

      for scorer <- [:token_sort_ratio, :token_set_ratio, :token_ratio, :partial_token_ratio] do
        assert Fuzzy.score(a, "b a", [{:scorer, scorer} | opts]) == 100.0,
               "#{scorer} #{inspect(a)} #{mode} #{unit}"
      end

      # the plain ratio compares the bytes themselves
      assert_in_delta Fuzzy.score(a, "a b", [{:scorer, :ratio} | opts]), 200 / 3, 1.0e-9
    end
  end

  test "an index splits its candidates' words on the same separators" do
    index = Fuzzy.Index.new(["b\x1Fa", "c d"])

    assert [{"b\x1Fa", 100.0, _} | _] =
             Fuzzy.extract("a b", index, scorer: :token_sort_ratio, score: :similarity, limit: 1)
  end

  # rapidfuzz-cpp's answers for whitespace-only texts (and one word with a
  # space), both orders, scorers in @ratio_scorers' order
  @ratio_scorers [
    :ratio,
    :partial_ratio,
    :token_sort_ratio,
    :token_set_ratio,
    :token_ratio,
    :partial_token_sort_ratio,
    :partial_token_set_ratio,
    :partial_token_ratio,
    :wratio,
    :qratio
  ]
  @whitespace_cases [
    {"", "", [100.0, 100.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 0.0, 0.0]},
    {"", " ", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 0.0, 0.0]},
    {"", "  ", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 0.0, 0.0]},
    {"", "\f", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 0.0, 0.0]},
    {"", "\x1C", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 0.0, 0.0]},
    {"", " a", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {"", "a ", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {" ", "", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 0.0, 0.0]},
    {" ", " ", [100.0, 100.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 100.0, 100.0]},
    {" ", "  ",
     [66.666666666666671, 100.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 90.0, 66.666666666666671]},
    {" ", "\f", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 95.0, 0.0]},
    {" ", "\x1C", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 95.0, 0.0]},
    {" ", " a",
     [66.666666666666671, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 90.0, 66.666666666666671]},
    {" ", "a ",
     [66.666666666666671, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 90.0, 66.666666666666671]},
    {"  ", "", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 0.0, 0.0]},
    {"  ", " ",
     [66.666666666666671, 100.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 90.0, 66.666666666666671]},
    {"  ", "  ", [100.0, 100.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 100.0, 100.0]},
    {"  ", "\f", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 85.5, 0.0]},
    {"  ", "\x1C", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 85.5, 0.0]},
    {"  ", " a", [50.0, 66.666666666666671, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 50.0, 50.0]},
    {"  ", "a ", [50.0, 66.666666666666671, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 50.0, 50.0]},
    {"\f", "", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 0.0, 0.0]},
    {"\f", " ", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 95.0, 0.0]},
    {"\f", "  ", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 85.5, 0.0]},
    {"\f", "\f", [100.0, 100.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 100.0, 100.0]},
    {"\f", "\x1C", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 95.0, 0.0]},
    {"\f", " a", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {"\f", "a ", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {"\x1C", "", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 0.0, 0.0]},
    {"\x1C", " ", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 95.0, 0.0]},
    {"\x1C", "  ", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 85.5, 0.0]},
    {"\x1C", "\f", [0.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 95.0, 0.0]},
    {"\x1C", "\x1C", [100.0, 100.0, 100.0, 0.0, 100.0, 100.0, 0.0, 100.0, 100.0, 100.0]},
    {"\x1C", " a", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {"\x1C", "a ", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {" a", "", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {" a", " ",
     [66.666666666666671, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 90.0, 66.666666666666671]},
    {" a", "  ", [50.0, 66.666666666666671, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 50.0, 50.0]},
    {" a", "\f", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {" a", "\x1C", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {" a", " a", [100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]},
    {" a", "a ",
     [50.0, 66.666666666666671, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 95.0, 50.0]},
    {"a ", "", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {"a ", " ",
     [66.666666666666671, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 90.0, 66.666666666666671]},
    {"a ", "  ", [50.0, 66.666666666666671, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 50.0, 50.0]},
    {"a ", "\f", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {"a ", "\x1C", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
    {"a ", " a",
     [50.0, 66.666666666666671, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 95.0, 50.0]},
    {"a ", "a ", [100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]}
  ]

  test "whitespace-only texts score as in rapidfuzz, in both kinds" do
    assert Fuzzy.score("  ", "\f", scorer: :wratio, score: :similarity) == 85.5
    assert Fuzzy.score(" ", "\t", scorer: :partial_token_ratio, score: :similarity) == 100.0

    for {a, b, wants} <- @whitespace_cases,
        {scorer, want} <- Enum.zip(@ratio_scorers, wants),
        mode <- @modes,
        unit <- [:byte, :codepoint] do
      opts = [scorer: scorer, schedule: mode, unit: unit]
      similarity = Fuzzy.score(a, b, [{:score, :similarity} | opts])
      distance = Fuzzy.score(a, b, [{:score, :distance} | opts])
      label = "#{scorer} #{inspect(a)} #{inspect(b)} #{mode} #{unit}"

      assert_in_delta similarity, want, 1.0e-9, "#{label}: #{similarity}, rapidfuzz #{want}"

      assert_in_delta distance,
                      100.0 - want,
                      1.0e-9,
                      "#{label}: distance #{distance}, rapidfuzz #{100.0 - want}"
    end
  end
end
