defmodule WellBehaved.BadArgumentsTest do
  use ExUnit.Case, async: true

  alias WellBehaved.{Levenshtein, Runtime, Spin}

  test "Levenshtein rejects non-binaries" do
    assert_raise ArgumentError, ~r/binary as first argument, got: :a/, fn ->
      Levenshtein.distance(:a, "b")
    end

    assert_raise ArgumentError, ~r/binary as second argument, got: ~c"b"|'b'/, fn ->
      Levenshtein.distance("a", ~c"b")
    end

    assert_raise ArgumentError, ~r/binary as first argument/, fn ->
      Levenshtein.distance(<<1::3>>, "b", schedule: :normal)
    end
  end

  test "Levenshtein rejects invalid UTF-8 in codepoint mode, in every mode" do
    for mode <- Runtime.modes() do
      assert_raise ArgumentError, ~r/first argument is not valid UTF-8/, fn ->
        Levenshtein.distance(<<0xC3>>, "x", unit: :codepoint, schedule: mode)
      end

      assert_raise ArgumentError, ~r/second argument is not valid UTF-8/, fn ->
        Levenshtein.distance("x", <<0xED, 0xA0, 0x80>>, unit: :codepoint, schedule: mode)
      end
    end

    # bytes mode takes any bytes
    assert Levenshtein.distance(<<0xC3>>, "x") == 1
  end

  test "Levenshtein rejects unknown options and values" do
    assert_raise ArgumentError, ~r/unknown option :foo/, fn ->
      Levenshtein.distance("a", "b", foo: 1)
    end

    assert_raise ArgumentError, ~r/invalid :unit :grapheme/, fn ->
      Levenshtein.distance("a", "b", unit: :grapheme)
    end

    for k <- [-1, 1.5, :infinity] do
      assert_raise ArgumentError, ~r/invalid :max_distance/, fn ->
        Levenshtein.distance("a", "b", max_distance: k)
      end
    end

    assert_raise ArgumentError, ~r/invalid :schedule :fast/, fn ->
      Levenshtein.distance("a", "b", schedule: :fast)
    end

    assert_raise ArgumentError, ~r/invalid :tiny_slices 1/, fn ->
      Levenshtein.distance("a", "b", tiny_slices: 1)
    end

    assert_raise ArgumentError, ~r/keyword list/, fn ->
      Levenshtein.distance("a", "b", %{schedule: :normal})
    end

    assert_raise ArgumentError, ~r/keyword list/, fn ->
      Levenshtein.distance("a", "b", [:normal])
    end
  end

  test "Spin rejects bad counts and options" do
    for bad <- [-1, 1.0, "10", 0x1_0000_0000_0000_0000] do
      assert_raise ArgumentError, ~r/non-negative/, fn -> Spin.run(bad) end
      assert_raise ArgumentError, ~r/non-negative/, fn -> Spin.until(bad) end
    end

    assert_raise ArgumentError, ~r/unknown option :unit/, fn -> Spin.run(10, unit: :byte) end
    assert_raise ArgumentError, ~r/invalid :schedule/, fn -> Spin.until(10, schedule: nil) end
  end

  test "Runtime.configure rejects bad settings" do
    assert_raise ArgumentError, ~r/normal_max_us must be an integer/, fn ->
      Runtime.configure(normal_max_us: -5)
    end

    assert_raise ArgumentError, ~r/unknown option :speed/, fn -> Runtime.configure(speed: 1) end

    assert_raise ArgumentError, ~r/must not exceed/, fn ->
      Runtime.configure(normal_max_us: 10, yielding_max_us: 5)
    end
  end
end
