defmodule WellBehaved.Lab.Lateness.Plan do
  @moduledoc """
  What the lateness suite measures: the sizes, workers and modes of its
  cells, the child VMs they run in (one per work size, one without
  busy-waiting), their baselines, and the calibration that sizes the work.
  """

  alias WellBehaved.{Levenshtein, Probe, Runtime}
  alias WellBehaved.Lab.Spin
  import WellBehaved.Lab.Stats, only: [median_ns: 2]

  @modes Runtime.modes()
  @off_modes [:dirty_cpu, :yielding_dirty, :threaded]
  @no_busy_wait ~w(+sbwt none +sbwtdcpu none +sbwtdio none)
  @bound 1.5
  @rec_factors [1, 10]
  @long_schedule_ms 10
  @slices [10, 20, 50, 100, 1000]
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

  @typedoc "A cell: what one window measures."
  @type cell :: map()

  @typedoc "A child VM's cells and its flags."
  @type group :: %{name: String.t(), flags: [String.t()], cells: [cell()]}

  @doc "The bound on a cell's ratio to pure Erlang."
  @spec bound() :: float()
  def bound, do: @bound

  @doc "The worker factors the recommendation and targets rest on."
  @spec rec_factors() :: [pos_integer()]
  def rec_factors, do: @rec_factors

  @doc "The modes that run off the normal schedulers."
  @spec off_modes() :: [atom()]
  def off_modes, do: @off_modes

  @doc "The VM flags of the VM without busy-waiting."
  @spec no_busy_wait() :: [String.t()]
  def no_busy_wait, do: @no_busy_wait

  @doc "A scheduler turn longer than this (ms) is counted as long."
  @spec long_schedule_ms() :: pos_integer()
  def long_schedule_ms, do: @long_schedule_ms

  @doc "The most work per scheduler (ms) a `:normal` cell is run with."
  @spec normal_hold_ms() :: pos_integer()
  def normal_hold_ms, do: @normal_hold_ms

  @doc "The most queued work (ms) a `:dirty_cpu` cell is run with."
  @spec dirty_queue_ms() :: pos_integer()
  def dirty_queue_ms, do: @dirty_queue_ms

  @doc """
  The plan of a run: repeats, window, work sizes and worker factors, quick
  or full, scaled by `rounds_scale` (`scale`).
  """
  @spec new(boolean(), number()) :: map()
  def new(quick, scale) do
    base =
      if quick do
        %{
          # held to the quick run's 360 s for every suite
          repeats: 3,
          window_ms: 400,
          work_ms: [1, 10, 100],
          factors: [1, 10],
          lev_work_ms: [10],
          lev_factors: [10],
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

  @doc """
  The cells, grouped by child VM: one per work size (its matrix,
  Levenshtein and slice cells), and one without busy-waiting for the
  off-scheduler modes.
  """
  @spec groups(map(), map(), pos_integer()) :: [group()]
  def groups(plan, cal, default_slice) do
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

  @doc """
  Whether a cell of `mode` is run at this work per call and worker factor
  (see `normal_hold_ms/0` and `dirty_queue_ms/0`).
  """
  @spec runs?(atom(), pos_integer(), pos_integer()) :: boolean()
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

  @doc "The id of a cell's pure-Erlang baseline (same work, workers and VM), nil for a baseline."
  @spec baseline_id(cell()) :: String.t() | nil
  def baseline_id(%{mode: :erlang}), do: nil

  def baseline_id(%{set: :busy_wait} = c),
    do: cell_id(:busy_wait, :erlang, c.work_ms, c.factor, :erlang, nil)

  def baseline_id(c), do: cell_id(:matrix, :erlang, c.work_ms, c.factor, :erlang, nil)

  @doc """
  Whether the recommendation and the targets rest on this cell (or row):
  a quick run spends its extra repeats on these alone.
  """
  @spec decisive?(map()) :: boolean()
  def decisive?(row),
    do:
      row.set == :matrix and row.workload == :spin and row.factor in @rec_factors and
        row.mode in [:normal, :yielding, :auto]

  defp size(:spin, work_ms, cal), do: round(work_ms * 1.0e6 / cal.spin_ns)
  defp size(:erlang, work_ms, cal), do: round(work_ms * 1.0e6 / cal.erlang_ns)
  defp size(:levenshtein, work_ms, cal), do: round(:math.sqrt(work_ms * 1.0e6 * cal.lev_gcells))

  @doc """
  The calibration that sizes the work, in the lab's own VM (`:normal`, one
  process): Spin's ns per iteration, Levenshtein's Gcell/s and pure
  Erlang's ns per iteration.
  """
  @spec calibrate() :: %{spin_ns: float(), lev_gcells: float(), erlang_ns: float()}
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
end
