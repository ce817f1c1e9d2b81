defmodule WellBehaved.Lab.Lateness do
  @moduledoc """
  The lateness suite: how late the rest of the VM runs while workers do
  native work in each scheduling mode.

  Workloads are fixed work, never deadlines: Spin iterations and Levenshtein
  pairs sized (by a calibration in the lab's VM) to about 1 ms, 10 ms,
  100 ms and 1 s of work per call. For each work size, concurrency
  (schedulers_online x 1, 10 and 100 worker processes; x 1000 and 10000 in
  the full run) and mode, one child VM runs the workers on a fixed total
  amount of work while `WellBehaved.Probe` records a 10 ms and a 1 s
  ticker's lateness, `long_schedule` events, scheduler utilization and the
  wall time to finish. A pure-Erlang workload of the same CPU demand is the
  baseline row.

  Every experiment is bounded by SIGKILL (`WellBehaved.Lab.ChildVM`); a
  `:normal` run that hits its bound is reported as such: that is its result.
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.{Levenshtein, Probe, Runtime, Spin}
  alias WellBehaved.Lab.{ChildVM, Markdown}
  import WellBehaved.Lab.Stats, only: [median_ns: 2]

  @modes Runtime.modes()
  # Idle schedulers busy-wait before they sleep; when native threads keep
  # every core busy, the OS then runs a waking scheduler late. These rows
  # measure the off-scheduler modes again with busy-waiting off.
  @no_busy_wait ~w(+sbwt none +sbwtdcpu none +sbwtdio none)
  @busy_wait_modes [:dirty_cpu, :yielding_dirty, :threaded]
  @long_schedule_ms 10
  # an experiment's total work, CPU-milliseconds; bigger ones are skipped
  @work_target_ms %{quick: 1_000, full: 3_000}
  @work_limit_ms %{quick: 4_000, full: 60_000}

  @impl true
  def run(opts) do
    {quick, scale, progress} = WellBehaved.Lab.Suite.options!(opts)
    plan = plan(quick, scale)
    cal = calibrate()

    progress.(
      "calibrated: Spin #{fmt(cal.spin_ns)} ns/iteration, Levenshtein " <>
        "#{fmt(cal.lev_gcells)} Gcell/s, pure Erlang #{fmt(cal.erlang_ns)} ns/iteration"
    )

    rows =
      for workload <- plan.workloads,
          work_ms <- plan.work_ms,
          factor <- plan.factors,
          mode <- [:erlang | @modes],
          mode != :erlang or workload == hd(plan.workloads) do
        experiment(workload, work_ms, factor, mode, :default, plan, cal, progress)
      end

    busy_wait_rows =
      for factor <- [1, 10], mode <- @busy_wait_modes do
        experiment(:spin, 100, factor, mode, :no_busy_wait, plan, cal, progress)
      end

    %{
      config: %{
        quick: quick,
        rounds_scale: scale * 1.0,
        schedulers: :erlang.system_info(:schedulers_online),
        long_schedule_ms: @long_schedule_ms,
        work_target_ms: plan.target_ms
      },
      calibration: cal,
      rows: rows,
      busy_wait_rows: busy_wait_rows,
      recommendations: recommend(rows),
      targets: targets(rows)
    }
  end

  defp plan(quick, scale) do
    key = if quick, do: :quick, else: :full

    %{
      workloads: [:spin, :levenshtein],
      work_ms: if(quick, do: [1, 10, 100], else: [1, 10, 100, 1000]),
      factors: if(quick, do: [1, 10, 100], else: [1, 10, 100, 1000, 10_000]),
      target_ms: max(50, round(@work_target_ms[key] * scale)),
      limit_ms: @work_limit_ms[key],
      # the quick run keeps Levenshtein to 1x and 10x
      lev_factors: if(quick, do: [1, 10], else: [1, 10, 100, 1000, 10_000])
    }
  end

  # ---- calibration (in the lab's own VM, :normal, one process) --------------------

  @doc false
  def calibrate do
    spin_n = 2_000_000
    spin_ns = median_ns(fn -> Spin.run(spin_n, schedule: :normal) end, 5) / spin_n
    a = :crypto.strong_rand_bytes(4000)
    b = :crypto.strong_rand_bytes(4000)
    lev_ns = median_ns(fn -> Levenshtein.distance(a, b, schedule: :normal) end, 5)
    erl_n = 200_000
    erlang_ns = median_ns(fn -> erlang_work(erl_n) end, 5) / erl_n
    %{spin_ns: spin_ns, lev_gcells: 4000 * 4000 / lev_ns, erlang_ns: erlang_ns}
  end

  @doc false
  # Pure-Erlang CPU work with the shape of Spin: xorshift rounds on a
  # 64-bit value (masked so it stays a small integer).
  def erlang_work(n), do: erlang_work(n, 0x9E3779B97F4A7C15)

  defp erlang_work(0, x), do: x

  defp erlang_work(n, x) do
    import Bitwise
    x = bxor(x, x <<< 13 &&& 0xFFFFFFFFFFFFFFF)
    x = bxor(x, x >>> 7)
    x = bxor(x, x <<< 17 &&& 0xFFFFFFFFFFFFFFF)
    erlang_work(n - 1, x)
  end

  # ---- one experiment -----------------------------------------------------------

  defp experiment(workload, work_ms, factor, mode, vm, plan, cal, progress) do
    schedulers = :erlang.system_info(:schedulers_online)
    workers = schedulers * factor
    workload = if mode == :erlang, do: :erlang, else: workload
    calls = max(1, round(plan.target_ms / (workers * work_ms)))
    total_ms = workers * calls * work_ms

    base = %{
      workload: workload,
      mode: mode,
      work_ms: work_ms,
      factor: factor,
      workers: workers,
      calls_per_worker: calls,
      total_work_ms: total_ms,
      vm: vm
    }

    cond do
      total_ms > plan.limit_ms ->
        Map.put(base, :status, "skipped: #{total_ms} ms of work exceeds the run's budget")

      workload == :levenshtein and factor not in plan.lev_factors ->
        Map.put(base, :status, "skipped in quick runs")

      true ->
        ideal_ms = total_ms / schedulers
        bound_ms = round(max(15_000, 6 * ideal_ms + 5_000))
        spec = Map.merge(base, %{size: size(workload, work_ms, cal), bound_ms: bound_ms})
        flags = if vm == :no_busy_wait, do: @no_busy_wait, else: []

        result =
          ChildVM.run({__MODULE__, :child_experiment, [spec]},
            bound_ms: bound_ms,
            erl_flags: flags
          )

        row = record(base, result, ideal_ms, bound_ms)

        progress.(
          "lateness #{workload} #{work_ms} ms x#{factor} #{mode}" <>
            if(vm == :default, do: "", else: " (#{Enum.join(flags, " ")})") <>
            ": #{row.status}" <>
            if(row[:tick_p99_ms], do: ", ticker p99 #{fmt(row.tick_p99_ms)} ms", else: "")
        )

        row
    end
  end

  defp size(:spin, work_ms, cal), do: round(work_ms * 1.0e6 / cal.spin_ns)
  defp size(:erlang, work_ms, cal), do: round(work_ms * 1.0e6 / cal.erlang_ns)
  defp size(:levenshtein, work_ms, cal), do: round(:math.sqrt(work_ms * 1.0e6 * cal.lev_gcells))

  defp record(base, {:ok, report}, ideal_ms, bound_ms) do
    Map.merge(base, %{
      status: if(report.completed, do: "ok", else: "workers timed out"),
      bound_ms: bound_ms,
      wall_ms: report.wall_ms,
      ideal_wall_ms: ideal_ms,
      tick_samples: report.ticker.samples,
      tick_p50_ms: report.ticker.p50_ms,
      tick_p99_ms: report.ticker.p99_ms,
      tick_max_ms: report.ticker.max_ms,
      slow_tick_samples: report.slow_ticker.samples,
      slow_tick_max_ms: report.slow_ticker.max_ms,
      long_schedules: report.long_schedules.count,
      long_schedule_max_ms: report.long_schedules.max_ms,
      util_normal: report.utilization.normal,
      util_dirty_cpu: report.utilization.dirty_cpu,
      util_dirty_io: report.utilization.dirty_io
    })
  end

  defp record(base, {:timeout, ms}, _ideal, _bound),
    do: Map.merge(base, %{status: "bound hit", bound_ms: ms})

  defp record(base, {:crashed, code, output}, _ideal, bound_ms) do
    Map.merge(base, %{
      status: "crashed (exit #{code})",
      bound_ms: bound_ms,
      output: String.slice(output, -500, 500)
    })
  end

  @doc false
  # Runs in the child VM.
  def child_experiment(spec) do
    fun =
      case spec.workload do
        :spin ->
          fn -> Spin.run(spec.size, schedule: spec.mode) end

        :erlang ->
          fn -> erlang_work(spec.size) end

        :levenshtein ->
          a = :crypto.strong_rand_bytes(spec.size)
          b = :crypto.strong_rand_bytes(spec.size)
          fn -> Levenshtein.distance(a, b, schedule: spec.mode) end
      end

    Probe.measure(fun,
      workers: spec.workers,
      calls: spec.calls_per_worker,
      long_schedule_ms: @long_schedule_ms,
      timeout_ms: spec.bound_ms
    )
  end

  # ---- analysis -------------------------------------------------------------------

  defp measured?(row), do: row.status == "ok"

  defp baseline(rows, row) do
    Enum.find(
      rows,
      &(&1.mode == :erlang and &1.work_ms == row.work_ms and &1.factor == row.factor)
    )
  end

  # p99 within 1.5x the pure-Erlang baseline, no long_schedule, finished
  defp near_baseline?(rows, row) do
    base = baseline(rows, row)

    measured?(row) and row.long_schedules == 0 and base != nil and measured?(base) and
      row.tick_p99_ms != nil and base.tick_p99_ms != nil and
      row.tick_p99_ms <= 1.5 * base.tick_p99_ms
  end

  @doc false
  # For each work size: among modes that keep the ticker near the baseline
  # at 1x and 10x concurrency (Spin), the one that finishes the work fastest.
  def recommend(rows) do
    spin = Enum.filter(rows, &(&1.workload == :spin and &1.factor in [1, 10]))

    for work_ms <- spin |> Enum.map(& &1.work_ms) |> Enum.uniq() |> Enum.sort() do
      candidates =
        for mode <- @modes do
          mine = Enum.filter(spin, &(&1.mode == mode and &1.work_ms == work_ms))
          good = mine != [] and Enum.all?(mine, &near_baseline?(rows, &1))
          wall = if Enum.all?(mine, &measured?/1), do: Enum.sum(Enum.map(mine, & &1.wall_ms))
          %{mode: mode, near_baseline: good, wall_ms: wall}
        end

      good = Enum.filter(candidates, & &1.near_baseline)

      case Enum.min_by(good, & &1.wall_ms, fn -> nil end) do
        nil ->
          %{
            work_ms: work_ms,
            mode: nil,
            reason: "no mode kept the ticker within 1.5x of baseline"
          }

        best ->
          others = good |> Enum.map(& &1.mode) |> List.delete(best.mode)

          %{
            work_ms: work_ms,
            mode: best.mode,
            reason:
              "near baseline and fastest (#{fmt(best.wall_ms)} ms at 1x + 10x)" <>
                if(others == [], do: "", else: "; also near baseline: #{Enum.join(others, ", ")}")
          }
      end
    end
  end

  @doc false
  def targets(rows) do
    spin = Enum.filter(rows, &(&1.workload == :spin))

    near =
      for mode <- [:yielding, :auto] do
        mine =
          Enum.filter(
            spin,
            &(&1.mode == mode and &1.factor in [1, 10] and &1.status != "skipped in quick runs")
          )

        met = mine != [] and Enum.all?(mine, &near_baseline?(rows, &1))

        worst =
          mine
          |> Enum.map(fn r ->
            base = baseline(rows, r)
            if measured?(r) and base && base.tick_p99_ms, do: r.tick_p99_ms / base.tick_p99_ms
          end)
          |> Enum.reject(&is_nil/1)
          |> Enum.max(fn -> nil end)

        %{
          target: ":#{mode} ticker p99 within 1.5x of pure Erlang at 1x and 10x",
          measured: if(worst, do: "worst #{fmt(worst)}x", else: "no data"),
          met: met
        }
      end

    # :normal visibly fails: bound hit, or p99 lateness at least the work size
    normal =
      Enum.filter(spin, &(&1.mode == :normal and &1.work_ms >= 10 and &1.factor in [1, 10]))

    fails =
      Enum.all?(normal, fn r ->
        r.status == "bound hit" or
          (measured?(r) and (r.tick_samples == 0 or r.tick_p99_ms >= r.work_ms))
      end)

    near ++
      [
        %{
          target: ":normal visibly fails at >= 10 ms of work (bound hit or p99 >= work size)",
          measured:
            Enum.map_join(normal, ", ", fn r ->
              "#{r.work_ms} ms x#{r.factor}: " <>
                cond do
                  not measured?(r) -> r.status
                  r.tick_samples == 0 -> "ticker never ran"
                  true -> "p99 #{fmt(r.tick_p99_ms)} ms"
                end
            end),
          met: normal != [] and fails
        }
      ]
  end

  # ---- rendering ------------------------------------------------------------------

  @impl true
  def to_markdown(result) do
    cal = result.calibration

    """
    ## Lateness under native work

    Fixed work per call, sized by calibration: Spin #{fmt(cal.spin_ns)} ns/iteration, \
    Levenshtein #{fmt(cal.lev_gcells)} Gcell/s, pure Erlang #{fmt(cal.erlang_ns)} ns/iteration. \
    Workers = #{result.config.schedulers} schedulers x factor; each experiment is one child VM \
    doing about #{result.config.work_target_ms} ms of CPU work in all (at least one call per \
    worker). Tickers want to run every 10 ms and every 1 s; `long_schedule` threshold \
    #{result.config.long_schedule_ms} ms. The `erlang` rows are the pure-Erlang baseline of the \
    same CPU demand.

    ### Recommendation (measured)

    | work per call | mode | why |
    | --- | --- | --- |
    #{Enum.map_join(result.recommendations, "\n", fn r -> "| #{r.work_ms} ms | #{if r.mode, do: ":#{r.mode}", else: "-"} | #{r.reason} |" end)}

    ### Targets

    #{Markdown.targets_table(result.targets)}

    #{Enum.map_join(workloads(result.rows), "\n", &workload_table(result.rows, &1))}
    #{busy_wait_table(result)}
    """
  end

  defp busy_wait_table(%{busy_wait_rows: rows} = result) do
    pairs =
      for r <- rows do
        default =
          Enum.find(
            result.rows,
            &(&1.workload == :spin and &1.mode == r.mode and &1.work_ms == r.work_ms and
                &1.factor == r.factor)
          )

        {default, r}
      end

    """
    ### Scheduler busy-wait and off-scheduler work

    Spin, 100 ms per call: the same experiments with the VM's default flags and with \
    `#{Enum.join(@no_busy_wait, " ")}`. Idle schedulers busy-wait before sleeping; when \
    native threads keep every core busy, the OS runs a waking scheduler late.

    | workers | mode | ticker p99 (ms), default | ticker p99 (ms), no busy-wait | wall ms, default | wall ms, no busy-wait |
    | --- | --- | --- | --- | --- | --- |
    #{Enum.map_join(pairs, "\n", fn {d, n} -> "| #{n.workers} (x#{n.factor}) | #{n.mode} | #{p99(d)} | #{p99(n)} | #{wall(d)} | #{wall(n)} |" end)}
    """
  end

  defp busy_wait_table(_), do: ""

  defp p99(%{status: "ok", tick_samples: 0}), do: "never ran"
  defp p99(%{status: "ok"} = r), do: fmt(r.tick_p99_ms)
  defp p99(nil), do: "-"
  defp p99(r), do: r.status

  defp wall(%{status: "ok"} = r), do: fmt(r.wall_ms)
  defp wall(_), do: "-"

  defp workloads(rows),
    do: rows |> Enum.map(& &1.workload) |> Enum.uniq() |> Enum.reject(&(&1 == :erlang))

  defp workload_table(rows, workload) do
    mine =
      Enum.filter(rows, &(&1.workload in [workload, :erlang] and not skipped?(&1)))
      |> Enum.sort_by(&{&1.work_ms, &1.factor, mode_order(&1.mode)})

    skipped = Enum.filter(rows, &(&1.workload == workload and skipped?(&1)))

    """
    ### #{workload}

    | work | workers | mode | status | ticker p50 / p99 / max (ms) | 1 s ticker max | long_schedule (max ms) | util normal / dirty CPU | wall (ideal) ms |
    | --- | --- | --- | --- | --- | --- | --- | --- | --- |
    #{Enum.map_join(mine, "\n", &row_md/1)}
    #{if skipped == [], do: "", else: "\nNot run: " <> Enum.map_join(skipped, "; ", &"#{&1.work_ms} ms x#{&1.factor} #{&1.mode} (#{&1.status})")}
    """
  end

  defp skipped?(row), do: String.starts_with?(row.status, "skipped")

  defp row_md(%{status: "ok"} = r) do
    ticker =
      if r.tick_samples == 0,
        do: "**never ran** in #{fmt(r.wall_ms)} ms",
        else: "#{fmt(r.tick_p50_ms)} / #{fmt(r.tick_p99_ms)} / #{fmt(r.tick_max_ms)}"

    "| #{r.work_ms} ms | #{r.workers} (x#{r.factor}) | #{r.mode} | ok | #{ticker} | " <>
      "#{fmt(r.slow_tick_max_ms)} | #{r.long_schedules} (#{r.long_schedule_max_ms}) | " <>
      "#{pct(r.util_normal)} / #{pct(r.util_dirty_cpu)} | #{fmt(r.wall_ms)} (#{fmt(r.ideal_wall_ms)}) |"
  end

  defp row_md(r) do
    "| #{r.work_ms} ms | #{r.workers} (x#{r.factor}) | #{r.mode} | **#{r.status}** | - | - | - | - | - |"
  end

  defp mode_order(:erlang), do: 0
  defp mode_order(mode), do: 1 + Enum.find_index(@modes, &(&1 == mode))

  @impl true
  def charts(result) do
    for workload <- workloads(result.rows),
        work_ms <- result.rows |> Enum.map(& &1.work_ms) |> Enum.uniq() |> Enum.sort() do
      rows =
        Enum.filter(result.rows, &(&1.workload in [workload, :erlang] and &1.work_ms == work_ms))

      factors =
        rows |> Enum.reject(&skipped?/1) |> Enum.map(& &1.factor) |> Enum.uniq() |> Enum.sort()

      categories = ["erlang" | Enum.map(@modes, &Atom.to_string/1)]

      %{
        name: "lateness_#{workload}_#{work_ms}ms",
        title:
          "10 ms ticker lateness p99, #{workload}, #{work_ms} ms per call (bound hit: no bar)",
        kind: :bars,
        x_label: "mode",
        y_label: "p99 lateness (ms)",
        log_y: true,
        categories: categories,
        series:
          for factor <- factors do
            %{
              label: "x#{factor} workers",
              values:
                for mode <- [:erlang | @modes] do
                  row = Enum.find(rows, &(&1.mode == mode and &1.factor == factor))
                  if row && row.status == "ok", do: row.tick_p99_ms
                end
            }
          end
      }
    end
  end

  @columns ~w(vm workload mode work_ms factor workers calls_per_worker total_work_ms status bound_ms
              wall_ms ideal_wall_ms tick_samples tick_p50_ms tick_p99_ms tick_max_ms
              slow_tick_samples slow_tick_max_ms long_schedules long_schedule_max_ms util_normal
              util_dirty_cpu util_dirty_io)a

  @impl true
  def tables(result) do
    [
      %{
        name: "lateness",
        columns: Enum.map(@columns, &Atom.to_string/1),
        rows:
          for(
            r <- result.rows ++ Map.get(result, :busy_wait_rows, []),
            do: Enum.map(@columns, &Map.get(r, &1))
          )
      }
    ]
  end

  defp fmt(x), do: Markdown.fmt_auto(x)
  defp pct(x), do: Markdown.pct(x)
end
