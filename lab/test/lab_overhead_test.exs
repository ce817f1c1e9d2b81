defmodule WellBehaved.LabOverheadTest do
  # WellBehaved.Lab.Overhead's analysis and rendering, fed made-up samples:
  # nothing is timed, so the figures do not depend on a quiet machine.
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.{Machine, Overhead}
  alias WellBehaved.Lab.Overhead.{Analysis, Measure, Plan}

  doctest Analysis
  doctest Measure
  doctest Plan

  @modes Plan.modes()
  @rounds 11

  # samples of a mode whose throughput is `ratio` times :normal's in every round
  defp samples(normal, ratios) do
    Map.new(@modes, fn mode -> {mode, scaled(normal, Map.get(ratios, mode, 1.0))} end)
  end

  defp scaled(normal, ratio) when is_number(ratio), do: Enum.map(normal, &(&1 / ratio))
  defp scaled(normal, ratios), do: Enum.zip_with(normal, ratios, &(&1 / &2))

  # :normal at 31 Gcell/s with a drift of +-2% from round to round
  defp lev_case(kind, bytes, batch, modes, ratios) do
    cells = bytes * bytes
    normal = for i <- 1..@rounds, do: cells / 31.0 * batch * (1 + (rem(i, 5) - 2) / 100)

    %{
      name: if(kind == "seed", do: "seed pair", else: "random #{bytes} B"),
      kind: kind,
      bytes: bytes,
      cells: cells,
      batch: batch,
      rounds: @rounds,
      distance: bytes,
      modes_agree: true,
      modes: Analysis.pair_entries(samples(normal, ratios), modes, batch, cells)
    }
  end

  # Spin's samples with the Rust job's :yielding at `rust_c` (a ratio, or
  # one per round) times the C job's time
  defp spin_samples(spin_normal, rust_c) do
    samples = samples(spin_normal, %{yielding: 0.96})
    Map.put(samples, :rust_yielding, times(samples.yielding, rust_c))
  end

  defp times(samples, k) when is_number(k), do: Enum.map(samples, &(&1 * k))
  defp times(samples, ks), do: Enum.zip_with(samples, ks, &(&1 * &2))

  defp result(yielding_10k, rust_c \\ 1.01) do
    spin_normal = for i <- 1..@rounds, do: 2.7e7 + i * 1.0e4
    spin_samples = spin_samples(spin_normal, rust_c)
    slice_normal = for i <- 1..@rounds, do: 1.0e7 + i * 1.0e3

    slice_samples = %{
      :normal => slice_normal,
      10 => scaled(slice_normal, 0.9),
      100 => scaled(slice_normal, 0.99)
    }

    seed = lev_case("seed", 10_000, 1, @modes, %{yielding: 0.99})

    result = %{
      suite: "levenshtein",
      machine: Machine.describe(),
      config: %{quick: true, rounds_scale: 1.0, modes: @modes},
      cases: [
        lev_case("random", 1_000, 50, @modes, %{yielding: 0.99, threaded: 0.5}),
        lev_case("random", 10_000, 1, @modes, %{yielding: yielding_10k}),
        lev_case("random", 100_000, 1, [:normal, :yielding], %{yielding: 0.98}),
        seed
      ],
      seed_normal_median_ms: Analysis.mode_entry(seed, :normal).median_ns / 1.0e6,
      calls: %{
        bytes: 10,
        batch: 100_000,
        rounds: @rounds,
        variants:
          Analysis.call_entries(
            %{default: List.duplicate(2.5e7, @rounds), empty: List.duplicate(1.0e5, @rounds)},
            [default: "Levenshtein.distance(a, b)", empty: "empty loop"],
            100_000
          ),
        check_shares:
          Analysis.check_shares(
            %{
              gate: List.duplicate(1.0e5 + 2.0e5, @rounds),
              empty: List.duplicate(1.0e5, @rounds),
              default: List.duplicate(2.5e7, @rounds),
              normal: List.duplicate(3.0e7, @rounds)
            },
            [:normal, :default]
          )
      },
      spin: %{
        iterations: 10_000_000,
        rounds: @rounds,
        modes_agree: true,
        modes: Analysis.spin_entries(spin_samples, @modes, 10_000_000),
        rust: Analysis.rust_spin_entry(spin_samples, 10_000_000)
      },
      slices:
        for workload <- [:spin, :levenshtein] do
          %{
            workload: workload,
            normal_median_ns: WellBehaved.Lab.Stats.median(slice_normal),
            slices: Analysis.slice_entries(slice_samples, [10, 100])
          }
        end,
      context: Plan.context(),
      elapsed_s: 1.0
    }

    Map.put(result, :targets, Analysis.targets(result))
  end

  defp target(result, name), do: Enum.find(result.targets, &(&1.name == name))

  test "the ratio to :normal is taken round by round, not from the medians" do
    # the medians are 1000 and 500 (a ratio of 2), but in two rounds of
    # three the mode took twice :normal's time
    assert %{ratio_to_normal: 0.5, ratio_low: low, ratio_high: high} =
             Analysis.paired_ratio([100, 1000, 1000], [200, 500, 2000])

    assert low == 0.5 and high == 2.0

    # a drift that hits both alike leaves an exact ratio
    drift = [100, 130, 90, 250, 110, 100, 95, 300, 120, 100]
    ratio = Analysis.paired_ratio(drift, Enum.map(drift, &(&1 / 0.97)))
    assert_in_delta ratio.ratio_to_normal, 0.97, 1.0e-12
    assert_in_delta ratio.ratio_low, 0.97, 1.0e-12
    assert_in_delta ratio.ratio_high, 0.97, 1.0e-12
  end

  test "a case's entries: per-call times, Gcell/s and ratios" do
    c = lev_case("random", 1_000, 50, @modes, %{yielding: 0.99, threaded: 0.5})
    normal = Analysis.mode_entry(c, :normal)
    assert_in_delta normal.gcells_per_s, 31.0, 1.0e-9
    assert_in_delta normal.median_ns, 1.0e6 / 31.0, 1.0e-6
    assert normal.samples == @rounds
    assert normal.ratio_to_normal == 1.0
    assert_in_delta Analysis.mode_entry(c, :threaded).ratio_to_normal, 0.5, 1.0e-12
    assert_in_delta Analysis.mode_entry(c, :threaded).gcells_per_s, 15.5, 1.0e-9
    assert Enum.map(c.modes, & &1.mode) == @modes
  end

  test "targets: met, unmet, and an interval that straddles the bound" do
    met = result(0.99)
    assert target(met, "Throughput at 10 kB, :normal").met
    assert target(met, ":yielding throughput / :normal, random 10 kB").met
    assert target(met, ":yielding throughput / :normal, random 100 kB").met
    refute target(met, ":yielding throughput / :normal, Spin 10M").met
    assert target(met, "One call on 10-byte strings, default options").measured == "0.250 us"
    assert target(met, "One call on 10-byte strings, default options").met
    # 1e8 cells at 31 Gcell/s: 3.23 ms
    refute target(met, "Seed pair wall time, :normal").met

    # 2 ns of check against 249 and 299 ns of call
    check = target(met, "Events' check with no handler / a :normal job call, 10 bytes")
    assert check.measured == "0.67% (95% 0.67-0.67)" and check.met
    inline = target(met, "Events' check with no handler / distance/2 (were it checked), 10 bytes")
    assert inline.measured == "0.80% (95% 0.80-0.80)" and inline.met

    # figures in Gcell/s, ms and us are information; the ratios pass or fail
    assert Enum.map(met.targets, & &1.absolute) ==
             [true, true] ++ List.duplicate(false, length(met.targets) - 4) ++ [true, true]

    unmet = result(0.95)
    t = target(unmet, ":yielding throughput / :normal, random 10 kB")
    refute t.met
    assert t.target == ":yielding throughput / :normal, random 10 kB >= 0.97x"
    assert t.measured == "0.9500x (95% 0.950-0.950)"

    # rounds from 0.95 to 0.99: the median is on the bound, the interval across it
    straddle = result(Enum.map(1..@rounds, &(0.95 + rem(&1, 5) / 100)))
    t = target(straddle, ":yielding throughput / :normal, random 10 kB")
    assert t.measured =~ ", not distinguishable from the bound)"
  end

  @rust_row "Rust job / C job, :yielding time, Spin 10M"

  test "the Rust Spin's entry: its time over the C job's, round by round" do
    # the C job drifts by +-20% from round to round, the Rust job follows
    # it at 1.02x: the paired ratio is exact
    c = for i <- 1..@rounds, do: 2.8e7 * (1 + (rem(i, 5) - 2) / 10)
    normal = Enum.map(c, &(&1 * 0.97))
    samples = %{normal: normal, yielding: c, rust_yielding: times(c, 1.02)}
    e = Analysis.rust_spin_entry(samples, 10_000_000)

    assert {e.mode, e.lang, e.samples} == {:yielding, :rust, @rounds}
    assert_in_delta e.c_ratio, 1.02, 1.0e-12
    assert_in_delta e.c_ratio_low, 1.02, 1.0e-12
    assert_in_delta e.c_ratio_high, 1.02, 1.0e-12
    assert_in_delta e.ratio_to_normal, 0.97 / 1.02, 1.0e-12
    assert e.median_ns == WellBehaved.Lab.Stats.median(samples.rust_yielding)
    assert_in_delta e.ns_per_iteration, e.median_ns / 1.0e7, 1.0e-12
  end

  test "the Rust job / C job target: met, unmet, and straddling the bound" do
    met = target(result(0.99, 1.01), @rust_row)
    assert met.target == @rust_row <> " <= 1.03x"
    assert met.measured == "1.0100x (95% 1.010-1.010)"
    assert met.met and not met.absolute

    unmet = target(result(0.99, 1.05), @rust_row)
    assert unmet.measured == "1.0500x (95% 1.050-1.050)"
    refute unmet.met

    # rounds from 1.00 to 1.05: the median is below the bound (met), the
    # interval across it
    ratios = Enum.map(1..@rounds, &Enum.at([1.0, 1.01, 1.02, 1.04, 1.05], rem(&1, 5)))
    straddle = target(result(0.99, ratios), @rust_row)
    assert straddle.met
    assert straddle.measured =~ ~r/^1\.0200x \(95% 1\.0[01]0-1\.0[45]0, not distinguishable/

    # a ratio clearly above the bound in most rounds is not met, with the
    # same wording when its interval still reaches below the bound
    ratios = Enum.map(1..@rounds, &if(rem(&1, 3) == 0, do: 1.0, else: 1.06))
    above = target(result(0.99, ratios), @rust_row)
    refute above.met

    # a result without the Rust job has no row
    no_rust = result(0.99)
    no_rust = put_in(no_rust.spin.rust, nil)
    refute Enum.any?(Analysis.targets(no_rust), &(&1.name == @rust_row))
  end

  test "a quick result without the 100 kB case has no target for it" do
    result = result(0.99)
    result = %{result | cases: Enum.reject(result.cases, &(&1.bytes == 100_000))}
    names = Enum.map(Analysis.targets(result), & &1.name)
    refute ":yielding throughput / :normal, random 100 kB" in names
    assert ":yielding throughput / :normal, random 1 kB" in names
  end

  test "Markdown, charts and tables of a made-up result" do
    result = result(0.99)
    md = Overhead.to_markdown(result)

    assert md =~ "## Overhead: each mode's throughput against :normal\n\n"
    refute md =~ "| machine | |"
    assert md =~ "| random 1 kB | 11 x 50 calls | 31.0 |"
    # the 100 kB case timed :normal and :yielding only
    assert md =~ ~r/\| random 100 kB \| 100000 \| [^|]+ \| - \| [^|]+ \| - \| - \| - \|/
    assert md =~ "**3.23 ms**"
    assert md =~ "| Spin 10M | 1.000 | 1.000 | 0.960 | 1.000 |"
    assert md =~ "| Spin 10M | 0.900 | 0.990 |"
    assert md =~ "| 4 x 10 kB pairs | 0.900 | 0.990 |"

    assert md =~
             "| One call on 10-byte strings, default options | <= 0.3 us | 0.250 us | within (information) |"

    assert md =~ "| :yielding throughput / :normal, Spin 10M | >= 0.97x |"
    assert md =~ "| #{@rust_row} | <= 1.03x | 1.0100x (95% 1.010-1.010) | yes |"
    # the Rust job's row in the Spin table, after the C job's modes
    assert md =~ ~r/\| :auto \| [^\n]+\n\| :yielding \(Rust\) \| [^|]+ \| 2\.85 \|/
    assert md =~ "its time over the C job's, median over the rounds, **1.0100x**"

    assert [ratio, throughput] = Overhead.charts(result)

    assert ratio.categories ==
             ["random 1 kB", "random 10 kB", "random 100 kB", "seed pair"] ++
               ["Spin 10M"]

    assert Enum.map(ratio.series, & &1.label) == Enum.map(@modes, &":#{&1}")
    dirty = Enum.find(throughput.series, &(&1.label == ":dirty_cpu"))
    assert Enum.at(dirty.values, 2) == nil

    assert [medians, spin, calls] = Overhead.tables(result)
    assert Enum.all?(medians.rows, &(length(&1) == length(medians.columns)))
    assert length(medians.rows) == 3 * length(@modes) + 2
    assert length(spin.rows) == length(@modes) + 1
    assert Enum.all?(spin.rows, &(length(&1) == length(spin.columns)))
    assert [:c] == spin.rows |> Enum.drop(-1) |> Enum.map(&Enum.at(&1, 3)) |> Enum.uniq()
    assert [_, _, _, :rust, :yielding | _] = List.last(spin.rows)
    assert [[:default | _], [:empty | _]] = calls.rows
  end
end
