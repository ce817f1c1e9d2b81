defmodule WellBehaved.LabMeasureTest do
  # The lab's shared measurement parts on fixed synthetic samples: the
  # statistics, the one verdict rule, the measurement window and the noise
  # checks. No benchmark runs, and nothing depends on a quiet machine.
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.{Noise, Stats}
  alias WellBehaved.Lab.Measure.{Verdict, Window}

  doctest WellBehaved.Lab.Stats
  doctest WellBehaved.Lab.Measure.Verdict

  describe "Stats" do
    test "percentile is nearest-rank" do
      assert Stats.percentile([5, 1, 3], 0.5) == 3
      assert Stats.percentile(Enum.to_list(1..1000), 0.99) == 990
      assert Stats.percentile([7], 0.99) == 7
    end

    test "the bootstrap interval of the median over few repeats is their range" do
      median = &Stats.median/1
      assert Stats.bootstrap_interval([0.6, 0.7, 2.0], median) == {0.6, 2.0}
      assert Stats.bootstrap_interval([0.6, 0.7, 0.8, 0.9, 2.0], median) == {0.6, 2.0}
      assert Stats.bootstrap_interval([1.0], median) == {1.0, 1.0}
    end

    test "with seven repeats one extreme repeat no longer sets the interval" do
      {low, high} = Stats.bootstrap_interval([0.5, 0.6, 0.6, 0.7, 0.7, 0.8, 9.0], &Stats.median/1)
      assert low == 0.6
      assert high == 0.8
    end

    test "the enumerated interval is exact: the central 95% of resample medians" do
      # resampling 3 of [1, 2, 3]: P(median = 1) = P(median = 3) = 7/27
      assert Stats.bootstrap_interval([1, 2, 3], &Stats.median/1, level: 0.4) == {2.0, 2.0}
      assert Stats.bootstrap_interval([1, 2, 3], &Stats.median/1, level: 0.5) == {1.0, 3.0}
    end

    test "many repeats are resampled at random, with a fixed seed" do
      values = Enum.map(1..20, &(&1 * 1.0))
      first = Stats.bootstrap_interval(values, &Stats.median/1)
      assert first == Stats.bootstrap_interval(values, &Stats.median/1)
      {low, high} = first
      assert low > 1.0 and low < 10.5, "low #{low}"
      assert high > 10.5 and high < 20.0, "high #{high}"
    end

    test "verdicts against a bound" do
      assert Stats.verdict({0.4, 1.49}, 1.5) == :within
      assert Stats.verdict({1.51, 3.0}, 1.5) == :outside
      assert Stats.verdict({1.0, 2.0}, 1.5) == :not_distinguishable
      assert Stats.verdict({1.0, 1.5}, 1.5) == :not_distinguishable
    end
  end

  describe "Measure.Verdict" do
    defp pairs(ratios, noisy \\ []),
      do: for({r, i} <- Enum.with_index(ratios), do: %{ratio: r, noisy: i in noisy})

    test "noisy repeats are left out while enough quiet ones remain" do
      n = Verdict.min_repeats()
      quiet = List.duplicate(0.8, n)
      j = Verdict.judge(pairs(quiet ++ [9.0], [n]), 1.5)
      assert j.ratios == quiet
      assert j.verdict == :within
      assert j.note == nil
      assert j.disturbed
    end

    test "with one quiet repeat too few, every repeat is kept and there is no verdict" do
      n = Verdict.min_repeats()
      ratios = List.duplicate(0.8, n)
      j = Verdict.judge(pairs(ratios, [0]), 1.5)
      assert j.ratios == ratios
      assert j.ratio == 0.8
      assert j.verdict == :not_distinguishable
      assert j.note == "fewer than #{n} quiet repeats"
    end

    test "a repeat whose baseline ran far later than in the others is disturbed, the cell's own lateness is not" do
      # pure Erlang's p99 (ms) per repeat, the cell's 0.1 ms throughout:
      # repeat 4's baseline 10x the others', its ratio 0.1
      bases = [0.1, 0.11, 0.09, 1.0, 0.1]
      pairs = for b <- bases, do: %{ratio: 0.1 / b, base: b, noisy: false}
      j = Verdict.judge(pairs, 1.5)
      assert Enum.map(j.pairs, & &1.noisy) == [false, false, false, true, false]
      assert j.disturbed and length(j.used) == 4
      refute 0.1 in j.ratios

      # at 3x the median, not over it: kept
      kept =
        Verdict.mark_baselines(for b <- [1.0, 1.0, 3.0], do: %{ratio: 1.0, base: b, noisy: false})

      refute Enum.any?(kept, & &1.noisy)

      # a late cell is not left out: it may be the cell's doing
      late = [%{ratio: 20.0, base: 0.1, noisy: false} | tl(pairs)]
      assert 20.0 in Verdict.judge(late, 1.5).ratios

      # without a baseline in every pair, nothing is marked
      assert Verdict.mark_baselines(pairs([1.0, 1.0])) == pairs([1.0, 1.0])
    end

    test "too few repeats give figures but no verdict; none give nothing" do
      n = Verdict.min_repeats()
      j = Verdict.judge(pairs(List.duplicate(3.0, n - 1)), 1.5)
      assert j.ratio == 3.0
      assert j.verdict == :not_distinguishable
      assert j.note == "fewer than #{n} repeats"
      assert Verdict.judge([], 1.5) == nil
    end

    test "ratios taken together need as many repeats" do
      n = Verdict.min_repeats()
      assert Verdict.of_ratios(List.duplicate(0.5, n - 1), 1.5) == :not_distinguishable
      assert Verdict.of_ratios(List.duplicate(0.5, n), 1.5) == :within
      assert Verdict.of_ratios(List.duplicate(2.0, n), 1.5) == :outside
    end
  end

  describe "Measure.Window" do
    defp window_usage(stalls, foreign \\ 0.0) do
      %{
        seconds: 1.0,
        busy_cores: 1.0,
        own_cores: 1.0 - foreign,
        foreign_cores: foreign,
        steal_share: 0.0,
        stalls: stalls
      }
    end

    test "a window's ticks lose the stalls; a quiet window is not noisy" do
      ticker = %{due_us: [0, 1_000, 2_000], samples_us: [50, 900, 30]}
      w = Window.judge(ticker, window_usage([{1_100, 1_500}]), 100)
      assert w.samples_us == [50, 500, 30]
      assert_in_delta w.stalled_share, 0.004, 1.0e-9
      refute w.noisy
    end

    test "a window stalled over 5% of it, or with other work, is noisy" do
      ticker = %{due_us: [0], samples_us: [10]}
      assert Window.judge(ticker, window_usage([{0, 6_000}]), 100).noisy
      refute Window.judge(ticker, window_usage([{0, 4_000}]), 100).noisy
      assert Window.judge(ticker, window_usage([], 0.5), 100).noisy
    end

    test "p99 in ms, nil without samples" do
      assert Window.p99_ms([]) == nil
      assert Window.p99_ms(Enum.to_list(1..1000)) == 0.99
    end
  end

  # a repeat of a cell: lateness samples (us) around p99_us, and its noise

  describe "Noise" do
    defp usage(foreign, steal, opts \\ []) do
      %{
        seconds: 1.0,
        busy_cores: 2.0,
        own_cores: 2.0 - foreign,
        foreign_cores: foreign,
        steal_share: steal,
        burst_foreign_cores: Keyword.get(opts, :burst, foreign),
        burst_steal_share: steal
      }
    end

    test "a window is noisy when other work or the hypervisor took the CPU" do
      refute Noise.noisy?(usage(0.05, 0.0))
      assert Noise.noisy?(usage(0.3, 0.0))
      assert Noise.noisy?(usage(0.0, 0.08))
      # a burst the average hides
      assert Noise.noisy?(usage(0.05, 0.0, burst: 0.9))
    end

    test "cpu_usage reads busy, own and foreign cores from the counters" do
      hz =
        case System.cmd("getconf", ["CLK_TCK"]) do
          {out, 0} -> out |> String.trim() |> String.to_integer()
          _ -> 100
        end

      s0 = %{at_us: 0, cpu: [0, 0, 0, 0, 0, 0, 0, 0], own_ticks: 0}
      # one second: 1.5 cores busy (user), 0.5 idle, of which this VM 1.0
      s1 = %{
        at_us: 1_000_000,
        cpu: [round(1.5 * hz), 0, 0, round(0.5 * hz), 0, 0, 0, 0],
        own_ticks: hz
      }

      u = Noise.cpu_usage(s0, s1)
      assert_in_delta u.busy_cores, 1.5, 0.01
      assert_in_delta u.own_cores, 1.0, 0.01
      assert_in_delta u.foreign_cores, 0.5, 0.01
      assert u.steal_share == 0.0
    end

    test "the sampler outside the VM sees this VM's own work, not as foreign" do
      sampler = Noise.start_sampler()
      assert {:watch, _port, _offset} = sampler
      # 300 ms of this VM's CPU time, however long a busy machine takes to
      # give it (600 ms of wall time were under a quarter of a core at a
      # load of 14 on 2 cores)
      {cpu_ms, _} = :erlang.statistics(:runtime)

      # pure Erlang work between reads of the counter (read in a tight
      # loop, 300 ms of it took 2 s here)
      burn = fn burn ->
        WellBehaved.Probe.erlang_work(100_000)
        if elem(:erlang.statistics(:runtime), 0) - cpu_ms < 300, do: burn.(burn)
      end

      burn.(burn)
      usage = Noise.stop_sampler(sampler)
      assert usage.seconds > 0.2
      # the sampler's window holds the burn: its CPU time is counted as
      # this VM's own (within the counters' ticks of 10 ms)
      own_seconds = usage.own_cores * usage.seconds
      assert own_seconds > 0.25, "own CPU #{own_seconds} s of the 0.3 s burned"
      assert usage.busy_cores >= usage.own_cores - 0.05
      assert is_integer(usage.wake_late_max_us)
    end

    test "parse_watch_line reads the watcher's lines and rejects others" do
      assert [%{at_us: 1234, cpu: [1, 2, 3, 4, 5, 6, 7, 8], own_ticks: 42, late_us: 3}] =
               Noise.parse_watch_line("1234567 1 2 3 4 5 6 7 8 own 42 late 3210")

      assert Noise.parse_watch_line("wb_noise_watch: cannot read /proc/stat") == []
      assert Noise.parse_watch_line("12 1 2 own x late 3") == []
    end

    test "stall lines become intervals; overlapping ones merge" do
      assert Noise.parse_stall_line("stall 1 5000000 5800000") == [{5000, 5800}]
      assert Noise.parse_stall_line("stall x") == []
      assert Noise.parse_stall_line("1 2 3 own 4 late 5") == []

      assert Noise.merge_intervals([{300, 400}, {100, 200}, {150, 250}, {250, 260}]) ==
               [{100, 260}, {300, 400}]
    end

    test "a tick's lateness loses the time its wait overlapped a stall, no more" do
      stalls = [{100, 300}, {1000, 1100}]
      # before, across, inside, a long wait with a stall in it, after
      ticks = [{0, 50}, {90, 300}, {250, 100}, {900, 100_000}, {2000, 5}]
      assert Noise.stall_corrected(ticks, stalls) == [50, 100, 50, 99_900, 5]
      assert Noise.stall_corrected(ticks, []) == [50, 300, 100, 100_000, 5]
    end

    test "the watcher reports stalls in the VM's monotonic time" do
      {:watch, port, _} = sampler = Noise.start_sampler()
      {:os_pid, os_pid} = Port.info(port, :os_pid)
      Process.sleep(50)

      # stalls made on purpose: the watcher's threads cannot run for 30 ms;
      # three of them, since a busy machine may blur one (the CPU and the
      # kill commands' own start-up shared with other work)
      windows =
        for _ <- 1..3 do
          t0 = :erlang.monotonic_time(:microsecond)
          {_, 0} = System.cmd("kill", ["-s", "STOP", "#{os_pid}"])
          Process.sleep(30)
          {_, 0} = System.cmd("kill", ["-s", "CONT", "#{os_pid}"])
          t1 = :erlang.monotonic_time(:microsecond)
          Process.sleep(20)
          {t0, t1}
        end

      usage = Noise.stop_sampler(sampler)

      # within 50 ms of the stop and the resume: the watchers run at
      # real-time priority where they may, and otherwise wait for a CPU
      # like any thread (milliseconds at a load of 14 on 2 cores); a stall
      # told in another time base would be off by far more
      assert Enum.any?(windows, fn {t0, t1} ->
               Enum.any?(usage.stalls, fn {from, to} ->
                 to - from >= 20_000 and from >= t0 - 50_000 and to <= t1 + 50_000
               end)
             end),
             "no 30 ms stall in #{inspect(windows)}: #{inspect(usage.stalls)}"
    end

    test "a late wake-up outside the VM marks a window noisy" do
      assert Noise.noisy?(Map.put(usage(0.0, 0.0), :wake_late_max_us, 25_000))
      refute Noise.noisy?(Map.put(usage(0.0, 0.0), :wake_late_max_us, 400))
    end

    test "a busy check is reported at the top, with its reasons" do
      quiet =
        Noise.judge(
          "before lateness",
          [0.1, 0.1, 0.1],
          usage(0.0, 0.0),
          List.duplicate(1000.0, 50)
        )

      busy =
        Noise.judge(
          "after lateness",
          [2.5, 1.0, 0.5],
          usage(0.6, 0.0),
          Enum.map(1..50, &(900.0 + 10 * &1))
        )

      refute quiet.busy
      assert busy.busy
      assert Enum.any?(busy.reasons, &(&1 =~ "other processes used 0.60 cores"))
      assert Enum.any?(busy.reasons, &(&1 =~ "p90/p10"))

      assert Noise.warning([quiet]) == nil
      warning = Noise.warning([quiet, busy])
      assert warning =~ "The machine was busy"
      assert warning =~ "after lateness"

      md = Noise.markdown([quiet, busy])
      assert md =~ "| before lateness |"
      assert md =~ "**busy**"
    end

    test "a check whose calibration loop changed speed is busy" do
      first = Noise.judge("before", [0.0, 0.0, 0.0], usage(0.0, 0.0), List.duplicate(1000.0, 50))
      slower = Noise.judge("after", [0.0, 0.0, 0.0], usage(0.0, 0.0), List.duplicate(1300.0, 50))
      [a, b] = Noise.assess([first, slower])
      refute a.busy
      assert b.busy
      assert hd(b.reasons) =~ "30.0% slower"
    end
  end
end
