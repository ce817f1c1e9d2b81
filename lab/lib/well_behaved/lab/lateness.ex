defmodule WellBehaved.Lab.Lateness do
  @moduledoc """
  The lateness suite: how late the rest of the VM runs while workers do
  native work in each scheduling mode, against pure Erlang code doing the
  same.

  ## What a cell is

  A cell is a workload (fixed work: `WellBehaved.Lab.Spin` iterations or a
  `WellBehaved.Levenshtein` pair, sized by a calibration in the lab's VM to
  1, 10 or 100 ms per call; 1 s too in `--full`), a number of workers
  (schedulers x 1 or x 10; up to x 10 000 in `--full`) and a mode. For a
  window (500 ms, 1 s in `--full`) after a short warm-up, the workers call
  the workload over and over while `WellBehaved.Probe` records a ticker
  that wants to run every millisecond: about 500 samples per window, so
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
  interval over the repeats (`WellBehaved.Lab.Stats`); its verdict is
  `:within` the 1.5x bound when the whole interval is below it, `:outside`
  when the whole interval is above it, and `:not_distinguishable`
  otherwise.

  Each window also measures, from outside the VM
  (`WellBehaved.Lab.Noise`, `priv/wb_noise_watch`), the CPU used by other
  processes, the time stolen by the hypervisor, and the moments a CPU was
  stalled: a thread pinned to each CPU wakes every millisecond, and a
  wake-up more than 250 us late means nothing on that CPU could run. On a
  virtual machine such stalls of 0.3-7 ms come several times a second
  whatever the VM does, and with one worker per scheduler they, not the
  workload, set the p99. The time a tick's wait overlapped a stall is
  taken out of its lateness, for every cell and its baseline alike (the
  raw p99 is kept in the CSV). Repeats disturbed by other work, or whose
  CPUs were stalled more than 5% of the window, are left out when at
  least two quiet ones remain; a cell without two quiet repeats is marked
  and gets no verdict. Cells whose interval straddles the bound get more
  repeats (up to 7).

  ## Recommendation

  For each work size, the modes are taken in a fixed order of preference:
  #{inspect([:normal, :yielding, :yielding_dirty, :dirty_cpu, :threaded])}. The
  first one within the bound with 10x workers and not clearly outside with
  1x is recommended. When none is, the closest is still named, with its
  figures and what would bring it within: among the modes whose median
  ratios are within the bound, the one with the most confident verdicts
  (then by preference); if there is none, the one whose worst median ratio
  is the smallest. A mode far outside the bound is never named because its
  interval is wide. The choice depends on verdicts and on which side of the
  bound the medians fall, not on which of several good modes happened to be
  a little faster.

  Two more sets of cells: `:yielding` at several slice lengths
  (`WellBehaved.Runtime.configure(slice_us: n)`), and the off-scheduler
  modes in a VM started with `+sbwt none +sbwtdcpu none +sbwtdio none`
  (idle schedulers do not busy-wait), against their default-VM cells.
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.{Levenshtein, Probe, Runtime}
  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.{Markdown, Noise, Spin, Stats, Turns}
  import WellBehaved.Lab.Stats, only: [median_ns: 2]

  @modes Runtime.modes()
  @rows [:erlang, :normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded, :auto]
  @preference [:normal, :yielding, :yielding_dirty, :dirty_cpu, :threaded]
  @off_modes [:dirty_cpu, :yielding_dirty, :threaded]
  @no_busy_wait ~w(+sbwt none +sbwtdcpu none +sbwtdio none)
  @bound 1.5
  @rec_factors [1, 10]
  @long_schedule_ms 10
  @slices [10, 20, 50, 100, 1000]
  # a window whose CPUs were stalled outside the VM longer than this share
  # of it is disturbed
  @stalled_max 0.05
  # a verdict needs this many quiet repeats
  @min_repeats 3
  # `:normal` cells that would hold the normal schedulers longer than this
  # (work per call x workers / schedulers) are not run: the killed workers
  # finish the NIF they are in, so such a cell costs minutes to show what
  # the smaller ones already show (a ticker late by about the whole call)
  @normal_hold_ms 10_000
  # `:dirty_cpu` cells with more queued work than this are not run: in a
  # trial, 20,000 workers queued for 1 s dirty CPU calls had not stopped 5
  # minutes after they were killed (2,000 stopped at once, as did 20,000 of
  # 100 ms)
  @dirty_queue_ms 1_000_000

  @impl true
  def run(opts) do
    {quick, scale, progress} = WellBehaved.Lab.Suite.options!(opts)
    plan = plan(quick, scale)
    cal = calibrate()
    rt = Runtime.stats()

    progress.(
      "calibrated: Spin #{fmt(cal.spin_ns)} ns/iteration, Levenshtein " <>
        "#{fmt(cal.lev_gcells)} Gcell/s, pure Erlang #{fmt(cal.erlang_ns)} ns/iteration; " <>
        "#{plan.repeats} repeats of #{plan.window_ms} ms windows"
    )

    turns = Turns.measure(plan.work_ms, cal.spin_ns, plan.repeats, progress)
    groups = groups(plan, cal, rt.slice_us)

    progress.(
      "#{length(groups)} VMs per repeat, #{groups |> Enum.map(&length(&1.cells)) |> Enum.sum()} " <>
        "cells per repeat"
    )

    measured = run_repeats(groups, Enum.to_list(1..plan.repeats), plan, progress, %{})
    cells = groups |> Enum.flat_map(& &1.cells) |> Enum.uniq_by(& &1.id)
    {measured, extra} = resolve(groups, cells, measured, plan, progress)
    rows = analyse(cells, measured, plan)

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
        bound: @bound,
        long_schedule_ms: @long_schedule_ms,
        slice_us: rt.slice_us,
        normal_max_us: rt.normal_max_us,
        yielding_max_us: rt.yielding_max_us
      },
      calibration: cal,
      rows: rows,
      turns: turns,
      recommendations: recommend(rows, plan.work_ms, auto_picks(plan.work_ms, rt), turns),
      targets:
        targets(rows, plan.work_ms) ++
          Turns.targets(turns, Enum.filter(plan.work_ms, &(&1 in [1, 10, 100])))
    }
  end

  # ---- the plan -----------------------------------------------------------------

  @doc false
  def plan(quick, scale) do
    base =
      if quick do
        %{
          repeats: 3,
          window_ms: 500,
          work_ms: [1, 10, 100],
          factors: [1, 10],
          lev_work_ms: [10],
          lev_factors: [1, 10],
          slice_factors: [10],
          busy_wait_work_ms: [100]
        }
      else
        %{
          repeats: 5,
          window_ms: 1000,
          work_ms: [1, 10, 100, 1000],
          factors: [1, 10, 100, 1000, 10_000],
          lev_work_ms: [1, 10, 100, 1000],
          lev_factors: [1, 10, 100],
          slice_factors: [1, 10],
          busy_wait_work_ms: [10, 100, 1000]
        }
      end

    repeats = max(1, round(base.repeats * min(scale, 1.0)))

    base
    |> Map.merge(%{
      repeats: repeats,
      # cells whose interval straddles the bound get up to this many more
      extra_repeats: if(repeats >= 3, do: 4, else: 0),
      # quick: only for the cells behind the recommendation and targets
      extra_scope: if(quick, do: :decisive, else: :all),
      window_ms: max(100, round(base.window_ms * min(scale * 4, 1.0)))
    })
  end

  defp run_repeats(groups, repeats, plan, progress, measured) do
    for repeat <- repeats, group <- rotate(groups, repeat), reduce: measured do
      acc ->
        group
        |> run_group(repeat, plan, progress)
        |> Enum.reduce(acc, fn {id, result}, acc ->
          Map.update(acc, id, [{repeat, result}], &[{repeat, result} | &1])
        end)
    end
  end

  # More repeats for the cells that could not be told apart from the bound
  # (with their baselines), one round at a time, until every verdict is
  # clear or the cells have had `extra_repeats` more. With 7 repeats the
  # interval of the median no longer rests on the single extreme one.
  defp resolve(groups, cells, measured, plan, progress, round \\ 1) do
    unclear =
      analyse(cells, measured, plan)
      |> Enum.filter(
        &(&1.mode != :erlang and &1[:verdict] == :not_distinguishable and &1.repeats > 0 and
            (plan.extra_scope == :all or decisive?(&1)))
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
          bases = mine |> Enum.map(&baseline_id/1) |> MapSet.new()
          %{group | cells: mine ++ Enum.filter(group.cells, &MapSet.member?(bases, &1.id))}
        end

      measured = run_repeats(extra, [plan.repeats + round], plan, progress, measured)
      resolve(groups, cells, measured, plan, progress, round + 1)
    end
  end

  # the cells the recommendation and the targets rest on: a quick run
  # spends its extra repeats on these alone
  defp decisive?(row),
    do:
      row.set == :matrix and row.workload == :spin and row.factor in @rec_factors and
        row.mode in [:normal, :yielding, :auto]

  defp rotate(list, repeat) do
    {front, back} = Enum.split(list, rem(repeat - 1, length(list)))
    back ++ front
  end

  # One child VM per work size (its matrix, Levenshtein and slice cells),
  # and one without busy-waiting for the off-scheduler modes.
  defp groups(plan, cal, default_slice) do
    schedulers = :erlang.system_info(:schedulers_online)
    cell = &cell(&1, &2, &3, &4, &5, schedulers, cal)

    per_work =
      for w <- plan.work_ms do
        matrix =
          for f <- plan.factors,
              mode <- [:erlang | @modes],
              runs?(mode, w, f),
              do: cell.(:matrix, :spin, w, f, mode)

        lev =
          if w in plan.lev_work_ms,
            do:
              for(
                f <- plan.lev_factors,
                mode <- @modes,
                runs?(mode, w, f),
                do: cell.(:matrix, :levenshtein, w, f, mode)
              ),
            else: []

        slices =
          if w == 10,
            do:
              for(
                f <- plan.slice_factors,
                s <- @slices,
                s != default_slice,
                do: %{cell.(:slices, :spin, w, f, :yielding) | slice_us: s}
              ),
            else: []

        %{name: "#{w} ms", flags: [], cells: matrix ++ lev ++ slices}
      end

    busy_wait =
      for w <- plan.busy_wait_work_ms, f <- @rec_factors, mode <- [:erlang | @off_modes] do
        cell.(:busy_wait, :spin, w, f, mode)
      end

    for group <- per_work ++ [%{name: "no busy-wait", flags: @no_busy_wait, cells: busy_wait}] do
      %{group | cells: Enum.map(group.cells, &Map.put(&1, :id, id(&1)))}
    end
  end

  defp hold_ms(%{mode: :normal} = c), do: c.work_ms * c.factor
  defp hold_ms(_cell), do: 0

  @doc false
  def runs?(:normal, work_ms, factor), do: work_ms * factor <= @normal_hold_ms
  def runs?(:dirty_cpu, work_ms, factor), do: work_ms * factor <= @dirty_queue_ms
  def runs?(_mode, _work_ms, _factor), do: true

  defp cell(set, workload, work_ms, factor, mode, schedulers, cal) do
    workload = if mode == :erlang, do: :erlang, else: workload

    %{
      id: cell_id(set, workload, work_ms, factor, mode, nil),
      set: set,
      workload: workload,
      work_ms: work_ms,
      factor: factor,
      workers: schedulers * factor,
      mode: mode,
      slice_us: nil,
      size: size(workload, work_ms, cal)
    }
  end

  defp cell_id(set, workload, work_ms, factor, mode, slice_us) do
    "#{set}/#{workload}/#{work_ms}ms/x#{factor}/#{mode}" <>
      if(slice_us, do: "/slice#{slice_us}", else: "")
  end

  defp id(c), do: cell_id(c.set, c.workload, c.work_ms, c.factor, c.mode, c.slice_us)

  defp size(:spin, work_ms, cal), do: round(work_ms * 1.0e6 / cal.spin_ns)
  defp size(:erlang, work_ms, cal), do: round(work_ms * 1.0e6 / cal.erlang_ns)
  defp size(:levenshtein, work_ms, cal), do: round(:math.sqrt(work_ms * 1.0e6 * cal.lev_gcells))

  # ---- calibration (in the lab's own VM, :normal, one process) --------------------

  @doc false
  def calibrate do
    spin_n = 2_000_000
    spin_ns = median_ns(fn -> Spin.run(spin_n, schedule: :normal) end, 5) / spin_n
    a = :crypto.strong_rand_bytes(4000)
    b = :crypto.strong_rand_bytes(4000)
    lev_ns = median_ns(fn -> Levenshtein.distance(a, b, schedule: :normal) end, 5)
    erl_n = 1_000_000
    erlang_ns = median_ns(fn -> Probe.erlang_work(erl_n) end, 5) / erl_n
    %{spin_ns: spin_ns, lev_gcells: 4000 * 4000 / lev_ns, erlang_ns: erlang_ns}
  end

  # ---- running a group of cells in a child VM ---------------------------------------

  defp run_group(group, repeat, plan, progress) do
    cells = group.cells

    # per cell: warm-up, window, a call in progress to finish, starting and
    # stopping the workers (about 0.2 ms each) and, for :normal, the calls
    # in progress when the window ends
    per_cell_ms =
      cells
      |> Enum.map(
        &(warmup_ms(&1) + plan.window_ms + &1.work_ms + 300 + div(&1.workers, 5) + hold_ms(&1))
      )
      |> Enum.sum()

    bound_ms = 3 * per_cell_ms + 60_000
    spec = %{cells: cells, window_ms: plan.window_ms, seed: repeat}
    t0 = System.monotonic_time(:millisecond)

    result =
      ChildVM.run({__MODULE__, :child_cells, [spec]}, bound_ms: bound_ms, erl_flags: group.flags)

    seconds = (System.monotonic_time(:millisecond) - t0) / 1000

    case result do
      {:ok, results} ->
        noisy = Enum.count(results, fn {_, r} -> r.noisy end)

        progress.(
          "lateness repeat #{repeat}, #{group.name}: #{length(results)} cells in " <>
            "#{fmt(seconds)} s" <>
            if(noisy > 0, do: " (#{noisy} disturbed by other work)", else: "")
        )

        results

      failure ->
        status =
          case failure do
            {:timeout, ms} -> "bound hit (#{ms} ms)"
            {:crashed, code, _} -> "crashed (exit #{code})"
          end

        progress.("lateness repeat #{repeat}, #{group.name}: #{status}")
        Enum.map(cells, &{&1.id, %{status: status}})
    end
  end

  defp warmup_ms(cell), do: 50 + div(cell.workers, 100)

  @doc false
  # Runs in the child VM: every cell of a group, in an order of its own.
  def child_cells(spec) do
    :rand.seed(:exsss, {spec.seed, 7, 13})
    :ok = WellBehaved.Lab.Suite.settle_calibration()

    for cell <- Enum.shuffle(spec.cells) do
      :ok = WellBehaved.Lab.Suite.configure_runtimes(slice_us: cell.slice_us || :calibrated)
      fun = workload_fun(cell)
      sampler = Noise.start_sampler()

      report =
        Probe.measure(fun,
          workers: cell.workers,
          duration_ms: spec.window_ms,
          warmup_ms: warmup_ms(cell),
          finish_calls: false,
          control: false,
          samples: true,
          long_schedule_ms: @long_schedule_ms,
          timeout_ms: spec.window_ms + warmup_ms(cell) + 60_000
        )

      usage = Noise.stop_sampler(sampler)
      ticks = Enum.zip(report.ticker.due_us, report.ticker.samples_us)
      # CPU time stalled outside the VM is nobody's doing: left out of every
      # tick's lateness alike
      corrected = Noise.stall_corrected(ticks, usage.stalls)
      stalled_ms = usage.stalls |> Enum.map(fn {from, to} -> to - from end) |> Enum.sum()
      stalled_share = stalled_ms / 1000 / max(spec.window_ms, 1)

      {cell.id,
       %{
         status: if(report.completed, do: "ok", else: "workers timed out"),
         samples_us: corrected,
         raw_p99_us:
           if(ticks == [], do: nil, else: Stats.percentile(report.ticker.samples_us, 0.99)),
         slow_tick_samples: report.slow_ticker.samples,
         calls: report.calls,
         long_schedules: report.long_schedules.count,
         long_schedule_max_ms: report.long_schedules.max_ms,
         util_normal: report.utilization.normal,
         util_dirty_cpu: report.utilization.dirty_cpu,
         foreign_cores: max(usage.foreign_cores, usage.burst_foreign_cores),
         steal_share: max(usage.steal_share, usage.burst_steal_share),
         wake_late_max_us: usage.wake_late_max_us,
         stalled_share: stalled_share,
         stalls_seen: usage.stalls_seen,
         noisy: Noise.noisy?(usage) or stalled_share > @stalled_max
       }}
    end
  end

  defp workload_fun(%{workload: :spin, size: n, mode: mode}),
    do: fn -> Spin.run(n, schedule: mode) end

  defp workload_fun(%{workload: :erlang, size: n}), do: fn -> Probe.erlang_work(n) end

  defp workload_fun(%{workload: :levenshtein, size: n, mode: mode}) do
    a = :crypto.strong_rand_bytes(n)
    b = :crypto.strong_rand_bytes(n)
    fn -> Levenshtein.distance(a, b, schedule: mode) end
  end

  # ---- analysis -------------------------------------------------------------------

  defp analyse(cells, measured, plan) do
    by_id = Map.new(cells, &{&1.id, &1})

    for cell <- cells do
      repeats = measured |> Map.get(cell.id, []) |> Enum.sort()
      base_id = baseline_id(cell)
      base = if base_id, do: measured |> Map.get(base_id, []) |> Enum.sort(), else: []

      cell
      |> Map.take([:id, :set, :workload, :work_ms, :factor, :workers, :mode, :slice_us])
      |> Map.merge(cell_summary(repeats))
      |> Map.merge(ratio_summary(repeats, base, plan.window_ms))
      |> Map.put(:baseline, base_id && by_id[base_id] && base_id)
    end
  end

  defp baseline_id(%{mode: :erlang}), do: nil

  defp baseline_id(%{set: :busy_wait} = c),
    do: cell_id(:busy_wait, :erlang, c.work_ms, c.factor, :erlang, nil)

  defp baseline_id(c), do: cell_id(:matrix, :erlang, c.work_ms, c.factor, :erlang, nil)

  @doc false
  # Pooled figures of a cell's repeats: [{repeat, result}].
  def cell_summary(repeats) do
    ok = for {_, %{status: "ok"} = r} <- repeats, do: r
    statuses = repeats |> Enum.map(fn {_, r} -> r.status end) |> Enum.uniq()
    samples = Enum.flat_map(ok, & &1.samples_us)
    per_repeat = Enum.map(ok, &p99_ms/1)

    %{
      status:
        cond do
          ok == [] and statuses == [] -> "not run"
          ok == [] -> Enum.join(statuses, ", ")
          length(ok) < length(repeats) -> "ok (#{length(ok)} of #{length(repeats)} repeats)"
          true -> "ok"
        end,
      repeats: length(ok),
      samples: length(samples),
      p50_ms: if(samples != [], do: Stats.percentile(samples, 0.5) / 1000),
      p99_ms: if(samples != [], do: Stats.percentile(samples, 0.99) / 1000),
      max_ms: if(samples != [], do: Enum.max(samples) / 1000),
      p99_repeats_ms: per_repeat,
      p99_median_ms:
        if(Enum.all?(per_repeat, &is_number/1) and per_repeat != [], do: Stats.median(per_repeat)),
      never_ran: Enum.count(ok, &(&1.samples_us == [])),
      long_schedules: ok |> Enum.map(& &1.long_schedules) |> Enum.sum(),
      long_schedule_max_ms: ok |> Enum.map(& &1.long_schedule_max_ms) |> Enum.max(fn -> 0 end),
      util_normal: mean(Enum.map(ok, & &1.util_normal)),
      util_dirty_cpu: mean(Enum.map(ok, & &1.util_dirty_cpu)),
      calls: ok |> Enum.map(& &1.calls) |> Enum.sum(),
      foreign_cores_max: ok |> Enum.map(& &1.foreign_cores) |> Enum.max(fn -> 0.0 end),
      steal_share_max: ok |> Enum.map(& &1.steal_share) |> Enum.max(fn -> 0.0 end),
      wake_late_max_ms:
        ok |> Enum.map(&(Map.get(&1, :wake_late_max_us, 0) / 1000)) |> Enum.max(fn -> 0.0 end),
      stalled_share_max:
        ok |> Enum.map(&Map.get(&1, :stalled_share, 0.0)) |> Enum.max(fn -> 0.0 end),
      raw_p99_median_ms:
        case for(r <- ok, is_number(r[:raw_p99_us]), do: r.raw_p99_us / 1000) do
          [] -> nil
          xs -> Stats.median(xs)
        end,
      noisy_repeats: Enum.count(ok, & &1.noisy),
      stalls_seen: ok != [] and Enum.all?(ok, &Map.get(&1, :stalls_seen, false))
    }
  end

  defp p99_ms(%{samples_us: []}), do: nil
  defp p99_ms(%{samples_us: s}), do: Stats.percentile(s, 0.99) / 1000

  defp mean([]), do: nil
  defp mean(xs), do: Enum.sum(xs) / length(xs)

  @doc false
  # The cell's p99 over its baseline's, repeat by repeat (paired: the same
  # VM run), their median, a 95% bootstrap interval and the verdict against
  # the bound. A ticker that never ran in a window was at least a window
  # late: that is its lateness there.
  def ratio_summary(_repeats, [], _window_ms), do: %{}

  def ratio_summary(repeats, base, window_ms) do
    base = Map.new(base)

    pairs =
      for {r, %{status: "ok"} = cell} <- repeats,
          %{status: "ok"} = b <- [base[r]],
          b.samples_us != [] do
        base_p99 = max(p99_ms(b), 0.001)
        cell_p99 = p99_ms(cell) || window_ms * 1.0

        %{
          ratio: cell_p99 / base_p99,
          cell: cell_p99,
          base: base_p99,
          noisy: cell.noisy or b.noisy
        }
      end

    quiet = Enum.reject(pairs, & &1.noisy)
    used = if length(quiet) >= @min_repeats, do: quiet, else: pairs
    ratios = Enum.map(used, & &1.ratio)

    if ratios == [] do
      %{
        ratio: nil,
        ratio_low: nil,
        ratio_high: nil,
        verdict: :not_distinguishable,
        verdict_note: "no baseline"
      }
    else
      {low, high} = Stats.bootstrap_interval(ratios, &Stats.median/1)
      disturbed = Enum.any?(used, & &1.noisy)

      {verdict, note} =
        cond do
          length(pairs) < @min_repeats ->
            {:not_distinguishable, "fewer than #{@min_repeats} repeats"}

          disturbed ->
            {:not_distinguishable, "fewer than #{@min_repeats} quiet repeats"}

          true ->
            {Stats.verdict({low, high}, @bound), nil}
        end

      %{
        ratio: Stats.median(ratios),
        ratio_low: low,
        ratio_high: high,
        ratio_repeats: length(ratios),
        ratios: ratios,
        # the cell's and the baseline's p99 over the repeats the ratio used
        p99_median_ms: Stats.median(Enum.map(used, & &1.cell)),
        base_p99_median_ms: Stats.median(Enum.map(used, & &1.base)),
        disturbed: disturbed or length(quiet) < length(pairs),
        verdict: verdict,
        verdict_note: note
      }
    end
  end

  defp find(rows, set, workload, work_ms, factor, mode) do
    Enum.find(
      rows,
      &(&1.set == set and &1.workload == workload and &1.work_ms == work_ms and
          &1.factor == factor and &1.mode == mode and &1.slice_us == nil)
    )
  end

  defp verdict_of(nil), do: :not_distinguishable
  defp verdict_of(row), do: Map.get(row, :verdict, :not_distinguishable)

  # what :auto runs for a call of `work_ms`, from the runtime's thresholds
  defp auto_picks(work_ms_list, rt) do
    Map.new(work_ms_list, fn w ->
      us = w * 1000

      mode =
        cond do
          us < rt.normal_max_us -> :normal
          rt.yielding_max_us == :infinity or us < rt.yielding_max_us -> :yielding
          true -> :yielding_dirty
        end

      {w, mode}
    end)
  end

  @doc false
  # For each work size (Spin), the mode to use, always one where the
  # suite measured any. The modes in order of preference; a mode clearly
  # outside the bound with 1x or 10x workers, or whose median ratio is over
  # the bound with either, is passed over. The first one left is named: it
  # is recommended (verdict :within) when it is within the bound with the
  # most workers and not clearly outside with fewer, and otherwise named as
  # the closest (:not_distinguishable). When every mode is passed over, the
  # one whose worst median ratio is the smallest is named (:outside): a
  # mode far outside is never named because its interval happens to be
  # wide.
  #
  # The evidence for a mode is its cells' per-repeat ratios, and also the
  # :auto cells' where :auto runs that mode at this size (the same code).
  # With 1x workers ERTS often keeps both workers on one scheduler for
  # seconds while the other sleeps and serves its timers ~1.3 ms late, so
  # a window's p99 depends on that placement whatever the mode: there a
  # mode need only not be clearly worse.
  def recommend(rows, work_ms_list, auto_picks \\ %{}, turns \\ nil) do
    for w <- work_ms_list do
      auto = Map.get(auto_picks, w)

      judged =
        for mode <- @preference ++ [:auto], into: %{} do
          evidence_modes = if mode == auto, do: [mode, :auto], else: [mode]

          {mode,
           for(f <- @rec_factors, into: %{}, do: {f, joint_judgement(rows, w, f, evidence_modes)})}
        end

      verdicts =
        Map.new(judged, fn {m, by_f} -> {m, Map.new(by_f, fn {f, j} -> {f, j.verdict} end)} end)

      {mode, verdict} = choose(judged, verdicts)

      %{
        work_ms: w,
        mode: mode,
        verdict: verdict,
        worst_ratio: mode && worst_median(judged[mode]),
        auto_runs: auto,
        auto_within: recommendable?(verdicts[:auto]),
        evidence: evidence(rows, w, mode, verdict, auto) <> turns_evidence(turns, w, mode),
        advice: if(mode && verdict != :within, do: advice(rows, mode, auto))
      }
    end
  end

  # see recommend/3
  defp choose(judged, verdicts) do
    plausible =
      Enum.find(@preference, fn mode ->
        worst = worst_median(judged[mode])
        worst != nil and worst <= @bound and :outside not in Map.values(verdicts[mode])
      end)

    measured = for mode <- @preference, worst = worst_median(judged[mode]), do: {mode, worst}

    cond do
      plausible && recommendable?(verdicts[plausible]) -> {plausible, :within}
      plausible -> {plausible, :not_distinguishable}
      measured == [] -> {nil, :none}
      true -> {measured |> Enum.min_by(&elem(&1, 1)) |> elem(0), :outside}
    end
  end

  # the largest median ratio over the numbers of workers, or nil when a
  # number of workers has none
  defp worst_median(by_factor) do
    medians = Enum.map(by_factor, fn {_, j} -> j.median end)
    if medians != [] and Enum.all?(medians, &is_number/1), do: Enum.max(medians)
  end

  # within with the most workers, and not outside with fewer
  defp recommendable?(by_factor) do
    {most, others} = by_factor |> Enum.sort() |> List.pop_at(-1)
    elem(most, 1) == :within and Enum.all?(others, fn {_, v} -> v != :outside end)
  end

  # the verdict and median on the per-repeat ratios of these modes' cells
  # together
  defp joint_judgement(rows, w, f, modes) do
    cells = modes |> Enum.map(&find(rows, :matrix, :spin, w, f, &1)) |> Enum.reject(&is_nil/1)
    # cells with too few quiet repeats for a verdict of their own add nothing
    usable = Enum.filter(cells, &(&1[:ratios] != nil and &1[:verdict_note] == nil))
    ratios = Enum.flat_map(usable, & &1.ratios)
    first = List.first(cells)
    median = if ratios != [], do: Stats.median(ratios), else: first && first[:ratio]

    verdict =
      cond do
        usable == [] and cells != [] and Enum.all?(cells, &(&1[:ratios] == nil)) ->
          verdict_of(first)

        length(ratios) < @min_repeats ->
          :not_distinguishable

        true ->
          Stats.verdict(Stats.bootstrap_interval(ratios, &Stats.median/1), @bound)
      end

    %{verdict: verdict, median: median}
  end

  defp evidence(_rows, _w, nil, :none, _auto), do: "no mode was measured at this size"

  defp evidence(rows, w, mode, verdict, auto) do
    parts =
      for f <- Enum.reverse(@rec_factors) do
        row = find(rows, :matrix, :spin, w, f, mode)

        "#{row && row.workers} workers: p99 #{fmt(row && row.p99_median_ms)} ms vs " <>
          "#{fmt(row && row[:base_p99_median_ms])} ms (#{ratio_text(row)})"
      end

    lead =
      case verdict do
        :within ->
          "`:#{mode}` kept the ticker within #{@bound}x pure Erlang"

        :not_distinguishable ->
          "no mode was confidently within #{@bound}x pure Erlang; `:#{mode}` is closest, " <>
            "its medians within the bound"

        :outside ->
          "no mode was within #{@bound}x pure Erlang; `:#{mode}` is closest"
      end

    also = if auto == mode, do: " (with the `:auto` cells, which run it here)", else: ""
    "#{lead}#{also}: " <> Enum.join(parts, "; ")
  end

  # the named mode's turns, where the turns were measured
  defp turns_evidence(turns, w, mode) do
    case Turns.find(turns, w, mode) do
      nil -> ""
      r -> "; turns: #{Turns.text(r)}"
    end
  end

  # What would bring the named mode within the bound, from the suite's own
  # cells where it has them.
  defp advice(rows, mode, auto) when mode == :yielding or (mode == :auto and auto == :yielding) do
    # a slice is worth naming when its cell was within the bound and did
    # better than the default slice's cell of the same work and workers
    better? = fn r ->
      default = find(rows, :matrix, :spin, r.work_ms, r.factor, :yielding)
      default == nil or default[:ratio] == nil or r.ratio < default.ratio
    end

    within =
      rows
      |> Enum.filter(&(&1.set == :slices and &1[:ratio] != nil and &1.ratio <= @bound))
      |> Enum.filter(better?)
      |> Enum.sort_by(&{-&1.slice_us, &1.ratio})

    case within do
      [r | _] ->
        "shorter slices: with `WellBehaved.Runtime.configure(slice_us: #{r.slice_us})` the " <>
          "#{r.work_ms} ms cell with #{r.workers} workers was #{fmt(r.ratio)}x (#{verdict_word(r)})"

      [] ->
        "shorter slices (`WellBehaved.Runtime.configure(slice_us: n)`), at some cost in throughput"
    end
  end

  defp advice(_rows, mode, _auto) when mode in @off_modes,
    do:
      "starting the VM with `#{Enum.join(@no_busy_wait, " ")}` (see Off-scheduler work and " <>
        "busy-waiting)"

  defp advice(_rows, _mode, _auto), do: "slicing the work (`:yielding`)"

  defp verdict_word(%{verdict: :within}), do: "within"
  defp verdict_word(%{verdict: :outside}), do: "outside"
  defp verdict_word(_), do: "not distinguishable"

  @doc false
  def ratio_text(nil), do: "-"
  def ratio_text(%{ratio: nil}), do: "no baseline"

  def ratio_text(row) do
    "#{fmt(row.ratio)}x, 95% #{fmt(row.ratio_low)}-#{fmt(row.ratio_high)}" <>
      if(row[:disturbed], do: " *", else: "")
  end

  @doc false
  def targets(rows, work_ms_list) do
    quick_matrix =
      for w <- Enum.filter(work_ms_list, &(&1 in [1, 10, 100])), f <- @rec_factors, do: {w, f}

    near =
      for mode <- [:yielding, :auto] do
        mine =
          for {w, f} <- quick_matrix,
              r = find(rows, :matrix, :spin, w, f, mode),
              r && r[:ratio],
              do: {w, f, r}

        within = Enum.count(mine, fn {_, _, r} -> verdict_of(r) == :within end)
        outside = Enum.count(mine, fn {_, _, r} -> verdict_of(r) == :outside end)

        # met: every cell's median within the bound and none clearly out;
        # how many are within with confidence is said beside it
        met =
          mine != [] and length(mine) == length(quick_matrix) and outside == 0 and
            Enum.all?(mine, fn {_, _, r} -> r.ratio <= @bound end)

        worst = Enum.max_by(mine, fn {_, _, r} -> r.ratio end, fn -> nil end)

        %{
          target:
            ":#{mode} ticker p99 within #{@bound}x pure Erlang, 1/10/100 ms, 1x and 10x workers",
          measured:
            case worst do
              nil ->
                "no data"

              {w, f, r} ->
                "worst median #{fmt(r.ratio)}x (at #{w} ms x#{f}); within with 95% confidence in " <>
                  "#{within} of #{length(mine)} cells, clearly outside in #{outside}"
            end,
          met: met
        }
      end

    normal =
      for w <- work_ms_list,
          w >= 10,
          f <- @rec_factors,
          do: find(rows, :matrix, :spin, w, f, :normal)

    near ++
      [
        %{
          target: ":normal clearly outside the bound at >= 10 ms of work",
          measured:
            normal
            |> Enum.reject(&is_nil/1)
            |> Enum.map_join(", ", &"#{&1.work_ms} ms x#{&1.factor}: #{ratio_text(&1)}"),
          met: normal != [] and Enum.all?(normal, &(verdict_of(&1) == :outside))
        }
      ]
  end

  # ---- rendering ------------------------------------------------------------------

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

  @impl true
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

  @impl true
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

  @impl true
  def tables(result) do
    [
      %{
        name: "lateness",
        columns: Enum.map(@columns, &Atom.to_string/1),
        rows: for(r <- result.rows, do: Enum.map(@columns, &Map.get(r, &1)))
      }
    ]
  end

  defp fmt(x) when is_float(x) and x < 0.1 and x > 0, do: Markdown.fmt(x, 3)
  defp fmt(x), do: Markdown.fmt_auto(x)
  defp pct(x), do: Markdown.pct(x)
end
