defmodule WellBehaved.Lab.Lateness.Analysis do
  @moduledoc """
  The lateness suite's figures: a row per cell with its pooled figures
  over repeats, its ratio to its pure-Erlang baseline repeat by repeat and
  the verdict on it (`WellBehaved.Lab.Measure.Verdict`), and the targets.
  The recommendation is in `WellBehaved.Lab.Lateness.Recommend`.
  """

  alias WellBehaved.Lab.Stats
  alias WellBehaved.Lab.Lateness.{Plan, Render}
  alias WellBehaved.Lab.Measure.{Verdict, Window}

  @bound Plan.bound()
  @rec_factors Plan.rec_factors()

  @doc """
  A row per cell from what was measured (`%{cell_id => [{repeat, result}]}`):
  the cell's description, its pooled figures (`cell_summary/1`) and its
  ratio to its baseline (`ratio_summary/3`).
  """
  @spec analyse([Plan.cell()], map(), map()) :: [map()]
  def analyse(cells, measured, plan) do
    by_id = Map.new(cells, &{&1.id, &1})

    for cell <- cells do
      repeats = measured |> Map.get(cell.id, []) |> Enum.sort()
      base_id = Plan.baseline_id(cell)
      base = if base_id, do: measured |> Map.get(base_id, []) |> Enum.sort(), else: []

      cell
      |> Map.take([:id, :set, :workload, :work_ms, :factor, :workers, :mode, :slice_us])
      |> Map.merge(cell_summary(repeats))
      |> Map.merge(ratio_summary(repeats, base, plan.window_ms))
      |> Map.put(:baseline, base_id && by_id[base_id] && base_id)
    end
  end

  @doc "Pooled figures of a cell's repeats: `[{repeat, result}]`."
  @spec cell_summary([{pos_integer(), map()}]) :: map()
  def cell_summary(repeats) do
    ok = for {_, %{status: "ok"} = r} <- repeats, do: r
    statuses = repeats |> Enum.map(fn {_, r} -> r.status end) |> Enum.uniq()
    samples = Enum.flat_map(ok, & &1.samples_us)
    per_repeat = Enum.map(ok, &Window.p99_ms(&1.samples_us))

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

  defp mean([]), do: nil
  defp mean(xs), do: Enum.sum(xs) / length(xs)

  @doc """
  The cell's p99 over its baseline's, repeat by repeat (paired: the same
  VM run), judged against the bound by `WellBehaved.Lab.Measure.Verdict`:
  the median ratio, its 95% interval, the verdict and why there is none.
  A ticker that never ran in a window was at least a window late: that is
  its lateness there. `%{}` without a baseline.
  """
  @spec ratio_summary([{pos_integer(), map()}], [{pos_integer(), map()}], pos_integer()) ::
          map()
  def ratio_summary(_repeats, [], _window_ms), do: %{}

  def ratio_summary(repeats, base, window_ms) do
    base = Map.new(base)

    pairs =
      for {r, %{status: "ok"} = cell} <- repeats,
          %{status: "ok"} = b <- [base[r]],
          b.samples_us != [] do
        base_p99 = max(Window.p99_ms(b.samples_us), 0.001)
        cell_p99 = Window.p99_ms(cell.samples_us) || window_ms * 1.0

        %{
          ratio: cell_p99 / base_p99,
          cell: cell_p99,
          base: base_p99,
          noisy: cell.noisy or b.noisy
        }
      end

    case Verdict.judge(pairs, @bound) do
      nil ->
        %{
          ratio: nil,
          ratio_low: nil,
          ratio_high: nil,
          verdict: :not_distinguishable,
          verdict_note: "no baseline"
        }

      j ->
        %{
          ratio: j.ratio,
          ratio_low: j.ratio_low,
          ratio_high: j.ratio_high,
          ratio_repeats: length(j.ratios),
          ratios: j.ratios,
          # the cell's and the baseline's p99 over the repeats the ratio used
          p99_median_ms: Stats.median(Enum.map(j.used, & &1.cell)),
          base_p99_median_ms: Stats.median(Enum.map(j.used, & &1.base)),
          disturbed: j.disturbed,
          verdict: j.verdict,
          verdict_note: j.note
        }
    end
  end

  @doc "The row of a cell of the default slice, or nil."
  @spec find([map()], atom(), atom(), pos_integer(), pos_integer(), atom()) :: map() | nil
  def find(rows, set, workload, work_ms, factor, mode) do
    Enum.find(
      rows,
      &(&1.set == set and &1.workload == workload and &1.work_ms == work_ms and
          &1.factor == factor and &1.mode == mode and &1.slice_us == nil)
    )
  end

  @doc "A row's verdict; `:not_distinguishable` for none."
  @spec verdict_of(map() | nil) :: Verdict.verdict()
  def verdict_of(nil), do: :not_distinguishable
  def verdict_of(row), do: Map.get(row, :verdict, :not_distinguishable)

  @doc """
  The suite's targets: `:yielding` and `:auto` within the bound at 1, 10
  and 100 ms with 1x and 10x workers, `:normal` clearly outside it at 10 ms
  and more.
  """
  @spec targets([map()], [pos_integer()]) :: [map()]
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
                "worst median #{Render.fmt(r.ratio)}x (at #{w} ms x#{f}); within with 95% " <>
                  "confidence in #{within} of #{length(mine)} cells, clearly outside in #{outside}"
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
            |> Enum.map_join(", ", &"#{&1.work_ms} ms x#{&1.factor}: #{Render.ratio_text(&1)}"),
          met: normal != [] and Enum.all?(normal, &(verdict_of(&1) == :outside))
        }
      ]
  end
end
