defmodule Checksum.OwnRuntimeTest do
  # Checksum's NIF library carries a runtime of its own, separate from the
  # one of WellBehaved's library: its job types, costs and settings.
  use ExUnit.Case, async: false

  alias WellBehaved.Runtime

  test "stats show the adler32 job type in Checksum's runtime only" do
    Checksum.adler32(:crypto.strong_rand_bytes(1_000_000))

    ours = Runtime.stats(Checksum.Native)
    assert %{adler32: ps} = ours.ps_per_unit
    assert is_integer(ps) and ps > 0, inspect(ps)
    refute Map.has_key?(ours.ps_per_unit, :levenshtein)

    library = Runtime.stats()
    assert Map.has_key?(library.ps_per_unit, :levenshtein)
    refute Map.has_key?(library.ps_per_unit, :adler32)
  end

  test "configuring Checksum's runtime leaves the library's alone" do
    ours = Runtime.stats(Checksum.Native).slice_us
    library = Runtime.stats().slice_us

    try do
      :ok = Runtime.configure(Checksum.Native, slice_us: ours + 17)
      assert Runtime.stats(Checksum.Native).slice_us == ours + 17
      assert Runtime.stats().slice_us == library
      assert Checksum.adler32("Wikipedia", schedule: :yielding) == 300_286_872
    after
      :ok = Runtime.configure(Checksum.Native, slice_us: ours)
    end
  end
end
