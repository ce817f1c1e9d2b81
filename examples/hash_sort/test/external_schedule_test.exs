defmodule HashSort.ExternalScheduleTest do
  # schedule: :external runs the same Rust jobs in priv/hash_sort_server,
  # built from the same crate: the pool the application started, and a
  # server killed mid-call answers its caller, is started again and serves
  # the next call.
  use ExUnit.Case, async: false

  @moduletag timeout: 300_000

  alias WellBehaved.{External, Job, OSProcess, Testing}

  @pool HashSort.Native.External

  test "the application's supervisor runs the pool of the crate's server" do
    assert [{@pool, pid, :worker, _}] = Supervisor.which_children(HashSort.Supervisor)
    assert is_pid(pid)

    assert External.info(@pool).executable ==
             Path.join(:code.priv_dir(:hash_sort), "hash_sort_server")
  end

  test "a server killed mid-call: its caller gets an error, the next call an answer" do
    # 8 million integers sorted one unit per step: about 200 million steps,
    # live in the server until it is killed, however fast the machine
    ints = :binary.copy(:crypto.strong_rand_bytes(4_000_000), 8)
    data = :crypto.strong_rand_bytes(1_000_000)
    before = for s <- External.info(@pool).servers, do: s.os_pid

    task =
      Task.async(fn ->
        Job.call(&HashSort.Native.sort_u32/4, [ints], schedule: :external, tiny_slices: true)
      end)

    index =
      Testing.eventually(fn ->
        case External.info(@pool).busy do
          [%{server: index}] -> index
          _ -> nil
        end
      end)

    # the job runs (the server has read the request: one killed before
    # that computed nothing, and the pool sends the request again)
    Testing.eventually(fn ->
      match?({_, {:ok, %{live_jobs: 1}}}, List.keyfind(External.server_stats(@pool), index, 0))
    end)

    victim = Enum.at(before, index)
    OSProcess.kill(victim)
    assert Task.await(task, 60_000) == {:error, :closed}

    Testing.eventually(fn ->
      servers = External.info(@pool).servers
      Enum.all?(servers, &(&1.status == :up)) and victim not in Enum.map(servers, & &1.os_pid)
    end)

    for _ <- 1..2 do
      assert HashSort.sha256(data, schedule: :external) == :crypto.hash(:sha256, data)
    end
  end
end
