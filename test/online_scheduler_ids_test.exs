defmodule WellBehaved.OnlineSchedulerIdsTest do
  # WellBehaved.Probe.scheduler_ids/4: which ids of
  # :erlang.statistics(:scheduler_wall_time) are the online normal and dirty
  # CPU schedulers, for Probe's utilization and the lab's HTTP suite.
  use ExUnit.Case, async: true

  alias WellBehaved.Probe
  alias WellBehaved.Testing.ChildVM

  test "the dirty CPU ids start after all normal schedulers, online or not" do
    # 4 schedulers, 2 online; 4 dirty CPU schedulers, 1 online
    ids = Probe.scheduler_ids(4, 2, 4, 1)
    assert Enum.to_list(ids.normal) == [1, 2]
    assert Enum.to_list(ids.dirty_cpu) == [5]
  end

  test "+S 2:1: one normal and one dirty CPU scheduler online" do
    ids = Probe.scheduler_ids(2, 1, 2, 1)
    assert Enum.to_list(ids.normal) == [1]
    assert Enum.to_list(ids.dirty_cpu) == [3]
  end

  test "all schedulers online" do
    ids = Probe.scheduler_ids(2, 2, 2, 2)
    assert Enum.to_list(ids.normal) == [1, 2]
    assert Enum.to_list(ids.dirty_cpu) == [3, 4]
  end

  test "no dirty CPU scheduler gives no dirty CPU id" do
    assert Enum.to_list(Probe.scheduler_ids(2, 2, 0, 0).dirty_cpu) == []
  end

  test "bad counts raise ArgumentError naming the argument" do
    assert_raise ArgumentError, ~r/scheduler_ids\/4: schedulers must be an integer >= 1/, fn ->
      Probe.scheduler_ids(0, 0, 1, 1)
    end

    assert_raise ArgumentError,
                 ~r/scheduler_ids\/4: schedulers_online must be an integer from 1 to 2, got 3/,
                 fn -> Probe.scheduler_ids(2, 3, 1, 1) end

    assert_raise ArgumentError, ~r/dirty_cpu must be an integer >= 0, got :many/, fn ->
      Probe.scheduler_ids(2, 2, :many, 1)
    end

    assert_raise ArgumentError, ~r/dirty_cpu_online must be an integer from 0 to 1, got 2/, fn ->
      Probe.scheduler_ids(2, 2, 1, 2)
    end
  end

  # OTP's :scheduler module labels each id of :scheduler_wall_time_all with
  # its type; a VM with offline schedulers of both kinds shows that the ids
  # picked are of the right type.
  test "in a VM started with +S 4:2 +SDcpu 4:1 the ids are of the right type" do
    code = """
    :erlang.system_flag(:scheduler_wall_time, true)
    {:scheduler_wall_time_all, sample} = :scheduler.sample_all()
    counts = for k <- [:schedulers, :schedulers_online, :dirty_cpu_schedulers,
                       :dirty_cpu_schedulers_online], do: :erlang.system_info(k)
    %{counts: counts, types: Map.new(sample, fn {type, id, _a, _t} -> {id, type} end)}
    """

    assert {:ok, {%{counts: counts, types: types}, _binding}} =
             ChildVM.run({Code, :eval_string, [code]},
               bound_ms: 60_000,
               erl_flags: ["+S", "4:2", "+SDcpu", "4:1"]
             )

    assert counts == [4, 2, 4, 1]
    ids = apply(Probe, :scheduler_ids, counts)
    assert Enum.map(ids.normal, &types[&1]) == [:normal, :normal]
    assert Enum.map(ids.dirty_cpu, &types[&1]) == [:cpu]
    # the first dirty CPU id is the one after the last normal scheduler's
    assert types[4] == :normal and types[5] == :cpu
  end

  test "Probe's utilization counts the online schedulers only" do
    # two busy workers on the two online schedulers of four: counted over
    # all four, the two offline ones idle, it could not pass one half; over
    # the online two it is near one when the machine is idle (0.62 was
    # read beside two CPU-bound processes)
    code = """
    report = WellBehaved.Probe.measure(fn -> WellBehaved.Probe.erlang_work(100_000) end,
      workers: 2, duration_ms: 300, control: false)
    report.utilization.normal
    """

    assert {:ok, {normal, _binding}} =
             ChildVM.run({Code, :eval_string, [code]},
               bound_ms: 60_000,
               erl_flags: ["+S", "4:2"]
             )

    assert normal > 0.5
  end
end
