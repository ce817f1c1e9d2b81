defmodule WellBehaved.MisbehavingJobsNeverTakeTheVMDownTest do
  # SDK jobs that break their contract (a result that raises, a decode that
  # refuses a later call, a memory figure no machine has, a prediction far
  # too small, steps that never finish) in every mode. Each scenario runs in
  # a child VM bounded by SIGKILL with one normal scheduler: a crash or a
  # hung scheduler there fails the test instead of the test run.
  use ExUnit.Case, async: false

  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 300_000

  @prelude WellBehaved.Test.SDKJobs.child_prelude() <>
             """
             modes = [:normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded, :auto]
             call = fn f, args, opts ->
               try do
                 Job.call(f, args, opts)
               rescue
                 e in ArgumentError -> {:raised, Exception.message(e)}
               end
             end
             # live jobs once there are `want` (up to 10 s): 0 once the runtime has
             # freed what it can, or as many as were started, however busy the machine
             settle = fn settle, want, n ->
               live = SDKJobs.runtime_stats().live_jobs
               if live == want or n == 0, do: live, else: (Process.sleep(10); settle.(settle, want, n - 1))
             end
             live = fn -> settle.(settle, 0, 1000) end
             started = fn want -> settle.(settle, want, 1000) end
             fold = fn n -> SDKJobs.fold(n, :normal, false, nil) end
             """

  defp run_child(scenario) do
    ChildVM.run({Code, :eval_string, [@prelude <> scenario]},
      bound_ms: 150_000,
      erl_flags: ["+S", "1:1"]
    )
  end

  test "a result that raises raises ArgumentError in every mode, :threaded too" do
    scenario = """
    answers = for m <- modes, do: {m, call.(&SDKJobs.raising/4, [1000], schedule: m)}
    sliced = call.(&SDKJobs.raising/4, [50], schedule: :yielding, tiny_slices: true)
    {answers, sliced, live.()}
    """

    assert {:ok, {{answers, sliced, 0}, _}} = run_child(scenario)

    for {mode, answer} <- answers,
        do: assert(answer == {:raised, "argument error"}, "#{mode}: #{inspect(answer)}")

    assert sliced == {:raised, "argument error"}
  end

  test "a decode that refuses a later call answers {:error, reason}, never raises" do
    # the type's decode refuses every third call in the VM (the first call
    # of a job, a rescheduled one or the pool thread's) with wb_reject
    scenario = """
    expected = fold.(300)
    answers =
      for m <- modes, _ <- 1..6 do
        {m, call.(&SDKJobs.fickle/5, [300, 3], schedule: m, tiny_slices: m in [:yielding, :yielding_dirty])}
      end
    {expected, answers, live.()}
    """

    assert {:ok, {{expected, answers, 0}, _}} = run_child(scenario)

    for {mode, answer} <- answers,
        do: assert(answer in [expected, {:error, :fickle}], "#{mode}: #{inspect(answer)}")

    # one unit per slice: every job is refused at some later call
    for mode <- [:yielding, :yielding_dirty, :threaded],
        do: assert({mode, {:error, :fickle}} in answers, "#{mode}: #{inspect(answers)}")

    assert Enum.any?(answers, &match?({:normal, n} when is_integer(n), &1))
  end

  test "a job claiming 2^64 - 1 bytes is counted at 2^47 and leaves the counters at zero" do
    scenario = """
    expected = fold.(1000)
    answers = for m <- modes, do: call.(&SDKJobs.huge/4, [1000], schedule: m)
    # a job live while the counters are read (seconds of work)
    holder = spawn(fn -> call.(&SDKJobs.huge/4, [2_000_000_000_000], schedule: :yielding) end)
    1 = started.(1)
    during = SDKJobs.runtime_stats()
    Process.exit(holder, :kill)
    after_kill = live.()
    {answers == List.duplicate(expected, length(modes)), during.live_jobs, during.live_bytes,
     after_kill, SDKJobs.runtime_stats().live_bytes}
    """

    assert {:ok, {{true, 1, bytes, 0, 0}, _}} = run_child(scenario)
    assert bytes >= 2 ** 47 and bytes < 2 ** 48, "#{bytes} bytes counted"
  end

  test ":auto runs a job that outruns its prediction sliced: right answer, scheduler free" do
    scenario = """
    parent = self()
    # predicts 1 unit, needs a million: the same answer as the fold
    right = call.(&SDKJobs.liar/4, [1_000_000], []) == fold.(1_000_000)
    cost_after = SDKJobs.runtime_stats().ps_per_unit.liar
    # predicts 1 unit and never finishes: under :auto it must not hold
    # the only normal scheduler
    caller = spawn(fn -> send(parent, {:liar, call.(&SDKJobs.liar/4, [0], [])}) end)
    1 = started.(1)
    ticked = Enum.each(1..50, fn _ -> Process.sleep(1) end)
    still_running = Process.alive?(caller) and SDKJobs.runtime_stats().live_jobs == 1
    Process.exit(caller, :kill)
    {right, cost_after, ticked, still_running, live.()}
    """

    assert {:ok, {{true, cost, :ok, true, 0}, _}} = run_child(scenario)
    # The type's seed is 1000 ps a unit; after the wrong prediction it
    # jumped (to tens of microseconds a unit), and the job's sliced steps
    # then learn it back down towards a unit's real cost, ~1.3 ns here.
    # With 3 million units they did: 1267 ps at the end, under the seed on
    # a machine 30% faster. A million units take a third of the steps:
    # over 200,000 ps here (the slice follows the machine's speed, so a
    # faster one takes about as many steps).
    assert cost > 1000
  end

  test ":threaded: a timeout cancels the job, a dead caller's job stops, long jobs do not starve short ones" do
    scenario = """
    parent = self()
    timed_out = call.(&SDKJobs.liar/4, [0], schedule: :threaded, timeout: 20)
    after_timeout = live.()
    # more endless jobs than pool threads, each from its own caller
    callers = for _ <- 1..3, do: spawn(fn -> call.(&SDKJobs.liar/4, [0], schedule: :threaded) end)
    3 = started.(3)
    busy = SDKJobs.runtime_stats()
    short = call.(&SDKJobs.fold/4, [1000], schedule: :threaded, timeout: 60_000) == fold.(1000)
    Enum.each(callers, &Process.exit(&1, :kill))
    after_kill = live.()
    # finished in time: the answer, not a timeout
    quick = call.(&SDKJobs.fold/4, [10], schedule: :threaded, timeout: 60_000) == fold.(10)
    {timed_out, after_timeout, busy.live_jobs, short, after_kill, quick}
    """

    assert {:ok, {{{:error, :timeout}, 0, 3, true, 0, true}, _}} = run_child(scenario)
  end
end
