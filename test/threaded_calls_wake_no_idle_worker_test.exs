defmodule WellBehaved.ThreadedCallsWakeNoIdleWorkerTest do
  # The mechanism of a :threaded call, counted rather than timed: back to
  # back calls are taken by the worker that spins after its last job, and
  # no sleeping worker is woken to find nothing (which cost every call a
  # futex wake-up, a sleep, and often a preempted scheduler). Each call
  # makes the pool's threads sleep at most once: the worker whose spin ran
  # out; waking idle workers too made it two and more.
  use ExUnit.Case, async: false

  alias WellBehaved.Job
  alias WellBehaved.Test.SDKJobs

  # voluntary context switches of the runtimes' pool threads (Linux)
  defp pool_sleeps do
    for task <- File.ls!("/proc/self/task"),
        {:ok, comm} <- [File.read("/proc/self/task/#{task}/comm")],
        String.trim(comm) == "wb_pool_worker",
        {:ok, status} <- [File.read("/proc/self/task/#{task}/status")],
        [_, n] <- [Regex.run(~r/\nvoluntary_ctxt_switches:\s+(\d+)/, status)],
        reduce: 0 do
      sum -> sum + String.to_integer(n)
    end
  end

  @tag skip: not File.dir?("/proc/self/task")
  test "back-to-back threaded calls make the pool sleep less than once and a half a call" do
    SDKJobs.ensure_loaded!()
    call = fn -> Job.call(&SDKJobs.fold/4, [10], schedule: :threaded) end
    want = Job.call(&SDKJobs.fold/4, [10], schedule: :normal)
    for _ <- 1..200, do: call.()
    calls = 4000
    before = pool_sleeps()
    for _ <- 1..calls, do: assert(call.() == want)
    per_call = (pool_sleeps() - before) / calls
    assert per_call < 1.5, "#{per_call} sleeps of the pool's threads per call"
  end
end
