defmodule WellBehaved.ProbeJudgesWhatTheFunctionDoesTest do
  # WellBehaved.Testing.assert_well_behaved/2 and Probe.judge/2 judge how long the function
  # holds its scheduler (the CPU time of its turns, against pure Erlang
  # workers beside it) and whether the control loses its CPU with the
  # function running: not wall-clock maxima, which other work on the
  # machine stretches. So they give no false verdict while CPU-bound OS
  # processes run beside the VM.
  use ExUnit.Case, async: false

  alias WellBehaved.{Job, Levenshtein, Probe}
  alias WellBehaved.Test.SDKJobs
  import WellBehaved.Test.RuntimeHelpers

  @moduletag timeout: 300_000

  # turn_stats as the judgement sees them, in microseconds: `turns` turns
  # of p50, `long` of them (default 1) of max
  defp stats(p50, max, opts \\ []) do
    turns = Keyword.get(opts, :turns, 1000)
    long = Keyword.get(opts, :long, 1)
    cpu = List.duplicate(p50 * 1.0, turns - long) ++ List.duplicate(max * 1.0, long)

    %{
      cpu_us: cpu,
      turns: turns,
      wall_total_us: Enum.sum(cpu) / (1 - Keyword.get(opts, :lost, 0.0)),
      cpu_total_us: Enum.sum(cpu),
      open_turns: if(opts[:open], do: 1, else: 0),
      open_max_us: opts[:open],
      p50_us: p50,
      p90_us: p50,
      p99_us: Keyword.get(opts, :p99, p50),
      max_us: max,
      cpu_p50_us: p50,
      cpu_p90_us: p50,
      cpu_p99_us: Keyword.get(opts, :p99, p50),
      cpu_max_us: max,
      dirty_turns: Keyword.get(opts, :dirty, 0)
    }
  end

  describe "one round" do
    test "a function with turns longer than 1.5x the control's p99 + 1 ms, more often than the control, fails" do
      control = stats(15.0, 40.0, p99: 40.0)
      # limit: 1.5 x 40 + 1000 = 1060 us
      assert %{result: :pass, limit_us: 1060.0} =
               Probe.judge_round(stats(14.0, 1050.0, long: 50), control, control, 1.5, 1)

      assert %{result: :fail, reason: reason, long_turns: 50} =
               Probe.judge_round(stats(14.0, 1070.0, long: 50), control, control, 1.5, 1)

      assert reason =~ "held its scheduler for more than 1.06 ms of CPU time"
      assert reason =~ "in 50 of its 1000 turns, the longest 1.07 ms"
      # a stricter bound
      assert %{result: :fail} =
               Probe.judge_round(stats(14.0, 200.0, long: 10), control, control, 1.5, 0.1)
    end

    test "a long turn or two within the clock's allowance, which it can make of any turn, is not a failure" do
      control = stats(15.0, 40.0, p99: 40.0)

      for long <- 1..2 do
        assert %{result: :pass, long_turns: ^long} =
                 Probe.judge_round(stats(14.0, 5000.0, long: long), control, control, 1.5, 1)
      end

      # as often as the control's in the same CPU time: the machine, not the function
      noisy = stats(15.0, 1500.0, p99: 40.0, long: 4, turns: 10_000)
      function = fn long -> stats(15.0, 1500.0, long: long, turns: 10_000) end

      assert %{result: :pass, long_turns: 4, control_long_turns: 8} =
               Probe.judge_round(function.(4), noisy, noisy, 1.5, 1)

      # far more often, in over 1% of its turns: the function
      assert %{result: :fail} = Probe.judge_round(function.(200), noisy, noisy, 1.5, 1)
      # in under 1% of them: not told from the machine
      assert %{result: :pass} = Probe.judge_round(function.(60), noisy, noisy, 1.5, 1)
      # more long turns in far less CPU time: the function too
      assert %{result: :fail} =
               Probe.judge_round(stats(15.0, 1500.0, long: 20), noisy, noisy, 1.5, 1)
    end

    test "any one turn beyond the limit + 5 ms fails" do
      control = stats(15.0, 40.0, p99: 40.0)

      assert %{result: :pass, bound_us: 6060.0} =
               Probe.judge_round(stats(14.0, 6000.0), control, control, 1.5, 1)

      for max <- [6100.0, 50_000.0] do
        assert %{result: :fail, reason: r, long_turns: 1} =
                 Probe.judge_round(stats(14.0, max, turns: 100_000), control, control, 1.5, 1)

        assert r =~ "held its scheduler for #{max / 1000}"
        assert r =~ "ms of CPU time in one turn (bound 6.06 ms: 1.50x pure Erlang's 99th"
      end
    end

    test "a turn still running at the timeout counts beyond the same bound" do
      control = stats(15.0, 40.0)
      open = fn us -> %{stats(14.0, 30.0) | open_turns: 1, open_max_us: us} end
      assert %{result: :pass} = Probe.judge_round(open.(5_000.0), control, control, 1.5, 1)

      assert %{result: :fail, reason: r} =
               Probe.judge_round(open.(7_000.0), control, control, 1.5, 1)

      assert r =~ "still running when the window ended (bound 6.02 ms)"
    end

    test "a control turn beyond the bound: the CPU clock is not trusted, the round says nothing" do
      control = stats(15.0, 40.0, p99: 40.0)
      jumped = stats(15.0, 7000.0, p99: 40.0)

      for {beside, alone} <- [{jumped, control}, {control, jumped}] do
        assert %{result: :inconclusive, reason: r} =
                 Probe.judge_round(stats(14.0, 50_000.0), beside, alone, 1.5, 1)

        assert r =~
                 "a pure-Erlang control worker had a turn of 7.00 ms of CPU time, " <>
                   "beyond the bound 6.06 ms"
      end

      # within the bound: the function is judged
      assert %{result: :fail} =
               Probe.judge_round(stats(14.0, 50_000.0), stats(15.0, 6000.0), control, 1.5, 1)
    end

    test "a window whose tracer lost events, or whose calls did not end, says nothing" do
      control = stats(15.0, 40.0)
      good = stats(14.0, 30.0)

      assert %{result: :inconclusive, reason: r, lost_events: 7} =
               Probe.judge_round(good, control, control, 1.5, 1, {nil, nil}, {5, 2})

      assert r =~ "the tracer lost 7 events"

      assert %{result: :inconclusive, reason: r} =
               Probe.judge_round(Map.put(good, :unfinished, 2), control, control, 1.5, 1)

      assert r =~ "2 workers were still in their call at the timeout"
      # the turns it did see still fail it
      assert %{result: :fail} =
               Probe.judge_round(
                 stats(14.0, 50_000.0),
                 control,
                 control,
                 1.5,
                 1,
                 {nil, nil},
                 {5, 0}
               )
    end

    test "a control that loses its CPU with the function running says it competes" do
      function = stats(3.0, 8.0, dirty: 100, turns: 50)
      alone = stats(15.0, 40.0, lost: 0.05)

      assert %{result: :pass} =
               Probe.judge_round(function, stats(15.0, 40.0, lost: 0.2), alone, 1.5, 1)

      assert %{result: :fail, reason: r, lost_share: lost} =
               Probe.judge_round(function, stats(15.0, 40.0, lost: 0.5), alone, 1.5, 1)

      assert_in_delta lost, 0.5, 1.0e-9
      assert r =~ "lost 50% of their turns to the OS with the function running, 5% without it"
      # a busy machine takes it from both alike
      busy = stats(15.0, 40.0, lost: 0.45)

      assert %{result: :pass} =
               Probe.judge_round(function, stats(15.0, 40.0, lost: 0.6), busy, 1.5, 1)

      # the VM's other threads did the work: it competes
      assert %{result: :fail, reason: r} =
               Probe.judge_round(
                 function,
                 stats(15.0, 40.0, lost: 0.5),
                 alone,
                 1.5,
                 1,
                 {1.6, 0.02}
               )

      assert r =~
               "the VM's threads other than its normal schedulers used 1.60 CPUs, 0.02 without it"
    end

    test "a control that loses its CPU while the VM's other threads stay idle: the machine, not the function" do
      # CPU-bound OS processes beside the VM: the lost share moves from
      # window to window, whatever the VM runs
      alone = stats(15.0, 40.0, lost: 0.35)

      assert %{result: :pass, off_scheduler_cpu: 0.03} =
               Probe.judge_round(
                 stats(15.0, 40.0),
                 stats(15.0, 40.0, lost: 0.67),
                 alone,
                 1.5,
                 1,
                 {0.03, 0.02}
               )
    end

    test "a control that hardly ran alone, or was disturbed even in CPU time, says nothing" do
      f = stats(14.0, 5000.0)
      good = stats(15.0, 40.0)

      assert %{result: :inconclusive, reason: r} =
               Probe.judge_round(f, good, stats(15.0, 40.0, turns: 5), 1.5, 1)

      assert r =~ "the control alone ran 5 turns"

      assert %{result: :inconclusive, reason: r} =
               Probe.judge_round(f, good, stats(15.0, 900.0, p99: 70.0), 1.5, 1)

      assert r =~ "disturbed even in CPU time"
      assert %{result: :inconclusive} = Probe.judge_round(f, good, nil, 1.5, 1)
    end

    test "a control that hardly ran beside the function, but did alone, fails it" do
      assert %{result: :fail, reason: r} =
               Probe.judge_round(
                 stats(14.0, 30.0),
                 stats(15.0, 40.0, turns: 3),
                 stats(15.0, 40.0),
                 1.5,
                 1
               )

      assert r =~ "ran 3 turns in the window, 1000 without it"
    end
  end

  describe "the verdict over rounds" do
    # a round of that result, judged from turns
    defp judged(result) do
      control = stats(15.0, 40.0)

      case result do
        :pass -> Probe.judge_round(stats(14.0, 30.0), control, control, 1.5, 1)
        :fail -> Probe.judge_round(stats(2000.0, 2100.0, long: 900), control, control, 1.5, 1)
        :inconclusive -> Probe.judge_round(stats(14.0, 30.0), control, nil, 1.5, 1)
      end
    end

    test "most of the rounds that say something" do
      assert Probe.verdict([judged(:pass), judged(:fail), judged(:pass)]).verdict == :pass

      assert %{verdict: :fail, message: m} =
               Probe.verdict([judged(:fail), judged(:inconclusive), judged(:fail)])

      assert m =~ "in 2 of 3 rounds"
      assert m =~ "the function 2.00 ms / 2.00 ms / 2.10 ms"
      assert m =~ "schedule: :yielding"
      assert Probe.verdict([judged(:fail), judged(:inconclusive), judged(:pass)]).verdict == :pass

      assert %{verdict: :inconclusive, message: m} =
               Probe.verdict([judged(:inconclusive), judged(:inconclusive)])

      assert m =~ "no round said anything"
    end
  end

  # The turn is 50 ms of its thread's CPU time (the job spins on that
  # clock), the bound about 6 ms: no machine speed or load brings them
  # together. Before the windows held whole calls, a 200 ms window rarely
  # held the last turn of a call (this job's: 0 of 10 judgements failed
  # with 0.8 s calls).
  test "a job that holds its scheduler 50 ms once per call, at its end, fails in every round" do
    SDKJobs.ensure_loaded!()
    job = fn -> Job.call(&SDKJobs.holding/5, [50_000, 20_000_000], schedule: :yielding) end
    judgement = Probe.judge(job)
    summary = Probe.summary(judgement)

    for round <- judgement.rounds do
      # whole calls: the long turn is in every window
      assert round.function.calls >= 2, summary
      assert round.function.cpu_max_us >= 50_000, summary
      assert round.result != :pass, summary
    end

    assert judgement.verdict != :pass, summary
    assert summary =~ "of CPU time in one turn (bound"
  end

  # CPU-bound OS processes beside the VM, each bounded by `timeout`, which
  # passes the TERM that ends it on to its command
  defp with_cpu_hogs(n, fun) do
    timeout = System.find_executable("timeout")

    hogs =
      for _ <- 1..n do
        port =
          Port.open({:spawn_executable, "/bin/sh"}, [
            :binary,
            args: ["-c", "exec #{timeout} 120 sh -c 'exec yes > /dev/null'"]
          ])

        {:os_pid, pid} = Port.info(port, :os_pid)
        {port, pid}
      end

    try do
      fun.()
    after
      for {port, pid} <- hogs do
        System.cmd("kill", ["-s", "TERM", "#{pid}"])
        # the port may have closed already, with its program
        try do
          Port.close(port)
        rescue
          ArgumentError -> :ok
        end
      end
    end
  end

  # a bound for a machine already busy before the two hogs start (it ran
  # past 300 s with two more CPU-bound loops beside the test run)
  @tag timeout: 900_000
  test "with two CPU-bound OS processes beside the VM: pure Erlang and :yielding pass, :normal fails" do
    a = random_bytes(10_000)
    b = random_bytes(10_000)

    verdicts =
      with_cpu_hogs(2, fn ->
        for _ <- 1..3,
            {name, fun} <- [
              erlang: fn -> Probe.erlang_work(100_000) end,
              yielding: fn -> Levenshtein.distance(a, b, schedule: :yielding) end,
              normal: fn -> Levenshtein.distance(a, b, schedule: :normal) end
            ] do
          {name, Probe.judge(fun).verdict}
        end
      end)

    for {name, verdict} <- verdicts do
      case name do
        :normal -> assert verdict != :pass, inspect(verdicts)
        _ -> assert verdict != :fail, inspect(verdicts)
      end
    end

    # and a verdict, not a shrug, in most of them
    assert Enum.count(verdicts, fn {_, v} -> v == :inconclusive end) <= 3, inspect(verdicts)
  end
end
