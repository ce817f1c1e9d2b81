defmodule WellBehaved.Lab.Lateness do
  alias WellBehaved.Lab.Lateness.Recommend
  alias WellBehaved.Lab.Measure.Verdict

  @moduledoc """
  The lateness suite: how late the rest of the VM runs while workers do
  native work in each scheduling mode, against pure Erlang code doing the
  same.

  ## What a cell is

  A cell is a workload (fixed work: `WellBehaved.Lab.Spin` iterations or a
  `WellBehaved.Levenshtein` pair, sized by a calibration in the lab's VM to
  1, 10 or 100 ms per call; 1 s too in `--full`), a number of workers
  (schedulers x 1 or x 10; up to x 10 000 in `--full`) and a mode. For a
  window (400 ms, 1 s in `--full`) after a short warm-up, the workers call
  the workload over and over while `WellBehaved.Probe` records a ticker
  that wants to run every millisecond: about 400 samples per window, so
  its p99 is not its maximum. Workers still busy at the end are stopped.

  The baseline of every cell is the `erlang` cell of the same work, workers
  and VM: `WellBehaved.Probe.erlang_work/1`, pure Erlang code that does not
  allocate, of the same CPU demand per call.

  ## Repeats, interleaving, verdicts

  Every cell is measured several times (3; 5 in `--full`). One child VM per
  work size and repeat (`WellBehaved.Testing.ChildVM`, bounded by SIGKILL) runs
  its cells in an order shuffled anew for each repeat, so modes alternate in
  time and a drift of the machine hits them alike. Each repeat of a cell is
  paired with its baseline from the same VM: the ratio of their p99. A
  cell's figure is the median ratio over its repeats, with a 95% bootstrap
  interval over the repeats (`WellBehaved.Lab.Stats`); its verdict
  (`WellBehaved.Lab.Measure.Verdict`) is `:within` the 1.5x bound when the
  whole interval is below it, `:outside` when the whole interval is above
  it, and `:not_distinguishable` otherwise.

  Each window (`WellBehaved.Lab.Measure.Window`) also measures, from
  outside the VM (`WellBehaved.Lab.Noise`, `priv/wb_noise_watch`), the
  CPU used by other processes, the time stolen by the hypervisor, and the
  moments a CPU was stalled: a thread pinned to each CPU wakes every
  millisecond, and a wake-up more than 250 us late means nothing on that
  CPU could run. On a virtual machine such stalls of 0.3-7 ms come
  several times a second whatever the VM does, and with one worker per
  scheduler they, not the workload, set the p99. The time a tick's wait
  overlapped a stall is taken out of its lateness, for every cell and its
  baseline alike (the raw p99 is kept in the CSV). Repeats disturbed by
  other work, or whose CPUs were stalled more than 5% of the window, are
  left out when at least #{Verdict.min_repeats()} quiet ones remain; a
  cell without #{Verdict.min_repeats()} quiet repeats is marked and gets
  no verdict. Cells whose interval straddles the bound get more repeats
  (up to 7).

  ## Recommendation

  For each work size, the modes are taken in a fixed order of preference:
  #{inspect(Recommend.preference())}. The
  first one within the bound with 10x workers and not clearly outside with
  1x is recommended. When none is, the closest is still named, with its
  figures and what would bring it within: the first mode, in the order of
  preference, whose median ratios are all within the bound and which is
  clearly outside at no number of workers; if there is none, the one whose
  worst median ratio is the smallest. A mode far outside the bound is never named because its
  interval is wide. The choice depends on verdicts and on which side of the
  bound the medians fall, not on which of several good modes happened to be
  a little faster.

  Two more sets of cells: `:yielding` at several slice lengths
  (`WellBehaved.Runtime.configure(slice_us: n)`), and the off-scheduler
  modes in a VM started with `+sbwt none +sbwtdcpu none +sbwtdio none`
  (idle schedulers do not busy-wait), against their default-VM cells.
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.Runtime
  alias WellBehaved.Lab.{Suite, Turns}
  alias WellBehaved.Lab.Lateness.{Analysis, Child, Plan, Render}
  import WellBehaved.Lab.Lateness.Render, only: [fmt: 1]

  @doc """
  Runs the suite (options of `WellBehaved.Lab.Suite.options!/1`): the
  calibration, the turns, every repeat of every cell in child VMs, more
  repeats for the cells near the bound, and the rows, recommendations and
  targets made of them.
  """
  @impl true
  @spec run(keyword()) :: map()
  def run(opts) do
    {quick, scale, progress} = Suite.options!(opts)
    plan = Plan.new(quick, scale)
    cal = Plan.calibrate()
    rt = Runtime.stats()

    progress.(
      "calibrated: Spin #{fmt(cal.spin_ns)} ns/iteration, Levenshtein " <>
        "#{fmt(cal.lev_gcells)} Gcell/s, pure Erlang #{fmt(cal.erlang_ns)} ns/iteration; " <>
        "#{plan.repeats} repeats of #{plan.window_ms} ms windows"
    )

    turns = Turns.measure(plan.work_ms, cal.spin_ns, plan.repeats, progress)
    groups = Plan.groups(plan, cal, rt.slice_us)

    progress.(
      "#{length(groups)} VMs per repeat, #{groups |> Enum.map(&length(&1.cells)) |> Enum.sum()} " <>
        "cells per repeat"
    )

    measured = Child.run_repeats(groups, Enum.to_list(1..plan.repeats), plan, progress, %{})
    cells = groups |> Enum.flat_map(& &1.cells) |> Enum.uniq_by(& &1.id)
    {measured, extra} = resolve(groups, cells, measured, plan, progress)
    rows = Analysis.analyse(cells, measured, plan)
    turn_sizes = Enum.filter(plan.work_ms, &(&1 in [1, 10, 100]))

    %{
      config: %{
        quick: quick,
        rounds_scale: scale * 1.0,
        schedulers: :erlang.system_info(:schedulers_online),
        repeats: plan.repeats,
        max_repeats: plan.repeats + plan.extra_repeats,
        extra_rounds: extra,
        window_ms: plan.window_ms,
        tick_ms: 1,
        bound: Plan.bound(),
        long_schedule_ms: Plan.long_schedule_ms(),
        slice_us: rt.slice_us,
        normal_max_us: rt.normal_max_us,
        yielding_max_us: rt.yielding_max_us
      },
      calibration: cal,
      rows: rows,
      turns: turns,
      recommendations:
        recommend(rows, plan.work_ms, Recommend.auto_picks(plan.work_ms, rt), turns),
      targets:
        Analysis.targets(rows, plan.work_ms) ++
          Turns.targets(turns, turn_sizes) ++ Turns.rust_target(turns, turn_sizes)
    }
  end

  # More repeats for the cells that could not be told apart from the bound
  # (with their baselines), one round at a time, until every verdict is
  # clear or the cells have had `extra_repeats` more. With 7 repeats the
  # interval of the median no longer rests on the single extreme one.
  defp resolve(groups, cells, measured, plan, progress, round \\ 1) do
    unclear =
      Analysis.analyse(cells, measured, plan)
      |> Enum.filter(
        &(&1.mode != :erlang and &1[:verdict] == :not_distinguishable and &1.repeats > 0 and
            (plan.extra_scope == :all or Plan.decisive?(&1)))
      )
      |> MapSet.new(& &1.id)

    if round > plan.extra_repeats or MapSet.size(unclear) == 0 do
      {measured, round - 1}
    else
      progress.(
        "lateness: #{MapSet.size(unclear)} cells not yet distinguishable from the bound: one more repeat"
      )

      extra =
        for group <- groups,
            mine = Enum.filter(group.cells, &MapSet.member?(unclear, &1.id)),
            mine != [] do
          bases = mine |> Enum.map(&Plan.baseline_id/1) |> MapSet.new()
          %{group | cells: mine ++ Enum.filter(group.cells, &MapSet.member?(bases, &1.id))}
        end

      measured = Child.run_repeats(extra, [plan.repeats + round], plan, progress, measured)
      resolve(groups, cells, measured, plan, progress, round + 1)
    end
  end

  @doc """
  The top of the report: what to do for each work size
  (`WellBehaved.Lab.Lateness.Render.summary/1`).
  """
  @spec summary(map()) :: String.t()
  defdelegate summary(result), to: Render

  @doc "The suite's section of the report."
  @impl true
  @spec to_markdown(map()) :: String.t()
  defdelegate to_markdown(result), to: Render

  @doc "The heatmaps of the ticker's p99 by mode and cell."
  @impl true
  @spec charts(map()) :: [Suite.chart()]
  defdelegate charts(result), to: Render

  @doc "Every cell's row, for `lateness.csv`."
  @impl true
  @spec tables(map()) :: [Suite.table()]
  defdelegate tables(result), to: Render

  @doc """
  A cell's ratio to its baseline and its verdict
  (`WellBehaved.Lab.Lateness.Analysis.ratio_summary/3`).
  """
  @spec ratio_summary([{pos_integer(), map()}], [{pos_integer(), map()}], pos_integer()) :: map()
  defdelegate ratio_summary(repeats, base, window_ms), to: Analysis

  @doc "Whether a cell is run (`WellBehaved.Lab.Lateness.Plan.runs?/3`)."
  @spec runs?(atom(), pos_integer(), pos_integer()) :: boolean()
  defdelegate runs?(mode, work_ms, factor), to: Plan

  @doc "The mode to use per work size (`WellBehaved.Lab.Lateness.Recommend.recommend/4`)."
  @spec recommend([map()], [pos_integer()], map(), map() | nil) :: [map()]
  defdelegate recommend(rows, work_ms_list, auto_picks \\ %{}, turns \\ nil), to: Recommend
end
