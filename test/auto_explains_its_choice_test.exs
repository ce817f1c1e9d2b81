defmodule WellBehaved.AutoExplainsItsChoiceTest do
  # Job.explain/2 tells, without running the job, the mode :auto would
  # choose and why; a call that asks for its job's report
  # (Job.call_report/4, the flags argument's bit 1) gets the mode that ran
  # and :auto's reason with its result. The two agree, follow the
  # thresholds of Runtime.configure/2, and a report never reaches a caller
  # as a tuple. Runs on the library of runtime_counters_test.exs (of the
  # same synchronous kind, so never at the same time), whose settings it
  # restores.
  use ExUnit.Case, async: false

  alias WellBehaved.{Job, Runtime}
  alias WellBehaved.Test.{SDKAwaiting, SDKCounted}

  @moduletag timeout: 180_000
  @modes [:normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded]

  setup_all do
    SDKCounted.ensure_loaded!()
    SDKAwaiting.ensure_loaded!()
  end

  setup do
    on_exit(fn ->
      :ok = Runtime.configure(SDKCounted, normal_max_us: :slice, yielding_max_us: :infinity)
    end)
  end

  defp reference(n), do: Job.call(&SDKCounted.fold/4, [n], schedule: :normal)

  test "explain names the mode an :auto call then reports, and why" do
    for n <- [10, 20_000_000] do
      explained = Job.explain(&SDKCounted.fold/4, [n])
      {result, info} = Job.call_report(&SDKCounted.fold/4, [n])
      assert result == reference(n)
      assert info.mode_run == explained.mode
      assert info.reason == explained.reason
      assert info.predicted_units == explained.predicted_units + explained.setup_units
      assert explained.predicted_units == n
      assert info.rerun == false
    end

    assert %{mode: :normal, reason: :below_normal_max} = Job.explain(&SDKCounted.fold/4, [10])

    assert %{mode: :yielding, reason: :below_yielding_max, yielding_max_ns: :infinity} =
             Job.explain(&SDKCounted.fold/4, [20_000_000])
  end

  test "the thresholds of configure/2 flip explain's answer and the call's mode" do
    n = 1_000_000

    :ok = Runtime.configure(SDKCounted, normal_max_us: 100_000_000)

    assert %{mode: :normal, reason: :below_normal_max, normal_max_ns: 100_000_000_000} =
             Job.explain(&SDKCounted.fold/4, [n])

    assert {result, %{mode_run: :normal}} = Job.call_report(&SDKCounted.fold/4, [n])
    assert result == reference(n)

    :ok = Runtime.configure(SDKCounted, normal_max_us: 0, yielding_max_us: 1)

    assert %{mode: :yielding_dirty, reason: :above_yielding_max, yielding_max_ns: 1000} =
             explained = Job.explain(&SDKCounted.fold/4, [n])

    assert explained.setup_on_dirty
    assert {^result, %{mode_run: :yielding_dirty}} = Job.call_report(&SDKCounted.fold/4, [n])

    :ok = Runtime.configure(SDKCounted, normal_max_us: 0, yielding_max_us: :infinity)
    assert %{mode: :yielding, reason: :below_yielding_max} = Job.explain(&SDKCounted.fold/4, [n])
  end

  test "a type whose cost is not measured yet says so, until it is" do
    # `dear` runs nowhere else on this library
    refute Runtime.stats(SDKCounted).cost_measured.dear
    assert %{cost_measured: false} = Job.explain(&SDKCounted.dear/4, [10])
    Job.call(&SDKCounted.dear/4, [200], schedule: :yielding)
    assert Runtime.stats(SDKCounted).cost_measured.dear
    assert %{cost_measured: true, ps_per_unit: ps} = Job.explain(&SDKCounted.dear/4, [10])
    assert ps == Runtime.stats(SDKCounted).ps_per_unit.dear
  end

  test "refused arguments: explain answers the error, and a library without explain :unsupported" do
    assert Job.explain(&SDKCounted.fold/4, ["10"]) == {:error, :badarg}
    old_runtime = fn _n, _mode, _flags, _ref -> :erlang.error(:badarg) end
    assert Job.explain(old_runtime, [10]) == {:error, :unsupported}
    assert_raise ArgumentError, ~r/job NIF/, fn -> Job.explain(&SDKCounted.fold/4, [1, 2]) end
  end

  test "every mode reports its result unwrapped, with the mode and slices that ran it" do
    for mode <- @modes, tiny <- [false, true] do
      {result, info} =
        Job.call_report(&SDKCounted.fold/4, [10], schedule: mode, tiny_slices: tiny)

      assert result == reference(10), inspect({mode, tiny})
      assert %{mode_run: ^mode, reason: nil, predicted_units: nil, rerun: false} = info
      assert info.bytes > 0 and info.ps_per_unit > 0
      # one unit a slice: ten slices
      if mode in [:yielding, :yielding_dirty] and tiny,
        do: assert(info.slices == 10),
        else: assert(info.slices >= 1)
    end

    # as a wrapper calls it, its options checked already
    assert {result, %{mode_run: :yielding, slices: 10}} =
             Job.checked_report(&SDKCounted.fold/4, [10], :yielding, true, :infinity, "f/1")

    assert result == reference(10)

    # errors and raises are not reports
    assert Job.call_report(&SDKCounted.fold/4, ["10"], schedule: :yielding) ==
             {{:error, :badarg}, nil}

    assert_raise ArgumentError, fn ->
      Job.call_report(&SDKCounted.raising/4, [10], schedule: :threaded)
    end
  end

  test "a threaded answer taken in the call is reported" do
    assert {result, %{mode_run: :threaded, answered_in_call: true}} =
             Job.call_report(&SDKAwaiting.fold/4, [1000], schedule: :threaded)

    assert result == reference(1000)

    # a re-run's report: test/telemetry_events_test.exs (the job's stop
    # event and the rerun event), the one place liar runs on this library
  end

  test "the flags argument: an integer's bit 0 is tiny slices, as `true` is" do
    yields = fn -> Runtime.stats(SDKCounted).counters.yields end

    for {flags, slices} <- [{true, 10}, {1, 10}, {false, 1}, {0, 1}] do
      before = yields.()
      assert SDKCounted.fold(10, :yielding, flags, nil) == reference(10)
      assert yields.() - before == slices - 1, inspect(flags)
    end

    # bit 1: the NIF itself answers the report's tuple (Job takes it off)
    assert {:"$wb_report", result, %{slices: 10}} = SDKCounted.fold(10, :yielding, 3, nil)
    assert result == reference(10)
    assert {:"$wb_report", ^result, %{slices: 1}} = SDKCounted.fold(10, :normal, 2, nil)
  end
end
