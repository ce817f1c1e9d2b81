defmodule WellBehaved.LabTurnsTest do
  # The turns section's figures and target from made-up Probe.turns/2
  # reports: no benchmark runs.
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.Turns

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

    s = Turns.summary(rounds, 13_000)
    assert s.rounds == 3
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
  end
end
