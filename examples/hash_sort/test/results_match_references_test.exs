defmodule HashSort.ResultsMatchReferencesTest do
  # Both Rust jobs give the reference's answer (:crypto's SHA-256, Erlang's
  # sort) in every in-VM mode and in :external, with one unit per slice
  # too, on sizes around the block and run boundaries and on sub-binaries
  # at odd offsets.
  use ExUnit.Case, async: false

  alias WellBehaved.{Runtime, Testing}

  doctest HashSort

  @modes Runtime.modes() ++ [:external]

  defp sorted(data) do
    for x <- Enum.sort(for <<x::32 <- data>>, do: x), into: <<>>, do: <<x::32>>
  end

  test "SHA-256 as :crypto's in every mode, sizes around a block" do
    for size <- [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000, 100_003] do
      data = :crypto.strong_rand_bytes(size)
      want = :crypto.hash(:sha256, data)
      Testing.modes_agree(fn opts -> HashSort.sha256(data, opts) end, want, HashSort.Native)
    end
  end

  test "SHA-256 of sub-binaries at odd offsets and of a large binary" do
    big = :crypto.strong_rand_bytes(5_000_001)

    for offset <- [1, 3, 7], size <- [0, 64, 1001] do
      part = binary_part(big, offset, size)

      for mode <- @modes,
          do: assert(HashSort.sha256(part, schedule: mode) == :crypto.hash(:sha256, part))
    end

    for mode <- @modes,
        do: assert(HashSort.sha256(big, schedule: mode) == :crypto.hash(:sha256, big))
  end

  test "the sort as Erlang's in every mode, sizes around the merge passes" do
    for n <- [0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 33, 1000] do
      data = :crypto.strong_rand_bytes(4 * n)

      Testing.modes_agree(
        fn opts -> HashSort.sort_u32(data, opts) end,
        sorted(data),
        HashSort.Native
      )
    end

    # duplicates, already sorted, reversed
    few = for _ <- 1..5000, into: <<>>, do: <<:rand.uniform(4)::32>>
    up = for x <- 1..5000, into: <<>>, do: <<x::32>>
    down = for x <- 5000..1//-1, into: <<>>, do: <<x::32>>
    extremes = <<0xFFFF_FFFF::32, 0::32, 0x8000_0000::32, 0x7FFF_FFFF::32>>

    for data <- [few, up, down, extremes] do
      want = sorted(data)
      for mode <- @modes, do: assert(HashSort.sort_u32(data, schedule: mode) == want)
    end
  end

  test "the sort of a sub-binary at an odd offset and of a million integers" do
    big = :crypto.strong_rand_bytes(4_000_001)
    part = binary_part(big, 1, 4_000_000)

    want = sorted(part)
    for mode <- @modes, do: assert(HashSort.sort_u32(part, schedule: mode) == want)
  end
end
