defmodule WellBehaved.Lab.Lateness.Render do
  @moduledoc """
  The lateness suite's result as text and data: the top of the report
  (`summary/1`), its Markdown section, the heatmaps and the CSV table.
  """

  alias WellBehaved.Lab.{Markdown, Turns}
  alias WellBehaved.Lab.Lateness.Plan
  import WellBehaved.Lab.Lateness.Analysis, only: [find: 6]

  @rows [:erlang, :normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded, :auto]
  @bound Plan.bound()
  @no_busy_wait Plan.no_busy_wait()
  @normal_hold_ms Plan.normal_hold_ms()
  @dirty_queue_ms Plan.dirty_queue_ms()

  @doc """
  The top of the report: what to do for each work size, with its evidence.
  """
  @spec summary(map()) :: String.t()
  def summary(result) do
    rows =
      Enum.map_join(result.recommendations, "\n", fn r ->
        use =
          cond do
            r.verdict == :within and r.auto_runs == r.mode and r.auto_within ->
              "the default `:auto` (it runs `:#{r.mode}` here)"

            r.verdict == :within ->
              "`schedule: :#{r.mode}`"

            r.mode ->
              "`:#{r.mode}`, the closest (#{fmt(r.worst_ratio)}x pure Erlang, " <>
                "not confidently within); try #{r.advice}"

            true ->
              "no mode measured"
          end

        "| #{r.work_ms} ms | #{use} | #{r.evidence} |"
      end)

    """
    Native work per call, Spin on every scheduler (1x and 10x workers), judged by how late a \
    process that wants to run every millisecond gets (p99), against pure Erlang code of the same \
    CPU demand (bound #{@bound}x; medians of #{result.config.repeats} to \
    #{result.config.max_repeats} repeats, 95% intervals).

    | work per call | use | evidence |
    | --- | --- | --- |
    #{rows}
    """
  end

  @doc "The suite's section of the report."
  @spec to_markdown(map()) :: String.t()
  def to_markdown(result) do
    cal = result.calibration
    c = result.config

    """
    ## Lateness under native work

    #{stall_note(result.rows)}Fixed work per call, sized by calibration: Spin #{fmt(cal.spin_ns)} ns/iteration, \
    Levenshtein #{fmt(cal.lev_gcells)} Gcell/s, pure Erlang #{fmt(cal.erlang_ns)} ns/iteration. \
    Workers = #{c.schedulers} schedulers x factor. Each cell: #{c.window_ms} ms windows, a ticker \
    every #{c.tick_ms} ms, lateness from its due time, less any time the CPUs were stalled \
    outside the VM meanwhile (seen by a sleeping thread pinned to each CPU); #{c.repeats} \
    repeats in child VMs (up to #{c.max_repeats} for cells near the bound#{if c.quick, do: " that the recommendation and targets rest on", else: ""}), cells shuffled \
    anew in every repeat. Figures: the cell's p99 (median over repeats) and its ratio \
    to the pure-Erlang baseline measured in the same VM (median of the per-repeat ratios, 95% \
    bootstrap interval over repeats). Verdicts against #{c.bound}x: **in** (the interval below), \
    **out** (above), **?** (neither). `*`: other work ran on the machine during a repeat. Runtime: \
    slices of #{c.slice_us} us; `:auto` is `:normal` under #{c.normal_max_us} us, `:yielding` \
    under #{c.yielding_max_us}. `:normal` cells are run up to #{div(@normal_hold_ms, 1000)} s \
    of work per scheduler (work per call x factor), `:dirty_cpu` cells up to \
    #{div(@dirty_queue_ms, 1000)} s (20,000 workers queued for 1 s dirty calls took minutes to \
    stop); past that, blank.

    ### Recommendation (measured)

    | work per call | mode | evidence |
    | --- | --- | --- |
    #{Enum.map_join(result.recommendations, "\n", &"| #{&1.work_ms} ms | #{rec_mode(&1)} | #{&1.evidence} |")}

    ### Targets

    #{Markdown.targets_table(result.targets)}

    #{Turns.to_markdown(result[:turns])}

    #{matrix_md(result.rows, :spin)}
    #{matrix_md(result.rows, :levenshtein)}
    #{slices_md(result.rows)}
    #{busy_wait_md(result.rows)}
    #{cells_md(result.rows)}
    """
  end

  defp stall_note(rows) do
    if Enum.any?(rows, &(&1.repeats > 0 and not &1[:stalls_seen])) do
      "**CPU stalls were not taken out** of the lateness: the watcher could not run at " <>
        "real-time priority (run the lab as root, or raise RLIMIT_RTPRIO), so with one worker " <>
        "per scheduler the p99 mostly measures the machine's stalls.\n\n"
    else
      ""
    end
  end

  defp rec_mode(%{mode: nil}), do: "none measured"
  defp rec_mode(%{mode: m, verdict: :within}), do: "`:#{m}`"
  defp rec_mode(%{mode: m, verdict: :not_distinguishable}), do: "`:#{m}` (closest; ?)"
  defp rec_mode(%{mode: m}), do: "`:#{m}` (closest; out)"

  defp columns(rows, workload) do
    rows
    |> Enum.filter(&(&1.set == :matrix and &1.workload == workload))
    |> Enum.map(&{&1.work_ms, &1.factor})
    |> Enum.uniq()
    |> Enum.sort()
  end

  defp matrix_md(rows, workload) do
    case columns(rows, workload) do
      [] ->
        ""

      cols ->
        header = ["mode" | Enum.map(cols, fn {w, f} -> "#{w} ms x#{f}" end)]

        body =
          for mode <- @rows,
              cells =
                Enum.map(cols, fn {w, f} ->
                  find(rows, :matrix, row_workload(workload, mode), w, f, mode)
                end),
              Enum.any?(cells) do
            [":#{mode}" | Enum.map(cells, &matrix_cell/1)]
          end

        """
        ### #{workload}: ticker p99 (ms) and ratio to pure Erlang

        #{Markdown.table(header, body)}
        """
    end
  end

  defp row_workload(_workload, :erlang), do: :erlang
  defp row_workload(workload, _mode), do: workload

  defp matrix_cell(nil), do: "-"
  defp matrix_cell(%{mode: :erlang} = r), do: "#{fmt(r.p99_median_ms)}"
  defp matrix_cell(%{repeats: 0} = r), do: r.status

  defp matrix_cell(r) do
    "#{fmt(r.p99_median_ms)}: #{fmt(r[:ratio])}x #{verdict_mark(r)}#{if r[:disturbed], do: " *", else: ""}"
  end

  defp verdict_mark(%{verdict: :within}), do: "in"
  defp verdict_mark(%{verdict: :outside}), do: "out"
  defp verdict_mark(_), do: "?"

  defp slices_md(rows) do
    slices = Enum.filter(rows, &(&1.set == :slices))

    if slices == [] do
      ""
    else
      default =
        for f <- slices |> Enum.map(& &1.factor) |> Enum.uniq(),
            do: find(rows, :matrix, :spin, 10, f, :yielding)

      all =
        Enum.sort_by(Enum.reject(default, &is_nil/1) ++ slices, &{&1.factor, &1.slice_us || 0})

      """
      ### `:yielding` slice length (Spin, 10 ms calls)

      The same cells with `WellBehaved.Runtime.configure(slice_us: n)`; the default's row is the \
      matrix cell. Throughput at each slice is in the overhead suite.

      #{Markdown.table(["workers", "slice", "ticker p99 (ms)", "ratio to pure Erlang", "verdict"], for(r <- all, do: ["#{r.workers}", if(r.slice_us, do: "#{r.slice_us} us", else: "default"), fmt(r.p99_median_ms), ratio_text(r), verdict_mark(r)]))}
      """
    end
  end

  defp busy_wait_md(rows) do
    bw = Enum.filter(rows, &(&1.set == :busy_wait and &1.mode != :erlang))

    if bw == [] do
      ""
    else
      body =
        for r <- Enum.sort_by(bw, &{&1.work_ms, &1.factor, &1.mode}) do
          d = find(rows, :matrix, :spin, r.work_ms, r.factor, r.mode)

          [
            "#{r.work_ms} ms",
            "#{r.workers}",
            ":#{r.mode}",
            d && "#{fmt(d.p99_median_ms)} (#{ratio_text(d)})",
            "#{fmt(r.p99_median_ms)} (#{ratio_text(r)})"
          ]
        end

      """
      ### Off-scheduler work and busy-waiting

      The off-scheduler modes with the VM's default flags and with \
      `#{Enum.join(@no_busy_wait, " ")}` (each against pure Erlang in its own VM). Idle \
      schedulers busy-wait before they sleep; with as many schedulers as cores, native threads \
      then compete with them for the CPU and the OS runs a waking scheduler late.

      #{Markdown.table(["work", "workers", "mode", "p99 ms (ratio), default flags", "p99 ms (ratio), no busy-wait"], body)}
      """
    end
  end

  @cell_headers [
    "set",
    "workload",
    "work",
    "workers",
    "mode",
    "status",
    "ticks",
    "p50 / p99 / max ms",
    "ratio",
    "verdict",
    "long_schedule (max ms)",
    "util normal / dirty",
    "noise"
  ]

  defp cells_md(rows) do
    body =
      for r <- rows do
        [
          "#{r.set}",
          "#{r.workload}",
          "#{r.work_ms} ms",
          "#{r.workers}",
          ":#{r.mode}" <> if(r.slice_us, do: " (#{r.slice_us} us)", else: ""),
          r.status,
          "#{r.samples}",
          "#{fmt(r.p50_ms)} / #{fmt(r.p99_ms)} / #{fmt(r.max_ms)}",
          if(r.mode == :erlang, do: "baseline", else: ratio_text(r)),
          if(r.mode == :erlang, do: "", else: verdict_mark(r)),
          "#{r.long_schedules} (#{r.long_schedule_max_ms})",
          "#{pct(r.util_normal)} / #{pct(r.util_dirty_cpu)}",
          "#{fmt(r.foreign_cores_max)} / #{pct(r.steal_share_max)} / #{pct(r[:stalled_share_max])}"
        ]
      end

    """
    ### Every cell

    Pooled over repeats: p50 / p99 / max of every tick, without CPU stalls (below). Noise: \
    the most CPU other processes used (cores, over a window or any 100 ms of it), the most \
    time stolen, and the largest share of a window that a CPU was stalled.

    #{Markdown.table(@cell_headers, body)}
    """
  end

  @doc "One heatmap per workload: the ticker's p99 and its ratio to pure Erlang, by mode and cell."
  @spec charts(map()) :: [WellBehaved.Lab.Suite.chart()]
  def charts(result) do
    for workload <- [:spin, :levenshtein], cols = columns(result.rows, workload), cols != [] do
      modes =
        Enum.filter(@rows, fn mode ->
          Enum.any?(cols, fn {w, f} ->
            find(result.rows, :matrix, row_workload(workload, mode), w, f, mode)
          end)
        end)

      cells = fn mode ->
        Enum.map(cols, fn {w, f} ->
          find(result.rows, :matrix, row_workload(workload, mode), w, f, mode)
        end)
      end

      %{
        name: "lateness_heatmap_#{workload}",
        title:
          "#{workload}: ticker p99 lateness, ms (cell text), and its ratio to pure Erlang (colour)",
        kind: :heatmap,
        top: workload == :spin,
        x_label: "work per call, workers (x schedulers)",
        y_label: "mode",
        categories: Enum.map(cols, fn {w, f} -> "#{w} ms x#{f}" end),
        rows: Enum.map(modes, &Atom.to_string/1),
        values:
          for mode <- modes do
            for r <- cells.(mode),
                do: if(r && mode == :erlang, do: r.p99_median_ms && 1.0, else: r && r[:ratio])
          end,
        labels:
          for mode <- modes do
            for r <- cells.(mode) do
              cond do
                r == nil ->
                  ""

                r.repeats == 0 ->
                  r.status

                true ->
                  "#{fmt(r.p99_median_ms)}#{if mode != :erlang and r[:verdict] == :not_distinguishable, do: " ?", else: ""}#{if r[:disturbed], do: " *", else: ""}"
              end
            end
          end,
        log_scale: true,
        color_label: "p99 / pure Erlang"
      }
    end
  end

  @columns ~w(set workload mode work_ms factor workers slice_us status repeats samples p50_ms
              p99_ms max_ms p99_median_ms ratio ratio_low ratio_high verdict verdict_note disturbed
              long_schedules long_schedule_max_ms util_normal util_dirty_cpu calls
              foreign_cores_max steal_share_max wake_late_max_ms stalled_share_max
              raw_p99_median_ms noisy_repeats)a

  @doc "Every cell's row, for `lateness.csv`."
  @spec tables(map()) :: [WellBehaved.Lab.Suite.table()]
  def tables(result) do
    [
      %{
        name: "lateness",
        columns: Enum.map(@columns, &Atom.to_string/1),
        rows: for(r <- result.rows, do: Enum.map(@columns, &Map.get(r, &1)))
      }
    ]
  end

  @doc "A row's ratio to pure Erlang with its interval, `*` when a repeat was disturbed."
  @spec ratio_text(map() | nil) :: String.t()
  def ratio_text(nil), do: "-"
  def ratio_text(%{ratio: nil}), do: "no baseline"

  def ratio_text(row) do
    "#{fmt(row.ratio)}x, 95% #{fmt(row.ratio_low)}-#{fmt(row.ratio_high)}" <>
      if(row[:disturbed], do: " *", else: "")
  end

  @doc "A row's verdict in words."
  @spec verdict_word(map()) :: String.t()
  def verdict_word(%{verdict: :within}), do: "within"
  def verdict_word(%{verdict: :outside}), do: "outside"
  def verdict_word(_), do: "not distinguishable"

  @doc "A figure as the suite's text shows it (three decimals under 0.1)."
  @spec fmt(number() | nil) :: String.t()
  def fmt(x) when is_float(x) and x < 0.1 and x > 0, do: Markdown.fmt(x, 3)
  def fmt(x), do: Markdown.fmt_auto(x)

  defp pct(x), do: Markdown.pct(x)
end
