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

  test "the Rust Spin gives the C Spin's checksum in every mode" do
    for n <- [0, 1, 1000, 3_000_000] do
      want = Spin.run(n, schedule: :normal)

      for mode <- @modes, tiny <- [false, true], tiny == false or n <= 1000 do
        assert Spin.run_rust(n, schedule: mode, tiny_slices: tiny) == want, "#{mode} #{tiny} #{n}"
      end
    end

    # an independent reference: the xorshift64 rounds in Elixir
    mask = 0xFFFF_FFFF_FFFF_FFFF

    want =
      Enum.reduce(1..1000, 0x9E37_79B9_7F4A_7C15, fn _, x ->
        x = Bitwise.bxor(x, Bitwise.band(Bitwise.bsl(x, 13), mask))
        x = Bitwise.bxor(x, Bitwise.bsr(x, 7))
        Bitwise.bxor(x, Bitwise.band(Bitwise.bsl(x, 17), mask))
      end)

    assert Spin.run_rust(1000) == want
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

    for bad <- [-1, 1.0, "10", 0x1_0000_0000_0000_0000] do
      assert_raise ArgumentError, ~r/Spin.run_rust\/2: invalid iterations .* non-negative/, fn ->
        Spin.run_rust(bad)
      end
    end

    assert_raise ArgumentError, ~r/Spin.run_rust\/2: unknown option :unit/, fn ->
      Spin.run_rust(10, unit: :byte)
    end

    assert_raise ArgumentError, ~r/Spin.run\/2: unknown option :unit/, fn ->
      Spin.run(10, unit: :byte)
    end

    assert_raise ArgumentError, ~r/invalid :schedule/, fn -> Spin.until(10, schedule: nil) end
  end

  test "Spin runs in the lab's own runtime, apart from the library's" do
    assert %{spin: _, spin_until: _} = Runtime.stats(WellBehaved.Lab.Native).ps_per_unit
    refute Map.has_key?(Runtime.stats().ps_per_unit, :spin)
    # the Rust Spin, in a runtime of its own, on the same settings
    assert %{rust_spin: _} = Runtime.stats(WellBehaved.Lab.RustNative).ps_per_unit
    refute Map.has_key?(Runtime.stats(WellBehaved.Lab.Native).ps_per_unit, :rust_spin)
  end

  test "configure_runtimes/1 sets the C and the Rust Spin's runtimes alike" do
    alias WellBehaved.Lab.Suite

    try do
      :ok = Suite.configure_runtimes(slice_us: 37)

      for native <- [WellBehaved.Lab.Native, WellBehaved.Lab.RustNative] do
        assert Runtime.stats(native).slice_us == 37
      end
    after
      Suite.configure_runtimes(slice_us: :calibrated)
    end

    assert Runtime.stats(WellBehaved.Lab.RustNative).slice_ns ==
             Runtime.stats(WellBehaved.Lab.Native).slice_ns
  end
end
