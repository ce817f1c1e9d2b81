defmodule WellBehaved.Lab.SpinTest do
  # Spin, the lab's fixed work: every mode and the forced one-unit slices
  # give the checksum of :normal, until/2 waits its deadline, and bad
  # arguments name the problem.
  use ExUnit.Case, async: true

  alias WellBehaved.Runtime
  alias WellBehaved.Lab.Spin

  doctest WellBehaved.Lab.Spin

  @modes Runtime.modes()

  test "Spin: every mode, with and without tiny slices, gives the same checksum" do
    for n <- [0, 1, 1000, 3_000_000] do
      want = Spin.run(n, schedule: :normal)

      for mode <- @modes, tiny <- [false, true], tiny == false or n <= 1000 do
        assert Spin.run(n, schedule: mode, tiny_slices: tiny) == want, "#{mode} #{tiny} #{n}"
      end
    end
  end

  test "Spin.until waits at least its deadline in every mode" do
    for mode <- @modes do
      start = System.monotonic_time(:microsecond)
      polls = Spin.until(2000, schedule: mode)
      assert System.monotonic_time(:microsecond) - start >= 2000
      assert polls >= 1
    end
  end

  test "Spin rejects bad counts and options" do
    for bad <- [-1, 1.0, "10", 0x1_0000_0000_0000_0000] do
      assert_raise ArgumentError, ~r/Spin.run\/2: invalid iterations .* non-negative/, fn ->
        Spin.run(bad)
      end

      assert_raise ArgumentError, ~r/Spin.until\/2: invalid microseconds .* non-negative/, fn ->
        Spin.until(bad)
      end
    end

    assert_raise ArgumentError, ~r/Spin.run\/2: unknown option :unit/, fn ->
      Spin.run(10, unit: :byte)
    end

    assert_raise ArgumentError, ~r/invalid :schedule/, fn -> Spin.until(10, schedule: nil) end
  end

  test "Spin runs in the lab's own runtime, apart from the library's" do
    assert %{spin: _, spin_until: _} = Runtime.stats(WellBehaved.Lab.Native).ps_per_unit
    refute Map.has_key?(Runtime.stats().ps_per_unit, :spin)
  end
end
