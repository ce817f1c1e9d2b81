defmodule WellBehaved.SDKJobsRunInServerPoolsTest do
  # A user's job types (c_src/test/sdk_jobs_nif.c) run with
  # schedule: :external in a server program built from the same source
  # (sdk_jobs_server): the same answers as in every in-VM mode, a server
  # killed or crashing mid-call, a caller killed mid-call (the server
  # abandons its job: its counters go back to 0), timeouts, two pools at
  # once and a pool under the caller's own supervisor.
  use ExUnit.Case, async: false

  alias WellBehaved.{External, Job, OSProcess}
  alias WellBehaved.Test.{RuntimeHelpers, SDKJobs}

  @pool SDKJobs.External
  @server Path.expand("c_src/build/sdk/sdk_jobs_server")
  @in_vm WellBehaved.Runtime.modes()

  setup_all do
    SDKJobs.ensure_loaded!()
    on_exit(fn -> External.stop(@pool) end)
  end

  # the declared pool starts with its first call
  setup do
    assert is_integer(run(&SDKJobs.fold/4, [1], schedule: :external))
    :ok
  end

  defp run(f, args, opts), do: Job.call(f, args, opts, "test")

  # the answer, or the exception raised, as a comparable term
  defp answer(f, args, opts) do
    run(f, args, opts)
  rescue
    e -> {:raised, e.__struct__, Exception.message(e)}
  end

  # what an answer says apart from timing: "phases" answers {Hash,
  # MostDearUnitsInOneStep}, and how many costly units a step ran depends
  # on the slice and on how fast the machine ran them; its hash does not
  defp timing_free(f, answer) do
    case {f == (&SDKJobs.phases/6), answer} do
      {true, {hash, most_dear}} when is_integer(most_dear) -> {:hash, hash}
      _ -> answer
    end
  end

  defp live_jobs(pool) do
    [{0, {:ok, stats}}] = External.server_stats(pool)
    stats
  end

  describe "answers" do
    test "are those of every in-VM mode, tiny steps or not" do
      calls = [
        {&SDKJobs.fold/4, [0]},
        {&SDKJobs.fold/4, [1]},
        {&SDKJobs.fold/4, [1000]},
        {&SDKJobs.fold/4, [200_000]},
        {&SDKJobs.fold/4, [-1]},
        {&SDKJobs.fold/4, ["not a number"]},
        {&SDKJobs.phases/6, [100, 20, true]},
        {&SDKJobs.phases/6, [100, 20, false]},
        {&SDKJobs.owned/4, [0]},
        {&SDKJobs.owned/4, [100_000]},
        {&SDKJobs.raising/4, [5]},
        {&SDKJobs.huge/4, [10]}
      ]

      for {f, args} <- calls, tiny <- [false, true] do
        # tiny slices over 200,000 units would take long in every mode
        tiny = tiny and args != [200_000]
        external = timing_free(f, answer(f, args, schedule: :external, tiny_slices: tiny))

        for mode <- @in_vm do
          assert timing_free(f, answer(f, args, schedule: mode, tiny_slices: tiny)) == external,
                 "#{inspect(f)} #{inspect(args)} in #{mode} (tiny #{tiny})"
        end
      end

      assert {:raised, ArgumentError, _} = answer(&SDKJobs.raising/4, [5], schedule: :external)
      assert %{live_jobs: 0, live_bytes: 0} = live_jobs(@pool)
    end

    test "a reason given by decode comes back as in the VM" do
      # refused at every call: K = 1
      assert run(&SDKJobs.fickle/5, [10, 1], schedule: :external) == {:error, :fickle}
      assert run(&SDKJobs.fickle/5, [10, 1], schedule: :normal) == {:error, :fickle}
    end
  end

  describe "failures" do
    test "a job that segfaults answers :closed, and the restarted server serves the next call" do
      os_pid = RuntimeHelpers.up_os_pid(@pool)
      assert run(&SDKJobs.crash/4, [13], schedule: :external) == {:error, :closed}

      want = run(&SDKJobs.fold/4, [12], schedule: :normal)
      assert RuntimeHelpers.eventually(fn -> RuntimeHelpers.up_os_pid(@pool) != os_pid end)

      assert RuntimeHelpers.eventually(fn ->
               run(&SDKJobs.crash/4, [12], schedule: :external) == want
             end)
    end

    test "a server killed mid-call answers its caller :closed" do
      os_pid = RuntimeHelpers.up_os_pid(@pool)
      # liar with N = 0 never ends
      task = Task.async(fn -> run(&SDKJobs.liar/4, [0], schedule: :external) end)
      RuntimeHelpers.eventually(fn -> live_jobs(@pool).live_jobs == 1 end)
      OSProcess.kill(os_pid)
      assert Task.await(task, 30_000) == {:error, :closed}
      RuntimeHelpers.eventually(fn -> RuntimeHelpers.up_os_pid(@pool) != os_pid end)

      assert run(&SDKJobs.fold/4, [5], schedule: :external) ==
               run(&SDKJobs.fold/4, [5], schedule: :normal)
    end

    test "a caller killed mid-call has its job abandoned by the server" do
      %{cancelled: before} = live_jobs(@pool)
      caller = spawn(fn -> run(&SDKJobs.liar/4, [0], schedule: :external) end)
      RuntimeHelpers.eventually(fn -> live_jobs(@pool).live_jobs == 1 end)
      Process.exit(caller, :kill)

      RuntimeHelpers.eventually(fn ->
        match?(%{live_jobs: 0, live_bytes: 0}, live_jobs(@pool))
      end)

      assert live_jobs(@pool).cancelled == before + 1
      assert RuntimeHelpers.eventually(fn -> External.info(@pool).busy == [] end)
    end

    test "a call past its timeout answers :timeout and the server abandons the job" do
      %{cancelled: before} = live_jobs(@pool)
      assert run(&SDKJobs.liar/4, [0], schedule: :external, timeout: 100) == {:error, :timeout}
      RuntimeHelpers.eventually(fn -> live_jobs(@pool).cancelled == before + 1 end)
      assert %{live_jobs: 0} = live_jobs(@pool)
    end
  end

  describe "pools" do
    test "two pools of the same program run at once, each its own servers" do
      other = SDKJobs.OtherPool
      {:ok, _} = External.start(name: other, executable: @server, servers: 2, connections: 1)

      try do
        want = run(&SDKJobs.fold/4, [777], schedule: :normal)
        assert run(&SDKJobs.fold/4, [777], schedule: :external, pool: other) == want
        assert run(&SDKJobs.fold/4, [777], schedule: :external) == want

        others = for s <- External.info(other).servers, do: s.os_pid
        assert length(others) == 2
        refute RuntimeHelpers.up_os_pid(@pool) in others

        tasks =
          for i <- 1..8 do
            pool = if rem(i, 2) == 0, do: other, else: @pool

            Task.async(fn -> run(&SDKJobs.fold/4, [i * 1000], schedule: :external, pool: pool) end)
          end

        for {task, i} <- Enum.with_index(tasks, 1),
            do: assert(Task.await(task) == run(&SDKJobs.fold/4, [i * 1000], schedule: :normal))

        assert External.stop(other) == :ok
        assert External.info(other) == nil

        assert run(&SDKJobs.fold/4, [1], schedule: :external, pool: other) ==
                 {:error, :not_running}

        assert run(&SDKJobs.fold/4, [777], schedule: :external) == want
      after
        External.stop(other)
      end
    end

    test "a pool under the caller's supervisor" do
      name = SDKJobs.Supervised
      start_supervised!({External, name: name, executable: @server, servers: 1})
      assert run(&SDKJobs.owned/4, [3], schedule: :external, pool: name) == <<0, 1, 2>>
      assert %{name: ^name, executable: @server} = External.info(name)
      stop_supervised!(name)
    end

    test "a pool whose program is missing does not start" do
      assert {:error, {:missing_executable, _}} =
               External.start(name: SDKJobs.Missing, executable: "/nonexistent/server")
    end
  end

  describe "bad arguments" do
    test "raise ArgumentError naming the function" do
      assert_raise ArgumentError, ~r/^test: invalid pool "p"/, fn ->
        run(&SDKJobs.fold/4, [1], schedule: :external, pool: "p")
      end

      assert_raise ArgumentError, ~r/^test: invalid job NIF/, fn ->
        run(&SDKJobs.fold/4, [1, 2], schedule: :external)
      end

      # a module that declares no server
      assert_raise ArgumentError,
                   ~r/^test: invalid schedule :external, expected a pool: option/,
                   fn ->
                     run(&WellBehaved.Native.levenshtein/7, ["a", "b", :byte, nil],
                       schedule: :external
                     )
                   end

      assert_raise ArgumentError, ~r/External.start\/1: invalid :executable 5/, fn ->
        External.start(name: SDKJobs.Bad, executable: 5)
      end
    end
  end
end
