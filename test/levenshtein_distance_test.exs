defmodule WellBehaved.LevenshteinDistanceTest do
  # Exact distances against the textbook dynamic program (test/support).
  use ExUnit.Case, async: true

  alias WellBehaved.Levenshtein
  alias WellBehaved.Test.Reference
  import WellBehaved.Test.RuntimeHelpers

  doctest WellBehaved.Levenshtein

  test "fixed cases" do
    assert Levenshtein.distance("", "") == 0
    assert Levenshtein.distance("", "abc") == 3
    assert Levenshtein.distance("abc", "") == 3
    assert Levenshtein.distance("same", "same") == 0
    assert Levenshtein.distance("a", "b") == 1
    assert Levenshtein.distance("a", "a") == 0
    assert Levenshtein.distance("kitten", "sitting") == 3
    assert Levenshtein.distance("sitting", "kitten") == 3
    a = String.duplicate("a", 2048)
    b = String.duplicate("b", 2048)
    assert Levenshtein.distance(a, b) == 2048
  end

  test "lengths around the 64-unit word boundaries, on either side" do
    lengths = [0, 1, 63, 64, 65, 127, 128, 129]

    for la <- lengths, lb <- lengths, alphabet <- [2, 256] do
      a = random_bytes(la, alphabet)
      b = random_bytes(lb, alphabet)
      assert Levenshtein.distance(a, b) == Reference.bytes(a, b), "#{la} x #{lb}"
      assert Levenshtein.distance(b, a) == Reference.bytes(a, b), "#{lb} x #{la}"
    end
  end

  test "thousands of random pairs over small and full byte alphabets" do
    for i <- 1..3000 do
      alphabet = Enum.at([2, 4, 26, 256], rem(i, 4))
      a = random_bytes(:rand.uniform(90) - 1, alphabet)
      b = random_bytes(:rand.uniform(90) - 1, alphabet)
      assert Levenshtein.distance(a, b) == Reference.bytes(a, b), inspect({a, b})
    end
  end

  test "random pairs of a few hundred bytes, several blocks long" do
    for _ <- 1..40 do
      a = random_bytes(200 + :rand.uniform(300), 4)
      b = random_bytes(200 + :rand.uniform(300), 4)
      assert Levenshtein.distance(a, b) == Reference.bytes(a, b)
    end
  end

  test "inputs over 10k units with known distances" do
    zeros = :binary.copy(<<0>>, 10_000)
    ones = :binary.copy(<<1>>, 10_000)
    assert Levenshtein.distance(zeros, ones) == 10_000

    base = random_bytes(20_000)
    # three substitutions, an insertion and a deletion, far apart
    edited =
      base
      |> flip(100)
      |> flip(7_000)
      |> flip(19_000)
      |> insert(12_000, "x")
      |> delete(15_000)

    assert Levenshtein.distance(base, edited) == 5
    assert Levenshtein.distance(edited, base) == 5
    assert Levenshtein.distance(base, base <> random_bytes(1234)) == 1234
    assert Levenshtein.distance(base, binary_part(base, 5000, 15_000)) == 5000

    # a distinct alphabet per side: every position must change
    assert Levenshtein.distance(random_bytes(12_000, 2), :binary.copy(<<9>>, 11_000)) == 12_000
  end

  test "codepoint mode on multibyte text" do
    assert Levenshtein.distance("héllo", "hello", unit: :codepoint) == 1
    assert Levenshtein.distance("héllo", "hello", unit: :byte) == 2
    assert Levenshtein.distance("日本語", "日本", unit: :codepoint) == 1
    assert Levenshtein.distance("😀😃", "😃😀", unit: :codepoint) == 2
    pool = ~c"aé日😀\u{10FFFF}ßΩ"

    for _ <- 1..300 do
      a = for _ <- 1..:rand.uniform(150), into: "", do: <<Enum.random(pool)::utf8>>
      b = for _ <- 1..:rand.uniform(150), into: "", do: <<Enum.random(pool)::utf8>>
      assert Levenshtein.distance(a, b, unit: :codepoint) == Reference.codepoints(a, b)
    end

    # a pattern of thousands of distinct codepoints spans many blocks
    wide = for c <- 0x4E00..0x5E00, into: "", do: <<c::utf8>>
    shuffled = for c <- Enum.shuffle(0x4E00..0x5000), into: "", do: <<c::utf8>>
    assert Levenshtein.distance(wide, wide, unit: :codepoint) == 0

    assert Levenshtein.distance(binary_part(wide, 0, 300), shuffled, unit: :codepoint) ==
             Reference.codepoints(binary_part(wide, 0, 300), shuffled)
  end

  test "max_distance below, at and above the true distance" do
    for _ <- 1..300 do
      a = random_bytes(:rand.uniform(200), 4)
      b = random_bytes(:rand.uniform(200), 4)
      d = Reference.bytes(a, b)

      for k <- Enum.uniq([0, 1, max(d - 1, 0), d, d + 1, 2 * d + 5]) do
        want = if d > k, do: k + 1, else: d
        assert Levenshtein.distance(a, b, max_distance: k) == want, "d=#{d} k=#{k}"
      end
    end

    long = random_bytes(100_000)
    assert Levenshtein.distance(long, flip(long, 50_000), max_distance: 8) == 1
    assert Levenshtein.distance(long, random_bytes(100_000), max_distance: 8) == 9
    assert Levenshtein.distance(long, long <> "abc", max_distance: 2) == 3
    assert Levenshtein.distance("abc", "abd", max_distance: nil) == 1
  end

  defp flip(bin, at) do
    <<pre::binary-size(at), c, rest::binary>> = bin
    <<pre::binary, Bitwise.bxor(c, 0xFF), rest::binary>>
  end

  defp insert(bin, at, s) do
    <<pre::binary-size(at), rest::binary>> = bin
    pre <> s <> rest
  end

  defp delete(bin, at) do
    <<pre::binary-size(at), _, rest::binary>> = bin
    pre <> rest
  end
end
