defmodule WellBehaved.KilledCallersFreeMemoryTest do
  # A caller killed at any point of its job, in any mode, leaves no live
  # job and no native memory behind.
  use ExUnit.Case, async: false

  alias WellBehaved.{Levenshtein, Runtime}
  import WellBehaved.Test.RuntimeHelpers

  @rounds 150

  setup do
    assert_no_live_jobs()
    # a pair of about 5-10 ms of work, so kills land before, during and after it
    {:ok, a: random_bytes(12_000), b: random_bytes(11_000)}
  end

  test "Levenshtein callers killed mid-job, hundreds of times per mode", %{a: a, b: b} do
    :erlang.garbage_collect()
    before = :erlang.memory(:total)

    for mode <- Runtime.modes(), round <- 1..@rounds do
      tiny = rem(round, 10) == 0 and mode not in [:normal, :dirty_cpu]

      opts =
        [schedule: mode, tiny_slices: tiny] ++
          if(rem(round, 3) == 0, do: [unit: :codepoint], else: [])

      {a, b} = if opts[:unit], do: {Base.encode64(a), Base.encode64(b)}, else: {a, b}
      kill_during(fn -> Levenshtein.distance(a, b, opts) end, rem(round, 7))
    end

    assert_no_live_jobs()
    :erlang.garbage_collect()
    # VM memory must not keep the killed jobs' resources (each is over 300 KiB)
    assert :erlang.memory(:total) - before < 64 * 1024 * 1024
  end

  test "a threaded job whose caller died is cancelled before it runs" do
    # fill the pool with long jobs, queue more, kill the queued callers
    {a, b} = long_pair()
    blockers = for _ <- 1..Runtime.stats().pool_threads, do: spawn_job(a, b)
    queued = for _ <- 1..20, do: spawn_job(a, b)
    eventually(fn -> Runtime.stats().queued > 0 end)
    Enum.each(queued ++ blockers, &Process.exit(&1, :kill))
    assert_no_live_jobs()
  end

  defp spawn_job(a, b) do
    spawn(fn -> Levenshtein.distance(a, b, schedule: :threaded) end)
  end
end
