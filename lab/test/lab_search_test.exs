defmodule WellBehaved.LabSearchTest do
  # WellBehaved.Lab.Search: its targets' verdicts and its rendering, on
  # made-up results; one rough run of the suite itself (small sets).
  use ExUnit.Case, async: false

  alias WellBehaved.Lab.{JSON, Search}

  @methods [:nearest_index, :nearest_list, :distances_index, :distances_list, :enum_map]

  defp summary(index_ns, speedup, low) do
    rows =
      for m <- @methods do
        ns = if m == :nearest_index, do: index_ns, else: index_ns * 10
        %{method: m, ns_per_candidate: ns, low: ns * 0.9, high: ns * 1.1}
      end

    %{rows: rows, speedup: speedup, speedup_low: low, speedup_high: speedup * 1.2}
  end

  defp lateness(verdict, ratio) do
    %{
      ratio: ratio,
      ratio_low: ratio && ratio * 0.8,
      ratio_high: ratio && ratio * 1.2,
      verdict: verdict
    }
  end

  defp set(count, index_ns, speedup, low),
    do: %{
      candidates: count,
      one_query: summary(index_ns, speedup, low),
      many_queries: summary(index_ns, speedup, low)
    }

  test "targets: ns per candidate, the speed-up's interval and the lateness verdict" do
    met = Search.targets([set(100_000, 18.0, 25.0, 12.0)], lateness(:within, 1.1))
    assert Enum.map(met, & &1.met) == [true, true, true]

    missed = Search.targets([set(100_000, 21.0, 12.0, 9.5)], lateness(:outside, 3.0))
    assert Enum.map(missed, & &1.met) == [false, false, false]

    # a verdict that is not distinguishable is not met
    [_, _, late] =
      Search.targets([set(100_000, 18.0, 25.0, 12.0)], lateness(:not_distinguishable, 1.2))

    refute late.met

    # no 100,000-candidate set (a rough run): nothing to judge
    rough = Search.targets([set(5_000, 10.0, 30.0, 20.0)], lateness(:not_measured, nil))
    assert Enum.map(rough, & &1.measured) == ["-", "-", "-"]
    assert Enum.all?(rough, &(not &1.met))
  end

  # a repeat of the lateness windows: :auto and pure Erlang p99 (ms)
  defp windows(list) do
    for {auto, erlang, noisy} <- list do
      %{
        auto: %{p99_ms: auto, noisy: noisy, calls: 1},
        erlang: %{p99_ms: erlang, noisy: false, calls: 1},
        normal: %{p99_ms: 9.0, noisy: false, calls: 1}
      }
    end
  end

  test "lateness: the lab's verdict rule, quiet repeats first" do
    quiet = List.duplicate({1.0, 1.0, false}, 3)
    j = WellBehaved.Lab.Search.Lateness.judge(windows(quiet ++ [{9.0, 1.0, true}]))
    assert %{repeats_used: 3, ratio: 1.0, verdict: :within} = j

    # too few quiet repeats: no verdict
    j = WellBehaved.Lab.Search.Lateness.judge(windows(tl(quiet) ++ [{1.0, 1.0, true}]))
    assert %{repeats_used: 3, verdict: :not_distinguishable} = j

    # no ticker p99: nothing measured
    assert %{verdict: :not_measured, ratio: nil, repeats_used: 0} =
             WellBehaved.Lab.Search.Lateness.judge(windows([{nil, 1.0, false}]))
  end

  test "a rough run renders as Markdown, charts, tables and JSON" do
    result = Search.run(quick: true, rounds_scale: 0.02)
    assert [%{candidates: 2_000}] = result.sets
    assert result.lateness.windows != []

    markdown = Search.to_markdown(result)
    assert markdown =~ "## Fuzzy search"
    for m <- @methods, do: assert(markdown =~ "`#{m}`")

    assert [%{name: "search_2000", series: [_, _]}] = Search.charts(result)
    [throughput, lateness] = Search.tables(result)
    assert length(throughput.rows) == 2 * length(@methods)
    assert length(lateness.rows) == length(result.lateness.windows)
    assert is_binary(IO.iodata_to_binary(JSON.encode(result)))
  end
end
