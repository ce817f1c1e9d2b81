defmodule Checksum.Crc32ChunksMatchErlangTest do
  # Checksum.crc32_chunks/3, the C++ job, gives :erlang.crc32/1 of every
  # piece, for chunk sizes around the input's size and pieces that end
  # inside a slice, in every scheduling mode, with and without one byte per
  # slice; its decode's reason and its init's enomem reach the caller.
  use ExUnit.Case, async: true

  alias WellBehaved.{Job, Runtime}
  import Bitwise, only: [<<<: 2]
  import WellBehaved.Testing, only: [modes_agree: 2]

  # the reference: :erlang.crc32/1 of each piece
  defp crcs(data, chunk) do
    pieces =
      case data do
        <<>> ->
          []

        _ ->
          for i <- 0..div(byte_size(data) - 1, chunk),
              do: :binary.part(data, i * chunk, min(chunk, byte_size(data) - i * chunk))
      end

    for piece <- pieces, into: <<>>, do: <<:erlang.crc32(piece)::32>>
  end

  test "random binaries and chunk sizes, every mode" do
    for size <- [0, 1, 2, 1000, 65_537, 3_000_000],
        chunk <- [1, 7, 4096, size, size + 1, 1 <<< 40],
        chunk > 0,
        size <= 65_537 or chunk >= 4096 do
      data = :crypto.strong_rand_bytes(size)
      expected = crcs(data, chunk)

      for mode <- Runtime.modes() do
        assert Checksum.crc32_chunks(data, chunk, schedule: mode) == expected,
               "#{size} bytes, chunk #{chunk}, #{mode}"
      end
    end
  end

  test "one byte per slice: pieces end inside and at the ends of slices" do
    data = :crypto.strong_rand_bytes(1000)

    for chunk <- [1, 3, 64, 999, 1000] do
      modes_agree(fn opts -> Checksum.crc32_chunks(data, chunk, opts) end, crcs(data, chunk))
    end
  end

  test "the answer is the job's own binary, not a copy" do
    data = :binary.copy(<<1, 2, 3>>, 4_000_000)
    answer = Checksum.crc32_chunks(data, 1, schedule: :yielding)
    assert byte_size(answer) == 48_000_000
    assert :binary.referenced_byte_size(answer) == 48_000_000
    assert binary_part(answer, 0, 12) == crcs(<<1, 2, 3>>, 1)
  end

  test "a zero chunk size reaches the job NIF's decode, which says why it refuses" do
    for mode <- Runtime.modes() do
      assert Job.call(&Checksum.Native.crc32_chunks/5, ["abc", 0], schedule: mode) ==
               {:error, :zero_chunk_size}
    end
  end

  test "bad arguments raise, naming the argument" do
    assert_raise ArgumentError,
                 "Checksum.crc32_chunks/3: invalid data :x, expected a binary",
                 fn -> Checksum.crc32_chunks(:x, 4) end

    for chunk <- [0, -1, 1.5, nil, 1 <<< 64] do
      assert_raise ArgumentError,
                   "Checksum.crc32_chunks/3: invalid chunk_bytes #{inspect(chunk)}, " <>
                     "expected a positive integer below 2^64",
                   fn -> Checksum.crc32_chunks("abc", chunk) end
    end

    assert_raise ArgumentError, ~r/^Checksum.crc32_chunks\/3: invalid :schedule :fast/, fn ->
      Checksum.crc32_chunks("abc", 2, schedule: :fast)
    end
  end
end
