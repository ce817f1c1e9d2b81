defmodule WellBehaved.Lab.Overhead.Render do
  @moduledoc """
  The overhead suite's result as Markdown, charts and CSV tables: see
  `WellBehaved.Lab.Overhead.to_markdown/1`, `charts/1` and `tables/1`.
  """

  alias WellBehaved.Lab.Overhead.{Analysis, Plan}
  import WellBehaved.Lab.Markdown, only: [table: 2, fmt: 2, met_cell: 1]
  import WellBehaved.Lab.Overhead.Format

  @doc "The suite's Markdown section (`WellBehaved.Lab.Overhead.to_markdown/1`)."
  @spec markdown(map()) :: String.t()
  def markdown(result) do
    modes = result.config.modes

    [
      # the machine: the report's header (WellBehaved.Lab.Machine.describe/0)
      "## Overhead: each mode's throughput against :normal\n\n",
      "Run: #{if result.config.quick, do: "quick (100 kB inputs in :normal and :yielding only)", else: "full"}, " <>
        "rounds_scale #{result.config.rounds_scale}, #{fmt(result.elapsed_s, 1)} s. " <>
        "Figures are medians; modes interleaved round by round.\n\n",
      "Every mode runs through the public API, `Levenshtein.distance(a, b, schedule: mode)`, " <>
        "so the small inputs include its option handling (see the cost of one call).\n\n",
      "### Throughput, Gcell/s (median)\n\n",
      table(
        ["input", "samples" | Enum.map(modes, &":#{&1}")],
        for c <- result.cases do
          [case_label(c), "#{c.rounds} x #{plural(c.batch, "call")}"] ++
            by_mode(c, modes, &fmt(&1.gcells_per_s, gdigits(&1.gcells_per_s)))
        end
      ),
      "\n### Median time per call\n\n",
      table(
        ["input", "distance" | Enum.map(modes, &":#{&1}")],
        for c <- result.cases do
          [case_label(c), "#{c.distance}#{unless c.modes_agree, do: " (MODES DISAGREE)"}"] ++
            by_mode(c, modes, &fmt_ns(&1.median_ns))
        end
      ),
      "\n### Throughput relative to :normal (median over rounds of normal time / mode time in the round)\n\n",
      table(
        ["input" | Enum.map(modes, &":#{&1}")],
        Enum.map(result.cases, fn c ->
          [case_label(c) | by_mode(c, modes, &fmt(&1.ratio_to_normal, 3))]
        end) ++
          [
            [
              "Spin #{compact(result.spin.iterations)}"
              | Enum.map(result.spin.modes, &fmt(&1.ratio_to_normal, 3))
            ]
          ]
      ),
      "\n### Seed pair\n\n",
      seed_md(result),
      slices_md(Map.get(result, :slices)),
      "\n### Spin, #{compact(result.spin.iterations)} iterations (#{result.spin.rounds} rounds)\n\n",
      table(
        ["mode", "median", "ns/iteration", "min", "max", "ratio to :normal"],
        for e <- spin_entries(result.spin) do
          [
            ":#{e.mode}#{if e[:lang] == :rust, do: " (Rust)", else: ""}",
            fmt_ns(e.median_ns),
            fmt(e.ns_per_iteration, 2),
            fmt_ns(e.min_ns),
            fmt_ns(e.max_ns),
            fmt(e.ratio_to_normal, 3)
          ]
        end
      ),
      rust_spin_md(result.spin),
      if(result.spin.modes_agree,
        do: "",
        else: "\nWARNING: Spin checksums differ between modes.\n"
      ),
      "\n### Cost of one call, two #{result.calls.bytes}-byte random strings\n\n",
      "#{plural(result.calls.rounds, "batch")} of #{result.calls.batch} calls per variant, " <>
        "interleaved; the last rows split the cost.\n\n",
      table(
        ["call", "median ns/call", "min", "max"],
        for v <- result.calls.variants do
          [v.label, fmt(v.median_ns, 0), fmt(v.min_ns, 0), fmt(v.max_ns, 0)]
        end
      ),
      "\n### Targets\n\n",
      table(
        ["target", "wanted", "measured", "met"],
        for t <- result.targets do
          [t.name, t.wanted, t.measured, met_cell(t)]
        end
      ),
      "\n",
      context_md(result.context)
    ]
    |> IO.iodata_to_binary()
  end

  # one cell per mode, "-" where the case did not time that mode
  defp by_mode(c, modes, cell) do
    for mode <- modes do
      case Analysis.mode_entry(c, mode) do
        nil -> "-"
        entry -> cell.(entry)
      end
    end
  end

  # the C job's modes, then the Rust job's :yielding if it was timed
  defp spin_entries(spin), do: spin.modes ++ List.wrap(Map.get(spin, :rust))

  defp rust_spin_md(spin) do
    case Map.get(spin, :rust) do
      nil ->
        ""

      e ->
        "\nThe same job written in Rust (`Spin.run_rust/2`, `lab/native/lab_rs`), timed " <>
          "right beside the C job's `:yielding` in each round, first in every other round: " <>
          "its time over the C job's, median over the rounds, " <>
          "**#{fmt(e.c_ratio, 4)}x** (95% #{fmt(e.c_ratio_low, 3)}-#{fmt(e.c_ratio_high, 3)}).\n"
    end
  end

  defp slices_md(nil), do: ""

  defp slices_md(workloads) do
    plan = Plan.slice_case()
    slices = workloads |> hd() |> Map.fetch!(:slices) |> Enum.map(& &1.slice_us)

    [
      "\n### `:yielding` throughput by slice length (ratio to :normal, median)\n\n",
      "`WellBehaved.Runtime.configure(slice_us: n)`; the ticker lateness at each slice is in ",
      "the lateness suite.\n\n",
      table(
        ["workload" | Enum.map(slices, &"#{&1} us")],
        for w <- workloads do
          [
            if(w.workload == :spin,
              do: "Spin #{compact(plan.spin_iterations)}",
              else: "#{plan.lev_batch} x #{size_label(plan.lev_bytes)} pairs"
            )
            | Enum.map(w.slices, &fmt(&1.ratio_to_normal, 3))
          ]
        end
      )
    ]
  end

  defp seed_md(result) do
    seed = Analysis.case_named(result, "seed pair")
    n = Analysis.mode_entry(seed, :normal)

    "`:binary.copy(<<0>>, #{seed.bytes})` vs `:binary.copy(<<1>>, #{seed.bytes})`, " <>
      "distance #{seed.distance}: median wall time in :normal " <>
      "**#{fmt(result.seed_normal_median_ms, 2)} ms** " <>
      "(min #{fmt_ns(n.min_ns)}, max #{fmt_ns(n.max_ns)}, #{n.samples} samples).\n"
  end

  defp context_md(c) do
    "Earlier figures, for context: best library ~#{fmt(c.best_library_gcells, 0)} Gcell/s; " <>
      "naive DP ~#{fmt(c.naive_dp_gcells, 1)} Gcell/s; the blog's yielding cost " <>
      "#{fmt(c.blog_yielding_cost, 1)}x (a throughput ratio of " <>
      "#{fmt(1 / c.blog_yielding_cost, 2)}).\n"
  end

  @doc "The suite's charts (`WellBehaved.Lab.Overhead.charts/1`)."
  @spec charts(map()) :: [WellBehaved.Lab.Suite.chart()]
  def charts(result) do
    modes = result.config.modes
    rows = Enum.map(result.cases, &{case_label(&1), &1.modes})
    spin = {"Spin #{compact(result.spin.iterations)}", result.spin.modes}

    [
      %{
        name: "overhead_ratio",
        title: "Throughput relative to :normal, by input (median of per-round ratios)",
        kind: :bars,
        x_label: "input",
        y_label: "normal time / mode time (above 1: faster)",
        log_y: false,
        categories: Enum.map(rows ++ [spin], &elem(&1, 0)),
        series: series(modes, rows ++ [spin], :ratio_to_normal)
      },
      %{
        name: "overhead_throughput",
        title: "Levenshtein throughput by scheduling mode (median)",
        kind: :bars,
        x_label: "input",
        y_label: "Gcell/s",
        log_y: false,
        categories: Enum.map(rows, &elem(&1, 0)),
        series: series(modes, rows, :gcells_per_s)
      }
    ]
  end

  defp series(modes, rows, key) do
    for mode <- modes do
      %{
        label: ":#{mode}",
        values:
          Enum.map(rows, fn {_, entries} ->
            case Analysis.mode_entry(%{modes: entries}, mode) do
              nil -> nil
              entry -> Map.get(entry, key)
            end
          end)
      }
    end
  end

  @doc "The suite's CSV tables (`WellBehaved.Lab.Overhead.tables/1`)."
  @spec tables(map()) :: [WellBehaved.Lab.Suite.table()]
  def tables(result) do
    [
      %{
        name: "medians",
        columns: ~w(input kind bytes cells batch rounds distance modes_agree mode
                    median_ns min_ns max_ns samples gcells_per_s ratio_to_normal),
        rows:
          for c <- result.cases, e <- c.modes do
            [case_label(c), c.kind, c.bytes, c.cells, c.batch, c.rounds, c.distance] ++
              [c.modes_agree, e.mode, e.median_ns, e.min_ns, e.max_ns, e.samples] ++
              [e.gcells_per_s, e.ratio_to_normal]
          end
      },
      %{
        name: "spin",
        columns: ~w(iterations rounds modes_agree lang mode median_ns min_ns max_ns samples
                    ns_per_iteration ratio_to_normal),
        rows:
          for e <- spin_entries(result.spin) do
            [result.spin.iterations, result.spin.rounds, result.spin.modes_agree] ++
              [Map.get(e, :lang, :c), e.mode, e.median_ns, e.min_ns, e.max_ns, e.samples] ++
              [e.ns_per_iteration, e.ratio_to_normal]
          end
      },
      %{
        name: "calls",
        columns: ~w(variant call bytes batch median_ns min_ns max_ns samples),
        rows:
          for v <- result.calls.variants do
            [v.variant, v.label, result.calls.bytes, result.calls.batch] ++
              [v.median_ns, v.min_ns, v.max_ns, v.samples]
          end
      }
    ]
  end
end
