defmodule WellBehaved.ProbeTest do
  # Wide margins: a :normal call of ~500 ms holds its scheduler far beyond
  # the 100 ms bound, a :yielding one gives it back every few microseconds.
  # The comparison with the control is tested on synthetic reports.
  use ExUnit.Case, async: false

  # bounds, not timing claims: judging a 0.6 s :normal call took 62 s with
  # two CPU-bound loops beside the test run
  @moduletag timeout: 300_000

  alias WellBehaved.{Job, Levenshtein, Probe}
  alias WellBehaved.Test.SDKJobs
  import WellBehaved.Test.RuntimeHelpers

  doctest WellBehaved.Probe

  # about half a second of work here (150 kB pairs with nothing in common),
  # or a bytes x bytes / 40e9 s share of it
  defp long_work(opts, bytes \\ 150_000) do
    {a, b} = long_pair(bytes)
    fn -> Levenshtein.distance(a, b, opts) end
  end

  # work of n x n cells
  defp work(n) do
    {a, b} = {random_bytes(n), random_bytes(n)}
    fn -> Levenshtein.distance(a, b) end
  end

  test "assert_well_behaved flags a long :normal call" do
    # ~140 ms calls (75 kB pairs) against a 20 ms bound: 7x here, and past
    # it on a machine 4x faster, while a 0.5 s call's rounds took minutes
    # on a busy machine (each window waits for calls that hold both
    # schedulers)
    error =
      assert_raise ExUnit.AssertionError, fn ->
        WellBehaved.Testing.assert_well_behaved(long_work([schedule: :normal], 75_000),
          max_block_ms: 20
        )
      end

    assert error.message =~ "less well behaved than pure Erlang code"
    assert error.message =~ "held its scheduler for"
    assert error.message =~ "schedule: :yielding"
  end

  test "assert_well_behaved passes the same work :yielding" do
    judgement =
      WellBehaved.Testing.assert_well_behaved(long_work(schedule: :yielding), max_block_ms: 100)

    assert judgement.verdict == :pass
    assert length(judgement.rounds) == 3

    for round <- judgement.rounds do
      assert round.function.turns > 0

      assert round.control.turns > 0 and round.control_alone.turns > 0,
             "control turns #{round.control.turns}, alone #{round.control_alone.turns}"

      assert round.function.cpu_max_us < round.limit_us
    end
  end

  test "turns/2 traces whole calls: a turn made once per call, at its end, is in the window" do
    SDKJobs.ensure_loaded!()
    # 50 ms of its thread's CPU time at the end of each call, the rest sliced
    job = fn -> Job.call(&SDKJobs.holding/5, [50_000, 20_000_000], schedule: :yielding) end
    r = Probe.turns(job, workers: 2)

    assert r.function.calls >= 2, inspect(r.function)
    assert r.function.cpu_max_us >= 50_000, inspect(r.function)
    assert {r.function.unfinished, r.function.open_turns, r.lost_events} == {0, 0, 0}
    assert r.control.calls > 0 and r.control.unfinished == 0, inspect(r.control)
    # every traced turn ended in the window
    assert r.window_ms > 0
    assert {:messages, []} = Process.info(self(), :messages)
  end

  test "turns/2 kills a worker still in its call at the timeout, and counts it" do
    r =
      Probe.turns(fn -> Process.sleep(:infinity) end,
        workers: 2,
        warmup_ms: 0,
        duration_ms: 10,
        timeout_ms: 100,
        control: false
      )

    assert {r.function.calls, r.function.unfinished} == {0, 2}
    assert r.control == nil
    assert {:messages, []} = Process.info(self(), :messages)

    judgement =
      Probe.judge(fn -> Process.sleep(:infinity) end,
        warmup_ms: 0,
        duration_ms: 10,
        timeout_ms: 100,
        rounds: 1
      )

    # the round says nothing: the calls were not seen whole (or, first, the
    # control alone was disturbed, on a busy machine)
    assert %{verdict: :inconclusive, rounds: [round]} = judgement
    assert round.function.unfinished == :erlang.system_info(:schedulers_online), inspect(round)

    assert round.reason =~ "workers were still in their call at the timeout" or
             round.reason =~ "the control alone",
           round.reason
  end

  test "a function that raises in turns/2 or judge/2 raises in the caller" do
    assert_raise RuntimeError, "boom", fn -> Probe.turns(fn -> raise "boom" end) end

    assert_raise RuntimeError, "late", fn ->
      counter = :counters.new(1, [])

      Probe.judge(
        fn ->
          # fails in the traced window, after the warm-up's calls
          if :counters.get(counter, 1) > 4, do: raise("late")
          :counters.add(counter, 1, 1)
        end,
        warmup_ms: 0
      )
    end

    assert catch_throw(Probe.turns(fn -> throw(:ball) end)) == :ball
    assert {:messages, []} = Process.info(self(), :messages)
  end

  test "summary/1 summarises a judgement, and names what it takes" do
    judgement = Probe.judge(fn -> Probe.erlang_work(1000) end, rounds: 1, duration_ms: 50)
    summary = Probe.summary(judgement)
    assert summary =~ ~r/^(pass|inconclusive|fail): /
    assert summary =~ "round 1: "
    assert summary =~ "of CPU time"

    assert_raise ArgumentError,
                 ~r/summary\/1: expected a report of measure\/2 or a judgement of judge\/2/,
                 fn -> Probe.summary(%{verdict: :pass}) end
  end

  test "measure reports tickers, utilization, calls and the control" do
    report = Probe.measure(work(10_000), workers: 2, duration_ms: 300)
    assert report.workers == 2
    assert report.calls > 0
    assert report.ticker.period_ms == 1
    assert report.ticker.samples > 0
    assert report.ticker.p50_ms <= report.ticker.p90_ms
    assert report.ticker.p90_ms <= report.ticker.p99_ms
    assert report.ticker.p99_ms <= report.ticker.max_ms
    refute Map.has_key?(report.ticker, :samples_us)
    assert report.utilization.normal > 0
    assert report.control.ticker.samples > 0
    assert report.control.utilization.normal > 0
    assert Probe.summary(report) =~ "Pure-Erlang control"
  end

  test "every tick due while a scheduler is held counts, late until the ticker ran" do
    # One normal scheduler, held by one :normal call of ~500 ms: the ticker
    # cannot run until the call returns, whatever else the machine does
    # (with two, the VM may leave one free for the ticker). It wakes once,
    # and each of the hundreds of ticks it missed is a late sample.
    script = """
    {a, b} = {:binary.copy(<<1, 2>>, 75_000), :binary.copy(<<3, 4>>, 75_000)}
    work = fn -> WellBehaved.Levenshtein.distance(a, b, schedule: :normal) end
    r = WellBehaved.Probe.measure(work, calls: 1, control: false, warmup_ms: 0)
    {r.workers, r.completed, r.ticker.samples, r.ticker.p50_ms, r.wall_ms}
    """

    assert {:ok, {{1, true, samples, p50_ms, wall_ms}, _binding}} =
             WellBehaved.Testing.ChildVM.run({Code, :eval_string, [script]},
               bound_ms: 240_000,
               erl_flags: ["+S", "1:1"]
             )

    # Against the time the call held the scheduler (the window's wall
    # time), not a number of milliseconds, which a faster machine would
    # not reach: a tick a millisecond was due all along, and each one
    # waited, from its due time to the end, half of it at the median
    assert wall_ms > 20
    assert samples >= wall_ms / 2, "#{samples} samples in #{wall_ms} ms"
    assert p50_ms >= wall_ms / 5, "p50 #{p50_ms} ms in #{wall_ms} ms"
  end

  test "samples: true returns every lateness sample; control: false skips the control" do
    report = Probe.measure(work(3000), duration_ms: 200, samples: true, control: false)

    assert report.control == nil
    assert length(report.ticker.samples_us) == report.ticker.samples

    assert Enum.all?(report.ticker.samples_us, &(is_integer(&1) and &1 >= 0)),
           inspect(Enum.reject(report.ticker.samples_us, &(is_integer(&1) and &1 >= 0)))

    assert Probe.percentiles(report.ticker.samples_us).p99_ms == report.ticker.p99_ms
  end

  test "ticks due during the warm-up are not counted" do
    report =
      Probe.measure(fn -> Process.sleep(5) end,
        duration_ms: 100,
        warmup_ms: 1000,
        control: false
      )

    assert report.ticker.samples == 0
  end

  test "measure counts a fixed number of calls" do
    counter = :counters.new(1, [])

    report =
      Probe.measure(fn -> :counters.add(counter, 1, 1) end, workers: 3, calls: 7, control: false)

    assert report.calls == 21
    assert :counters.get(counter, 1) == 21
  end

  test "finish_calls: false stops the workers when the duration is up" do
    report =
      Probe.measure(fn -> Process.sleep(60_000) end,
        workers: 2,
        duration_ms: 100,
        finish_calls: false,
        control: false
      )

    # the calls would have taken a minute; they were stopped, on time
    assert report.calls == 0
    assert report.completed
    assert report.wall_ms < 60_000
  end

  test "workers that outlive the timeout are killed and reported" do
    report =
      Probe.measure(fn -> Process.sleep(:infinity) end,
        workers: 2,
        calls: 1,
        timeout_ms: 200,
        control: false
      )

    refute report.completed
    assert {:messages, []} = Process.info(self(), :messages)
  end

  test "a function that raises raises in the caller, which stays alive" do
    Process.flag(:trap_exit, false)

    assert_raise RuntimeError, "boom", fn ->
      Probe.measure(fn -> raise "boom" end, duration_ms: 100)
    end

    assert catch_throw(Probe.measure(fn -> throw(:ball) end, calls: 1)) == :ball
    assert {:messages, []} = Process.info(self(), :messages)
  end

  test "the previous system monitor is restored" do
    :erlang.system_monitor(self(), [{:long_gc, 1000}])
    Probe.measure(fn -> :ok end, duration_ms: 20)
    assert {pid, opts} = :erlang.system_monitor()
    assert pid == self()
    assert opts[:long_gc] == 1000
    :erlang.system_monitor(:undefined)
  end

  test "percentiles are exact nearest-rank values" do
    p = Probe.percentiles(Enum.to_list(1000..100_000//1000))
    assert p.samples == 100
    assert p.p50_ms == 50.0
    assert p.p90_ms == 90.0
    assert p.p99_ms == 99.0
    assert p.max_ms == 100.0
    assert Probe.percentiles([]).samples == 0
  end

  test "the control's workload does not allocate" do
    Probe.erlang_work(1000)
    {:garbage_collection, gc0} = Process.info(self(), :garbage_collection)
    {:reductions, r0} = Process.info(self(), :reductions)
    Probe.erlang_work(1_000_000)
    {:reductions, r1} = Process.info(self(), :reductions)
    {:garbage_collection, gc1} = Process.info(self(), :garbage_collection)
    # a bignum per round would collect the heap thousands of times
    assert gc1[:minor_gcs] == gc0[:minor_gcs]
    # one reduction per round: the VM switches it out like any Erlang code
    assert r1 - r0 >= 1_000_000
  end

  test "bad options raise ArgumentError naming the function and the option" do
    f = fn -> :ok end

    for {opts, pattern} <- [
          {[workers: 0],
           ~r/measure\/2: invalid :workers 0, expected an integer in 1..\d+ \(half the VM's process limit\)/},
          {[duration_ms: -5], ~r/invalid :duration_ms -5, expected an integer in 1..4294967295/},
          {[calls: -1], ~r/invalid :calls -1, expected an integer in 1../},
          {[calls: :x], ~r/invalid :calls :x, expected an integer in 1../},
          {[tick_ms: 1.5], ~r/invalid :tick_ms 1.5, expected an integer/},
          {[control: :yes], ~r/invalid :control :yes, expected a boolean/},
          {[bogus: 1], ~r/unknown option :bogus, expected one of :workers/},
          {[timeout_ms: 2 ** 32],
           ~r/invalid :timeout_ms 4294967296, expected an integer in 1..4294967295/},
          {[workers: 10 ** 9], ~r/invalid :workers 1000000000/},
          {:not_a_list, ~r/expected a keyword list/}
        ] do
      assert_raise ArgumentError, pattern, fn -> Probe.measure(f, opts) end
    end

    assert_raise ArgumentError, ~r/expected a function of arity 0/, fn ->
      Probe.measure(fn _ -> :ok end)
    end

    error =
      assert_raise ArgumentError, fn ->
        WellBehaved.Testing.assert_well_behaved(f, max_block: 5)
      end

    assert error.message =~ "assert_well_behaved/2: unknown option :max_block"
    assert error.message =~ ":max_block_ms"

    assert_raise ArgumentError,
                 ~r/assert_well_behaved\/2: invalid :max_block_ms -1, expected a positive/,
                 fn ->
                   WellBehaved.Testing.assert_well_behaved(f, max_block_ms: -1)
                 end

    assert_raise ArgumentError, ~r/invalid :max_ratio 0.5, expected a number >= 1/, fn ->
      WellBehaved.Testing.assert_well_behaved(f, max_ratio: 0.5)
    end

    assert_raise ArgumentError, ~r/assert_well_behaved\/2: invalid :duration_ms/, fn ->
      WellBehaved.Testing.assert_well_behaved(f, duration_ms: 0)
    end

    assert_raise ArgumentError, ~r/assert_well_behaved\/2: invalid :rounds 0/, fn ->
      WellBehaved.Testing.assert_well_behaved(f, rounds: 0)
    end

    # measure/2's options are not the judgement's
    assert_raise ArgumentError, ~r/assert_well_behaved\/2: unknown option :calls/, fn ->
      WellBehaved.Testing.assert_well_behaved(f, calls: 1)
    end

    assert_raise ArgumentError, ~r/turns\/2: invalid :warmup_ms -1/, fn ->
      Probe.turns(f, warmup_ms: -1)
    end

    assert_raise ArgumentError, ~r/turns\/2: invalid :timeout_ms 0, expected an integer/, fn ->
      Probe.turns(f, timeout_ms: 0)
    end

    assert_raise ArgumentError, ~r/turns\/2: expected a function of arity 0/, fn ->
      Probe.turns(:nope)
    end
  end
end
