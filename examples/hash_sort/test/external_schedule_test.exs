defmodule HashSort.ExternalScheduleTest do
  # schedule: :external runs the same Rust jobs in priv/hash_sort_server,
  # built from the same crate: the pool the application started, and a
  # server killed mid-call answers its caller, is started again and serves
  # the next call.
  use ExUnit.Case, async: false

  alias WellBehaved.{External, Job, OSProcess, Testing}

  @pool HashSort.Native.External

  test "the application's supervisor runs the pool of the crate's server" do
    assert [{@pool, pid, :worker, _}] = Supervisor.which_children(HashSort.Supervisor)
    assert is_pid(pid)

    assert External.info(@pool).executable ==
             Path.join(:code.priv_dir(:hash_sort), "hash_sort_server")
  end

  test "a server killed mid-call: its caller gets an error, the next call a digest" do
    data = :crypto.strong_rand_bytes(64_000_000)
    want = :crypto.hash(:sha256, data)
    before = for s <- External.info(@pool).servers, do: s.os_pid

    task =
      Task.async(fn ->
        Job.call(&HashSort.Native.sha256/4, [data], schedule: :external, tiny_slices: true)
      end)

    index =
      Testing.eventually(fn ->
        case External.info(@pool).busy do
          [%{server: index}] -> index
          _ -> nil
        end
      end)

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

    for _ <- 1..2, do: assert(HashSort.sha256(data, schedule: :external) == want)
  end
end
