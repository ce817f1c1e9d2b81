defmodule WellBehaved.LabTurnsTest do
  # The turns section's figures and target from made-up Probe.turns/2
  # reports: no benchmark runs.
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.Turns

  doctest Turns

  defp stats(p50, p90),
    do: %{
      p50_us: p50,
      p90_us: p90,
      p99_us: p90,
      cpu_p99_us: p90,
      turns: 100,
      open_turns: 0,
      dirty_turns: 0
    }

  defp report(f, c),
    do: %{function: f, control: c, p50_ratio: f.p50_us / c.p50_us, p90_ratio: f.p90_us / c.p90_us}

  test "a cell is the median of its rounds" do
    rounds =
      Enum.with_index([
        report(stats(14.0, 15.0), stats(15.0, 15.0)),
        report(stats(13.0, 14.0), stats(15.0, 16.0)),
        report(stats(40.0, 90.0), stats(15.0, 15.0))
      ])
      |> Enum.map(fn {r, i} -> {i, r} end)

    s = Turns.summary(Enum.reverse(rounds), 13_000)
    assert s.rounds == 3
    # each round's own figures, in the order of the rounds
    assert Enum.map(s.by_round, &{&1.round, &1.p50_us, &1.p90_us}) ==
             [{0, 14.0, 15.0}, {1, 13.0, 14.0}, {2, 40.0, 90.0}]

    assert s.p50_us == 14.0
    assert s.p90_us == 15.0
    assert s.erlang_p50_us == 15.0
    assert_in_delta s.p50_ratio, 14 / 15, 1.0e-9
    assert s.default_slice_us == 13.0
  end

  defp cell(w, mode, p50_ratio, p90_ratio, slice \\ nil),
    do: %{
      work_ms: w,
      mode: mode,
      slice_us: slice,
      p50_ratio: p50_ratio,
      p90_ratio: p90_ratio,
      p50_us: 15 * p50_ratio,
      p90_us: 15 * p90_ratio,
      erlang_p50_us: 15.0,
      default_slice_us: 13.5
    }

  test "the target: p50 <= 1.1x and p90 <= 1.2x at every work size" do
    good = %{rows: for(w <- [1, 10, 100], m <- [:yielding, :auto], do: cell(w, m, 0.9, 0.95))}
    assert [%{met: true, measured: m}, %{met: true}] = Turns.targets(good, [1, 10, 100])
    assert m =~ "worst p50 0.90x, p90 0.95x over 3 work sizes"

    # a longer slice elsewhere does not count; the default slice's cells do
    rows = [cell(10, :yielding, 2.0, 2.0, 50) | good.rows]
    assert [%{met: true} | _] = Turns.targets(%{rows: rows}, [1, 10, 100])

    p90_over = %{rows: [cell(100, :yielding, 1.0, 1.3) | tl(good.rows)]}
    assert [%{met: false} | _] = Turns.targets(p90_over, [1, 10, 100])
    # a missing work size is not met
    assert [%{met: false} | _] = Turns.targets(%{rows: tl(good.rows)}, [1, 10, 100])
  end

  test "the cells: the Rust job in :yielding and :auto at every size, beside the C job's" do
    cells = Turns.cells([1, 10, 100])
    rust = Enum.filter(cells, &(&1.lang == :rust))

    assert Enum.map(rust, &{&1.work_ms, &1.mode}) ==
             for(w <- [1, 10, 100], m <- [:yielding, :auto], do: {w, m})

    assert Enum.all?(rust, &(&1.slice_us == nil))
    # the other slice lengths are the C job's
    assert cells |> Enum.filter(& &1.slice_us) |> Enum.map(& &1.lang) |> Enum.uniq() == [:c]
    assert length(cells) == 3 * 6 + 3 * 2 + 4
  end

  # a cell with its rounds' p50 and p90: `rounds` a list of {p50, p90}
  defp round_cell(w, mode, lang, rounds) do
    by_round =
      rounds
      |> Enum.with_index(1)
      |> Enum.map(fn {{p50, p90}, i} -> %{round: i, p50_us: p50, p90_us: p90} end)

    %{cell(w, mode, 1.0, 1.0) | p50_us: 99.0, p90_us: 99.0}
    |> Map.merge(%{lang: lang, by_round: by_round})
  end

  # C cells drifting from round to round, Rust cells `k50` and `k90` times
  # them in the same round
  defp rust_rows(k50, k90, sizes \\ [1, 10, 100]) do
    c_rounds = [{12.0, 14.0}, {20.0, 30.0}, {12.5, 13.0}]

    for w <- sizes, m <- [:yielding, :auto], lang <- [:c, :rust] do
      rounds =
        if lang == :c,
          do: c_rounds,
          else: Enum.map(c_rounds, fn {a, b} -> {a * k50, b * k90} end)

      round_cell(w, m, lang, rounds)
    end
  end

  @rust_target "Rust :yielding/:auto turns as short as C's: median p50 and p90 each <= 1.1x the C cell's, same rounds"

  test "the Rust target pairs the Rust and C cells by round" do
    # the C cells' rounds differ by 1.7x; paired, the Rust job is 1.05x
    assert [%{target: @rust_target, met: true, measured: m}] =
             Turns.rust_target(%{rows: rust_rows(1.05, 1.05)}, [1, 10, 100])

    assert m == "worst p50 1.05x (:yielding, 1 ms), p90 1.05x (:yielding, 1 ms) over 6 cells"

    # p90 over the bound
    assert [%{met: false, measured: m}] =
             Turns.rust_target(%{rows: rust_rows(1.0, 1.2)}, [1, 10, 100])

    assert m =~ "p90 1.20x"

    # the medians, not the worst round: one round at 2x of three is met
    rows =
      Enum.map(rust_rows(1.0, 1.0), fn
        %{lang: :rust, work_ms: 10, mode: :auto} = r ->
          %{r | by_round: List.update_at(r.by_round, 1, &%{&1 | p50_us: &1.p50_us * 2})}

        r ->
          r
      end)

    assert [%{met: true}] = Turns.rust_target(%{rows: rows}, [1, 10, 100])

    # pairing by round, not the cells' medians: C rounds of 10, 30 and 12
    # us against Rust rounds of 10, 30 and 18 us are 1.0x, 1.0x and 1.5x
    # (median 1.0x), though the medians are 12 and 18 us
    paired =
      for w <- [1, 10, 100], m <- [:yielding, :auto] do
        [
          round_cell(w, m, :c, [{10.0, 10.0}, {30.0, 30.0}, {12.0, 12.0}]),
          round_cell(w, m, :rust, [{10.0, 10.0}, {30.0, 30.0}, {18.0, 18.0}])
        ]
      end

    assert [%{met: true, measured: m}] =
             Turns.rust_target(%{rows: List.flatten(paired)}, [1, 10, 100])

    assert m =~ "worst p50 1.00x"

    # a missing Rust cell, or no turns at all, is not met
    assert [%{met: false, measured: m}] =
             Turns.rust_target(%{rows: rust_rows(1.0, 1.0, [1, 10])}, [1, 10, 100])

    assert m =~ "over 4 cells"
    assert Turns.rust_target(nil, [1, 10, 100]) == []
  end

  test "the C cells keep the existing targets and the recommendation's evidence" do
    # the Rust cells, far over the bound, do not enter the C job's target
    rows = rust_rows(3.0, 3.0) |> Enum.map(&Map.merge(&1, %{p50_ratio: 0.9, p90_ratio: 0.95}))

    rows =
      Enum.map(rows, fn
        %{lang: :rust} = r -> %{r | p50_ratio: 3.0, p90_ratio: 3.0}
        r -> r
      end)

    assert [%{met: true}, %{met: true}] = Turns.targets(%{rows: rows}, [1, 10, 100])
    assert %{lang: :c} = Turns.find(%{rows: rows}, 10, :yielding)
    assert %{lang: :rust} = Turns.find(%{rows: rows}, 10, :yielding, :rust)
    # rows of a run before the Rust cells carry no lang: the C job's
    assert %{mode: :auto} = Turns.find(%{rows: [cell(1, :auto, 1.0, 1.0)]}, 1, :auto)
  end

  test "a cell in words, and the section" do
    r = cell(10, :yielding, 0.9, 0.95)

    assert Turns.text(r) =~
             "13.5 us per turn (p50; p90 14.3) against 15.0 us for pure Erlang (0.90x, p90 0.95x)"

    assert Turns.text(nil) == "-"

    md =
      IO.iodata_to_binary(
        Turns.to_markdown(%{
          rows: [
            Map.merge(r, %{p99_us: 16.0, cpu_p99_us: 15.5, erlang_p90_us: 15.1, dirty_turns: 0})
          ],
          window_ms: 150,
          rounds: 3
        })
      )

    assert md =~
             "| 10 ms | :yielding | default (13.5 us) | 13.5 | 14.3 | 16.0 | 15.5 | 15.0 / 15.1 | 0.90x / 0.95x | 0 |"

    assert Turns.to_markdown(nil) == ""

    # the Rust job's row after the C job's of the same work
    rust = Map.merge(r, %{p99_us: 16.0, cpu_p99_us: 15.5, erlang_p90_us: 15.1, dirty_turns: 0})

    md =
      IO.iodata_to_binary(
        Turns.to_markdown(%{
          rows: [Map.put(rust, :lang, :rust), Map.put(rust, :lang, :c)],
          window_ms: 150,
          rounds: 3
        })
      )

    assert md =~ ~r/\| 10 ms \| :yielding \| [^\n]+\n\| 10 ms \| :yielding \(Rust\) \| default/
  end
end
