defmodule WellBehaved.LabVerdictsTest do
  # The lab's statistics and verdict rules on fixed synthetic samples: no
  # benchmark runs.
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.{Lateness, Noise, Stats}
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
  defp row(mode, work_ms, factor, verdict, ratio) do
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

  # a cell from its per-repeat ratios, judged as the suite judges one
  defp cell(mode, work_ms, factor, ratios) do
    interval = Stats.bootstrap_interval(ratios, &Stats.median/1)

    %{
      row(mode, work_ms, factor, Stats.verdict(interval, 1.5), Stats.median(ratios))
      | ratio_low: elem(interval, 0),
        ratio_high: elem(interval, 1)
    }
    |> Map.merge(%{ratios: ratios, verdict_note: nil, base_p99_median_ms: 0.035})
  end

  # cells of several modes at several work sizes: {mode, work_ms} =>
  # {ratios with 1x workers, ratios with 10x}
  defp cells(spec) do
    for {{mode, w}, {r1, r10}} <- spec, {f, rs} <- [{1, r1}, {10, r10}], do: cell(mode, w, f, rs)
  end

  describe "Lateness.recommend" do
    test "the first mode in order of preference that is within the bound at 1x and 10x" do
      rows =
        cells(%{
          {:normal, 10} => {[9.0, 12.0, 30.0], [50.0, 70.0, 90.0]},
          {:yielding, 10} => {[0.7, 0.8, 0.9], [0.9, 1.0, 1.1]},
          {:yielding_dirty, 10} => {[0.6, 0.7, 0.8], [0.6, 0.7, 0.8]},
          {:auto, 10} => {[0.7, 0.8, 0.9], [0.9, 1.0, 1.1]}
        })

      assert [%{work_ms: 10, mode: :yielding, verdict: :within, auto_within: true, advice: nil}] =
               Lateness.recommend(rows, [10], %{10 => :yielding})
    end

    test "a preferred mode that cannot be told apart is named, not confidently" do
      rows =
        cells(%{
          {:normal, 10} => {[9.0, 12.0, 30.0], [50.0, 70.0, 90.0]},
          {:yielding, 10} => {[0.7, 0.8, 0.9], [0.9, 1.1, 2.0]},
          {:yielding_dirty, 10} => {[0.6, 0.7, 0.8], [0.6, 0.7, 0.8]}
        })

      assert [%{mode: :yielding, verdict: :not_distinguishable, advice: advice}] =
               Lateness.recommend(rows, [10])

      assert advice =~ "shorter slices"
    end

    test "modes clearly outside, or over the bound by median, are passed over" do
      rows =
        cells(%{
          {:normal, 10} => {[0.7, 0.8, 0.9], [3.0, 3.5, 4.0]},
          {:yielding, 10} => {[1.2, 1.7, 3.0], [0.8, 0.9, 1.0]},
          {:yielding_dirty, 10} => {[0.9, 1.2, 1.4], [1.0, 1.3, 1.4]}
        })

      assert [%{mode: :yielding_dirty, verdict: :within}] = Lateness.recommend(rows, [10])
    end

    test "when every mode is passed over, the one with the smallest worst median is named" do
      rows =
        cells(%{
          {:normal, 10} => {[20.0, 30.0, 40.0], [200.0, 300.0, 400.0]},
          {:yielding, 10} => {[1.6, 1.8, 2.2], [1.7, 2.0, 2.4]},
          {:yielding_dirty, 10} => {[1.0, 128.0, 400.0], [1.2, 100.0, 200.0]},
          {:threaded, 10} => {[50.0, 60.0, 70.0], [40.0, 45.0, 50.0]}
        })

      assert [%{mode: :yielding, verdict: :outside, worst_ratio: 2.0, evidence: e, advice: a}] =
               Lateness.recommend(rows, [10])

      assert e =~ "no mode was within 1.5x pure Erlang; `:yielding` is closest"
      assert a =~ "shorter slices"

      # the slice cells say which slice was within
      slice = %{cell(:yielding, 10, 10, [0.2, 0.22, 0.25]) | set: :slices, slice_us: 10}

      slower = %{cell(:yielding, 10, 10, [1.0, 1.13, 1.3]) | set: :slices, slice_us: 20}

      assert [%{advice: advice}] = Lateness.recommend([slice, slower | rows], [10])
      assert advice =~ "configure(slice_us: 20)"
      assert advice =~ "1.13x"

      # a slice that did no better than the default's cell is not named
      worse = %{cell(:yielding, 10, 10, [1.3, 1.4, 1.45]) | set: :slices, slice_us: 20}
      better = cells(%{{:yielding, 10} => {[1.6, 1.8, 2.2], [1.0, 1.1, 1.2]}})
      rows = Enum.reject(rows, &(&1.mode == :yielding)) ++ better
      assert [%{advice: advice}] = Lateness.recommend([worse | rows], [10])
      refute advice =~ "configure(slice_us: 20)"
      assert advice =~ "shorter slices"
    end

    test "nothing measured names nothing" do
      assert [%{mode: nil, verdict: :none}] = Lateness.recommend([], [10])
    end

    test "with one worker per scheduler the mode need only not be clearly worse" do
      rows =
        cells(%{
          {:normal, 10} => {[9.0, 12.0, 30.0], [50.0, 70.0, 90.0]},
          {:yielding, 10} => {[0.7, 1.0, 1.6], [0.9, 1.0, 1.1]}
        })

      assert [%{mode: :yielding, verdict: :within}] = Lateness.recommend(rows, [10])

      rows =
        cells(%{
          {:normal, 10} => {[9.0, 12.0, 30.0], [50.0, 70.0, 90.0]},
          {:yielding, 10} => {[1.6, 1.7, 1.8], [0.9, 1.0, 1.1]}
        })

      assert [%{mode: :yielding, verdict: :outside}] = Lateness.recommend(rows, [10])
    end

    test ":auto's repeats count for the mode it runs at that size" do
      # each cell alone: one repeat in three over the bound, not distinguishable;
      # together seven repeats whose median interval is below it
      rows =
        cells(%{
          {:normal, 10} => {[9.0, 12.0, 30.0], [50.0, 70.0, 90.0]},
          {:yielding, 10} => {[0.7, 0.8, 0.9], [0.6, 0.7, 2.0]},
          {:auto, 10} => {[0.7, 0.8, 0.9], [0.65, 0.7, 0.75, 0.8]}
        })

      assert [%{mode: :yielding, verdict: :within, evidence: evidence}] =
               Lateness.recommend(rows, [10], %{10 => :yielding})

      assert evidence =~ "with the `:auto` cells"
      # without :auto running :yielding there, its cells are not evidence
      assert [%{mode: :yielding, verdict: :not_distinguishable}] =
               Lateness.recommend(rows, [10], %{10 => :normal})
    end

    test "the same verdicts and sides of the bound give the same table, whatever the figures" do
      spec = %{
        {:normal, 10} => {[9.0, 12.0, 30.0], [50.0, 70.0, 90.0]},
        {:yielding, 10} => {[0.7, 0.8, 0.9], [0.9, 1.0, 1.1]}
      }

      a = cells(spec)
      b = Enum.map(cells(spec), &%{&1 | ratios: Enum.map(&1.ratios, fn r -> r * 0.9 end)})
      assert Enum.map(Lateness.recommend(a, [10]), & &1.mode) == [:yielding]
      assert Enum.map(Lateness.recommend(b, [10]), & &1.mode) == [:yielding]
    end

    # The three quick runs of issue 19, on a quiet 2-vCPU machine with a
    # 30 us slice where Erlang switched every 15 us: every cell's per-repeat
    # ratios as the reports gave them (medians and intervals). They said
    # "none of the modes" or "`:yielding_dirty` is closest, at 128x".
    @runs [
      %{
        1 => %{
          normal: {[7.0, 9.0, 12.0], [30.0, 40.0, 60.0]},
          yielding: {[1.1, 1.9, 3.23], [1.6, 2.2, 3.0]},
          yielding_dirty: {[40.0, 90.0, 200.0], [60.0, 80.0, 150.0]},
          auto: {[1.3, 2.1, 3.4], [1.5, 2.4, 3.1]}
        },
        10 => %{
          normal: {[90.0, 120.0, 200.0], [300.0, 400.0, 500.0]},
          yielding: {[0.9, 1.3, 2.4], [0.8, 1.2, 2.9]},
          yielding_dirty: {[100.0, 128.0, 190.0], [90.0, 110.0, 140.0]},
          auto: {[1.68, 9.64, 23.5], [0.9, 1.4, 2.2]}
        },
        100 => %{
          normal: {[900.0, 1200.0, 2000.0], [2000.0, 2300.0, 2400.0]},
          yielding: {[1.5, 1.8, 2.5], [1.7, 2.06, 2.6]},
          yielding_dirty: {[300.0, 500.0, 900.0], [200.0, 300.0, 400.0]},
          auto: {[1.6, 2.0, 2.8], [1.7, 2.1, 2.5]}
        }
      },
      %{
        1 => %{
          normal: {[8.0, 10.0, 14.0], [35.0, 45.0, 55.0]},
          yielding: {[2.0, 3.5, 6.54], [1.9, 2.4, 3.0]},
          yielding_dirty: {[50.0, 80.0, 120.0], [70.0, 90.0, 110.0]},
          auto: {[1.8, 2.4, 3.33], [1.7, 2.2, 2.9]}
        },
        10 => %{
          normal: {[100.0, 150.0, 190.0], [350.0, 420.0, 480.0]},
          yielding: {[1.8, 2.5, 4.0], [1.6, 1.9, 2.2]},
          yielding_dirty: {[1.3, 128.0, 700.0], [1.4, 90.0, 300.0]},
          auto: {[1.9, 2.6, 3.3], [1.7, 2.0, 2.6]}
        },
        100 => %{
          normal: {[1000.0, 1300.0, 1900.0], [2100.0, 2200.0, 2500.0]},
          yielding: {[1.6, 2.0, 2.7], [1.8, 2.1, 2.4]},
          yielding_dirty: {[250.0, 450.0, 800.0], [220.0, 320.0, 380.0]},
          auto: {[1.7, 2.2, 2.9], [1.8, 2.3, 2.7]}
        }
      },
      %{
        1 => %{
          normal: {[7.5, 9.5, 13.0], [32.0, 42.0, 58.0]},
          yielding: {[1.7, 2.2, 3.0], [1.8, 2.3, 2.9]},
          yielding_dirty: {[45.0, 85.0, 180.0], [65.0, 85.0, 140.0]},
          auto: {[1.8, 2.3, 3.1], [1.9, 2.4, 3.0]}
        },
        10 => %{
          normal: {[95.0, 130.0, 210.0], [320.0, 410.0, 520.0]},
          yielding: {[1.6, 1.8, 2.3], [1.7, 1.9, 2.5]},
          yielding_dirty: {[110.0, 140.0, 200.0], [95.0, 120.0, 150.0]},
          auto: {[1.7, 2.0, 2.4], [1.6, 1.9, 2.6]}
        },
        100 => %{
          normal: {[950.0, 1250.0, 2100.0], [1900.0, 2250.0, 2450.0]},
          yielding: {[1.6, 1.9, 2.6], [1.75, 2.0, 2.5]},
          yielding_dirty: {[280.0, 480.0, 850.0], [210.0, 310.0, 390.0]},
          auto: {[1.65, 2.1, 2.7], [1.8, 2.2, 2.6]}
        }
      }
    ]

    test "the three quick runs of issue 19 each name :yielding for 1, 10 and 100 ms, with its figures" do
      tables =
        for run <- @runs do
          rows =
            for {w, modes} <- run,
                {mode, {r1, r10}} <- modes,
                {f, rs} <- [{1, r1}, {10, r10}],
                do: cell(mode, w, f, rs)

          recs =
            Lateness.recommend(rows, [1, 10, 100], %{
              1 => :yielding,
              10 => :yielding,
              100 => :yielding
            })

          for rec <- recs do
            assert rec.mode == :yielding, inspect(rec)
            assert rec.verdict in [:not_distinguishable, :outside]
            assert rec.evidence =~ "`:yielding` is closest"
            assert rec.evidence =~ ~r/p99 \d\.\d+ ms vs 0\.035 ms/
            assert rec.advice =~ "shorter slices"
            # never the mode at 128x whose interval touched the bound
            refute rec.mode == :yielding_dirty
          end

          Enum.map(recs, &{&1.work_ms, &1.mode})
        end

      # the same table three times
      assert tables |> Enum.uniq() |> length() == 1
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
      deadline = System.monotonic_time(:millisecond) + 600
      burn = fn burn -> if System.monotonic_time(:millisecond) < deadline, do: burn.(burn) end
      burn.(burn)
      usage = Noise.stop_sampler(sampler)
      # the watcher starts as an OS process: on a busy machine it begins
      # later, and this VM may get less than a core; the bounds leave room
      assert usage.seconds > 0.2
      # this process kept one scheduler busy all along: counted as its own
      assert usage.own_cores > 0.25
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

  describe "the recommendation compared with the previous run's" do
    test "is the mode named per work size, whatever the confidence" do
      a = "quick\n1 ms: yielding (closest, not confidently within)\n10 ms: yielding\n"
      b = "quick\n1 ms: yielding\n10 ms: yielding (closest, not confidently within)\n"
      c = "quick\n1 ms: yielding\n10 ms: yielding_dirty\n"
      modes = &Mix.Tasks.WellBehaved.Lab.recommended_modes/1

      assert modes.(a) == [{"1 ms", "yielding"}, {"10 ms", "yielding"}]
      assert modes.(a) == modes.(b)
      refute modes.(b) == modes.(c)
      refute modes.(a) == modes.("quick\n1 ms: yielding\n")
    end
  end
end
