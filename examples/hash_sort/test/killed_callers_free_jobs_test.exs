defmodule HashSort.KilledCallersFreeJobsTest do
  # A caller killed during its job, in every mode that can be interrupted
  # and in :external, leaves no live job or byte behind, and the runtime
  # keeps working.
  use ExUnit.Case, async: false

  import WellBehaved.Testing

  @moduletag timeout: 300_000
  @modes [:yielding, :yielding_dirty, :dirty_cpu, :threaded]

  setup do
    assert_no_live_jobs(HashSort.Native)
  end

  test "killed while the job is surely running (one unit per slice)" do
    # millions of units, one per slice (a :threaded job's quantum runs many
    # steps): the job is live until its caller dies, however fast the machine
    blocks = :binary.copy(<<7>>, 256_000_000)
    ints = :binary.copy(:crypto.strong_rand_bytes(1_000_000), 16)

    for mode <- @modes do
      kill_mid_job(
        fn -> HashSort.sha256(blocks, schedule: mode, tiny_slices: true) end,
        HashSort.Native
      )

      # the sort owns 12 bytes an element from init on
      kill_mid_job(
        fn -> HashSort.sort_u32(ints, schedule: mode, tiny_slices: true) end,
        HashSort.Native
      )
    end
  end

  test "200 callers killed at any point of their jobs" do
    data = :crypto.strong_rand_bytes(400_000)
    modes = @modes ++ [:auto, :normal, :external]

    pids =
      for i <- 1..200 do
        mode = Enum.at(modes, rem(i, length(modes)))
        spawn(fn -> HashSort.sort_u32(data, schedule: mode, tiny_slices: rem(i, 2) == 0) end)
      end

    for {pid, i} <- Enum.with_index(pids) do
      if rem(i, 10) == 0, do: Process.sleep(1)
      ref = Process.monitor(pid)
      Process.exit(pid, :kill)
      assert_receive {:DOWN, ^ref, :process, ^pid, _}, 60_000
    end

    assert_no_live_jobs(HashSort.Native)
    assert HashSort.sort_u32(<<2::32, 1::32>>, schedule: :threaded) == <<1::32, 2::32>>
  end

  test "the counters balance at rest" do
    for mode <- WellBehaved.Runtime.modes(), do: HashSort.sha256("abc", schedule: mode)
    assert_no_live_jobs(HashSort.Native)
    c = WellBehaved.Runtime.stats(HashSort.Native).counters

    for mode <- [:normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded] do
      ins = c.calls[mode] + c.auto_chosen[mode] + if(mode == :yielding, do: c.reruns, else: 0)

      outs =
        c.completed[mode] + c.failed[mode] + c.cancelled[mode] +
          if(mode == :normal, do: c.reruns, else: 0)

      assert ins == outs, "#{mode}: #{inspect(c)}"
    end
  end
end
