defmodule WellBehaved.LabSearchTest do
  # WellBehaved.Lab.Search: its targets' verdicts and its rendering, on
  # made-up results; one rough run of the suite itself (small sets).
  use ExUnit.Case, async: false

  alias WellBehaved.Lab.{JSON, Search, Stats}

  @methods WellBehaved.Lab.Search.Plan.methods()

  doctest WellBehaved.Lab.Search.Fuzzy

  # codepoint: nearest_index_codepoint's time over nearest_index's
  defp summary(index_ns, speedup, low, codepoint) do
    rows =
      for m <- @methods do
        ns =
          case m do
            :nearest_index -> index_ns
            :nearest_index_codepoint -> index_ns * codepoint
            _ -> index_ns * 10
          end

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

  defp set(count, index_ns, speedup, low, codepoint \\ 1.1),
    do: %{
      candidates: count,
      one_query: summary(index_ns, speedup, low, codepoint),
      many_queries: summary(index_ns, speedup, low, codepoint)
    }

  test "targets: ns per candidate, the speed-up's interval, codepoints and the lateness verdict" do
    met = Search.targets([set(100_000, 18.0, 25.0, 12.0)], lateness(:within, 1.1))
    assert Enum.map(met, & &1.met) == [true, true, true, true]
    assert Enum.at(met, 2).measured == "1.10x"

    missed = Search.targets([set(100_000, 21.0, 12.0, 9.5, 1.5)], lateness(:outside, 3.0))
    assert Enum.map(missed, & &1.met) == [false, false, false, false]

    # a verdict that is not distinguishable is not met
    [_, _, _, late] =
      Search.targets([set(100_000, 18.0, 25.0, 12.0)], lateness(:not_distinguishable, 1.2))

    refute late.met

    # the long candidates' set of the same count is not the one judged
    long = Map.put(set(100_000, 99.0, 2.0, 1.0, 9.0), :candidate_bytes, "100-200")

    assert Enum.map(
             Search.targets([long, set(100_000, 18.0, 25.0, 12.0)], lateness(:within, 1.1)),
             & &1.met
           ) ==
             [true, true, true, true]

    # no 100,000-candidate set (a rough run): nothing to judge
    rough = Search.targets([set(5_000, 10.0, 30.0, 20.0)], lateness(:not_measured, nil))
    assert Enum.map(rough, & &1.measured) == ["-", "-", "-", "-"]
    assert Enum.all?(rough, &(not &1.met))
  end

  defp fuzzy(count, ratio_ns, speedup_low, verdict) do
    %{
      candidates: count,
      scorers: [
        %{method: :levenshtein_nearest, ns: 8.0, low: 7.0, high: 9.0} |> cold(9.0),
        %{method: :ratio, ns: ratio_ns, low: ratio_ns, high: ratio_ns} |> cold(ratio_ns + 3),
        %{method: :hamming, ns: 5.0, low: 4.0, high: 6.0} |> cold(11.0)
      ],
      cdist: %{
        queries: 1_000,
        candidates: count,
        workers: 2,
        pairs: [%{one_s: 2.0, all_s: 1.0, speedup: 2.0}],
        speedup: 1.95,
        speedup_low: speedup_low,
        speedup_high: 2.1,
        ns_per_cell_one: 20.0
      },
      lateness:
        Map.merge(lateness(verdict, 1.1), %{
          workers: 2,
          candidates: count,
          search_ms: 5.0,
          repeats_used: 5
        })
    }
  end

  defp cold(row, ns), do: Map.merge(row, %{cold_ns: ns, cold_low: ns, cold_high: ns})

  test "fuzzy targets: every scorer's ns per candidate, cdist's speed-up interval, its lateness" do
    # the edit scripts' target: not measured in these results
    assert Enum.map(Search.Analysis.fuzzy_targets(fuzzy(100_000, 9.0, 1.85, :within)), & &1.met) ==
             [true, true, true, false]

    [ns, speedup, late, edit] = Search.Analysis.fuzzy_targets(fuzzy(100_000, 30.0, 1.7, :outside))
    assert edit.measured == "-"
    refute ns.met or speedup.met or late.met
    # an interval across the bound is not told apart from it; one under it is below
    assert speedup.measured == "1.95x (1.70-2.10), not told apart from the bound"

    [_, below | _] =
      Search.Analysis.fuzzy_targets(
        put_in(fuzzy(100_000, 9.0, 1.5, :within), [:cdist, :speedup_high], 1.7)
      )

    refute below.met
    assert below.measured =~ ", below the bound"

    assert ns.measured =~
             "1 of 2 within (0 of 2 on the first query after other work); slowest ratio 30 ns"

    [ns | _] = Search.Analysis.fuzzy_targets(fuzzy(100_000, 6.0, 1.85, :within))
    assert ns.measured == "2 of 2 within (1 of 2 on the first query after other work)"

    # a rough run (fewer candidates) judges nothing of the size targets
    rough = Search.Analysis.fuzzy_targets(fuzzy(2_000, 1.0, 1.9, :within))
    assert Enum.map(rough, & &1.met) == [false, false, true, false]
  end

  test "fuzzy targets: with the machine's pace unsteady, a scorer over the bound in its median but within it in its fastest round is not told apart" do
    f = fuzzy(100_000, 12.0, 1.85, :within)
    # ratio's fastest round within the bound; hamming's median too
    f = %{
      f
      | scorers: Enum.map(f.scorers, &if(&1.method == :ratio, do: %{&1 | low: 8.0}, else: &1))
    }

    pace = fn spread -> Search.Fuzzy.pace_summary([2.0, 2.0 * spread, 2.1]) end

    [ns | _] = Search.Analysis.fuzzy_targets(Map.put(f, :pace, pace.(2.0)))
    refute ns.met

    assert ns.measured =~
             "1 of 2 within (0 of 2 on the first query after other work); " <>
               "1 not told apart from the bound (ratio 12.0, fastest 8.0): " <>
               "the machine's pace varied 2.00x across the rounds"

    refute ns.measured =~ "slowest"

    # a steady pace: over is over
    [ns | _] = Search.Analysis.fuzzy_targets(Map.put(f, :pace, pace.(1.1)))
    assert ns.measured =~ "; slowest ratio 12 ns"
    refute ns.measured =~ "told apart"

    # the fastest round over the bound too: over, however unsteady
    slow = %{
      f
      | scorers: Enum.map(f.scorers, &if(&1.method == :ratio, do: %{&1 | low: 10.5}, else: &1))
    }

    [ns | _] = Search.Analysis.fuzzy_targets(Map.put(slow, :pace, pace.(2.0)))
    assert ns.measured =~ "; slowest ratio 12 ns"
  end

  test "the pace of the rounds: median, range and spread" do
    p = Search.Fuzzy.pace_summary([3.0, 1.5, 2.0, 2.5])
    assert p.low == 1.5 and p.high == 3.0 and p.spread == 2.0
    assert p.ns == Stats.median([3.0, 1.5, 2.0, 2.5])
    # 1.5 and 1.875 at most: within 1.25x of the fastest
    assert p.rounds == 4 and p.steady_rounds == 1
  end

  test "the steady rounds: within the pace's spread of the fastest, figures over at least three" do
    max = Search.Fuzzy.pace_spread_max()
    paces = [4.0, 4.0 * max, 4.0 * max * 1.01, 8.0, 4.1]
    steady = Search.Fuzzy.steady_rounds(paces)
    assert steady == [true, true, false, false, true]

    # a scorer's times in those rounds: the slow rounds left out
    assert Search.Fuzzy.steady_figures([9.0, 9.5, 20.0, 30.0, 8.0], steady) ==
             %{steady_ns: 9.0, steady_low: 8.0, steady_high: 9.5}

    # two steady rounds are too few
    assert Search.Fuzzy.steady_figures([9.0, 20.0, 8.0], [true, false, true]) ==
             %{steady_ns: nil, steady_low: nil, steady_high: nil}
  end

  test "fuzzy targets: judged on the steady rounds' medians when three or more rounds ran at the steady pace" do
    f = fuzzy(100_000, 12.0, 1.85, :within)
    steady = fn row, ns -> Map.merge(row, %{steady_ns: ns, steady_low: ns, steady_high: ns}) end
    # ratio over the bound over all rounds, within it over the steady ones
    rows = Enum.map(f.scorers, &steady.(&1, if(&1.method == :ratio, do: 9.0, else: &1.ns)))
    # 4 of 6 rounds steady
    pace = Search.Fuzzy.pace_summary([4.0, 4.2, 4.4, 4.1, 9.0, 12.0])
    f = %{f | scorers: rows} |> Map.put(:pace, pace)

    [ns | _] = Search.Analysis.fuzzy_targets(f)
    assert ns.met

    assert ns.measured ==
             "2 of 2 within over the 4 of 6 rounds at the machine's steady pace " <>
               "(1 of 2 over all rounds, 0 of 2 on the first query after other work)"

    # a steady figure over the bound is over, named by it
    rows = Enum.map(rows, &if(&1.method == :hamming, do: steady.(&1, 10.5), else: &1))
    [ns | _] = Search.Analysis.fuzzy_targets(%{f | scorers: rows})
    refute ns.met

    assert ns.measured =~ "1 of 2 within over the 4 of 6 rounds" and
             ns.measured =~ "slowest hamming 11 ns"

    refute ns.measured =~ "told apart"

    # two steady rounds (no steady figures then, as steady_figures/2 gives
    # them): all rounds' medians, ratio's not told apart from the bound
    few = Map.put(f, :pace, Search.Fuzzy.pace_summary([4.0, 4.2, 9.0, 12.0]))
    none = %{steady_ns: nil, steady_low: nil, steady_high: nil}

    few = %{
      few
      | scorers: Enum.map(few.scorers, &Map.merge(%{&1 | low: min(&1.low, 8.0)}, none))
    }

    [ns | _] = Search.Analysis.fuzzy_targets(few)
    refute ns.met
    assert ns.measured =~ "1 not told apart from the bound (ratio 12.0, fastest 8.0)"
    refute ns.measured =~ "steady pace"

    # every round steady: the steady medians are all rounds', said once
    all = Map.put(f, :pace, Search.Fuzzy.pace_summary([4.0, 4.2, 4.4]))
    [ns | _] = Search.Analysis.fuzzy_targets(all)
    assert ns.measured =~ "2 of 2 within (0 of 2"
  end

  test "rapidfuzz's figures: the program's lines parsed, beside ours in the report" do
    out = "ratio cached 32.252 31.453 111.733\nratio multi 5.894 5.750 5.925\nchecksum 1.0\n"
    rows = Search.Rapidfuzz.parse(out)

    assert rows == [
             %{method: :ratio, way: :cached, ns: 32.252, low: 31.453, high: 111.733},
             %{method: :ratio, way: :multi, ns: 5.894, low: 5.75, high: 5.925}
           ]

    rf = %{available: true, rows: rows}
    assert Search.Rapidfuzz.ns(rf, :ratio, :multi) == 5.894
    assert Search.Rapidfuzz.ns(rf, :hamming, :multi) == nil
    assert Search.Rapidfuzz.ns(%{available: false, reason: "x"}, :ratio, :cached) == nil
    assert Search.Rapidfuzz.ns(nil, :ratio, :cached) == nil
  end

  doctest Search.Pairs

  doctest Search.EditScripts

  test "the edit scripts beside rapidfuzz-cpp: the target judged on each shape's interval" do
    out = """
    agree editops random 1000 0 0 8
    editops random 1000 68000.0 79000.0 0.84 0.56 0.90 7
    agree editops similar 1000 0 2 8
    editops similar 1000 55000.0 70000.0 0.78 0.75 1.60 7
    """

    parsed = Map.put(Search.EditScripts.parse(out), :available, true)
    target = Search.EditScripts.target(parsed)
    # the similar pairs' interval reaches past 1.5x: not met
    refute target.met
    assert target.measured == "random 0.84x (0.56-0.90), similar 0.78x (0.75-1.60)"
    assert target.target =~ "levenshtein_editops <= 1.5x"

    within = put_in(parsed, [:rows, Access.at(1), :high], 1.2)
    assert Search.EditScripts.target(within).met
    # a distance that differs fails it, whatever the times
    wrong = put_in(within, [:agree, Access.at(0), :distances], 1)
    refute Search.EditScripts.target(wrong).met
    assert Search.EditScripts.target(wrong).measured =~ "distances differ"

    text = Search.EditScripts.to_markdown(parsed)
    assert text =~ "similar: 2 of 8 pairs (0 distances)"
    assert text =~ "| random | 68.00 us | 79.00 us | 0.84 (0.56-0.90) |"
    assert Search.EditScripts.to_markdown(within) =~ "similar: 2 of 8"
    same = put_in(parsed, [:agree, Access.at(1), :scripts], 0)
    assert Search.EditScripts.to_markdown(same) =~ "record for record"
    assert Search.EditScripts.to_markdown(%{available: false, reason: "not measured: x"}) =~ "x."
    assert Search.EditScripts.to_markdown(nil) == ""
    refute Search.EditScripts.target(%{available: false, reason: "x"}).met
  end

  test "the pairs beside rapidfuzz-cpp: lines parsed, a table a scorer, disagreements said" do
    out = """
    agree pairs 8 osa 0 64
    pair osa 8 203.13 74.74 2.732 2.689 2.772 11
    agree pairs 8 jaro 3 64
    pair jaro 8 116.27 130.31 0.890 0.868 0.926 11
    agree pairs 1000 osa 0 8
    pair osa 1000 129993.58 155680.88 0.835 0.754 0.863 11
    """

    parsed = Search.Pairs.parse(out)

    assert Enum.map(parsed.rows, &{&1.scorer, &1.size, &1.ratio}) ==
             [{:osa, 8, 2.732}, {:jaro, 8, 0.89}, {:osa, 1000, 0.835}]

    assert parsed.disagree == [{:jaro, 8, 3}]

    assert Search.Pairs.table_rows(parsed.rows) == [
             ["`osa`", "2.73 (2.69-2.77)", "-", "-", "0.84 (0.75-0.86)"],
             ["`jaro`", "0.89 (0.87-0.93)", "-", "-", "-"]
           ]

    text = Search.Pairs.to_markdown(Map.put(parsed, :available, true))
    assert text =~ "| `osa` | 2.73 (2.69-2.77) |"
    assert text =~ "`jaro` at 8 B (3 pairs)"

    agreed = Search.Pairs.to_markdown(%{available: true, rows: parsed.rows, disagree: []})
    assert agreed =~ "same score for every pair"

    assert Search.Pairs.to_markdown(%{available: false, reason: "not measured: x"}) =~
             "not measured: x"

    assert Search.Pairs.to_markdown(nil) == ""
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

    # pure Erlang's p99 out of line in repeat 4: disturbed, left out
    j = WellBehaved.Lab.Search.Lateness.judge(windows(quiet ++ [{1.0, 9.0, false}]))
    assert %{repeats_used: 3, ratio: 1.0, disturbed: [4]} = j

    # no ticker p99: nothing measured
    assert %{verdict: :not_measured, ratio: nil, repeats_used: 0} =
             WellBehaved.Lab.Search.Lateness.judge(windows([{nil, 1.0, false}]))
  end

  doctest WellBehaved.Lab.Search.Titles
  doctest WellBehaved.Lab.Search.Analysis

  # extract_many's figures at the judged sizes: rounds' ratios
  defp many(ratios, opts \\ []) do
    run = fn s ->
      %{list_s: s, index_s: s, prep_s: 0.02, index_new_s: 0.03, schedulers: 1, dirty_cpu: 1}
    end

    rounds =
      for {ratio, r} <- Enum.with_index(ratios, 1) do
        if ratio,
          do: %{round: r, order: [:one, :two], one: run.(ratio), two: run.(1.0)},
          else: %{
            round: r,
            order: [:one, :two],
            one: %{failed: "crashed (exit 1)"},
            two: run.(1.0)
          }
      end
      |> Enum.map(fn r ->
        Map.merge(r, %{
          ratio: r.one[:list_s] && r.one.list_s / r.two.list_s,
          index_ratio: r.one[:index_s] && r.one.index_s / r.two.index_s
        })
      end)

    %{queries: 1_000, candidates: 100_000, cpus: 2, bound: 1.8, available: true, rounds: rounds}
    |> Map.merge(Search.Many.summarize(rounds))
    |> Map.merge(Map.new(opts))
  end

  defp dedupe(seconds, opts \\ []) do
    %{
      titles: 50_000,
      seconds: seconds,
      low: seconds * 0.9,
      high: seconds * 1.1,
      schedulers: 2,
      cores: 2,
      bound_s: 30,
      errors: []
    }
    |> Map.merge(Map.new(opts))
  end

  test "many-queries targets: the ratio's interval against 1.8x, dedupe's time against 30 s" do
    [m, d] = Search.Analysis.many_targets(many([2.0, 1.9, 1.85]), dedupe(12.0))
    assert m.met and m.measured == "1.90x (1.85-2.00)"
    assert m.target =~ "extract_many of 1,000 queries over 100,000 candidates >= 1.8x"
    assert d.met and d.absolute and d.measured == "12.0 s (10.8-13.2), 2 schedulers on 2 cores"
    assert d.target =~ "dedupe of 50,000 product titles < 30 s (2 cores"

    # an interval across the bound is not told apart; one under it is below
    [m, d] = Search.Analysis.many_targets(many([2.0, 1.7, 1.9]), dedupe(31.0))
    refute m.met or d.met
    assert m.measured == "1.90x (1.70-2.00), not told apart from the bound"
    [m, _] = Search.Analysis.many_targets(many([1.5, 1.6, 1.2]), dedupe(1.0))
    assert m.measured =~ ", below the bound"

    # a failed run leaves its round out, and says so
    [m, _] = Search.Analysis.many_targets(many([2.0, nil, 1.9]), dedupe(1.0))
    assert m.met and m.measured == "1.95x (1.90-2.00), 2 of 3 rounds"
    [m, _] = Search.Analysis.many_targets(many([nil]), dedupe(1.0))
    refute m.met
    assert m.measured =~ "no round ended"

    # fewer than 2 CPUs: nothing measured, and why
    one_cpu =
      many([],
        available: false,
        reason: "1 CPU available to the VM: two schedulers cannot run at once"
      )

    [m, _] = Search.Analysis.many_targets(one_cpu, dedupe(1.0))
    refute m.met
    assert m.measured == "- (1 CPU available to the VM: two schedulers cannot run at once)"

    # other sizes (a rough run): "-"; dedupe's error is named
    [m, d] =
      Search.Analysis.many_targets(
        many([2.0, 2.0], candidates: 2_000),
        dedupe(1.0, titles: 2_000)
      )

    assert {m.measured, m.met, d.measured, d.met} == {"-", false, "-", false}

    [_, d] =
      Search.Analysis.many_targets(
        many([2.0]),
        dedupe(1.0, errors: ["returned {:error, :enomem}"])
      )

    assert {d.measured, d.met} == {"- (returned {:error, :enomem})", false}
  end

  test "extract_many's rounds: ratios of the rounds whose two runs ended, each VM's medians" do
    s = Search.Many.summarize(many([3.0, nil, 1.0, 2.0]).rounds)
    assert s.rounds_done == 3 and s.ratio == 2.0 and {s.ratio_low, s.ratio_high} == {1.0, 3.0}
    assert s.one.list_s == 2.0 and s.two.list_s == 1.0 and s.one.prep_s == 0.02
    assert %{ratio: nil, one: nil, rounds_done: 0} = Search.Many.summarize(many([nil]).rounds)

    assert Search.Many.line(hd(many([nil]).rounds)) == "round 1: one: crashed (exit 1)"

    assert Search.Many.line(hd(many([2.0]).rounds)) =~
             "round 1 (one then two): 1 scheduler 2.00 s"

    assert Search.Many.flags(:two) == ["+S", "2:2", "+SDcpu", "2:2"]
  end

  # the change a near-duplicate is of its title, or nil: two words
  # swapped (the same words), the case changed, a word added, a letter
  # dropped
  defp change(copy, title) do
    {a, b} = {String.split(copy), String.split(title)}

    cond do
      String.downcase(copy) == String.downcase(title) ->
        :case

      Enum.sort(a) == Enum.sort(b) ->
        :swap

      length(a) == length(b) + 1 and Enum.any?(0..length(b), &(List.delete_at(a, &1) == b)) ->
        :added

      byte_size(copy) + 1 == byte_size(title) and dropped?(copy, title) ->
        :dropped

      true ->
        nil
    end
  end

  defp dropped?(copy, title) do
    Enum.any?(0..(byte_size(title) - 1), fn i ->
      binary_part(title, 0, i) <> binary_part(title, i + 1, byte_size(title) - i - 1) == copy
    end)
  end

  test "product titles: a fifth near-duplicates, each one change from a product's title before it" do
    g = Search.Titles.generate(1_000, 3)
    assert length(g.titles) == 1_000 and g.near_duplicates == 200 and g.products == 800
    assert g == Search.Titles.generate(1_000, 3)
    refute g.titles == Search.Titles.generate(1_000, 4).titles
    assert Enum.all?(g.titles, &(byte_size(&1) in 20..120))

    pairs = Enum.zip(g.titles, g.copies)
    products = for {t, false} <- pairs, do: t
    # the products are distinct, and so are the members of a family
    assert length(Enum.uniq(products)) == length(products)

    changes =
      for {{copy, true}, at} <- Enum.with_index(pairs) do
        before = for {t, false} <- Enum.take(pairs, at), do: t
        # a dropped letter is never a digit: the same words holding digits
        Enum.find_value(before, &change(copy, &1)) || flunk("#{copy} is no change of a product")
      end

    # every kind of change is made
    assert Enum.sort(Enum.uniq(changes)) == [:added, :case, :dropped, :swap]

    # families: titles that differ only in a word holding a digit
    digitless = fn t -> t |> String.split() |> Enum.reject(&(&1 =~ ~r/\d/)) end
    assert Enum.count(Enum.frequencies_by(products, digitless), fn {_, n} -> n > 1 end) > 50
  end

  test "the parts on many queries at once alone: extract_many in child VMs, dedupe, their rows" do
    r = Search.run_many(rounds_scale: 0.02)
    m = r.many
    assert {m.queries, m.candidates} == {20, 2_000}

    if m.available do
      assert [%{order: [:one, :two]}, %{order: [:two, :one]}] = m.rounds
      # the child VMs ran with the schedulers asked for
      assert {m.one.schedulers, m.one.dirty_cpu, m.two.schedulers, m.two.dirty_cpu} ==
               {1, 1, 2, 2}

      assert m.rounds_done == 2 and m.ratio > 0 and m.ratio_low <= m.ratio_high
      assert m.one.prep_s > 0 and m.one.index_new_s > 0
    else
      assert m.cpus < 2 and m.reason =~ "CPU"
    end

    d = r.dedupe
    assert d.titles == 2_000 and length(d.rounds) == 2 and d.errors == []
    # the model-number rule keeps the families apart
    assert d.groups >= d.products and d.ignore.groups < d.ignore.exact_groups
    assert d.low <= d.seconds and d.seconds <= d.high

    assert [
             %{target: "extract_many" <> _, measured: "-" <> _},
             %{target: "dedupe" <> _, measured: "-"}
           ] = r.targets

    markdown = Search.Render.many_markdown(r)
    assert markdown =~ "### Many queries at once" and markdown =~ "### Dedupe of product titles"
    assert markdown =~ "numbers: :ignore" and markdown =~ "| target | measured | met |"
  end

  test "a rough run renders as Markdown, charts, tables and JSON" do
    result = Search.run(quick: true, rounds_scale: 0.02)
    # short candidates, then long ones past a machine word
    assert [%{candidates: 2_000, candidate_bytes: "10-30"}, %{candidate_bytes: "100-200"} = long] =
             result.sets

    assert result.lateness.windows != []

    markdown = Search.to_markdown(result)
    assert markdown =~ "## Fuzzy search"
    # every scorer, and the older search beside them; cdist's pairs
    assert length(result.fuzzy.scorers) == length(WellBehaved.Fuzzy.Call.scorers()) + 1
    assert markdown =~ "### Fuzzy matching: every scorer, cdist" and markdown =~ "`wratio`"
    assert [_ | _] = result.fuzzy.cdist.pairs
    # the token scorers on candidates of several words too
    assert length(result.fuzzy.words.scorers) == 9 and markdown =~ "candidates of 2-3 words"
    # rapidfuzz's figures beside ours, or why there are none
    assert markdown =~ "rapidfuzz-cpp"

    if result.fuzzy.rapidfuzz.available,
      do: assert(Search.Rapidfuzz.ns(result.fuzzy.rapidfuzz, :ratio, :cached) > 0),
      else: assert(markdown =~ "RAPIDFUZZ_CPP")

    assert markdown =~ "of 100-200 bytes" and markdown =~ "150-byte queries"
    for m <- @methods ++ long.methods, do: assert(markdown =~ "`#{m}`")
    # no earlier figures for a rough run's sizes
    refute markdown =~ "before (one query)"

    assert [%{name: "search_2000", series: [_, _]}, %{name: "search_2000_100_200"}] =
             Search.charts(result)

    # extract_many's scaling and dedupe, their targets last
    assert markdown =~ "### Many queries at once" and markdown =~ "### Dedupe of product titles"

    assert [%{target: "extract_many" <> _}, %{target: "dedupe" <> _}] =
             Enum.take(result.targets, -2)

    [throughput, lateness | many] = Search.tables(result)
    assert length(throughput.rows) == 2 * (length(@methods) + length(long.methods))
    assert length(lateness.rows) == length(result.lateness.windows)

    if result.many.available,
      do: assert([%{name: "search_extract_many", rows: [_, _, _, _]}, _] = many)

    assert %{name: "search_dedupe", rows: [[1, 2_000, _, _], [2, 2_000, _, _]]} = List.last(many)
    assert is_binary(IO.iodata_to_binary(JSON.encode(result)))
  end
end
