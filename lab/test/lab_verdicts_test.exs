defmodule WellBehaved.LabVerdictsTest do
  # The lateness suite's verdicts, recommendation and its comparison with
  # the previous run's, on fixed synthetic samples: no benchmark runs (the
  # shared statistics and verdict rule: lab_measure_test.exs).
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.{Lateness, Stats}

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
