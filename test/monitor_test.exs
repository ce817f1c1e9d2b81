defmodule WellBehaved.MonitorTest do
  # WellBehaved.Monitor holds the VM's one system monitor: async: false,
  # and each test gives the monitor back as it found it. The reference for
  # "reported" is the VM's own long_schedule message, which the monitor
  # turns into an event; a :yielding call of the same work must not be
  # named (its slices are tens of us; wall time can still be stretched
  # by the host, so a report naming it runs the scenario again, as
  # WellBehaved.Test.Holds does for CPU-time holds).
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog
  import WellBehaved.Test.RuntimeHelpers

  alias WellBehaved.{Job, Levenshtein, Monitor, Probe, Runtime}
  alias WellBehaved.Test.{Holds, SDKJobs}

  @threshold_ms 100
  @event [:well_behaved, :monitor, :long_schedule]

  # a bound for a busy machine, not a timing claim (as in
  # long_calls_yield_test.exs)
  @moduletag timeout: 300_000
  @moduletag :capture_log

  @doc false
  # the events' handler: each event to the test process
  def record(event, measurements, metadata, test),
    do: send(test, {:event, event, measurements, metadata})

  setup do
    previous = :erlang.system_monitor()

    on_exit(fn ->
      case previous do
        {pid, opts} -> :erlang.system_monitor(pid, opts)
        :undefined -> :erlang.system_monitor(:undefined)
      end

      WellBehaved.Telemetry.refresh()
    end)

    :erlang.system_monitor(:undefined)
    WellBehaved.Telemetry.set({:handler, __MODULE__, :record, self()}, true)
    :ok
  end

  test "a long :normal call is reported with its process and logged" do
    monitor = start_supervised!({Monitor, long_schedule_ms: @threshold_ms, log_interval_ms: 0})
    assert {^monitor, [long_schedule: @threshold_ms]} = :erlang.system_monitor()
    # 200 kB x 200 kB: about 1 s here, 10x the threshold
    {a, b} = {random_bytes(200_000), random_bytes(200_000)}

    # the process waits after its call, so that it is still registered
    # when the report is handled
    caller =
      spawn(fn ->
        receive do
          :go -> Levenshtein.distance(a, b, schedule: :normal)
        end

        receive do
          :stop -> :ok
        end
      end)

    Process.register(caller, :monitor_test_long_call)

    log =
      capture_log([metadata: [:process, :registered_as]], fn ->
        send(caller, :go)
        {measurements, metadata} = await_report(caller)
        # the log line follows the event in the same message's handling
        :sys.get_state(monitor)
        send(caller, :stop)

        assert measurements.duration >=
                 System.convert_time_unit(@threshold_ms, :millisecond, :native)

        assert %{pid: ^caller, port: nil, registered_name: :monitor_test_long_call} = metadata
        # the process is alive (and in receive) when the report is handled
        assert {_, _, _} = metadata.current_function
      end)

    assert log =~ "[warning]"
    assert log =~ "long schedule: #{inspect(caller)} (:monitor_test_long_call) held a scheduler"
    assert log =~ "process=#{:erlang.pid_to_list(caller)} registered_as=monitor_test_long_call"
  end

  test "a :yielding call of the same work is not reported" do
    monitor = start_supervised!({Monitor, long_schedule_ms: @threshold_ms})
    {a, b} = {random_bytes(200_000), random_bytes(200_000)}

    # The VM sends its reports in order, from one thread: once the report
    # of a long :normal call made after the :yielding one is in, any
    # report of the :yielding one would be too.
    run = fn ->
      yielding = run_to_end(fn -> Levenshtein.distance(a, b, schedule: :yielding) end)
      marker = run_to_end(fn -> Levenshtein.distance(a, b, schedule: :normal) end)
      reports_until(marker) |> Enum.filter(fn {_measurements, md} -> md.pid == yielding end)
    end

    holds = fn reports ->
      for {measurements, _metadata} <- reports do
        us = System.convert_time_unit(measurements.duration, :native, :microsecond)

        %{
          key: :yielding,
          us: us,
          bound_us: @threshold_ms * 1000,
          detail: "the :yielding call (reported by the system monitor, wall time)"
        }
      end
    end

    {_first, held} = Holds.recurring(run, holds)
    assert held == [], "reported in every run: #{inspect(held)}"
    assert Process.alive?(monitor)
  end

  test "a slice of a runtime library's job that runs long names its NIF" do
    # SDKJobs is a NIF library built on the SDK, as a user's is. Its
    # "liar" job with n = 0 never finishes: sliced, each slice takes the
    # slice's time, here 100 ms, over a 50 ms threshold. The process is
    # in the job when its reports are handled.
    SDKJobs.ensure_loaded!()
    :ok = Runtime.configure(SDKJobs, slice_us: 100_000)
    on_exit(fn -> Runtime.configure(SDKJobs, slice_us: :calibrated) end)
    start_supervised!({Monitor, long_schedule_ms: 50})

    caller = spawn(fn -> Job.call(&SDKJobs.liar/4, [0], schedule: :yielding) end)

    try do
      {_measurements, metadata} = await_report(caller)
      assert {SDKJobs, :liar, _arity} = metadata.nif
      assert metadata.current_function == metadata.nif
    after
      Process.exit(caller, :kill)
    end
  end

  test "start refuses a system monitor that another process holds" do
    holder = spawn_link(fn -> Process.sleep(:infinity) end)
    :erlang.system_monitor(holder, long_schedule: 500)
    found = :erlang.system_monitor()

    assert {:error, reason} = start_supervised({Monitor, long_schedule_ms: @threshold_ms})
    assert reason |> inspect() =~ inspect({:system_monitor_taken, holder, [long_schedule: 500]})
    assert :erlang.system_monitor() == found
  end

  test "a takeover shares the monitor with its holder and gives it back on stop" do
    test = self()
    relay = spawn_link(fn -> relay(test) end)
    :erlang.system_monitor(relay, [{:long_schedule, 300}, {:long_gc, 1000}, :busy_port])
    found = :erlang.system_monitor()

    monitor = start_supervised!({Monitor, long_schedule_ms: @threshold_ms, takeover: true})
    assert {^monitor, settings} = :erlang.system_monitor()
    assert Enum.sort(settings) == Enum.sort([:busy_port, long_gc: 1000, long_schedule: 100])

    # messages as the VM sends them: each goes to whoever asked for it
    port = Port.open({:spawn, "cat"}, [:binary])
    short = {:monitor, test, :long_schedule, [timeout: 200, in: :undefined, out: :undefined]}
    long = {:monitor, test, :long_schedule, [timeout: 400, in: :undefined, out: :undefined]}
    long_gc = {:monitor, test, :long_gc, [timeout: 1500, heap_size: 10]}
    short_gc = {:monitor, test, :long_gc, [timeout: 500, heap_size: 10]}
    busy = {:monitor, test, :busy_port, port}
    busy_dist = {:monitor, test, :busy_dist_port, port}
    for m <- [short, long, long_gc, short_gc, busy, busy_dist], do: send(monitor, m)
    :sys.get_state(monitor)
    send(relay, :sync)

    assert_receive {:relayed, ^long}
    assert_receive {:relayed, ^long_gc}
    assert_receive {:relayed, ^busy}
    assert_receive {:relayed, :sync}
    # (the VM's own reports, of any process, may come too: not counted)
    for m <- [short, short_gc, busy_dist], do: refute_received({:relayed, ^m})

    # ours: both long schedules, over 100 ms
    assert_received {:event, @event, %{duration: d200}, %{pid: ^test}}
    assert_received {:event, @event, %{duration: d400}, %{pid: ^test}}
    assert {d200, d400} == {native_ms(200), native_ms(400)}
    refute_received {:event, _, _, %{pid: ^test}}
    Port.close(port)

    :ok = stop_supervised(Monitor)
    assert :erlang.system_monitor() == found
  end

  test "a displaced monitor says so, waits, and takes the monitor back when it is free" do
    monitor = start_supervised!({Monitor, long_schedule_ms: @threshold_ms})
    ours = :erlang.system_monitor()
    holder = spawn(fn -> Process.sleep(:infinity) end)

    log =
      capture_log(fn ->
        # as WellBehaved.Probe.measure/2 does: take it, give it back
        assert :erlang.system_monitor(holder, long_schedule: 300) == ours
        check(monitor)
        assert :erlang.system_monitor() == {holder, [long_schedule: 300]}
        :erlang.system_monitor(monitor, elem(ours, 1))
        check(monitor)
      end)

    assert log =~ "#{inspect(holder)} holds the system monitor"
    assert log =~ "reports long schedules again"
    assert :erlang.system_monitor() == ours

    # taken by a process that exits while it holds it (the VM clears it)
    log =
      capture_log(fn ->
        :erlang.system_monitor(holder, long_schedule: 300)
        check(monitor)
        Process.exit(holder, :kill)
        wait_until(fn -> :erlang.system_monitor() == ours end)
      end)

    assert log =~ "holds the system monitor"
    assert log =~ "took it back"

    # cleared outright
    log =
      capture_log(fn ->
        :erlang.system_monitor(:undefined)
        check(monitor)
      end)

    assert log =~ "was cleared"
    assert :erlang.system_monitor() == ours
  end

  test "WellBehaved.Probe.measure/2 borrows the monitor and gives it back" do
    # checks every millisecond: some fall while the probe holds it
    monitor = start_supervised!({Monitor, long_schedule_ms: @threshold_ms, check_ms: 1})
    ours = :erlang.system_monitor()

    report = Probe.measure(fn -> :ok end, workers: 1, calls: 10, control: false)
    assert report.completed
    check(monitor)
    assert :erlang.system_monitor() == ours
  end

  test "with takeover, a monitor taken from it is taken back and shared" do
    test = self()
    monitor = start_supervised!({Monitor, long_schedule_ms: @threshold_ms, takeover: true})
    relay = spawn(fn -> relay(test) end)
    :erlang.system_monitor(relay, long_schedule: 50)
    check(monitor)

    assert {^monitor, [long_schedule: 50]} = :erlang.system_monitor()
    shorter = {:monitor, test, :long_schedule, [timeout: 60, in: :undefined, out: :undefined]}
    send(monitor, shorter)
    assert_receive {:relayed, ^shorter}
    refute_received {:event, _, _, %{pid: ^test}}

    # its holder gone, only our own threshold is left
    Process.exit(relay, :kill)
    wait_until(fn -> :erlang.system_monitor() == {monitor, [long_schedule: @threshold_ms]} end)
  end

  test "options are checked" do
    start = "WellBehaved.Monitor.start_link/1"

    for {opts, message} <- [
          {[long_schedule_ms: 0],
           "#{start}: invalid :long_schedule_ms 0, expected an integer in 1..4294967295"},
          {[takeover: :yes], "#{start}: invalid :takeover :yes, expected true or false"},
          {[check_ms: 0], "#{start}: invalid :check_ms 0, expected an integer in 1..86400000"},
          {[log_interval_ms: -1],
           "#{start}: invalid :log_interval_ms -1, expected an integer in 0..86400000"},
          {[name: "m"], "#{start}: invalid :name \"m\", expected an atom or nil"},
          {[ms: 5], "#{start}: unknown option :ms, expected one of :long_schedule_ms"},
          {:bad, "#{start}: expected a keyword list of options, got: :bad"}
        ] do
      error = assert_raise ArgumentError, fn -> Monitor.start_link(opts) end
      assert String.starts_with?(error.message, message), error.message
    end

    assert :erlang.system_monitor() == :undefined

    assert %{id: Monitor, start: {Monitor, :start_link, [[long_schedule_ms: 5]]}} =
             Monitor.child_spec(long_schedule_ms: 5)
  end

  # ---- helpers ----------------------------------------------------------------------

  defp native_ms(ms), do: System.convert_time_unit(ms, :millisecond, :native)

  # the next report naming `pid`; the VM's reports can come long after the
  # turn on a busy machine: bounded only so that a missing one fails
  defp await_report(pid) do
    receive do
      {:event, @event, measurements, %{pid: ^pid} = metadata} -> {measurements, metadata}
    after
      60_000 -> flunk("no long_schedule event for #{inspect(pid)}")
    end
  end

  # every report up to and including the one naming `pid`
  defp reports_until(pid, seen \\ []) do
    receive do
      {:event, @event, measurements, metadata} ->
        seen = [{measurements, metadata} | seen]
        if metadata.pid == pid, do: Enum.reverse(seen), else: reports_until(pid, seen)
    after
      60_000 -> flunk("no long_schedule event for #{inspect(pid)}")
    end
  end

  defp run_to_end(fun) do
    {pid, ref} = spawn_monitor(fun)
    assert_receive {:DOWN, ^ref, :process, ^pid, :normal}, 120_000
    pid
  end

  # the periodic check, now; :sys.get_state/1 returns once it is done
  defp check(monitor) do
    send(monitor, :check)
    :sys.get_state(monitor)
  end

  defp wait_until(done?, tries \\ 500) do
    cond do
      done?.() -> :ok
      tries == 0 -> flunk("the condition never held")
      true -> wait_again(done?, tries)
    end
  end

  defp wait_again(done?, tries) do
    Process.sleep(10)
    wait_until(done?, tries - 1)
  end

  defp relay(test) do
    receive do
      message -> send(test, {:relayed, message})
    end

    relay(test)
  end
end
