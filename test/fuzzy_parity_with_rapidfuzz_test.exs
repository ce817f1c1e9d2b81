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
end
