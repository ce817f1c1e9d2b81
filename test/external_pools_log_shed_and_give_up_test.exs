defmodule WellBehaved.ExternalPoolsLogShedAndGiveUpTest do
  # A pool of external servers in production (issue 46): a server's own
  # output reaches Logger with the pool, server and OS pid as metadata;
  # exits are decoded (signal names) and counted; the wait queue sheds
  # past max_waiting; past its restart intensity the pool gives up for a
  # while, then starts again. Events go to a recording handler, so this
  # file turns events on for the whole VM: async: false.
  use ExUnit.Case, async: false

  alias WellBehaved.{External, Job}
  alias WellBehaved.External.{ExitStatus, Intensity, ServerLog, WaitStats}
  alias WellBehaved.Test.{RuntimeHelpers, SDKJobs}

  doctest ExitStatus
  doctest Intensity
  doctest WaitStats
  doctest ServerLog

  @server Path.expand("c_src/build/sdk/sdk_jobs_server")

  defmodule Recorder do
    @moduledoc false
    # the events' handler and a :logger handler, both sending to a test
    def event(event, measurements, metadata, pid),
      do: send(pid, {:event, event, measurements, metadata})

    def log(%{level: level, msg: msg, meta: meta}, %{config: %{pid: pid}}),
      do: send(pid, {:log, level, text(msg), meta})

    defp text({:string, chardata}), do: IO.chardata_to_string(chardata)
    defp text({:report, report}), do: inspect(report)
    defp text({format, args}), do: IO.chardata_to_string(:io_lib.format(format, args))
  end

  defmodule Reentrant do
    @moduledoc false
    # a handler that makes a call of its own on a timeout event
    def event([:well_behaved, :external, :timeout] = event, measurements, metadata, pid) do
      nested =
        WellBehaved.Job.call(
          &SDKJobs.fold/4,
          [4],
          [schedule: :external, pool: metadata.pool],
          "test"
        )

      send(pid, {:nested, nested})
      send(pid, {:event, event, measurements, metadata})
    end

    def event(event, measurements, metadata, pid),
      do: send(pid, {:event, event, measurements, metadata})
  end

  setup_all do
    SDKJobs.ensure_loaded!()
  end

  setup context do
    WellBehaved.Telemetry.set({:handler, Recorder, :event, self()}, true)
    handler = :"pool_log_#{System.unique_integer([:positive])}"
    :ok = :logger.add_handler(handler, Recorder, %{config: %{pid: self()}})

    on_exit(fn ->
      :logger.remove_handler(handler)
      WellBehaved.Telemetry.refresh()
    end)

    # a pool name of the test's own
    {:ok, pool: Module.concat(__MODULE__, "Pool#{context.line}")}
  end

  defp start_pool(pool, opts) do
    start_supervised!({External, [name: pool, executable: @server, servers: 1] ++ opts})
    assert call(pool, &SDKJobs.fold/4, [1]) == reference(1)
    pool
  end

  defp call(pool, f, args, opts \\ []),
    do: Job.call(f, args, [schedule: :external, pool: pool] ++ opts, "test")

  defp reference(n), do: Job.call(&SDKJobs.fold/4, [n], [schedule: :normal], "test")

  # the log lines received so far about `pool`, as {level, text, meta}
  defp logs(pool, acc \\ []) do
    receive do
      {:log, level, text, %{pool: ^pool} = meta} -> logs(pool, [{level, text, meta} | acc])
    after
      0 -> Enum.reverse(acc)
    end
  end

  describe "a server's output" do
    @tag :capture_log
    @tag :tmp_dir
    test "reaches Logger a line at a time, with pool, server and OS pid", context do
      %{pool: pool, tmp_dir: dir} = context
      # one line on stderr, then the real server in the same process
      wrapper =
        script(dir, "wrapped_server", """
        #!/bin/sh
        echo "wrapper: hello from stderr" >&2
        printf '%5000s\n' '' | tr ' ' x
        exec '#{@server}' "$@"
        """)

      start_supervised!({External, name: pool, executable: wrapper, servers: 1})
      assert call(pool, &SDKJobs.fold/4, [7]) == reference(7)
      os_pid = RuntimeHelpers.up_os_pid(pool)

      assert_receive {:log, :warning, text, %{pool: ^pool, server: 0, os_pid: ^os_pid}}, 10_000
      assert text =~ "wrapper: hello from stderr"

      # the manager logged every line before it saw "ready"
      lines = logs(pool)

      # a line longer than 4096 bytes comes in two pieces, each logged
      pieces =
        for {:warning, text, %{os_pid: ^os_pid}} <- lines,
            [_, xs] <- [Regex.run(~r/: (x+)$/, text)],
            do: byte_size(xs)

      assert pieces == [4096, 904]
      # after the first line, the two pieces and nothing else: "ready" is
      # the pool's, not the log's
      assert length(lines) == 2
    end

    @tag :capture_log
    @tag :tmp_dir
    test "a partial line just before \"ready\" is logged, and the server starts", context do
      %{pool: pool, tmp_dir: dir} = context

      wrapper =
        script(dir, "partial_server", """
        #!/bin/sh
        printf 'no newline here' >&2
        exec '#{@server}' "$@"
        """)

      start_supervised!({External, name: pool, executable: wrapper, servers: 1})
      assert call(pool, &SDKJobs.fold/4, [7]) == reference(7)
      os_pid = RuntimeHelpers.up_os_pid(pool)
      assert [{:warning, text, %{os_pid: ^os_pid}}] = logs(pool)
      assert text =~ ~r/: no newline here$/
    end

    @tag :capture_log
    test "a window logs 100 lines a second, then says how many it dropped" do
      window =
        Enum.reduce(1..150, ServerLog.new(0), fn i, window ->
          ServerLog.line(window, :rate_pool, 3, 42, "line #{i}", 999)
        end)

      assert %{lines: 100, dropped: 50} = window
      assert window == ServerLog.flush(window, :rate_pool, 3, 42, false, 999)
      assert %{lines: 0, dropped: 0} = ServerLog.flush(window, :rate_pool, 3, 42, false, 1_000)

      # an exit reports the dropped lines at once, but the window goes on
      # (the restarted server keeps it): no fresh lines within the second
      exited = ServerLog.flush(window, :rate_pool, 3, 42, true, 999)
      assert %{since: 0, lines: 100, dropped: 0} = exited
      assert %{lines: 100, dropped: 1} = ServerLog.line(exited, :rate_pool, 3, 43, "again", 999)

      # 100 lines, and the 50 dropped reported by each of the two flushes
      texts = for {:log, :warning, text, %{pool: :rate_pool}} <- flush_mailbox([]), do: text
      assert length(texts) == 102
      assert List.last(texts) =~ ~r/server 3 \(OS pid 42\): 50 lines dropped/
      assert hd(texts) =~ ~r/server 3 \(OS pid 42\): line 1$/
    end
  end

  defp flush_mailbox(acc) do
    receive do
      message -> flush_mailbox([message | acc])
    after
      0 -> Enum.reverse(acc)
    end
  end

  describe "exits" do
    @tag :capture_log
    test "a crash reads as SIGSEGV, status 139, in the event, the log and info", %{pool: pool} do
      start_pool(pool, [])
      os_pid = RuntimeHelpers.up_os_pid(pool)
      assert call(pool, &SDKJobs.crash/4, [13]) == {:error, :closed}

      assert_receive {:event, [:well_behaved, :external, :server, :exit], %{uptime: uptime},
                      %{pool: ^pool, server: 0, os_pid: ^os_pid} = meta},
                     10_000

      assert is_integer(uptime) and uptime > 0
      assert %{status: 139, signal: :SIGSEGV, cause: :crashed} = meta
      assert is_integer(meta.restart_in)

      assert Enum.any?(logs(pool), fn {level, text, meta} ->
               level == :warning and text =~ "killed by SIGSEGV (status 139)" and
                 meta.os_pid == os_pid and meta.server == 0
             end)

      # a new server, announced; the counts
      new_os_pid =
        RuntimeHelpers.eventually(fn ->
          pid = RuntimeHelpers.up_os_pid(pool)
          pid != os_pid and pid
        end)

      assert_receive {:event, [:well_behaved, :external, :server, :start], %{startup_time: t},
                      %{pool: ^pool, server: 0, os_pid: ^new_os_pid}},
                     10_000

      assert is_integer(t)

      assert %{exits: %{139 => 1}, crashes: %{SIGSEGV: 1}, restarts: 1, status: :running} =
               External.info(pool)
    end

    @tag :capture_log
    test "a server the pool kills reads as SIGKILL, caused by the pool", %{pool: pool} do
      start_pool(pool, cancel_timeout_ms: 200)
      os_pid = RuntimeHelpers.up_os_pid(pool)
      # a step that never returns: the cancel is never acknowledged
      assert call(pool, &SDKJobs.stuck/4, [100], timeout: 100) == {:error, :timeout}

      assert_receive {:event, [:well_behaved, :external, :timeout], %{count: 1},
                      %{pool: ^pool, server: 0, slot: slot}}

      assert_receive {:event, [:well_behaved, :external, :server, :exit], _,
                      %{pool: ^pool, os_pid: ^os_pid} = meta},
                     10_000

      assert %{status: 137, signal: :SIGKILL, cause: :killed_by_pool, restart_in: 0} = meta

      assert_receive {:event, [:well_behaved, :external, :cancel], %{count: 1, duration: d},
                      %{pool: ^pool, server: 0, slot: ^slot, outcome: :killed}},
                     10_000

      assert d >= 0
      RuntimeHelpers.eventually(fn -> RuntimeHelpers.up_os_pid(pool) != os_pid end)
      # not a crash: the pool did it
      assert %{exits: %{137 => 1}, crashes: crashes, timeouts: 1, cancels: 1} =
               External.info(pool)

      assert crashes == %{}
    end
  end

  describe "OSProcess.kill_all/1" do
    test "kills every pid given, skipping what is not a pid" do
      ports =
        for _ <- 1..2 do
          Port.open({:spawn_executable, System.find_executable("sleep")}, [
            :exit_status,
            args: ["60"]
          ])
        end

      pids = for port <- ports, do: elem(Port.info(port, :os_pid), 1)
      assert WellBehaved.OSProcess.kill_all([nil, 0 | pids]) == :ok
      assert WellBehaved.OSProcess.kill_all([]) == :ok
      for port <- ports, do: assert_receive({^port, {:exit_status, 137}}, 30_000)
    end
  end

  describe "max_waiting" do
    test "a full queue answers :overloaded at once; the waiters still finish", %{pool: pool} do
      start_pool(pool, connections: 1, max_waiting: 2)
      assert %{max_waiting: 2, sheds: 0, queue: 0} = External.info(pool)

      # the one connection held by a job whose steps return but never end
      holder = spawn(fn -> call(pool, &SDKJobs.liar/4, [0]) end)
      RuntimeHelpers.eventually(fn -> External.info(pool).busy != [] end)

      waiters = for n <- [10, 20], do: Task.async(fn -> call(pool, &SDKJobs.fold/4, [n]) end)
      RuntimeHelpers.eventually(fn -> External.info(pool).waiting == 2 end)

      assert call(pool, &SDKJobs.fold/4, [30]) == {:error, :overloaded}
      assert %{sheds: 1, queue: 2, waiting: 2} = External.info(pool)

      assert_receive {:event, [:well_behaved, :external, :overload], %{count: 1, waiting: 2},
                      %{pool: ^pool, max_waiting: 2}}

      refute_received {:event, [:well_behaved, :external, :overload], _, _}

      # the holder dies, its job is cancelled, the waiters get the connection
      Process.exit(holder, :kill)
      assert Task.await_many(waiters, 60_000) == [reference(10), reference(20)]

      # checkouts: the first call's and the holder's found the connection
      # idle (bucket 0), the waiters' went through the manager (a bucket
      # above 0); the shed one waited for nothing
      assert %{wait: %{count: 4, p50: 0, p99: p99}} = External.info(pool)
      assert p99 > 0
    end

    test "a waiter is served when a slot goes idle behind the manager's back", %{pool: pool} do
      start_pool(pool, connections: 1)
      [{:meta, _, atomics, 1, _, _, _}] = :ets.lookup(pool, :meta)
      # the one connection held as a caller holds it (the owner alive, so
      # the tick does not reclaim it)
      token = System.unique_integer([:positive])
      assert :atomics.compare_exchange(atomics, 1, 0, token) == :ok
      :ets.insert(pool, {{:owner, 1}, token, self()})

      waiter = Task.async(fn -> call(pool, &SDKJobs.fold/4, [3]) end)
      RuntimeHelpers.eventually(fn -> External.info(pool).queue == 1 end)

      # the slot idle again with no word to the manager: what a release
      # racing the waiter's checkout leaves; the manager's tick finds it
      # (the waiter's own timeout is the pool's 60 s)
      assert :atomics.compare_exchange(atomics, 1, token, 0) == :ok
      assert Task.await(waiter, 30_000) == reference(3)
    end

    test "an error that says what happened" do
      for reason <- [:overloaded, :unavailable] do
        message = Exception.message(External.Error.exception(reason: reason))
        refute message =~ inspect(reason), message
      end
    end

    test "bad options raise, naming the function, the option and what it takes" do
      for {opts, message} <- [
            {[max_waiting: -1],
             "invalid :max_waiting -1, expected an integer in 0..4294967295 or :infinity"},
            {[max_waiting: :lots],
             "invalid :max_waiting :lots, expected an integer in 0..4294967295 or :infinity"},
            {[max_restarts: -1],
             "invalid :max_restarts -1, expected an integer in 0..4294967295"},
            {[max_seconds: 0], "invalid :max_seconds 0, expected an integer in 1..4294967295"},
            {[retry_ms: 0], "invalid :retry_ms 0, expected an integer in 1..4294967295"}
          ] do
        assert_raise ArgumentError, "WellBehaved.External.start/1: " <> message, fn ->
          External.start([name: __MODULE__.Bad] ++ opts)
        end
      end
    end
  end

  describe "restart intensity" do
    # three crashes, each {:error, :closed}: the third is past max_restarts 2
    defp crash_three_times(pool) do
      for _ <- 1..3, do: assert(call(pool, &SDKJobs.crash/4, [13]) == {:error, :closed})

      assert_receive {:event, [:well_behaved, :external, :unavailable], %{count: 1, crashes: 3},
                      %{pool: ^pool, max_restarts: 2, max_seconds: 60} = meta},
                     10_000

      # the starts of the servers that crashed: before the pool gave up
      drain_starts(pool)
      meta
    end

    defp drain_starts(pool) do
      receive do
        {:event, [:well_behaved, :external, :server, :start], _, %{pool: ^pool}} ->
          drain_starts(pool)
      after
        0 -> :ok
      end
    end

    @tag :capture_log
    test "past it the pool is unavailable and starts no server", %{pool: pool} do
      start_pool(pool, max_restarts: 2, max_seconds: 60, retry_ms: 600_000)
      assert %{retry_in: 600_000} = crash_three_times(pool)

      assert [%{level: :error}] =
               for(
                 {:error, text, meta} <- logs(pool),
                 do: %{level: :error, text: text, meta: meta}
               )

      info = External.info(pool)
      assert %{status: :unavailable, retry_in: 600_000, crashes: %{SIGSEGV: 3}} = info
      assert [%{status: :down, os_pid: last}] = info.servers
      assert call(pool, &SDKJobs.fold/4, [5]) == {:error, :unavailable}

      # still nothing started: the same stopped server, no start event
      assert [%{status: :down, os_pid: ^last}] = External.info(pool).servers
      refute_received {:event, [:well_behaved, :external, :server, :start], _, %{pool: ^pool}}
      refute_received {:event, [:well_behaved, :external, :available], _, _}
    end

    @tag :capture_log
    test "callers waiting when the pool gives up are answered at once", %{pool: pool} do
      start_pool(pool, connections: 1, max_restarts: 0, retry_ms: 600_000)
      os_pid = RuntimeHelpers.up_os_pid(pool)
      holder = Task.async(fn -> call(pool, &SDKJobs.liar/4, [0]) end)
      # the server runs the job: its request was read, the kill closes it
      RuntimeHelpers.eventually(fn ->
        match?([{0, {:ok, %{live_jobs: 1}}}], External.server_stats(pool))
      end)

      waiter = Task.async(fn -> call(pool, &SDKJobs.fold/4, [3]) end)
      RuntimeHelpers.eventually(fn -> External.info(pool).waiting == 1 end)

      # an exit the pool did not cause: with max_restarts 0, past it
      WellBehaved.OSProcess.kill(os_pid)
      assert Task.await(holder, 30_000) == {:error, :closed}
      assert Task.await(waiter, 30_000) == {:error, :unavailable}
      assert %{status: :unavailable, waiting: 0, queue: 0} = External.info(pool)

      assert_receive {:event, [:well_behaved, :external, :server, :exit], _,
                      %{pool: ^pool, signal: :SIGKILL, cause: :crashed, restart_in: nil}},
                     10_000
    end

    @tag :capture_log
    @tag :tmp_dir
    test "a server that keeps failing before it is ready makes it unavailable", context do
      %{pool: pool, tmp_dir: dir} = context
      # the first start runs the real server; every later one exits at once
      marker = Path.join(dir, "started")

      wrapper =
        script(dir, "failing_server", """
        #!/bin/sh
        if [ -e '#{marker}' ]; then exit 3; fi
        touch '#{marker}'
        exec '#{@server}' "$@"
        """)

      # a window of 1 s: the old pauses (100 ms doubling to 5 s) never put
      # 6 failures in one; 6 failed starts in a row give up whatever
      # their timing
      opts = [max_restarts: 5, max_seconds: 1, retry_ms: 600_000]
      start_supervised!({External, [name: pool, executable: wrapper, servers: 1] ++ opts})
      assert call(pool, &SDKJobs.fold/4, [2]) == reference(2)
      WellBehaved.OSProcess.kill(RuntimeHelpers.up_os_pid(pool))

      assert_receive {:event, [:well_behaved, :external, :unavailable], %{count: 1},
                      %{pool: ^pool, max_restarts: 5, max_seconds: 1, retry_in: 600_000}},
                     30_000

      info = External.info(pool)
      assert %{status: :unavailable, exits: %{137 => 1, 3 => failed}} = info
      # at most max_restarts + 1 failed starts
      assert failed in 1..6
      assert call(pool, &SDKJobs.fold/4, [2]) == {:error, :unavailable}
    end

    @tag :capture_log
    test "after retry_ms its servers start again and it is available", %{pool: pool} do
      start_pool(pool, max_restarts: 2, max_seconds: 60, retry_ms: 100)
      for _ <- 1..3, do: assert(call(pool, &SDKJobs.crash/4, [13]) == {:error, :closed})

      # the servers that crashed, from their exit events (sent before the
      # pool gave up); the retry may have started the next one already
      exited =
        for _ <- 1..3 do
          assert_receive {:event, [:well_behaved, :external, :server, :exit], _,
                          %{pool: ^pool, os_pid: os_pid}},
                         30_000

          os_pid
        end

      assert_receive {:event, [:well_behaved, :external, :available], %{count: 1},
                      %{pool: ^pool, max_restarts: 2, max_seconds: 60}},
                     30_000

      os_pid = start_not_of(pool, exited)
      assert [%{status: :up, os_pid: ^os_pid}] = External.info(pool).servers
      assert call(pool, &SDKJobs.fold/4, [5]) == reference(5)
      assert %{status: :running, retry_in: nil, restarts: 3} = External.info(pool)
    end
  end

  # the OS pid of the first server start event of `pool` for none of `os_pids`
  defp start_not_of(pool, os_pids) do
    receive do
      {:event, [:well_behaved, :external, :server, :start], _, %{pool: ^pool, os_pid: os_pid}} ->
        if os_pid in os_pids, do: start_not_of(pool, os_pids), else: os_pid
    after
      30_000 -> flunk("no server start for a new server")
    end
  end

  describe "a call" do
    test "survives an event handler that makes a call of its own", %{pool: pool} do
      start_pool(pool, connections: 2, cancel_timeout_ms: 60_000)
      WellBehaved.Telemetry.set({:handler, Reentrant, :event, self()}, true)
      # the outer call times out; its timeout event's handler calls again
      assert call(pool, &SDKJobs.liar/4, [0], timeout: 100) == {:error, :timeout}
      assert_received {:nested, nested}
      assert nested == reference(4)

      assert_received {:event, [:well_behaved, :external, :call, :stop], %{queue_time: 0},
                       %{pool: ^pool, request: :liar, result: :error, error: :timeout}}
    end

    test "is a span naming the pool, the request, the server and the result", %{pool: pool} do
      start_pool(pool, [])

      assert_receive {:event, [:well_behaved, :external, :call, :start], %{monotonic_time: _},
                      %{pool: ^pool, request: :fold, telemetry_span_context: ref}}

      assert_receive {:event, [:well_behaved, :external, :call, :stop],
                      %{duration: d, queue_time: 0},
                      %{
                        pool: ^pool,
                        request: :fold,
                        server: 0,
                        result: :ok,
                        telemetry_span_context: ^ref
                      }}

      assert d > 0
    end
  end

  # an executable shell script `name` in `dir` (a server program's wrapper)
  defp script(dir, name, body) do
    path = Path.join(dir, name)
    File.write!(path, body)
    File.chmod!(path, 0o755)
    path
  end
end
