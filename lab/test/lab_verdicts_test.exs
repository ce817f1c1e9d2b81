defmodule WellBehaved.LabVerdictsTest do
  # The lab's statistics and verdict rules on fixed synthetic samples: no
  # benchmark runs.
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.{Lateness, Noise, Stats}

  doctest WellBehaved.Lab.Stats

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
      assert low > 1.0 and low < 10.5
      assert high > 10.5 and high < 20.0
    end

    test "verdicts against a bound" do
      assert Stats.verdict({0.4, 1.49}, 1.5) == :within
      assert Stats.verdict({1.51, 3.0}, 1.5) == :outside
      assert Stats.verdict({1.0, 2.0}, 1.5) == :not_distinguishable
      assert Stats.verdict({1.0, 1.5}, 1.5) == :not_distinguishable
    end
  end

  # a repeat of a cell: lateness samples (us) around p99_us, and its noise
  defp repeat(p99_us, opts \\ []) do
    samples =
      if p99_us == :never, do: [], else: List.duplicate(10, 98) ++ List.duplicate(p99_us, 2)

    %{
      status: Keyword.get(opts, :status, "ok"),
      samples_us: samples,
      noisy: Keyword.get(opts, :noisy, false)
    }
  end

  defp repeats(list), do: Enum.with_index(list, 1) |> Enum.map(fn {r, i} -> {i, r} end)

  describe "Lateness.ratio_summary" do
    test "pairs repeats with the baseline of the same VM run and judges the median" do
      cell = repeats([repeat(300), repeat(350), repeat(400)])
      base = repeats([repeat(500), repeat(500), repeat(500)])
      s = Lateness.ratio_summary(cell, base, 500)
      assert s.ratio == 0.7
      assert {s.ratio_low, s.ratio_high} == {0.6, 0.8}
      assert s.verdict == :within

      out = Lateness.ratio_summary(repeats([repeat(900), repeat(1000), repeat(2000)]), base, 500)
      assert out.verdict == :outside
    end

    test "one repeat on the other side of the bound leaves it not distinguishable" do
      cell = repeats([repeat(300), repeat(350), repeat(5000)])
      base = repeats([repeat(500), repeat(500), repeat(500)])
      s = Lateness.ratio_summary(cell, base, 500)
      assert s.ratio == 0.7
      assert s.verdict == :not_distinguishable
    end

    test "repeats disturbed by other work are left out while three quiet ones remain" do
      cell = repeats([repeat(300), repeat(5000, noisy: true), repeat(350), repeat(400)])
      base = repeats([repeat(500), repeat(500), repeat(500), repeat(500)])
      s = Lateness.ratio_summary(cell, base, 500)
      assert s.ratio_repeats == 3
      assert s.verdict == :within
      assert s.disturbed
      # the figures shown come from the same repeats
      assert s.p99_median_ms == 0.35
      assert s.base_p99_median_ms == 0.5

      # a disturbed baseline counts too; with two quiet pairs there is no verdict
      base = repeats([repeat(500, noisy: true), repeat(500), repeat(500)])
      s = Lateness.ratio_summary(repeats([repeat(300), repeat(300), repeat(300)]), base, 500)
      assert s.verdict == :not_distinguishable
      assert s.verdict_note == "fewer than 3 quiet repeats"
    end

    test "two repeats on one side are not a verdict" do
      base = repeats([repeat(500), repeat(500)])
      s = Lateness.ratio_summary(repeats([repeat(900), repeat(950)]), base, 500)
      assert s.verdict == :not_distinguishable
      assert s.verdict_note == "fewer than 3 repeats"
    end

    test "a ticker that never ran was at least a window late" do
      cell = repeats([repeat(:never), repeat(:never), repeat(:never)])
      base = repeats([repeat(500), repeat(500), repeat(500)])
      s = Lateness.ratio_summary(cell, base, 500)
      assert s.ratio == 1000.0
      assert s.verdict == :outside
    end

    test "no verdict from one repeat, without a baseline, or from failed runs" do
      base = repeats([repeat(500)])

      assert Lateness.ratio_summary(repeats([repeat(100)]), base, 500).verdict_note ==
               "fewer than 3 repeats"

      assert Lateness.ratio_summary(repeats([repeat(100)]), [], 500) == %{}

      failed = repeats([repeat(100, status: "bound hit"), repeat(100, status: "bound hit")])

      assert %{ratio: nil, verdict: :not_distinguishable} =
               Lateness.ratio_summary(failed, repeats([repeat(500), repeat(500)]), 500)

      # a baseline whose ticker never ran gives no pair
      assert %{ratio: nil} =
               Lateness.ratio_summary(repeats([repeat(100)]), repeats([repeat(:never)]), 500)
    end
  end

  # a row as the lateness suite's analysis makes it
  defp row(mode, work_ms, factor, verdict, ratio \\ 1.0) do
    %{
      set: :matrix,
      workload: if(mode == :erlang, do: :erlang, else: :spin),
      work_ms: work_ms,
      factor: factor,
      workers: 2 * factor,
      mode: mode,
      slice_us: nil,
      verdict: verdict,
      ratio: ratio,
      ratio_low: ratio,
      ratio_high: ratio,
      p99_median_ms: ratio / 2,
      repeats: 3,
      status: "ok"
    }
  end

  defp rows(verdicts) do
    for {mode, [v1, v10]} <- verdicts, {f, v} <- [{1, v1}, {10, v10}] do
      row(mode, 10, f, v)
    end ++ [row(:erlang, 10, 1, nil), row(:erlang, 10, 10, nil)]
  end

  describe "Lateness.runs?" do
    test ":normal cells run up to 10 s per scheduler, :dirty_cpu up to 1000 s queued" do
      assert Lateness.runs?(:normal, 1, 10_000)
      assert Lateness.runs?(:normal, 100, 100)
      refute Lateness.runs?(:normal, 100, 1000)
      refute Lateness.runs?(:normal, 1000, 100)

      assert Lateness.runs?(:dirty_cpu, 100, 10_000)
      assert Lateness.runs?(:dirty_cpu, 1000, 1000)
      refute Lateness.runs?(:dirty_cpu, 1000, 10_000)

      for mode <- [:erlang, :yielding, :yielding_dirty, :threaded, :auto],
          do: assert(Lateness.runs?(mode, 1000, 10_000))
    end
  end

  describe "Lateness.recommend" do
    test "the first mode in order of preference that is within the bound at 1x and 10x" do
      rows =
        rows(
          normal: [:outside, :outside],
          yielding: [:within, :within],
          yielding_dirty: [:within, :within],
          auto: [:within, :within]
        )

      assert [%{work_ms: 10, mode: :yielding, verdict: :within, auto_within: true}] =
               Lateness.recommend(rows, [10], %{10 => :yielding})
    end

    test "a preferred mode that cannot be told apart stops the search: no confident answer" do
      rows =
        rows(
          normal: [:outside, :outside],
          yielding: [:within, :not_distinguishable],
          yielding_dirty: [:within, :within]
        )

      assert [%{mode: nil, verdict: :not_distinguishable, candidate: :yielding}] =
               Lateness.recommend(rows, [10])
    end

    test "modes clearly outside are passed over; none left gives no mode" do
      rows = rows(normal: [:within, :outside], yielding: [:outside, :within])

      assert [%{mode: nil, verdict: :not_distinguishable, candidate: :yielding_dirty}] =
               Lateness.recommend(rows, [10])

      everything_out =
        rows(
          normal: [:outside, :outside],
          yielding: [:outside, :outside],
          yielding_dirty: [:outside, :outside],
          dirty_cpu: [:outside, :outside],
          threaded: [:outside, :outside]
        )

      assert [%{mode: nil, verdict: :none, evidence: evidence}] =
               Lateness.recommend(everything_out, [10])

      assert evidence =~ "clearly outside"
    end

    test "with one worker per scheduler the mode need only not be clearly worse" do
      rows = rows(normal: [:outside, :outside], yielding: [:not_distinguishable, :within])
      assert [%{mode: :yielding, verdict: :within}] = Lateness.recommend(rows, [10])

      rows = rows(normal: [:outside, :outside], yielding: [:outside, :within])
      assert [%{mode: nil}] = Lateness.recommend(rows, [10])
    end

    test ":auto's repeats count for the mode it runs at that size" do
      # each cell alone: one repeat in three over the bound, not distinguishable;
      # together six repeats whose median interval is below it
      with_ratios = fn row, ratios -> Map.put(row, :ratios, ratios) end

      rows =
        rows(
          normal: [:outside, :outside],
          yielding: [:within, :not_distinguishable],
          auto: [:within, :not_distinguishable]
        )
        |> Enum.map(fn
          %{mode: m, factor: 10} = r when m in [:yielding, :auto] ->
            with_ratios.(r, [0.6, 0.7, 2.0])

          r ->
            r
        end)

      assert [%{mode: nil, verdict: :not_distinguishable}] = Lateness.recommend(rows, [10])

      rows =
        Enum.map(rows, fn
          %{mode: :auto, factor: 10} = r -> with_ratios.(r, [0.65, 0.7, 0.75, 0.8])
          r -> r
        end)

      assert [%{mode: :yielding, verdict: :within, evidence: evidence}] =
               Lateness.recommend(rows, [10], %{10 => :yielding})

      assert evidence =~ "with the `:auto` cells"
      # without :auto running :yielding there, its cells are not evidence
      assert [%{mode: nil}] = Lateness.recommend(rows, [10], %{10 => :normal})
    end

    test "the same verdicts give the same table, whatever the figures" do
      a = rows(normal: [:outside, :outside], yielding: [:within, :within])
      b = Enum.map(a, &%{&1 | ratio: &1.ratio * 0.9})
      assert Enum.map(Lateness.recommend(a, [10]), & &1.mode) == [:yielding]
      assert Enum.map(Lateness.recommend(b, [10]), & &1.mode) == [:yielding]
    end
  end

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
      deadline = System.monotonic_time(:millisecond) + 400
      burn = fn burn -> if System.monotonic_time(:millisecond) < deadline, do: burn.(burn) end
      burn.(burn)
      usage = Noise.stop_sampler(sampler)
      assert usage.seconds >= 0.35
      # this process kept one scheduler busy all along
      assert usage.own_cores > 0.5
      assert usage.foreign_cores < usage.own_cores
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
      # a stall made on purpose: the watcher's threads cannot run for 30 ms
      t0 = :erlang.monotonic_time(:microsecond)
      {_, 0} = System.cmd("kill", ["-s", "STOP", "#{os_pid}"])
      Process.sleep(30)
      {_, 0} = System.cmd("kill", ["-s", "CONT", "#{os_pid}"])
      t1 = :erlang.monotonic_time(:microsecond)
      Process.sleep(20)
      usage = Noise.stop_sampler(sampler)

      assert Enum.any?(usage.stalls, fn {from, to} ->
               to - from >= 20_000 and from >= t0 - 1500 and to <= t1 + 5000
             end),
             "no 30 ms stall between #{t0} and #{t1}: #{inspect(usage.stalls)}"
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
