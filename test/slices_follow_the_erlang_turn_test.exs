defmodule WellBehaved.SlicesFollowTheErlangTurnTest do
  # The runtime's default slice comes from how long this VM's Erlang code
  # holds a scheduler per turn, so a :yielding job switches at Erlang's
  # pace on a fast machine and a slow one alike.
  use ExUnit.Case, async: false

  alias WellBehaved.{Levenshtein, Probe, Runtime}
  alias WellBehaved.Runtime.Calibration
  alias WellBehaved.Test.SDKJobs
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

    test "the fastest batch's median is the cost: a machine slowed down for a while is seen past" do
      slowed = List.duplicate(5200, 25)
      quick = List.duplicate(3750, 20) ++ List.duplicate(90_000, 5)
      c = Calibration.derive([slowed, slowed, quick, slowed], 1000, 1.0)
      assert {c.turn_ns, c.batches, c.runs} == {15_000, 4, 100}
    end

    test "the reductions of an iteration count: two per iteration is half the time each" do
      assert Calibration.derive([7500], 1000, 2.0).turn_ns == 15_000
    end

    test "what the library passes to the runtime" do
      info = Calibration.load_info()
      c = Calibration.erlang_turn()
      assert info == %{slice_ns: c.slice_ns, erlang_turn_ns: c.turn_ns}
      assert WellBehaved.SDK.load_info() == info

      assert c.reductions_per_iteration > 0.9 and c.reductions_per_iteration < 1.1,
             "#{c.reductions_per_iteration} reductions an iteration"
    end
  end

  describe "a turn measured again" do
    setup do
      SDKJobs.ensure_loaded!()
      kept = Calibration.erlang_turn()

      on_exit(fn ->
        Calibration.replace(kept)
        Runtime.configure(slice_us: :calibrated)
        Runtime.configure(SDKJobs, slice_us: :calibrated)
      end)

      :ok = Runtime.configure(slice_us: :calibrated)
      :ok = Runtime.configure(SDKJobs, slice_us: :calibrated)
      %{kept: kept}
    end

    test "a shorter one replaces a turn measured on a slowed-down machine, in every runtime that follows it",
         %{kept: kept} do
      # as if the VM had started while the machine ran 20x slower (a turn
      # is 4000 reductions: 4 runs of 1000). Measured again now, the turn
      # must come out shorter: with 3x, a busy machine (load 12 on 2 cores,
      # with CPU-bound processes beside the VM) measured 3x its turn at
      # start, and the refined turn was the slowed one.
      slowed = Calibration.derive([List.duplicate(kept.turn_ns * 20 / 4, 5)], 1000, 1.0)
      Calibration.replace(slowed)
      assert Runtime.stats().slice_ns == slowed.slice_ns
      assert Runtime.stats(SDKJobs).slice_ns == slowed.slice_ns

      refined = Calibration.refine()
      assert refined.turn_ns < slowed.turn_ns
      assert Calibration.erlang_turn() == refined
      assert Runtime.stats().slice_ns == refined.slice_ns
      assert Runtime.stats().erlang_turn_ns == refined.turn_ns
      assert Runtime.stats(SDKJobs).slice_ns == refined.slice_ns
      assert Runtime.stats(SDKJobs).slice_source == :erlang_turn
    end

    test "a library whose NIF has not loaded yet is passed over", %{kept: kept} do
      # its stubs raise, as a module's do between its load and its on_load
      defmodule NotLoadedYet do
        def runtime_stats, do: :erlang.nif_error(:nif_not_loaded)
        def runtime_configure(_, _, _, _), do: :erlang.nif_error(:nif_not_loaded)
      end

      slowed = Calibration.derive([List.duplicate(kept.turn_ns * 3 / 4, 5)], 1000, 1.0)
      assert Calibration.replace(slowed) == slowed
      assert Runtime.stats().slice_ns == slowed.slice_ns
    end

    test "a configured slice stays; a longer turn does not replace a shorter one", %{kept: kept} do
      :ok = Runtime.configure(SDKJobs, slice_us: 77)
      slowed = Calibration.derive([List.duplicate(kept.turn_ns * 3 / 4, 5)], 1000, 1.0)
      Calibration.replace(slowed)
      Calibration.refine()
      assert Runtime.stats(SDKJobs).slice_ns == 77_000
      assert Runtime.stats(SDKJobs).slice_source == :configured

      # far shorter than any this machine measures: kept
      fast = Calibration.derive([List.duplicate(kept.turn_ns / 40, 5)], 1000, 1.0)
      Calibration.replace(fast)
      assert Calibration.refine() == fast
      assert Runtime.stats().slice_ns == fast.slice_ns
    end
  end

  describe "on this machine (traced turns, a bound on the mechanism, not on wall time)" do
    setup do
      on_exit(fn -> Runtime.configure(slice_us: :calibrated) end)
      :ok = Runtime.configure(slice_us: :calibrated)
    end

    test "the runtime's slice is the calibration's, which is within 0.5-1.3x a traced turn of pure Erlang" do
      assert Runtime.stats().slice_ns == Calibration.erlang_turn().slice_ns
      # Measured side by side, five times, so that both see the machine
      # alike: the calibration's slice against the turns of a worker
      # running the same code (traced, so each turn is a little longer).
      # The calibration keeps its fastest batch (it sees past a machine
      # slowed for a while); the traced turns' median does not: with two
      # CPU-bound processes beside it all the time, this ratio was
      # 0.696-0.698 in three rounds, another time 0.556, 0.568 and 0.909
      # (the turns' CPU time grew as much as their wall time: the host
      # shares the cores), and in a script 0.53 and 1.44 among rounds of
      # 0.89-0.91; with the suite's other VM and the gate's other lanes
      # running, three rounds of five gave 0.27-0.28. Hence the median of
      # five rounds, a bound over 0.5, and five rounds more (up to three
      # times) when the median is out: a slice fixed apart from the
      # machine's turn (30 us against 15 us turns: 2x, or half of it) is
      # out every time.
      {ratio, ratios} = median_ratio(3)
      assert ratio > 0.5 and ratio <= 1.3, "slice / Erlang turn p50: #{inspect(ratios)}"
    end

    # the median of five rounds' slice / traced turn; again, up to
    # `attempts` times in all, while it is out of 0.5-1.3
    defp median_ratio(attempts) do
      ratios =
        for _ <- 1..5 do
          slice_ns = Calibration.measure().slice_ns
          erlang = Probe.turns(fn -> Probe.erlang_work(100_000) end, control: false, workers: 1)
          assert erlang.function.turns > 100
          slice_ns / 1000 / erlang.function.cpu_p50_us
        end

      ratio = ratios |> Enum.sort() |> Enum.at(2)

      if (ratio > 0.5 and ratio <= 1.3) or attempts == 1,
        do: {ratio, ratios},
        else: median_ratio(attempts - 1)
    end

    test "a :yielding job's turns are as long as the runtime's slice" do
      a = random_bytes(10_000)
      b = random_bytes(10_000)
      r = Probe.turns(fn -> Levenshtein.distance(a, b, schedule: :yielding) end)

      assert r.function.turns > 100 and r.control.turns > 100,
             "turns: function #{r.function.turns}, control #{r.control.turns}"

      # The mechanism: a slice of the clock a turn. How that slice relates
      # to pure Erlang's turn is the test above; the pure-Erlang workers
      # beside the job are not the yardstick here, as their turns stretch
      # with a busy host (73 us of CPU a turn beside four CPU-bound
      # processes, 21 us quiet) while the slice is the clock's.
      slice_us = Runtime.stats().slice_ns / 1000
      ratio = r.function.p50_us / slice_us

      assert ratio >= 0.5 and ratio <= 1.5,
             "the job's turns p50 #{r.function.p50_us} us against a slice of #{slice_us} us " <>
               "(pure Erlang beside it: #{r.control.p50_us} us)"
    end
  end
end
