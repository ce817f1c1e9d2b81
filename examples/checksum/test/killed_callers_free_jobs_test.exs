defmodule Checksum.KilledCallersFreeJobsTest do
  # A caller killed during its checksum, in every mode that can be
  # interrupted, leaves no live job behind in the runtime of Checksum's NIF
  # library, and that runtime keeps working.
  use ExUnit.Case, async: false

  import WellBehaved.Testing

  @moduletag timeout: 300_000
  @modes [:yielding, :yielding_dirty, :dirty_cpu, :threaded]

  setup_all do
    # tens of milliseconds of work per call
    {:ok, data: :crypto.strong_rand_bytes(64_000_000)}
  end

  setup do
    assert_no_live_jobs(Checksum.Native)
  end

  test "killed before, during or after their job", %{data: data} do
    for mode <- @modes, round <- 1..6 do
      pid = spawn(fn -> Checksum.adler32(data, schedule: mode) end)
      if rem(round, 3) > 0, do: Process.sleep(rem(round, 3) * 5)
      kill(pid)
    end

    assert_no_live_jobs(Checksum.Native)
    assert Checksum.adler32(data, schedule: :threaded) == :erlang.adler32(data)
  end

  test "killed while the job is surely running (one byte per slice)", %{data: data} do
    # 64 million slices: the job is live until its caller dies
    for mode <- @modes do
      kill_mid_job(
        fn -> Checksum.adler32(data, schedule: mode, tiny_slices: true) end,
        Checksum.Native
      )

      # the C++ job, whose answer is allocated at init
      kill_mid_job(
        fn -> Checksum.crc32_chunks(data, 16, schedule: mode, tiny_slices: true) end,
        Checksum.Native
      )
    end
  end

  defp kill(pid) do
    ref = Process.monitor(pid)
    Process.exit(pid, :kill)
    assert_receive {:DOWN, ^ref, :process, ^pid, _}, 60_000
  end
end
