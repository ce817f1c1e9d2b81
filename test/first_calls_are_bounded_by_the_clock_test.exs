defmodule WellBehaved.FirstCallsAreBoundedByTheClockTest do
  # A job type's cost per unit starts at its seed, and a seed can be wrong
  # by any factor on a given machine. The job "sham" predicts one unit at
  # the default seed (1 ns) and takes 25,000 units of at least 1 us each on
  # the wall clock. Bounded in units at the seed's cost, its first :auto
  # call ran :normal for all of them (25 ms holding the only scheduler),
  # and a first :yielding call gave its first step thousands of units.
  # Until a type's cost is measured, the runtime steps it from one unit
  # and stops by the clock.
  #
  # Each scenario runs in a fresh child VM (the runtime learns per VM)
  # with one normal scheduler. The bounds asserted on units follow from
  # each unit taking at least 1 us however fast the machine is: a run
  # stopped after T us of clock did at most T units. The turn lengths are
  # CPU time on the scheduler thread, against pure Erlang in the same VM.
  use ExUnit.Case, async: false

  alias WellBehaved.Test.Holds
  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 300_000

  @prelude WellBehaved.Test.SDKJobs.child_prelude()

  @units 25_000

  defp run_child(scenario) do
    assert {:ok, result} =
             ChildVM.run({Code, :eval_string, [@prelude <> scenario]},
               bound_ms: 240_000,
               erl_flags: ["+S", "1:1"]
             )

    {value, _binding} = result
    value
  end

  test "a first :auto call with a cost 1000x too low stops by the clock and goes on sliced" do
    %{answer: answer, runs: runs, stats: stats} =
      run_child("""
      measured_before = SDKJobs.runtime_stats()[:cost_measured][:sham]
      answer = Job.call(&SDKJobs.sham/4, [#{@units}], schedule: :auto)
      %{answer: answer, runs: SDKJobs.sham_runs(),
        stats: Map.put(SDKJobs.runtime_stats(), :measured_before, measured_before)}
      """)

    assert answer == @units
    # the :normal run, dropped when the clock ran out, then the sliced one
    assert [{dropped, _}, {@units, _}] = runs
    # two thresholds of clock at >= 1 us a unit (normal_max is the slice)
    limit_us = div(2 * stats.slice_ns, 1000)

    assert dropped <= limit_us + 1,
           "the :normal run did #{dropped} units (>= 1 us each) against #{limit_us} us"

    assert stats.measured_before == false
    assert stats.cost_measured.sham
    # at least 100 ns a unit once measured (a unit takes >= 1 us)
    assert stats.ps_per_unit.sham >= 100_000, inspect(stats.ps_per_unit)
  end

  test "a first :yielding call's steps start small and grow with the clock" do
    %{answer: answer, runs: runs, slice_ns: slice_ns} =
      run_child("""
      answer = Job.call(&SDKJobs.sham/4, [#{@units}], schedule: :yielding)
      %{answer: answer, runs: SDKJobs.sham_runs(), slice_ns: SDKJobs.runtime_stats().slice_ns}
      """)

    assert answer == @units
    assert [{@units, most}] = runs
    # a step is sized from the time its units took: at >= 1 us a unit, no
    # more than a slice's worth (the seed alone gave a quarter slice at
    # 1 ns a unit: thousands)
    slice_us = div(slice_ns, 1000)

    assert most <= slice_us + 1,
           "a step was given #{most} units (>= 1 us each), slice #{slice_us} us"
  end

  # each run in a fresh child VM, so that its first call is a first call;
  # over its bound, it fails when it is over in every run
  # (WellBehaved.Test.Holds)
  test "no turn of a first :auto call holds the scheduler past 5 ms or 2x pure Erlang's" do
    scenario = """
    # the first call starts once the trace is on (after the 20 ms warm-up)
    call = fn ->
      unless Process.get(:started) do
        Process.put(:started, true)
        Process.sleep(100)
      end
      Job.call(&SDKJobs.sham/4, [#{@units}], schedule: :auto)
    end
    report = WellBehaved.Probe.turns(call, workers: 1, duration_ms: 400)
    Map.put(report, :runs, SDKJobs.sham_runs())
    """

    over = &Holds.over_erlang("the first :auto call", &1.function, &1.control)
    {report, held} = Holds.recurring(fn -> run_child(scenario) end, over)
    assert held == [], Holds.message(held)

    # the first call did run in the window: a dropped :normal run
    assert [{dropped, _}, {@units, _} | _] = report.runs
    assert dropped < @units
  end
end
