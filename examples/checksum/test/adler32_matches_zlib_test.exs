defmodule Checksum.Adler32MatchesZlibTest do
  # Checksum.adler32/2 gives what :erlang.adler32/1 (zlib) gives, for every
  # size around the sums' reduction interval (5552 bytes) and up to 10 MB,
  # in every scheduling mode, with and without one byte per slice.
  use ExUnit.Case, async: true

  alias WellBehaved.Runtime
  import WellBehaved.Testing, only: [modes_agree: 2]

  doctest Checksum

  @sizes [0, 1, 2, 5551, 5552, 5553, 65_536, 1_000_000, 10_000_000]
  # one byte per slice: small inputs only
  @tiny_sizes [0, 1, 2, 1000, 5553]

  test "random binaries, every mode" do
    for size <- @sizes do
      data = :crypto.strong_rand_bytes(size)
      expected = :erlang.adler32(data)

      for mode <- Runtime.modes() do
        assert Checksum.adler32(data, schedule: mode) == expected, "#{size} bytes, #{mode}"
      end
    end
  end

  test "random binaries, every mode, one byte per slice" do
    for size <- @tiny_sizes do
      data = :crypto.strong_rand_bytes(size)
      modes_agree(fn opts -> Checksum.adler32(data, opts) end, :erlang.adler32(data))
    end
  end

  test "bytes of 255, the largest sums between reductions" do
    for size <- [5552, 5553, 3 * 5552 + 1, 1_000_000], mode <- Runtime.modes() do
      data = :binary.copy(<<255>>, size)
      assert Checksum.adler32(data, schedule: mode) == :erlang.adler32(data), "#{size} #{mode}"
    end
  end

  test "sub-binaries at odd offsets" do
    whole = :crypto.strong_rand_bytes(2_000_003)

    for offset <- [1, 3, 7], mode <- Runtime.modes() do
      part = binary_part(whole, offset, byte_size(whole) - offset - 1)
      assert Checksum.adler32(part, schedule: mode) == :erlang.adler32(part), "#{offset} #{mode}"
    end
  end

  test "the default options, and concurrent callers" do
    inputs = for size <- [10, 100_000, 3_000_000], do: :crypto.strong_rand_bytes(size)

    for data <- inputs, do: assert(Checksum.adler32(data) == :erlang.adler32(data))

    inputs
    |> Enum.flat_map(fn data -> for mode <- Runtime.modes(), do: {data, mode} end)
    |> Task.async_stream(fn {data, mode} ->
      Checksum.adler32(data, schedule: mode) == :erlang.adler32(data)
    end)
    |> Enum.each(fn result -> assert result == {:ok, true} end)
  end
end
