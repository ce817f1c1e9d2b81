defmodule WellBehaved.LongCallsYieldTest do
  # :erlang.system_monitor reports a process that holds a scheduler longer
  # than a threshold. A :normal call of about 1 s here must be reported (a
  # machine 10x faster would still hold it past the threshold; a busy one
  # holds it longer). The same work :yielding (slices of tens of us) or on
  # dirty/threaded schedulers must not hold a normal scheduler: measured
  # there by WellBehaved.Probe.turns/2 in CPU time of the scheduler's
  # thread, which a machine busy elsewhere does not lengthen (the
  # monitor's wall time would count the OS's preemptions). The 100 ms
  # threshold leaves a wide margin either way.
  use ExUnit.Case, async: false

  alias WellBehaved.{Levenshtein, Probe}
  alias WellBehaved.Test.Holds
  import WellBehaved.Test.RuntimeHelpers

  @threshold_ms 100

  # a bound for a busy machine, not a timing claim: the first test took
  # 5 s here, 17.8 s at a load of 9 (two CPU-bound loops beside it)
  @moduletag timeout: 300_000

  setup do
    previous = :erlang.system_monitor(self(), [{:long_schedule, @threshold_ms}])

    on_exit(fn ->
      case previous do
        {pid, opts} -> :erlang.system_monitor(pid, opts)
        :undefined -> :erlang.system_monitor(:undefined)
      end
    end)

    {:ok, a: random_bytes(100_000), b: random_bytes(100_000)}
  end

  test "a long :normal Levenshtein call is reported, a :yielding one is not", %{a: a, b: b} do
    # 200 kB x 200 kB: about 1 s here (the 100 kB pair below, 0.25 s, is
    # within 3x of the threshold)
    {long_a, long_b} = {random_bytes(200_000), random_bytes(200_000)}

    assert reported_long?(fn -> Levenshtein.distance(long_a, long_b, schedule: :normal) end)

    for mode <- [:yielding, :yielding_dirty, :dirty_cpu, :threaded, :auto] do
      assert_no_hold(fn -> Levenshtein.distance(a, b, schedule: mode) end, "#{mode}")
    end
  end

  test "large set-ups do not hold a normal scheduler either" do
    # decoding 2 x 40 MB of UTF-8 takes well over the threshold: it must
    # happen off the normal schedulers in :yielding and :auto
    big = :binary.copy("é", 20_000_000)

    for mode <- [:yielding, :auto] do
      assert_no_hold(
        fn -> Levenshtein.distance(big, big, unit: :codepoint, schedule: mode) end,
        "#{mode}"
      )
    end
  end

  # Runs fun under Probe.turns/2: no turn of its process on a normal
  # scheduler took the threshold's CPU time, and it ran whole. Over the
  # threshold, it runs again: a hold fails when it comes back each time
  # (WellBehaved.Test.Holds).
  defp assert_no_hold(fun, label) do
    run = fn ->
      Probe.turns(fun, workers: 1, duration_ms: 1, warmup_ms: 0, timeout_ms: 120_000)
    end

    over = &Holds.over(label, &1.function.cpu_max_us, @threshold_ms * 1000, "a normal scheduler")
    {r, held} = Holds.recurring(run, over)

    assert r.function.calls > 0 and r.function.unfinished == 0,
           "#{label}: no whole call traced: #{inspect(r.function)}"

    assert held == [], Holds.message(held)
  end

  # Runs fun in a fresh process; whether a long_schedule report names it.
  # The VM sends such reports from a thread of its own, which a busy
  # machine can delay well past the process's end (a fixed 50 ms wait
  # missed one beside four CPU-bound processes): waited for, bounded only
  # so that a missing report fails.
  defp reported_long?(fun) do
    {pid, ref} = spawn_monitor(fun)
    assert_receive {:DOWN, ^ref, :process, ^pid, :normal}, 120_000

    receive do
      {:monitor, ^pid, :long_schedule, _info} -> true
    after
      60_000 -> false
    end
  end
end
