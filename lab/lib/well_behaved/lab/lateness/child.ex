defmodule WellBehaved.Lab.Lateness.Child do
  @moduledoc """
  The lateness suite's child VMs: each repeat runs every group of cells in
  a VM of its own (`WellBehaved.Testing.ChildVM`, bounded by SIGKILL), its
  cells in an order shuffled anew for each repeat, each cell one
  measurement window (`WellBehaved.Lab.Measure.Window`).
  """

  alias WellBehaved.{Levenshtein, Probe}
  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.{Spin, Stats, Suite}
  alias WellBehaved.Lab.Lateness.{Plan, Render}
  alias WellBehaved.Lab.Measure.Window

  @doc """
  Runs `repeats` (repeat numbers) of `groups`, the groups rotated by the
  repeat so that no VM always comes first, and adds each cell's result to
  `measured` (`%{cell_id => [{repeat, result}]}`).
  """
  @spec run_repeats([Plan.group()], [pos_integer()], map(), (String.t() -> any()), map()) ::
          map()
  def run_repeats(groups, repeats, plan, progress, measured) do
    for repeat <- repeats, group <- rotate(groups, repeat), reduce: measured do
      acc ->
        group
        |> run_group(repeat, plan, progress)
        |> Enum.reduce(acc, fn {id, result}, acc ->
          Map.update(acc, id, [{repeat, result}], &[{repeat, result} | &1])
        end)
    end
  end

  defp rotate(list, repeat) do
    {front, back} = Enum.split(list, rem(repeat - 1, length(list)))
    back ++ front
  end

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
            "#{Render.fmt(seconds)} s" <>
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

  defp hold_ms(%{mode: :normal} = c), do: c.work_ms * c.factor
  defp hold_ms(_cell), do: 0

  defp warmup_ms(cell), do: 50 + div(cell.workers, 100)

  @doc false
  # Runs in the child VM: every cell of a group, in an order of its own.
  def child_cells(spec) do
    :rand.seed(:exsss, {spec.seed, 7, 13})
    :ok = Suite.settle_calibration()

    for cell <- Enum.shuffle(spec.cells) do
      :ok = Suite.configure_runtimes(slice_us: cell.slice_us || :calibrated)

      window =
        Window.measure(workload_fun(cell),
          workers: cell.workers,
          duration_ms: spec.window_ms,
          warmup_ms: warmup_ms(cell),
          finish_calls: false,
          control: false,
          long_schedule_ms: Plan.long_schedule_ms(),
          timeout_ms: spec.window_ms + warmup_ms(cell) + 60_000
        )

      report = window.report
      usage = window.usage

      {cell.id,
       %{
         status: if(report.completed, do: "ok", else: "workers timed out"),
         samples_us: window.samples_us,
         raw_p99_us:
           if(report.ticker.samples_us == [],
             do: nil,
             else: Stats.percentile(report.ticker.samples_us, 0.99)
           ),
         slow_tick_samples: report.slow_ticker.samples,
         calls: report.calls,
         long_schedules: report.long_schedules.count,
         long_schedule_max_ms: report.long_schedules.max_ms,
         util_normal: report.utilization.normal,
         util_dirty_cpu: report.utilization.dirty_cpu,
         foreign_cores: max(usage.foreign_cores, usage.burst_foreign_cores),
         steal_share: max(usage.steal_share, usage.burst_steal_share),
         wake_late_max_us: usage.wake_late_max_us,
         stalled_share: window.stalled_share,
         stalls_seen: usage.stalls_seen,
         noisy: window.noisy
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
end
