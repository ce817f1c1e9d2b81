defmodule WellBehaved.RuntimeCountersTest do
  # Runtime.stats/1's `counters` rise by exactly the calls made: a library
  # of its own (SDKCounted), which only this file calls, counts its calls
  # by mode asked, :auto's choices, exactly one ending per job (completed,
  # failed or cancelled, by the mode that ran it) and the re-runs of a
  # wrong prediction; yields, dirty hops, requeues, callers' deaths and
  # answers taken in the call. At rest, every mode balances: what started
  # in it ended in it. Cancels that happen on other threads (a pool
  # thread, a destructor after the caller's death) are waited for.
  use ExUnit.Case, async: false

  alias WellBehaved.{Job, Runtime}
  alias WellBehaved.Test.{SDKAwaiting, SDKCounted}
  import Bitwise
  import WellBehaved.Test.RuntimeHelpers

  @moduletag timeout: 180_000
  @modes [:normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded]

  setup_all do
    SDKCounted.ensure_loaded!()
    SDKAwaiting.ensure_loaded!()
  end

  setup do
    on_exit(fn -> assert_balanced() end)
  end

  defp counters, do: Runtime.stats(SDKCounted).counters

  # what changed since `before`: by-mode maps and scalars alike, without
  # the zeros
  defp delta(before, now \\ counters()) do
    for {key, value} <- now, into: %{} do
      case value do
        %{} = by_mode ->
          {key,
           for({m, n} <- by_mode, n != before[key][m], into: %{}, do: {m, n - before[key][m]})}

        n ->
          {key, n - before[key]}
      end
    end
    |> Enum.reject(fn {_key, value} -> value == %{} or value == 0 end)
    |> Map.new()
  end

  # every mode's jobs all ended, once each: what started in a mode (asked
  # for, chosen by :auto, or a re-run's sliced restart) is what completed,
  # failed or was cancelled in it (or ended as a re-run); :auto's calls
  # chose a mode or were refused before choosing
  defp balanced?(c) do
    Enum.all?(@modes, fn m ->
      started = c.calls[m] + c.auto_chosen[m] + if(m == :yielding, do: c.reruns, else: 0)

      ended =
        c.completed[m] + c.failed[m] + c.cancelled[m] + if(m == :normal, do: c.reruns, else: 0)

      started == ended
    end) and c.calls.auto == Enum.sum(Map.values(c.auto_chosen)) + c.failed.auto
  end

  defp assert_balanced do
    eventually(
      fn ->
        :erlang.garbage_collect()
        balanced?(counters()) and Runtime.stats(SDKCounted).live_jobs == 0
      end,
      20_000
    )
  rescue
    error in ExUnit.AssertionError ->
      reraise %{error | message: "unbalanced at rest: #{inspect(counters())}"}, __STACKTRACE__
  end

  defp fold(n, opts), do: Job.call(&SDKCounted.fold/4, [n], opts)

  test "the counters' shape: by-mode maps and counts, all integers" do
    c = counters()
    by_mode = Map.new(@modes, &{&1, 0})

    for key <- [:calls, :failed],
        do: assert(Map.keys(c[key]) |> Enum.sort() == Enum.sort([:auto | @modes]))

    for key <- [:auto_chosen, :completed, :cancelled],
        do: assert(Map.keys(c[key]) |> Enum.sort() == Enum.sort(Map.keys(by_mode)))

    for key <- [:reruns, :yields, :dirty_hops, :requeues, :caller_deaths, :answered_in_call],
        do: assert(is_integer(c[key]) and c[key] >= 0)

    assert Map.keys(c) |> length() == 11
  end

  test "N calls in each mode: N calls asked and N completed in that mode, nothing else" do
    for mode <- @modes do
      before = counters()

      for n <- 1..5,
          do: assert(fold(n * 1000, schedule: mode) == fold(n * 1000, schedule: :normal))

      d = delta(before)
      # the reference calls are :normal ones
      normal = if mode == :normal, do: 10, else: 5
      assert d.calls == Map.merge(%{normal: 5}, %{mode => normal}), inspect({mode, d})
      assert d.completed == Map.merge(%{normal: 5}, %{mode => normal}), inspect({mode, d})
      refute Map.has_key?(d, :failed) or Map.has_key?(d, :cancelled), inspect({mode, d})
    end
  end

  test "tiny slices: one yield between units, a dirty hop per dirty job" do
    before = counters()
    assert fold(10, schedule: :yielding, tiny_slices: true) == fold(10, schedule: :normal)
    assert delta(before).yields == 9
    refute Map.has_key?(delta(before), :dirty_hops)

    before = counters()
    fold(10, schedule: :yielding_dirty, tiny_slices: true)
    fold(10, schedule: :dirty_cpu)
    d = delta(before)
    assert d.yields == 9
    assert d.dirty_hops == 2
  end

  test ":auto counts its own calls and the mode it chose" do
    before = counters()
    small = fold(10, [])
    large = fold(20_000_000, [])
    assert {small, large} == {fold(10, schedule: :normal), fold(20_000_000, schedule: :normal)}
    d = delta(before)
    assert d.calls == %{auto: 2, normal: 2}
    assert d.auto_chosen == %{normal: 1, yielding: 1}
    assert d.completed == %{normal: 3, yielding: 1}
  end

  test "a wrong prediction ends the :normal run as a re-run, and the job ends sliced" do
    # liar predicts one unit and does 20 million: the first call in this
    # VM (its cost not learned yet) starts :normal, then starts again sliced
    before = counters()
    assert Job.call(&SDKCounted.liar/4, [20_000_000]) == fold(20_000_000, schedule: :normal)
    d = delta(before)
    assert d.reruns == 1
    assert d.calls == %{auto: 1, normal: 1}
    assert d.auto_chosen == %{normal: 1}
    assert d.completed == %{normal: 1, yielding: 1}
  end

  test "refused arguments, a failed set-up and a raising result fail in their mode" do
    before = counters()
    assert fold("10", schedule: :normal) == {:error, :badarg}
    assert fold("10", []) == {:error, :badarg}
    assert fold("10", schedule: :threaded) == {:error, :badarg}
    assert Job.call(&SDKCounted.owned/4, [1 <<< 62], schedule: :yielding) == {:error, :enomem}

    for mode <- [:normal, :yielding, :dirty_cpu, :threaded],
        do:
          assert_raise(ArgumentError, fn ->
            Job.call(&SDKCounted.raising/4, [10], schedule: mode)
          end)

    d = delta(before)
    assert d.failed == %{normal: 2, auto: 1, threaded: 2, yielding: 2, dirty_cpu: 1}
    assert d.calls == %{normal: 2, auto: 1, threaded: 2, yielding: 2, dirty_cpu: 1}
    refute Map.has_key?(d, :completed)
  end

  test "a threaded call that times out is cancelled" do
    before = counters()

    assert Job.call(&SDKCounted.liar/4, [0], schedule: :threaded, timeout: 20) ==
             {:error, :timeout}

    d = delta(before)
    assert d.cancelled == %{threaded: 1}
    assert d.calls == %{threaded: 1}
  end

  test "jobs whose caller is killed are cancelled in every mode" do
    for mode <- [:yielding, :dirty_cpu, :yielding_dirty, :threaded] do
      before = counters()
      kill_during(fn -> Job.call(&SDKCounted.liar/4, [0], schedule: mode) end, 30)

      eventually(fn -> delta(before)[:cancelled] == %{mode => 1} end)

      d = delta(before)
      assert d.calls == %{mode => 1}
      # the runtime saw the death (not only the job's memory going)
      if mode == :threaded, do: assert(d.caller_deaths == 1)
      assert Map.get(d, :caller_deaths, 0) <= 1
    end
  end

  test "a threaded job queued behind long ones gives its turn and queues again" do
    threads = Runtime.stats(SDKCounted).pool_threads
    before = counters()

    1..(threads + 1)
    |> Task.async_stream(
      fn _ -> Job.call(&SDKCounted.liar/4, [0], schedule: :threaded, timeout: 200) end,
      max_concurrency: threads + 1,
      timeout: 60_000
    )
    |> Enum.each(fn {:ok, answer} -> assert answer == {:error, :timeout} end)

    d = delta(before)
    assert d.requeues > 0
    assert d.cancelled == %{threaded: threads + 1}
  end

  test "answered in the call: counted as the stats key of that name is" do
    %{counters: c, answered_in_call: answered} = Runtime.stats(SDKAwaiting)
    assert c.answered_in_call == answered

    for n <- 1..4,
        do:
          assert(
            Job.call(&SDKAwaiting.fold/4, [n], schedule: :threaded) == fold(n, schedule: :normal)
          )

    %{counters: now, answered_in_call: answered_now} = Runtime.stats(SDKAwaiting)
    assert now.answered_in_call - c.answered_in_call == 4
    assert answered_now - answered == 4
    assert now.completed.threaded - c.completed.threaded == 4
    assert balanced?(now)
  end

  test "counts never go down, from several processes at once" do
    before = counters()

    1..8
    |> Task.async_stream(fn i -> for n <- 1..50, do: fold(n + i, schedule: :normal) end,
      max_concurrency: 8
    )
    |> Stream.run()

    d = delta(before)
    assert d.calls == %{normal: 400}
    assert d.completed == %{normal: 400}
  end
end
