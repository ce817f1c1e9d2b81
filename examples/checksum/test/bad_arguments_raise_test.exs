defmodule Checksum.BadArgumentsRaiseTest do
  # A bad argument raises an ArgumentError that names Checksum.adler32/2,
  # the argument or option, and what is accepted.
  use ExUnit.Case, async: true

  test "data that is not a binary" do
    for data <- [123, nil, ~c"abc", ["a", "b"], <<1::3>>] do
      message = "Checksum.adler32/2: invalid data #{inspect(data)}, expected a binary"
      assert_raise ArgumentError, message, fn -> Checksum.adler32(data) end
      assert_raise ArgumentError, message, fn -> Checksum.adler32(data, schedule: :threaded) end
    end
  end

  test "bad options" do
    assert_raise ArgumentError, ~r/^Checksum.adler32\/2: invalid :schedule :fast, expected/, fn ->
      Checksum.adler32("abc", schedule: :fast)
    end

    assert_raise ArgumentError,
                 "Checksum.adler32/2: invalid :tiny_slices 1, expected true or false",
                 fn -> Checksum.adler32("abc", tiny_slices: 1) end

    assert_raise ArgumentError, ~r/^Checksum.adler32\/2: unknown option :unit/, fn ->
      Checksum.adler32("abc", unit: :byte)
    end

    assert_raise ArgumentError, ~r/^Checksum.adler32\/2: expected a keyword list/, fn ->
      Checksum.adler32("abc", %{schedule: :normal})
    end

    assert_raise ArgumentError, ~r/^Checksum.adler32\/2: invalid option :schedule/, fn ->
      Checksum.adler32("abc", [:schedule])
    end
  end
end
