defmodule WellBehaved.ExternalJobsEndWithTheirCallerTest do
  # schedule: :external when the caller gives up (issue 43): a caller that
  # dies or times out has its request cancelled on the server; a job whose
  # step never returns ("stuck", c_src/test/sdk_jobs_nif.c) gets its server
  # replaced instead of spinning for nobody; a job whose steps return is
  # abandoned by its server, which keeps running; and calls made while every
  # server restarts wait for one. The bounds below are for a busy machine,
  # not timing claims.
  use ExUnit.Case, async: false

  alias WellBehaved.{External, Job, OSProcess}
  alias WellBehaved.Test.{RuntimeHelpers, SDKJobs}

  @server Path.expand("c_src/build/sdk/sdk_jobs_server")
  @pool SDKJobs.GivingUp
  @bound_ms 10_000

  setup_all do
    SDKJobs.ensure_loaded!()
  end

  defp start_pool(opts) do
    start_supervised!({External, [name: @pool, executable: @server] ++ opts})
    # a first call: the pool and its servers are up
    assert call(&SDKJobs.fold/4, [1]) == reference(1)
    :ok
  end

  defp call(f, args, opts \\ []),
    do: Job.call(f, args, [schedule: :external, pool: @pool] ++ opts, "test")

  defp reference(n), do: Job.call(&SDKJobs.fold/4, [n], [schedule: :normal], "test")

  # the one server's stats
  defp stats do
    [{0, {:ok, stats}}] = External.server_stats(@pool)
    stats
  end

  defp up_os_pids do
    case External.info(@pool) do
      %{servers: servers} ->
        if Enum.all?(servers, &(&1.status == :up)), do: Enum.map(servers, & &1.os_pid)

      nil ->
        nil
    end
  end

  # nothing held or being cancelled
  defp settled? do
    match?(%{busy: [], cancelling: []}, External.info(@pool))
  end

  defp eventually(fun), do: RuntimeHelpers.eventually(fun, @bound_ms)

  describe "a job whose step never returns" do
    @tag :capture_log
    test "its caller killed without a timeout: the server is replaced" do
      start_pool(servers: 1, connections: 2)
      [os_pid] = up_os_pids()
      %{abandoned: abandoned, live_jobs: 0} = stats()

      caller = spawn(fn -> call(&SDKJobs.stuck/4, [0]) end)
      eventually(fn -> stats().live_jobs == 1 end)
      Process.exit(caller, :kill)

      # the old server is gone (its CPU time no longer grows), a new one runs
      eventually(fn -> not OSProcess.alive?(os_pid) end)
      [new_os_pid] = eventually(fn -> up_os_pids() end)
      assert new_os_pid != os_pid, "server #{new_os_pid} replaced #{os_pid}"

      after_kill = stats()

      assert after_kill.abandoned == abandoned + 1,
             "abandoned #{after_kill.abandoned}, was #{abandoned}"

      assert %{live_jobs: 0, live_bytes: 0} = after_kill
      eventually(&settled?/0)
      assert call(&SDKJobs.fold/4, [1000]) == reference(1000)
    end

    @tag :capture_log
    test "its caller timed out: the server is replaced" do
      start_pool(servers: 1, connections: 2, cancel_timeout_ms: 200)
      [os_pid] = up_os_pids()
      %{abandoned: abandoned} = stats()

      assert call(&SDKJobs.stuck/4, [100], timeout: 100) == {:error, :timeout}
      eventually(fn -> not OSProcess.alive?(os_pid) end)
      [new_os_pid] = eventually(fn -> up_os_pids() end)
      assert new_os_pid != os_pid
      assert %{abandoned: got, live_jobs: 0} = stats()
      assert got == abandoned + 1, "abandoned #{got}, was #{abandoned}"
      eventually(&settled?/0)
      assert call(&SDKJobs.fold/4, [77]) == reference(77)
    end

    @tag :capture_log
    test "several callers killed at once: every job ends, no thread is left spinning" do
      start_pool(servers: 1, connections: 4)
      [os_pid] = up_os_pids()

      callers = for _ <- 1..3, do: spawn(fn -> call(&SDKJobs.stuck/4, [0]) end)
      eventually(fn -> stats().live_jobs == 3 end)
      Enum.each(callers, &Process.exit(&1, :kill))

      eventually(fn -> not OSProcess.alive?(os_pid) end)
      eventually(fn -> up_os_pids() not in [nil, [os_pid]] end)
      eventually(&settled?/0)
      # one replacement ends the three jobs
      assert %{live_jobs: 0, abandoned: abandoned} = stats()
      assert abandoned == 1, "abandoned #{abandoned}"
      assert call(&SDKJobs.fold/4, [5]) == reference(5)
    end
  end

  describe "a job whose steps return" do
    test "its caller killed mid-call: the job is cancelled, the server stays" do
      start_pool(servers: 1, connections: 2)
      [os_pid] = up_os_pids()
      %{cancelled: cancelled, abandoned: abandoned} = stats()

      # liar with N = 0 never finishes, but each step returns
      caller = spawn(fn -> call(&SDKJobs.liar/4, [0]) end)
      eventually(fn -> stats().live_jobs == 1 end)
      Process.exit(caller, :kill)

      eventually(fn -> stats().live_jobs == 0 end)
      eventually(&settled?/0)
      now = stats()
      assert now.cancelled == cancelled + 1, "cancelled #{now.cancelled}, was #{cancelled}"
      assert now.abandoned == abandoned, "abandoned #{now.abandoned}, was #{abandoned}"
      assert %{live_bytes: 0} = now
      assert up_os_pids() == [os_pid]

      # both connections serve on
      tasks = for n <- [10, 20], do: Task.async(fn -> call(&SDKJobs.fold/4, [n]) end)
      assert Task.await_many(tasks, 30_000) == [reference(10), reference(20)]
    end

    test "its caller timed out: the job is cancelled, the server stays" do
      start_pool(servers: 1, connections: 1)
      [os_pid] = up_os_pids()
      %{cancelled: cancelled} = stats()

      assert call(&SDKJobs.liar/4, [0], timeout: 50) == {:error, :timeout}
      # the one connection is given back once the server acknowledged
      assert call(&SDKJobs.fold/4, [30]) == reference(30)
      now = stats()
      assert now.cancelled == cancelled + 1, "cancelled #{now.cancelled}, was #{cancelled}"
      assert %{abandoned: 0, live_jobs: 0} = now
      assert up_os_pids() == [os_pid]
    end

    test "a reply that crosses the cancel does not reach the next caller" do
      start_pool(servers: 1, connections: 1)

      # short jobs with a tiny timeout: whichever answer in time or time
      # out (the machine decides), a reply that comes after its caller gave
      # up is dropped with the cancel, never taken by the next call
      for n <- 1..50 do
        case call(&SDKJobs.fold/4, [n * 1000], timeout: 1) do
          {:error, :timeout} -> :ok
          answer -> assert answer == reference(n * 1000), "fold #{n * 1000}"
        end

        assert call(&SDKJobs.fold/4, [n]) == reference(n), "fold #{n} after"
      end

      assert %{live_jobs: 0, abandoned: 0} = stats()
    end
  end

  describe "servers restarting" do
    @tag :capture_log
    test "calls made after every server was killed wait for a restart and succeed" do
      start_pool(servers: 2, connections: 2)

      for round <- 1..3 do
        os_pids = eventually(fn -> up_os_pids() end)
        Enum.each(os_pids, &OSProcess.kill/1)

        tasks = for n <- 1..8, do: Task.async(fn -> call(&SDKJobs.fold/4, [round * 100 + n]) end)

        answers = Task.await_many(tasks, 60_000)
        want = for n <- 1..8, do: reference(round * 100 + n)
        assert answers == want, "round #{round}: #{inspect(answers)}"

        # once the manager saw the exits, calls wait in its queue
        eventually(fn -> Enum.all?(os_pids, &(not OSProcess.alive?(&1))) end)
        assert call(&SDKJobs.fold/4, [round]) == reference(round)
      end
    end

    @tag :capture_log
    test "a call made while the servers are down waits for one" do
      start_pool(servers: 2, connections: 1)
      os_pids = up_os_pids()
      Enum.each(os_pids, &OSProcess.kill/1)
      # the manager has seen both exits: no server is up with an old pid
      eventually(fn ->
        servers = External.info(@pool).servers
        Enum.all?(servers, &(&1.status != :up or &1.os_pid not in os_pids))
      end)

      assert call(&SDKJobs.fold/4, [42]) == reference(42)
    end
  end
end
