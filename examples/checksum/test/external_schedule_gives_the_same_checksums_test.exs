defmodule Checksum.ExternalScheduleGivesTheSameChecksumsTest do
  # schedule: :external runs the same job types in priv/checksum_server (the
  # NIF's sources built as a server program): the same checksums as every
  # in-VM mode, the same refusals, from the pool the application's
  # supervisor started; a server killed mid-call answers its caller, is
  # started again, and serves the next call.
  use ExUnit.Case, async: false

  alias WellBehaved.{External, Job, OSProcess, Runtime, Testing}

  @pool Checksum.Native.External

  test "the application's supervisor runs the pool, with the declared servers" do
    assert [{@pool, pid, :worker, _}] = Supervisor.which_children(Checksum.Supervisor)
    assert is_pid(pid)
    %{executable: exe, servers: servers} = External.info(@pool)
    assert exe == Path.join(:code.priv_dir(:checksum), "checksum_server")
    assert length(servers) == 2
  end

  test "Adler-32 and CRC-32 pieces as in every in-VM mode, tiny steps or not" do
    for size <- [0, 1, 1000, 70_000, 2_000_000] do
      data = :crypto.strong_rand_bytes(size)
      want = :erlang.adler32(data)
      assert Checksum.adler32(data, schedule: :external) == want

      for chunk <- [1, 4096, size + 1], size <= 70_000 or chunk > 1 do
        in_vm = Checksum.crc32_chunks(data, chunk, schedule: :normal)
        assert Checksum.crc32_chunks(data, chunk, schedule: :external) == in_vm
      end
    end

    data = :crypto.strong_rand_bytes(3000)

    Testing.modes_agree(
      fn opts -> Checksum.crc32_chunks(data, 7, opts) end,
      Checksum.crc32_chunks(data, 7, schedule: :external, tiny_slices: true),
      Runtime.modes() ++ [:external]
    )
  end

  test "a refusal is the same in a server" do
    for mode <- Runtime.modes() ++ [:external] do
      assert Job.call(&Checksum.Native.crc32_chunks/5, ["abc", 0], schedule: mode) ==
               {:error, :zero_chunk_size}
    end
  end

  test "a server killed mid-call: its caller gets an error, the next call a checksum" do
    # one byte per step: 64 MB last seconds (1 MB lasted 40 ms here, less
    # than a loaded machine may keep this process from seeing it busy)
    data = :crypto.strong_rand_bytes(64_000_000)
    want = :erlang.adler32(data)
    before = for s <- External.info(@pool).servers, do: s.os_pid

    task =
      Task.async(fn ->
        Job.call(&Checksum.Native.adler32/4, [data], schedule: :external, tiny_slices: true)
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

    for _ <- 1..4, do: assert(Checksum.adler32(data, schedule: :external) == want)
  end
end
