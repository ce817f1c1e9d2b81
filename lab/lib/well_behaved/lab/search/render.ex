defmodule WellBehaved.Lab.Search.Render do
  @moduledoc """
  The search suite's result as text and data: its Markdown section, a bar
  chart per candidate count and the CSV tables.
  """

  alias WellBehaved.Lab.{Markdown, Suite}
  alias WellBehaved.Lab.Search.{EditScripts, Many, Pairs, Plan, Rapidfuzz}
  import WellBehaved.Lab.Markdown, only: [fmt: 2]
  import WellBehaved.Lab.Search.Analysis, only: [thousands: 1]
  import WellBehaved.Lab.Search.Throughput, only: [row: 2]

  @query_bytes Plan.query_bytes()

  # what a set measured (results of earlier runs have no shapes)
  defp methods(set), do: Map.get(set, :methods, Plan.methods())
  defp bytes(set, result), do: Map.get(set, :candidate_bytes, result.candidate_bytes)
  defp queries(set, result), do: Map.get(set, :queries, result.queries)

  @doc "The suite's section of the report."
  @spec to_markdown(map()) :: String.t()
  def to_markdown(result) do
    sets =
      for set <- result.sets do
        queries = queries(set, result)

        """
        ### #{set.candidates} candidates of #{bytes(set, result)} bytes

        ns per candidate, median over the rounds (range), \
        #{Map.get(set, :query_bytes, @query_bytes)}-byte queries:

        #{throughput_table(set, queries)}

        `nearest_index` over `enum_map`, round by round: one query
        #{speedup(set.one_query)}; #{queries} queries #{speedup(set.many_queries)}.
        #{list_over_copy(set, queries)}
        """
      end

    before =
      if Enum.any?(result.sets, &(Map.get(&1, :before, %{}) != %{})),
        do: "\"before\": #{Plan.before_source()}.\n",
        else: ""

    l = result.lateness

    # results of runs before the verdict named them have no `disturbed`
    disturbed = Map.get(l, :disturbed, [])

    lateness_rows =
      for {w, i} <- Enum.with_index(l.windows, 1) do
        [
          Integer.to_string(i) <>
            if(w.auto.noisy or w.erlang.noisy or i in disturbed,
              do: " (disturbed)",
              else: ""
            ),
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
    #{before}
    ### Lateness while searching

    #{l.workers} workers searching #{l.candidates} candidates with an index
    (#{fmt(l.search_ms, 2)} ms per search in `:auto`), against pure Erlang work
    of the same length per call (#{l.erlang_iterations} iterations); ticker p99
    per #{l.window_ms} ms window, stalls outside the VM taken out:

    #{Markdown.table(["repeat", "auto", "erlang", "normal (contrast)", "auto calls", "erlang calls"], lateness_rows)}

    `:auto` over the baseline (#{l.repeats_used} repeats): #{if l.ratio, do: "#{fmt(l.ratio, 2)}x (#{fmt(l.ratio_low, 2)}-#{fmt(l.ratio_high, 2)})", else: "-"}, #{l.verdict}.

    #{fuzzy_markdown(Map.get(result, :fuzzy))}
    #{many_markdown(result)}
    #{Markdown.targets_table(result.targets)}
    """
  end

  @doc """
  The parts on many queries at once (extract_many's scaling, dedupe), as
  Markdown; `""` for results of runs before them.
  """
  @spec many_markdown(map()) :: String.t()
  def many_markdown(result) do
    case {Map.get(result, :many), Map.get(result, :dedupe)} do
      {nil, nil} ->
        ""

      {many, dedupe} ->
        extract_many_markdown(many) <>
          "\n" <>
          dedupe_markdown(dedupe) <>
          if(Map.has_key?(result, :sets),
            do: "",
            else: "\n#{Markdown.targets_table(result.targets)}"
          )
    end
  end

  defp extract_many_markdown(nil), do: ""

  defp extract_many_markdown(m) do
    intro = """
    ### Many queries at once: extract_many on one scheduler and on two

    `Fuzzy.extract_many(queries, candidates) |> Stream.run()` of
    #{thousands(m.queries)} queries of 10-30 letters against #{thousands(m.candidates)}
    candidates of 10-30 letters (default options: limit 5, `:wratio`,
    `schedule: :auto`, a worker per scheduler), each run in a fresh child
    VM: one scheduler (`#{Enum.join(Many.flags(:one), " ")}`) or two
    (`#{Enum.join(Many.flags(:two), " ")}`), the two alternated round by round.
    The list's time includes the candidates' preparation (checked,
    processed and packed once), as in a user's call; the index's run
    searches a `Fuzzy.Index` made beforehand.
    """

    if m.available,
      do: intro <> "\n" <> many_rounds(m),
      else: intro <> "\nNot measured: #{m.reason}.\n"
  end

  defp many_rounds(m) do
    rows =
      for r <- m.rounds do
        [
          Integer.to_string(r.round),
          Enum.join(r.order, " then "),
          seconds_cell(r.one, :list_s),
          seconds_cell(r.two, :list_s),
          ratio_cell(r.ratio),
          seconds_cell(r.one, :index_s),
          seconds_cell(r.two, :index_s),
          ratio_cell(r.index_ratio)
        ]
      end

    heads = ["round", "order", "1 scheduler", "2 schedulers", "ratio"]
    heads = heads ++ ["index, 1", "index, 2", "index ratio"]

    summary =
      if m.ratio do
        """
        1 scheduler's time over 2 schedulers', median over #{m.rounds_done} rounds (95%
        interval): #{fmt(m.ratio, 2)}x (#{fmt(m.ratio_low, 2)}-#{fmt(m.ratio_high, 2)}); with
        the index made beforehand #{fmt(m.index_ratio, 2)}x
        (#{fmt(m.index_ratio_low, 2)}-#{fmt(m.index_ratio_high, 2)}). The preparation alone
        (`extract_many([], candidates)`, median): #{fmt(m.one.prep_s, 3)} s with 1
        scheduler, #{fmt(m.two.prep_s, 3)} s with 2; `Fuzzy.Index.new/1`:
        #{fmt(m.one.index_new_s, 3)} s, #{fmt(m.two.index_new_s, 3)} s. The VMs ran with
        #{m.one.schedulers} and #{m.two.schedulers} schedulers, #{m.one.dirty_cpu} and
        #{m.two.dirty_cpu} dirty CPU schedulers.
        """
      else
        "No round ended in both VMs.\n"
      end

    "#{Markdown.table(heads, rows)}\n\n" <> summary
  end

  defp seconds_cell(%{failed: failed}, _key), do: failed
  defp seconds_cell(run, key), do: "#{fmt(Map.fetch!(run, key), 2)} s"

  defp ratio_cell(nil), do: "-"
  defp ratio_cell(ratio), do: "#{fmt(ratio, 2)}x"

  defp dedupe_markdown(nil), do: ""

  defp dedupe_markdown(d) do
    i = d.ignore

    rounds =
      Enum.map_join(d.rounds, ", ", fn r ->
        if r.error, do: r.error, else: "#{fmt(r.seconds, 2)} s"
      end)

    """
    ### Dedupe of product titles

    `Fuzzy.dedupe(titles)` with the default options (`:token_sort_ratio`,
    cutoff 0.9, `processor: :default`, `numbers: :exact`) on
    #{thousands(d.titles)} generated product titles
    (`WellBehaved.Lab.Search.Titles`): #{thousands(d.products)} products in families
    that differ only in their model numbers, capacities or years, and
    #{thousands(d.near_duplicates)} near-duplicates of them (two words swapped, the case
    changed, a word added, a letter dropped). Wall time in this VM
    (#{d.schedulers} schedulers on #{d.cores} cores), #{length(d.rounds)} rounds
    (#{rounds}): median #{fmt(d.seconds, 2)} s (#{fmt(d.low, 2)}-#{fmt(d.high, 2)});
    #{groups(d.groups)} groups.

    #{ignore_text(i)}
    """
  end

  defp ignore_text(%{error: error} = i) when is_binary(error),
    do: "With `numbers: :ignore` on the first #{thousands(i.titles)} titles: #{error}."

  defp ignore_text(i) do
    """
    With `numbers: :ignore` (the score alone) on the first #{thousands(i.titles)} titles
    (#{thousands(i.products)} products): #{fmt(i.seconds, 2)} s, #{groups(i.groups)}
    groups, against #{groups(i.exact_groups)} with `numbers: :exact`: without the rule the
    members of a family (another model number, capacity or year) merge.
    """
  end

  defp groups(nil), do: "-"
  defp groups(n), do: thousands(n)

  @scorer_columns [
    "scorer",
    "ns, query repeated",
    "steady rounds",
    "ns, first query after other work",
    "rapidfuzz cached",
    "rapidfuzz multi",
    "ours / rapidfuzz's best"
  ]

  defp scorer_rows(scorers, rf) do
    for r <- scorers do
      cached = Rapidfuzz.ns(rf, r.method, :cached)
      multi = Rapidfuzz.ns(rf, r.method, :multi)
      best = [cached, multi] |> Enum.reject(&is_nil/1) |> Enum.min(fn -> nil end)

      [
        "`#{r.method}`",
        "#{fmt(r.ns, 1)} (#{fmt(r.low, 1)}-#{fmt(r.high, 1)})",
        steady_cell(r),
        "#{fmt(r.cold_ns, 1)} (#{fmt(r.cold_low, 1)}-#{fmt(r.cold_high, 1)})",
        if(cached, do: fmt(cached, 1), else: "-"),
        if(multi, do: fmt(multi, 1), else: "-"),
        if(best, do: "#{fmt(r.ns / best, 2)}x", else: "-")
      ]
    end
  end

  # the median (range) over the steady rounds; results of runs before
  # have none, and fewer than enough steady rounds give nils
  defp steady_cell(r) do
    case Map.get(r, :steady_ns) do
      nil -> "-"
      ns -> "#{fmt(ns, 1)} (#{fmt(r.steady_low, 1)}-#{fmt(r.steady_high, 1)})"
    end
  end

  # runs before the words' part have none
  defp words_markdown(nil, _count), do: ""

  defp words_markdown(words, count) do
    """
    The token scorers on #{count} candidates of 2-3 words (3-9 letters
    each), the query two words (`#{words.query}`), the same way: on
    one-word candidates and a one-word query the token scores are the
    ratio, and WRatio and the partial token scores the ratio or the
    partial ratio; here each candidate's tokens are sorted and compared.

    #{Markdown.table(@scorer_columns, scorer_rows(words.scorers, words.rapidfuzz))}

    #{pace_note(Map.get(words, :pace), false)}
    """
  end

  # results of runs before the pace check have none; `target`: whether a
  # target is judged on these rounds
  defp pace_note(nil, _target), do: ""

  defp pace_note(p, target) do
    verdict =
      if p.spread > WellBehaved.Lab.Search.Fuzzy.pace_spread_max(),
        do:
          "**the machine's pace varied #{fmt(p.spread, 2)}x**: figures within that factor " <>
            "of each other, or of a bound, are not told apart",
        else: "steady"

    """
    The machine's pace through these rounds (the ratio over #{p.candidates} of the
    candidates, timed at each round's start and end): #{fmt(p.ns, 2)} ns per candidate
    (#{fmt(p.low, 2)}-#{fmt(p.high, 2)} over the rounds), #{verdict}.#{steady_note(p, target)}
    """
  end

  # results of runs before the steady rounds have none
  defp steady_note(%{steady_rounds: k, rounds: n}, target) do
    least = WellBehaved.Lab.Measure.Verdict.min_repeats()
    within = WellBehaved.Lab.Search.Fuzzy.pace_spread_max()

    " #{k} of #{n} rounds ran at the machine's steady pace (within #{within}x of the " <>
      "fastest round's): `steady rounds` gives the medians (ranges) over them" <>
      cond do
        k < least -> " when there are #{least} or more (-: fewer)."
        target -> ", the figures the target is judged on."
        true -> "."
      end
  end

  defp steady_note(_before, _target), do: ""

  defp rapidfuzz_note(%{available: true}) do
    """
    rapidfuzz-cpp (built `-O3 -march=native` from the checkout in
    `RAPIDFUZZ_CPP`, `priv/wb_rapidfuzz`), same set and query, its query
    repeated (median ns per candidate): `cached` is a cached scorer of the
    query over the candidates one after another (`process.extract`'s
    loop), `multi` its SIMD scorers holding every candidate (made once,
    as an index; no such scorer: -). The last column divides our repeated
    figure by rapidfuzz's best: below 1 is faster.
    """
  end

  defp rapidfuzz_note(%{reason: reason}), do: "rapidfuzz-cpp: #{reason}."
  defp rapidfuzz_note(_none), do: "rapidfuzz-cpp: not measured."

  # results of runs before the fuzzy part have none
  defp fuzzy_markdown(nil), do: ""

  defp fuzzy_markdown(f) do
    rows = scorer_rows(f.scorers, Map.get(f, :rapidfuzz))
    words = Map.get(f, :words)
    c = f.cdist
    l = f.lateness

    pairs =
      for {p, i} <- Enum.with_index(c.pairs, 1) do
        [
          Integer.to_string(i),
          "#{fmt(p.one_s, 2)} s",
          "#{fmt(p.all_s, 2)} s",
          "#{fmt(p.speedup, 2)}x"
        ]
      end

    """
    ### Fuzzy matching: every scorer, cdist

    One query (20 bytes) against #{f.candidates} candidates through a
    `Fuzzy.Index` (`extract/3`, limit 5), and `Levenshtein.nearest/3` on a
    `Levenshtein.Index` in the same rounds, each method's query timed right
    after the other methods' work (its index's memory not in the caches)
    and again at once (a query repeated); ns per candidate, median over
    the rounds (range):

    #{Markdown.table(@scorer_columns, rows)}

    #{pace_note(Map.get(f, :pace), true)}

    #{rapidfuzz_note(Map.get(f, :rapidfuzz))}
    #{words_markdown(words, f.candidates)}
    #{Pairs.to_markdown(Map.get(f, :pairs))}
    #{EditScripts.to_markdown(Map.get(f, :edit_scripts))}

    `cdist/3` of #{c.queries} queries x #{c.candidates} candidates
    (`scorer: :ratio`, `as: :binary`; #{fmt(c.ns_per_cell_one, 1)} ns a cell with one
    worker), one worker against #{c.workers}, pair by pair:

    #{Markdown.table(["pair", "one worker", "#{c.workers} workers", "speed-up"], pairs)}

    Speed-up: #{fmt(c.speedup, 2)}x (#{fmt(c.speedup_low, 2)}-#{fmt(c.speedup_high, 2)}).
    While #{l.workers} workers each run `cdist/3` of #{l.candidates} candidates in `:auto`
    (#{fmt(l.search_ms, 2)} ms a call), the ticker's p99 over pure Erlang's
    (#{l.repeats_used} repeats): #{if l.ratio, do: "#{fmt(l.ratio, 2)}x (#{fmt(l.ratio_low, 2)}-#{fmt(l.ratio_high, 2)})", else: "-"}, #{l.verdict}.
    """
  end

  defp throughput_table(set, queries) do
    before = Map.get(set, :before, %{})

    rows =
      for method <- methods(set) do
        one = row(set.one_query, method)
        many = row(set.many_queries, method)

        [
          "`#{method}`",
          "#{fmt(one.ns_per_candidate, 1)} (#{fmt(one.low, 1)}-#{fmt(one.high, 1)})",
          "#{fmt(many.ns_per_candidate, 1)} (#{fmt(many.low, 1)}-#{fmt(many.high, 1)})"
        ] ++ if(before == %{}, do: [], else: [before_cell(before, method)])
      end

    heads = ["method", "one query", "#{queries} queries"]
    Markdown.table(if(before == %{}, do: heads, else: heads ++ ["before (one query)"]), rows)
  end

  defp before_cell(before, method) do
    case Map.get(before, method) do
      nil -> "-"
      ns -> fmt(ns, 1)
    end
  end

  defp list_over_copy(set, queries) do
    case {Map.get(set.one_query, :list_over_copy), Map.get(set.many_queries, :list_over_copy)} do
      {%{} = one, %{} = many} ->
        "`nearest_list` over `nearest_index` + `copy_list`, round by round: one query " <>
          "#{ratio(one)}; #{queries} queries #{ratio(many)}."

      _ ->
        ""
    end
  end

  defp ratio(r), do: "#{fmt(r.ratio, 2)}x (#{fmt(r.low, 2)}-#{fmt(r.high, 2)})"

  defp speedup(s),
    do: "#{fmt(s.speedup, 1)}x (#{fmt(s.speedup_low, 1)}-#{fmt(s.speedup_high, 1)})"

  @doc "One bar chart per candidate count: ns per candidate by method."
  @spec charts(map()) :: [Suite.chart()]
  def charts(result) do
    for set <- result.sets do
      methods = methods(set)
      bytes = bytes(set, result)

      suffix =
        if bytes == result.candidate_bytes, do: "", else: "_#{String.replace(bytes, "-", "_")}"

      %{
        name: "search_#{set.candidates}#{suffix}",
        title: "Search, #{set.candidates} candidates of #{bytes} bytes: ns per candidate",
        kind: :bars,
        x_label: "method",
        y_label: "ns per candidate",
        log_y: true,
        categories: Enum.map(methods, &Atom.to_string/1),
        series: [
          %{
            label: "one query",
            values: Enum.map(methods, &row(set.one_query, &1).ns_per_candidate)
          },
          %{
            label: "#{queries(set, result)} queries",
            values: Enum.map(methods, &row(set.many_queries, &1).ns_per_candidate)
          }
        ]
      }
    end
  end

  @doc "The raw rows: throughput by count, queries and method; lateness by repeat."
  @spec tables(map()) :: [Suite.table()]
  def tables(result) do
    throughput =
      for set <- result.sets,
          {queries, summary} <- [{1, set.one_query}, {queries(set, result), set.many_queries}],
          r <- summary.rows do
        [set.candidates, bytes(set, result), queries, r.method, r.ns_per_candidate, r.low, r.high]
      end

    lateness =
      for {w, i} <- Enum.with_index(result.lateness.windows, 1) do
        [i, w.auto.p99_ms, w.erlang.p99_ms, w.normal.p99_ms, w.auto.calls, w.erlang.calls]
      end

    [
      %{
        name: "search",
        columns: [
          "candidates",
          "candidate_bytes",
          "queries",
          "method",
          "ns_per_candidate",
          "low",
          "high"
        ],
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
    ] ++ many_tables(result)
  end

  # extract_many's runs and dedupe's rounds (none in results of runs
  # before them, or without the CPUs for extract_many's)
  defp many_tables(result) do
    many =
      case Map.get(result, :many) do
        %{available: true, rounds: rounds} ->
          for r <- rounds,
              {vm, schedulers} <- [one: 1, two: 2],
              run = Map.fetch!(r, vm),
              not Map.has_key?(run, :failed) do
            [r.round, schedulers, run.list_s, run.index_s, run.prep_s, run.index_new_s]
          end

        _ ->
          nil
      end

    dedupe =
      case Map.get(result, :dedupe) do
        %{rounds: rounds, titles: titles} ->
          for {r, i} <- Enum.with_index(rounds, 1), do: [i, titles, r.seconds, r.groups]

        _ ->
          nil
      end

    [
      many &&
        %{
          name: "search_extract_many",
          columns: ["round", "schedulers", "list_s", "index_s", "prep_s", "index_new_s"],
          rows: many
        },
      dedupe &&
        %{name: "search_dedupe", columns: ["round", "titles", "seconds", "groups"], rows: dedupe}
    ]
    |> Enum.reject(&is_nil/1)
  end

  @doc "A candidate set's throughput in a line, for the progress report."
  @spec set_line(map()) :: String.t()
  def set_line(set) do
    one = set.one_query

    Enum.map_join(one.rows, ", ", &"#{&1.method} #{fmt(&1.ns_per_candidate, 1)} ns") <>
      "; nearest_index #{fmt(one.speedup, 1)}x enum_map"
  end

  @doc "A lateness in ms, or `-`."
  @spec ms(number() | nil) :: String.t()
  def ms(nil), do: "-"
  def ms(x), do: "#{fmt(x, 2)} ms"
end
