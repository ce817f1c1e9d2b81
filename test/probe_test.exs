defmodule WellBehaved.ProbeTest do
  # Wide margins: a :normal call of ~500 ms holds its scheduler far beyond
  # the 100 ms bound, a :yielding one gives it back every ~1 ms.
  use ExUnit.Case, async: false

  alias WellBehaved.{Probe, Spin}

  doctest WellBehaved.Probe

  @long 200_000_000

  test "assert_well_behaved flags a long :normal call" do
    error =
      assert_raise ExUnit.AssertionError, fn ->
        Probe.assert_well_behaved(fn -> Spin.run(@long, schedule: :normal) end,
          max_block_ms: 100,
          calls: 1
        )
      end

    assert error.message =~ "blocks schedulers beyond 100 ms"
    assert error.message =~ "long_schedule"
  end

  test "assert_well_behaved passes the same work :yielding" do
    report =
      Probe.assert_well_behaved(fn -> Spin.run(@long, schedule: :yielding) end,
        max_block_ms: 100,
        calls: 1
      )

    assert report.long_schedules.count == 0
    assert report.calls == :erlang.system_info(:schedulers_online)
    assert report.completed
  end

  test "measure reports tickers, utilization and calls" do
    report = Probe.measure(fn -> Spin.run(1_000_000) end, workers: 2, duration_ms: 300)
    assert report.workers == 2
    assert report.calls > 0
    assert report.ticker.period_ms == 10
    assert report.ticker.samples > 0
    assert report.ticker.p50_ms <= report.ticker.p99_ms
    assert report.ticker.p99_ms <= report.ticker.max_ms
    assert report.utilization.normal > 0
    assert Probe.summary(report) =~ "workers"
  end

  test "measure counts a fixed number of calls" do
    counter = :counters.new(1, [])
    report = Probe.measure(fn -> :counters.add(counter, 1, 1) end, workers: 3, calls: 7)
    assert report.calls == 21
    assert :counters.get(counter, 1) == 21
  end

  test "workers that outlive the timeout are killed and reported" do
    report =
      Probe.measure(fn -> Process.sleep(:infinity) end, workers: 2, calls: 1, timeout_ms: 200)

    refute report.completed
  end

  test "the previous system monitor is restored" do
    :erlang.system_monitor(self(), [{:long_gc, 1000}])
    Probe.measure(fn -> :ok end, duration_ms: 20)
    assert {pid, opts} = :erlang.system_monitor()
    assert pid == self()
    assert opts[:long_gc] == 1000
    :erlang.system_monitor(:undefined)
  end

  test "percentiles are exact nearest-rank values" do
    p = Probe.percentiles(Enum.to_list(1000..100_000//1000))
    assert p.samples == 100
    assert p.p50_ms == 50.0
    assert p.p99_ms == 99.0
    assert p.max_ms == 100.0
    assert Probe.percentiles([]).samples == 0
  end

  test "bad options raise ArgumentError" do
    assert_raise ArgumentError, fn -> Probe.measure(fn -> :ok end, workers: 0) end
    assert_raise ArgumentError, fn -> Probe.measure(fn -> :ok end, bogus: 1) end

    assert_raise ArgumentError, fn ->
      Probe.assert_well_behaved(fn -> :ok end, max_block_ms: -1)
    end
  end
end
