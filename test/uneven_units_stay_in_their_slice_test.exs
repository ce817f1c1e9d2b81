defmodule WellBehaved.UnevenUnitsStayInTheirSliceTest do
  # A job whose units cost 100x more in its second phase than in its first:
  # the budget learned in the cheap phase would let the first costly step
  # run 100 slices. A step that asks wb_slice_spent() returns when its
  # slice is up instead, in :yielding and :auto, and the runtime's budget
  # follows the new cost from there.
  use ExUnit.Case, async: false

  alias WellBehaved.{Job, Probe, Runtime}
  alias WellBehaved.Test.SDKJobs

  @cheap 2_000_000
  @dear 20_000

  setup_all do
    SDKJobs.ensure_loaded!()
    :ok = Runtime.configure(SDKJobs, slice_us: :calibrated)
  end

  defp phases(spent, mode, dear \\ @dear),
    do: Job.call(&SDKJobs.phases/6, [@cheap, dear, spent], schedule: mode)

  # ns per costly unit, only to turn units into time: the quickest of 20
  # :normal runs of 500 costly units alone (under 0.1 ms each here). A run
  # the OS preempts only looks slower, and a busy machine preempts a long
  # run (5000 units, the median of 5 before) far more often than a short
  # one, while the job's 20 us steps still run at full speed: an inflated
  # cost shrank the bound below under the units one step really runs.
  defp dear_unit_ns do
    runs =
      for _ <- 1..20 do
        {us, _} =
          :timer.tc(fn -> Job.call(&SDKJobs.phases/6, [0, 500, false], schedule: :normal) end)

        us * 1000 / 500
      end

    Enum.min(runs)
  end

  test "every mode gives the same hash, asking or not" do
    {want, _} = phases(false, :normal, 3000)

    for mode <- Runtime.modes(), spent <- [true, false] do
      assert {^want, _} = phases(spent, mode, 3000), "#{mode} #{spent}"
    end
  end

  test "a step that asks wb_slice_spent() stops within its slice at the phase change" do
    slice_ns = Runtime.stats(SDKJobs).slice_ns
    bound = 2 * slice_ns / dear_unit_ns()

    for mode <- [:yielding, :auto] do
      {_, most} = phases(true, mode)
      assert most <= bound, "#{mode}: #{most} costly units in one step, bound #{bound}"
      # Without asking, the first costly step runs the cheap phase's budget
      # for the time left in its slice: more than an eighth of the slice
      # (the runtime yields once 7/8 of it are used), so at least 1/8 of a
      # slice of cheap units, which is over 8 slices of costly ones. The
      # budget comes from the cheap units' learned cost, which a preempted
      # run inflates on a busy machine: the most of up to 5 runs counts.
      most_blind =
        Enum.reduce_while(1..5, 0, fn _, most_so_far ->
          {_, most} = phases(false, mode)
          most = max(most, most_so_far)
          if most > 4 * bound, do: {:halt, most}, else: {:cont, most}
        end)

      assert most_blind > 4 * bound, "#{mode} without asking: #{most_blind}, bound #{bound}"
    end
  end

  test "traced: the job's turns stay within 2x the slice; without asking one runs 20x" do
    slice_us = Runtime.stats(SDKJobs).slice_ns / 1000

    for mode <- [:yielding, :auto] do
      asking = Probe.turns(fn -> phases(true, mode) end, workers: 1, control: false)
      assert asking.function.turns > 50
      assert asking.function.p90_us <= 2 * slice_us, "#{mode}: #{inspect(asking.function)}"

      # the longest turn of up to 3 runs (see above: a busy machine can
      # shrink the blind step's budget)
      blind =
        Enum.reduce_while(1..3, nil, fn _, _ ->
          run = Probe.turns(fn -> phases(false, mode) end, workers: 1, control: false)
          if run.function.max_us >= 20 * slice_us, do: {:halt, run}, else: {:cont, run}
        end)

      assert blind.function.max_us >= 20 * slice_us, "#{mode}: #{inspect(blind.function)}"
    end
  end
end
