defmodule WellBehaved.Lab.Search do
  alias WellBehaved.Lab.Measure.Verdict

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
    * `nearest_index_codepoint` - the same with `unit: :codepoint` (ASCII
      candidates: byte speed is the aim);
    * `nearest_list` - `nearest/3` on the list (packed at every call);
    * `distances_index`, `distances_list` - every distance, as a list;
    * `distances_index_binary` - every distance, `as: :binary`;
    * `copy_list` - `:erlang.iolist_to_binary/1` of the list: one walk
      copying its bytes, the least a search of a list adds to one of an
      index (`nearest_list` over `nearest_index` + `copy_list` is shown,
      round by round);
    * `enum_map` - `Enum.map(candidates, &Levenshtein.distance(query, &1))`.

  Then 100,000 candidates of 100-200 letters against queries of 150, past
  one machine word (the pair core, with the query's table made once per
  search), on one query and on #{WellBehaved.Lab.Search.Plan.long_queries()}: `nearest_index`,
  `within_3_index` (`distances/3` with `max_distance: 3`, as a binary:
  mbleven and the length filter), `distances_index_binary` and `enum_map`. Figures of an earlier run, where the same method was
  measured, stand beside the new ones (`WellBehaved.Lab.Search.Plan.before_source/0`).

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
  baseline. Windows of 500 ms, 5 repeats (1 s and 11 in `--full`), in an order
  shuffled anew for each repeat. The windows and the verdict are the
  lateness suite's: the time a CPU was stalled outside the VM is taken
  out of each tick's lateness (`WellBehaved.Lab.Measure.Window`), and
  repeats disturbed by other work are left out while
  #{Verdict.min_repeats()} quiet ones remain; with fewer there is no
  verdict (`WellBehaved.Lab.Measure.Verdict`). A repeat's figure is the
  ratio of the two p99; the verdict against the 1.5x bound uses the 95%
  bootstrap interval of the ratios' median. One `:normal` window per
  repeat is shown beside them, for contrast only.

  ## Many queries at once

  `WellBehaved.Fuzzy.extract_many/3` of 1,000 queries over 100,000
  candidates in a child VM with one scheduler and in one with two,
  alternated round by round; the target is the median of the rounds'
  ratios with its 95% bootstrap interval, at least
  #{WellBehaved.Lab.Search.Many.bound()}x (`WellBehaved.Lab.Search.Many`). `WellBehaved.Fuzzy.dedupe/2` of
  50,000 generated product titles in this VM, timed over rounds, against
  the issue's #{WellBehaved.Lab.Search.Dedupe.bound_s()} s for 2 cores, with `numbers: :ignore` beside it
  (`WellBehaved.Lab.Search.Dedupe`, `WellBehaved.Lab.Search.Titles`).
  `run_many/1` runs these parts alone.

  A `rounds_scale:` under 1 also shrinks the candidate sets (to 2,000 at
  least), the lateness repeats and the windows (to 100 ms at least),
  extract_many's queries and candidates and dedupe's titles (two rounds
  each): a rough run of the plumbing, whose size targets then read "-".
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.Levenshtein
  alias WellBehaved.Lab.Suite
  alias WellBehaved.Lab.Search.{Analysis, Dedupe, Fuzzy, Lateness, Many, Plan, Render, Throughput}

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
    plan = Plan.new(quick, scale)
    :rand.seed(:exsss, {12, 2, 2026})
    queries = for _ <- 1..plan.queries, do: Throughput.word(Plan.query_bytes())

    # the first set (100,000 short candidates, or fewer in a rough run) is
    # also the one searched while the lateness is measured
    {sets, [{first_index, first_candidates} | _]} =
      for shape <- Plan.shapes(), count <- counts(plan, shape) do
        span = shape.longest - shape.shortest + 1

        candidates =
          for _ <- 1..count, do: Throughput.word(shape.shortest + :rand.uniform(span) - 1)

        index = Levenshtein.Index.new(candidates)

        queries =
          if shape.query_bytes == Plan.query_bytes(),
            do: queries,
            else:
              for(
                _ <- 1..min(plan.queries, Plan.long_queries()),
                do: Throughput.word(shape.query_bytes)
              )

        set =
          candidates
          |> Throughput.measure_set(
            index,
            queries,
            plan.rounds_one,
            plan.rounds_many,
            progress,
            shape.methods
          )
          |> Map.merge(%{
            candidate_bytes: shape.shape,
            query_bytes: shape.query_bytes,
            queries: length(queries),
            before: Plan.before(shape.shape, count)
          })

        progress.("search #{count} candidates of #{shape.shape} bytes: #{Render.set_line(set)}")
        {set, {index, candidates}}
      end
      |> Enum.unzip()

    lateness = Lateness.measure(first_index, hd(plan.counts), hd(queries), plan, progress)
    fuzzy = Fuzzy.run(first_candidates, queries, plan, progress)
    %{many: many, dedupe: dedupe} = many_parts(plan, progress)

    %{
      candidate_bytes: "10-30",
      query_bytes: Plan.query_bytes(),
      queries: length(queries),
      rounds_one: plan.rounds_one,
      rounds_many: plan.rounds_many,
      sets: sets,
      lateness: lateness,
      fuzzy: fuzzy,
      many: many,
      dedupe: dedupe,
      targets:
        Analysis.targets(sets, lateness) ++
          Analysis.fuzzy_targets(fuzzy) ++ Analysis.many_targets(many, dedupe)
    }
  end

  @doc """
  Runs only the suite's parts on many queries at once (options of
  `WellBehaved.Lab.Suite.options!/1`): extract_many on one scheduler and
  on two (`WellBehaved.Lab.Search.Many`) and dedupe of product titles
  (`WellBehaved.Lab.Search.Dedupe`), with their targets;
  `WellBehaved.Lab.Search.Render.many_markdown/1` renders the result.

      mix run -e 'r = WellBehaved.Lab.Search.run_many(progress: &IO.puts/1)
                  IO.puts(WellBehaved.Lab.Search.Render.many_markdown(r))'
  """
  @spec run_many(keyword()) :: %{many: map(), dedupe: map(), targets: [map()]}
  def run_many(opts) do
    {quick, scale, progress} = Suite.options!(opts)
    parts = many_parts(Plan.new(quick, scale), progress)
    Map.put(parts, :targets, Analysis.many_targets(parts.many, parts.dedupe))
  end

  defp many_parts(plan, progress) do
    progress.(
      "extract_many, 1 scheduler against 2 (child VMs): #{plan.many_queries} queries x " <>
        "#{plan.many_candidates} candidates, #{plan.many_rounds} rounds"
    )

    many = Many.run(plan, progress)
    progress.("dedupe: #{plan.dedupe_titles} product titles, #{plan.dedupe_rounds} rounds")
    %{many: many, dedupe: Dedupe.run(plan, progress)}
  end

  # the long shape: the first count only (its Enum.map is ten times slower)
  defp counts(plan, %{shape: "10-30"}), do: plan.counts
  defp counts(plan, _shape), do: [hd(plan.counts)]

  @doc "The suite's targets (`WellBehaved.Lab.Search.Analysis.targets/2`)."
  @spec targets([map()], map()) :: [map()]
  defdelegate targets(sets, lateness), to: Analysis

  @doc "Renders a result of `run/1` as Markdown."
  @impl true
  @spec to_markdown(result()) :: String.t()
  defdelegate to_markdown(result), to: Render

  @doc "One bar chart per candidate count: ns per candidate by method."
  @impl true
  @spec charts(result()) :: [Suite.chart()]
  defdelegate charts(result), to: Render

  @doc "The raw rows: throughput by count, queries and method; lateness by repeat."
  @impl true
  @spec tables(result()) :: [Suite.table()]
  defdelegate tables(result), to: Render
end
