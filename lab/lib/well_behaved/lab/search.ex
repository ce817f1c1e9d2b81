defmodule WellBehaved.Lab.Search do
  @moduledoc """
  The search suite: one query against many candidates with
  `WellBehaved.Levenshtein.nearest/3` and `distances/3`, against calling
  `distance/3` on every candidate (`Enum.map`), side by side in one run;
  and how late the rest of the VM runs while searches go on in `:auto`.

  ## Throughput

  The candidates are random strings of 10-30 lowercase letters (a fixed
  seed): 100,000, and 1,000,000 too in `--full`; the queries, random
  strings of 20 letters. Each method runs on one query, and on 30 queries
  (100 in `--full`) one after the other:

    * `nearest_index` - `nearest/3` (limit 10) on a `Levenshtein.Index`
      made once beforehand (its candidates batched for vector lanes once);
    * `nearest_list` - `nearest/3` on the list (packed at every call);
    * `distances_index`, `distances_list` - every distance;
    * `enum_map` - `Enum.map(candidates, &Levenshtein.distance(query, &1))`.

  Every call uses `schedule: :auto`, the default. A round runs every method
  once, in an order shuffled anew for each round; the figure of a method is
  its median over the rounds, in nanoseconds per candidate (wall time /
  queries / candidates), with the range of the rounds. The speed-up of
  `nearest_index` over `enum_map` is taken round by round (the same round's
  two runs), with its median and a 95% bootstrap interval over the rounds
  (`WellBehaved.Lab.Stats`).

  ## Lateness

  `WellBehaved.Probe` records a ticker that wants to run every millisecond
  while one worker per scheduler searches 100,000 candidates with an index
  in `:auto`, then while the same workers run `WellBehaved.Probe.erlang_work/1`
  sized to take as long per call (pure Erlang that does not allocate): the
  baseline. Windows of 1 s, 9 repeats (11 in `--full`), in an order
  shuffled anew for each repeat. As in the lateness suite, the time a CPU
  was stalled outside the VM (`WellBehaved.Lab.Noise`) is taken out of
  each tick's lateness, and repeats disturbed by other work are left out
  while three quiet ones remain. A repeat's figure is the ratio of the two
  p99; the verdict against the 1.5x bound uses the 95% bootstrap interval
  of the ratios' median. One `:normal` window per repeat is shown beside
  them, for contrast only.

  A `rounds_scale:` under 1 also shrinks the candidate sets (to 2,000 at
  least), the lateness repeats and the windows (to 100 ms at least): a
  rough run of the plumbing, whose size targets then read "-".
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.{Levenshtein, Probe}
  alias WellBehaved.Lab.{Markdown, Noise, Stats, Suite}
  import WellBehaved.Lab.Markdown, only: [fmt: 2]

  @methods [:nearest_index, :nearest_list, :distances_index, :distances_list, :enum_map]
  @query_bytes 20
  @queries 100
  @quick_queries 30
  @bound 1.5
  @window_ms 1000

  @type result :: map()

  @doc """
  Runs the suite (options of `WellBehaved.Lab.Suite.options!/1`): the
  throughput of each method per candidate count, the lateness repeats and
  the targets.
  """
  @impl true
  @spec run(keyword()) :: result()
  def run(opts) do
    {quick, scale, progress} = Suite.options!(opts)
    # a rounds_scale under 1 (a rough run, as the lab's tests make) shrinks
    # the candidate sets and the lateness windows too
    shrink = min(scale, 1.0)
    size = fn n -> max(2_000, round(n * shrink)) end
    counts = Enum.map(if(quick, do: [100_000], else: [100_000, 1_000_000]), size)
    rounds_one = max(3, round(9 * scale))
    rounds_many = max(3, round(3 * scale))
    repeats = max(3, round(if(quick, do: 9, else: 11) * scale))

    plan = %{repeats: repeats, window_ms: max(100, round(@window_ms * shrink))}
    :rand.seed(:exsss, {12, 2, 2026})
    # a quick run times 30 queries one after the other, a full one 100
    queries = for _ <- 1..if(quick, do: @quick_queries, else: @queries), do: word(@query_bytes)

    # the first set (100,000 candidates, or fewer in a rough run) is also
    # the one searched while the lateness is measured
    {sets, [first_index | _]} =
      counts
      |> Enum.map(fn count ->
        candidates = for _ <- 1..count, do: word(10 + :rand.uniform(21) - 1)
        index = Levenshtein.Index.new(candidates)
        set = measure_set(candidates, index, queries, rounds_one, rounds_many, progress)
        progress.("search #{count} candidates: #{summary(set)}")
        {set, index}
      end)
      |> Enum.unzip()

    lateness = lateness(first_index, hd(counts), hd(queries), plan, progress)

    %{
      candidate_bytes: "10-30",
      query_bytes: @query_bytes,
      queries: length(queries),
      rounds_one: rounds_one,
      rounds_many: rounds_many,
      sets: sets,
      lateness: lateness,
      targets: targets(sets, lateness)
    }
  end

  # ---- throughput -----------------------------------------------------------------

  defp measure_set(candidates, index, queries, rounds_one, rounds_many, progress) do
    count = length(candidates)
    [first | _] = queries
    progress.("search #{count} candidates: #{rounds_one} rounds of one query")
    one = rounds([first], candidates, index, rounds_one)
    progress.("search #{count} candidates: #{rounds_many} rounds of #{length(queries)} queries")
    many = rounds(queries, candidates, index, rounds_many)

    %{
      candidates: count,
      one_query: summarize(one, count, 1),
      many_queries: summarize(many, count, length(queries))
    }
  end

  # every method once per round, in a shuffled order: [%{method => ns}]
  defp rounds(queries, candidates, index, rounds) do
    for _ <- 1..rounds do
      for method <- Enum.shuffle(@methods), into: %{} do
        fun = method_fun(method, candidates, index)
        t0 = System.monotonic_time(:nanosecond)
        Enum.each(queries, fun)
        {method, System.monotonic_time(:nanosecond) - t0}
      end
    end
  end

  defp method_fun(:nearest_index, _c, index), do: &Levenshtein.nearest(&1, index)
  defp method_fun(:nearest_list, c, _index), do: &Levenshtein.nearest(&1, c)
  defp method_fun(:distances_index, _c, index), do: &Levenshtein.distances(&1, index)
  defp method_fun(:distances_list, c, _index), do: &Levenshtein.distances(&1, c)
  defp method_fun(:enum_map, c, _index), do: fn q -> Enum.map(c, &Levenshtein.distance(q, &1)) end

  defp summarize(rounds, count, queries) do
    per = fn ns -> ns / queries / count end

    rows =
      for method <- @methods do
        values = Enum.map(rounds, &per.(&1[method]))

        %{
          method: method,
          ns_per_candidate: Stats.median(values),
          low: Enum.min(values),
          high: Enum.max(values)
        }
      end

    speedups = Enum.map(rounds, &(&1.enum_map / &1.nearest_index))
    {low, high} = Stats.bootstrap_interval(speedups, &Stats.median/1)
    %{rows: rows, speedup: Stats.median(speedups), speedup_low: low, speedup_high: high}
  end

  defp word(n), do: for(_ <- 1..n, into: "", do: <<?a + :rand.uniform(26) - 1>>)

  # ---- lateness -------------------------------------------------------------------

  defp lateness(index, count, query, plan, progress) do
    search = fn mode -> fn -> Levenshtein.nearest(query, index, schedule: mode) end end
    search_ns = Stats.median_ns(search.(:auto), 9)
    erlang_ns = Stats.median_ns(fn -> Probe.erlang_work(1_000_000) end, 5) / 1_000_000
    iterations = round(search_ns / erlang_ns)
    baseline = fn -> Probe.erlang_work(iterations) end

    windows =
      for repeat <- 1..plan.repeats do
        cells = [auto: search.(:auto), erlang: baseline, normal: search.(:normal)]

        row =
          for {name, fun} <- Enum.shuffle(cells), into: %{} do
            {name, window(fun, plan.window_ms)}
          end

        progress.(
          "search lateness repeat #{repeat}: ticker p99 auto #{ms(row.auto.p99_ms)}, " <>
            "erlang #{ms(row.erlang.p99_ms)}, normal #{ms(row.normal.p99_ms)}"
        )

        row
      end

    pairs =
      for w <- windows, is_number(w.auto.p99_ms) and is_number(w.erlang.p99_ms) do
        {w.auto.p99_ms / max(w.erlang.p99_ms, 0.001), w.auto.noisy or w.erlang.noisy}
      end

    # repeats disturbed from outside the VM are left out while 3 quiet ones remain
    quiet = for {r, false} <- pairs, do: r
    ratios = if length(quiet) >= 3, do: quiet, else: Enum.map(pairs, &elem(&1, 0))

    interval = if ratios == [], do: nil, else: Stats.bootstrap_interval(ratios, &Stats.median/1)

    %{
      workers: :erlang.system_info(:schedulers_online),
      candidates: count,
      search_ms: search_ns / 1.0e6,
      erlang_iterations: iterations,
      window_ms: plan.window_ms,
      windows: windows,
      repeats_used: length(ratios),
      ratio: if(ratios == [], do: nil, else: Stats.median(ratios)),
      ratio_low: interval && elem(interval, 0),
      ratio_high: interval && elem(interval, 1),
      verdict: if(interval, do: Stats.verdict(interval, @bound), else: :not_measured)
    }
  end

  # One window: the ticker's p99 with the time a CPU was stalled outside the
  # VM taken out of each tick's lateness (as the lateness suite does), and
  # whether other work disturbed it.
  defp window(fun, window_ms) do
    sampler = Noise.start_sampler()

    report =
      Probe.measure(fun,
        duration_ms: window_ms,
        control: false,
        samples: true,
        timeout_ms: window_ms + 60_000
      )

    usage = Noise.stop_sampler(sampler)
    ticks = Enum.zip(report.ticker.due_us, report.ticker.samples_us)
    corrected = Noise.stall_corrected(ticks, usage.stalls)
    stalled_ms = usage.stalls |> Enum.map(fn {from, to} -> to - from end) |> Enum.sum()

    %{
      p99_ms: if(corrected == [], do: nil, else: Stats.percentile(corrected, 0.99) / 1000),
      raw_p99_ms: report.ticker.p99_ms,
      calls: report.calls,
      noisy: Noise.noisy?(usage) or stalled_ms / 1000 / window_ms > 0.05
    }
  end

  defp ms(nil), do: "-"
  defp ms(x), do: "#{fmt(x, 2)} ms"

  # ---- targets ------------------------------------------------------------------

  @doc false
  def targets(sets, lateness) do
    set = Enum.find(sets, &(&1.candidates == 100_000))
    one = set && set.one_query
    index_ns = one && row(one, :nearest_index).ns_per_candidate

    [
      %{
        target: "nearest/3 with an index <= 20 ns per candidate (100,000 of 10-30 bytes)",
        measured: if(index_ns, do: "#{fmt(index_ns, 1)} ns", else: "-"),
        met: is_number(index_ns) and index_ns <= 20
      },
      %{
        target: "nearest/3 with an index >= 10x Enum.map(&distance/3), same run",
        measured:
          if(one,
            do:
              "#{fmt(one.speedup, 1)}x (#{fmt(one.speedup_low, 1)}-#{fmt(one.speedup_high, 1)})",
            else: "-"
          ),
        met: one != nil and one.speedup_low >= 10
      },
      %{
        target: ":auto ticker p99 within #{@bound}x of pure Erlang while searching",
        measured:
          if(lateness.ratio,
            do:
              "#{fmt(lateness.ratio, 2)}x (#{fmt(lateness.ratio_low, 2)}-" <>
                "#{fmt(lateness.ratio_high, 2)}), #{lateness.verdict}",
            else: "-"
          ),
        met: lateness.verdict == :within
      }
    ]
  end

  defp row(summary, method), do: Enum.find(summary.rows, &(&1.method == method))

  defp summary(set) do
    one = set.one_query

    Enum.map_join(one.rows, ", ", &"#{&1.method} #{fmt(&1.ns_per_candidate, 1)} ns") <>
      "; nearest_index #{fmt(one.speedup, 1)}x enum_map"
  end

  # ---- report ---------------------------------------------------------------------

  @doc "Renders a result of `run/1` as Markdown."
  @impl true
  @spec to_markdown(result()) :: String.t()
  def to_markdown(result) do
    sets =
      for set <- result.sets do
        """
        ### #{set.candidates} candidates of #{result.candidate_bytes} bytes

        ns per candidate, median over the rounds (range), #{@query_bytes}-byte queries:

        #{throughput_table(set, result.queries)}

        `nearest_index` over `enum_map`, round by round: one query
        #{speedup(set.one_query)}; #{result.queries} queries #{speedup(set.many_queries)}.
        """
      end

    l = result.lateness

    lateness_rows =
      for {w, i} <- Enum.with_index(l.windows, 1) do
        [
          Integer.to_string(i) <>
            if(w.auto.noisy or w.erlang.noisy, do: " (disturbed)", else: ""),
          ms(w.auto.p99_ms),
          ms(w.erlang.p99_ms),
          ms(w.normal.p99_ms),
          Integer.to_string(w.auto.calls),
          Integer.to_string(w.erlang.calls)
        ]
      end

    """
    ## Fuzzy search: one query, many candidates

    One query against many candidates (`Levenshtein.nearest/3`, `distances/3`)
    against `Enum.map(&distance/3)`, side by side in one run
    (#{result.rounds_one} rounds of one query, #{result.rounds_many} of
    #{result.queries}).

    #{Enum.join(sets, "\n")}
    ### Lateness while searching

    #{l.workers} workers searching #{l.candidates} candidates with an index
    (#{fmt(l.search_ms, 2)} ms per search in `:auto`), against pure Erlang work
    of the same length per call (#{l.erlang_iterations} iterations); ticker p99
    per #{l.window_ms} ms window, stalls outside the VM taken out:

    #{Markdown.table(["repeat", "auto", "erlang", "normal (contrast)", "auto calls", "erlang calls"], lateness_rows)}

    `:auto` over the baseline (#{l.repeats_used} repeats): #{if l.ratio, do: "#{fmt(l.ratio, 2)}x (#{fmt(l.ratio_low, 2)}-#{fmt(l.ratio_high, 2)})", else: "-"}, #{l.verdict}.

    #{Markdown.targets_table(result.targets)}
    """
  end

  defp throughput_table(set, queries) do
    rows =
      for method <- @methods do
        one = row(set.one_query, method)
        many = row(set.many_queries, method)

        [
          "`#{method}`",
          "#{fmt(one.ns_per_candidate, 1)} (#{fmt(one.low, 1)}-#{fmt(one.high, 1)})",
          "#{fmt(many.ns_per_candidate, 1)} (#{fmt(many.low, 1)}-#{fmt(many.high, 1)})"
        ]
      end

    Markdown.table(["method", "one query", "#{queries} queries"], rows)
  end

  defp speedup(s),
    do: "#{fmt(s.speedup, 1)}x (#{fmt(s.speedup_low, 1)}-#{fmt(s.speedup_high, 1)})"

  @doc "One bar chart per candidate count: ns per candidate by method."
  @impl true
  @spec charts(result()) :: [Suite.chart()]
  def charts(result) do
    for set <- result.sets do
      %{
        name: "search_#{set.candidates}",
        title: "Search, #{set.candidates} candidates: ns per candidate",
        kind: :bars,
        x_label: "method",
        y_label: "ns per candidate",
        log_y: true,
        categories: Enum.map(@methods, &Atom.to_string/1),
        series: [
          %{
            label: "one query",
            values: Enum.map(@methods, &row(set.one_query, &1).ns_per_candidate)
          },
          %{
            label: "#{result.queries} queries",
            values: Enum.map(@methods, &row(set.many_queries, &1).ns_per_candidate)
          }
        ]
      }
    end
  end

  @doc "The raw rows: throughput by count, queries and method; lateness by repeat."
  @impl true
  @spec tables(result()) :: [Suite.table()]
  def tables(result) do
    throughput =
      for set <- result.sets,
          {queries, summary} <- [{1, set.one_query}, {result.queries, set.many_queries}],
          r <- summary.rows do
        [set.candidates, queries, r.method, r.ns_per_candidate, r.low, r.high]
      end

    lateness =
      for {w, i} <- Enum.with_index(result.lateness.windows, 1) do
        [i, w.auto.p99_ms, w.erlang.p99_ms, w.normal.p99_ms, w.auto.calls, w.erlang.calls]
      end

    [
      %{
        name: "search",
        columns: ["candidates", "queries", "method", "ns_per_candidate", "low", "high"],
        rows: throughput
      },
      %{
        name: "search_lateness",
        columns: [
          "repeat",
          "auto_p99_ms",
          "erlang_p99_ms",
          "normal_p99_ms",
          "auto_calls",
          "erlang_calls"
        ],
        rows: lateness
      }
    ]
  end
end
