defmodule WellBehaved.SlicesFollowTheErlangTurnTest do
  # The runtime's default slice comes from how long this VM's Erlang code
  # holds a scheduler per turn, so a :yielding job switches at Erlang's
  # pace on a fast machine and a slow one alike.
  use ExUnit.Case, async: false

  alias WellBehaved.{Levenshtein, Probe, Runtime}
  alias WellBehaved.Runtime.Calibration
  import WellBehaved.Test.RuntimeHelpers

  describe "the slice derived from timings" do
    test "a host whose Erlang code runs 4000 reductions in 15 us gets 14.25 us slices" do
      # 1000 iterations of one reduction each in 3750 ns, with outliers
      runs = List.duplicate(3750, 50) ++ List.duplicate(3700, 20) ++ [90_000, 1_000_000, 5]
      c = Calibration.derive(runs, 1000, 1.0)
      assert c.turn_ns == 15_000
      assert c.slice_ns == 14_250
      assert c.runs == length(runs)
    end

    test "a fast host gets short slices, down to the 5 us floor" do
      assert Calibration.derive([1500], 1000, 1.0).slice_ns == 5700
      fast = Calibration.derive([1000, 1000, 1001], 1000, 1.0)
      assert {fast.turn_ns, fast.slice_ns} == {4000, 5000}
    end

    test "a slow host gets long slices, up to 1 ms" do
      slow = Calibration.derive([20_000, 20_000, 20_000], 1000, 1.0)
      assert {slow.turn_ns, slow.slice_ns} == {80_000, 76_000}
      assert Calibration.derive([400_000], 1000, 1.0).slice_ns == 1_000_000
    end

    test "the reductions of an iteration count: two per iteration is half the time each" do
      assert Calibration.derive([7500], 1000, 2.0).turn_ns == 15_000
    end

    test "what the library passes to the runtime" do
      info = Calibration.load_info()
      c = Calibration.erlang_turn()
      assert info == %{slice_ns: c.slice_ns, erlang_turn_ns: c.turn_ns}
      assert WellBehaved.SDK.load_info() == info
      assert c.reductions_per_iteration > 0.9 and c.reductions_per_iteration < 1.1
    end
  end

  describe "on this machine (traced turns, a bound on the mechanism, not on wall time)" do
    setup do
      on_exit(fn -> Runtime.configure(slice_us: :calibrated) end)
      :ok = Runtime.configure(slice_us: :calibrated)
    end

    test "the default slice is within 0.7-1.3x the traced turn of pure Erlang workers" do
      erlang = Probe.turns(fn -> Probe.erlang_work(100_000) end, control: false).function
      assert erlang.turns > 100
      ratio = Runtime.stats().slice_ns / 1000 / erlang.p50_us
      assert ratio >= 0.7 and ratio <= 1.3, "slice / Erlang turn p50: #{ratio}"
    end

    test "a :yielding job's turns are about as long as pure Erlang's beside it" do
      a = random_bytes(10_000)
      b = random_bytes(10_000)
      r = Probe.turns(fn -> Levenshtein.distance(a, b, schedule: :yielding) end)
      assert r.function.turns > 100 and r.control.turns > 100
      assert r.p50_ratio >= 0.5 and r.p50_ratio <= 1.5, inspect(r)
    end
  end
end
