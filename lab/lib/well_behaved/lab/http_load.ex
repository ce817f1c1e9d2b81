defmodule WellBehaved.Lab.HttpLoad do
  @moduledoc """
  The lab's HTTP-under-load suite: how well a VM keeps serving HTTP while
  its CPUs are busy with native work in each scheduling mode.

  This is the "HTTP server's req/s under NIF load" experiment of the 2017
  "Well-Behaved NIFs" talk, redone with fixed work (`WellBehaved.Lab.Spin.run/2`)
  instead of a busy-wait to a deadline.

  ## Method

  One case per scheduling mode, plus `:idle` (no background work) as the
  baseline. Every case runs in a fresh VM of its own
  (`WellBehaved.Testing.ChildVM`, SIGKILLed at a bound), which:

    1. starts OTP's `:inets` httpd on `127.0.0.1`, an ephemeral port, with
       one callback module (`WellBehaved.Lab.HttpLoad.Handler`) that answers
       every request with the same small body, and `nodelay` sockets
       (without it every response waits ~40 ms for a delayed ACK);
    2. makes two requests to itself, so that httpd's modules are loaded
       before the load starts (loading them under load takes seconds);
    3. writes the port to `ChildVM.ready_file/1` (before the workers start:
       a VM hogged by `:normal` workers may not write a file for seconds);
    4. starts 2 background workers per online scheduler, each looping
       `Spin.run(n, schedule: mode)`, with `n` sized to about 10 ms of work
       (ns/iteration is calibrated once in the parent with `:normal` runs);
    5. after a short warm-up, counts the Spin calls completed and samples
       the schedulers' wall time until the parent writes a `stop` file into
       its folder (or a fixed window passes), and returns those figures.

  The parent waits for the ready file and the same warm-up, then runs `wrk`
  on loopback (bounded by `timeout --signal=KILL` as well as by `-d`),
  parses requests/s, the latency percentiles of `--latency` and the error
  counts, writes the `stop` file and collects the child's result. A child
  still running 3 s after that (its workers hog the schedulers) is
  killed; its own figures are then lost, wrk's remain. `wrk` runs on the
  same cores as the VM, in every case alike, the idle one included.

  A VM whose schedulers are hogged by long `:normal` NIFs may answer no
  request at all: that is a result (0 req/s), never a hang. Latency
  percentiles are wrk's, over the requests that completed within wrk's
  `--timeout`; slower ones are counted as timeouts. wrk checks for
  timeouts only every 2 s, so requests still unanswered when the run ends
  are counted nowhere.

  `wrk` comes from the Debian package `wrk`; `run/1` raises if it is
  missing.
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.Runtime
  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.{Markdown, Spin, Stats}
  import Markdown, only: [table: 2, fmt: 2]

  @work_ms 10
  @workers_per_scheduler 2
  @wrk_threads 2
  @wrk_connections 32
  @wrk_timeout_s 2
  @quick_duration_s 3
  @full_duration_s 10
  @warmup_ms 300
  @ready_limit_ms 20_000
  @stop_grace_ms 3_000
  @percentiles ["p50", "p75", "p90", "p99"]
  @body "hello, world\n"
  # a mark on the child's command line, so that tests can look for leftovers
  @child_mark "-wb_http_load_child"

  @typedoc "A result map as returned by `run/1`."
  @type result :: %{atom() => term()}

  @doc """
  Runs every case and returns the result map.

  Options:

    * `quick:` - `true` (default): wrk runs #{@quick_duration_s} s per case;
      `false`: #{@full_duration_s} s.
    * `rounds_scale:` - multiplies wrk's duration (default `1.0`; rounded to
      whole seconds, at least 1 s).
    * `progress:` - a one-argument function called with a line of text per
      case. Default: none.

  Raises if `wrk` is not installed.
  """
  @impl WellBehaved.Lab.Suite
  @spec run(keyword()) :: result()
  def run(opts \\ []) do
    {quick, scale, progress} = WellBehaved.Lab.Suite.options!(opts)

    wrk = find_wrk!()
    timeout = System.find_executable("timeout") || raise "coreutils `timeout` is required"

    started = System.monotonic_time(:millisecond)
    base_s = if quick, do: @quick_duration_s, else: @full_duration_s
    duration_s = max(1, round(base_s * scale))

    {ns_per_iteration, iterations} = calibrate()

    progress.(
      "http under load: Spin #{iterations} iterations per call " <>
        "(#{fmt(ns_per_iteration, 2)} ns/iteration, ~#{@work_ms} ms), " <>
        "wrk #{duration_s} s per case ..."
    )

    plan = %{
      iterations: iterations,
      duration_s: duration_s,
      wrk: wrk,
      timeout: timeout
    }

    cases =
      for name <- case_names() do
        entry = run_case(name, plan)
        progress.(progress_line(entry))
        entry
      end

    cases = add_ratios(cases)

    %{
      suite: "http_load",
      config: %{
        quick: quick,
        rounds_scale: scale * 1.0,
        duration_s: duration_s,
        wrk_threads: @wrk_threads,
        wrk_connections: @wrk_connections,
        wrk_timeout_s: @wrk_timeout_s,
        wrk_command: wrk_command("PORT", duration_s),
        workers_per_scheduler: @workers_per_scheduler,
        work_ms: @work_ms,
        iterations: iterations,
        ns_per_iteration: ns_per_iteration,
        body_bytes: byte_size(@body),
        warmup_ms: @warmup_ms
      },
      cases: cases,
      elapsed_s: (System.monotonic_time(:millisecond) - started) / 1000
    }
  end

  # idle first, as the baseline; :normal first of the modes, :auto last
  defp case_names do
    modes = Runtime.modes()
    [:idle, :normal | modes -- [:normal, :auto]] ++ [:auto]
  end

  defp find_wrk! do
    System.find_executable("wrk") ||
      raise "the HTTP-under-load suite needs `wrk`, from the Debian package `wrk` " <>
              "(apt-get install -y wrk)"
  end

  # Median ns/iteration of a few :normal runs of ~2.5 ms, and the iteration
  # count that makes about @work_ms of work.
  defp calibrate do
    probe = 1_000_000
    ns = Stats.median_ns(fn -> Spin.run(probe, schedule: :normal) end, 7) / probe
    {ns, max(1, round(@work_ms * 1.0e6 / ns))}
  end

  # ---- one case, parent side --------------------------------------------------

  defp run_case(name, plan) do
    # the child's own window is a fallback: the parent ends it with a file
    window_ms = (plan.duration_s + @wrk_timeout_s + 5) * 1000
    bound_ms = @ready_limit_ms + @warmup_ms + window_ms + @stop_grace_ms

    handle =
      ChildVM.start({__MODULE__, :child, [name, plan.iterations, window_ms]},
        bound_ms: bound_ms,
        erl_flags: [@child_mark]
      )

    {wrk, ready} =
      case ChildVM.await_ready(handle, @ready_limit_ms) do
        :ready ->
          port = read_port(handle)
          Process.sleep(@warmup_ms)
          {run_wrk(plan, port), "ready"}

        other ->
          {empty_wrk(), Atom.to_string(other)}
      end

    # ends the child's window; a child hogged by its workers may not notice
    # for long, so after a grace period its VM is killed
    _ = File.write(Path.join(handle.dir, "stop"), "")
    killed = stop_child(handle, @stop_grace_ms)
    child = child_entry(ChildVM.await(handle), killed)

    Map.merge(wrk, %{
      case: Atom.to_string(name),
      mode: if(name == :idle, do: nil, else: name),
      server: ready,
      child: child
    })
  end

  # true if the child had to be killed
  defp stop_child(handle, grace_ms) do
    deadline = System.monotonic_time(:millisecond) + grace_ms
    wait_exit(handle.port, deadline)
  end

  defp wait_exit(port, deadline) do
    cond do
      Port.info(port) == nil ->
        false

      System.monotonic_time(:millisecond) >= deadline ->
        kill_child_vm(port)

      true ->
        Process.sleep(20)
        wait_exit(port, deadline)
    end
  end

  # Kills the child's VM: the beam process(es) whose parent is the port's
  # `timeout` process, by positive pid only. `timeout` then exits (137) and
  # ChildVM sees the end of the child as usual.
  #
  # Never `kill -KILL -PGID`: procps-ng's kill (Debian 12) misparses a
  # negative pid after a signal option and may send the signal to pid -1,
  # that is to every process the user may signal.
  defp kill_child_vm(port) do
    with {:os_pid, timeout_pid} when is_integer(timeout_pid) and timeout_pid > 1 <-
           Port.info(port, :os_pid),
         {out, _} <- System.cmd("pgrep", ["-P", Integer.to_string(timeout_pid)]),
         pids when pids != [] <- positive_pids(out) do
      System.cmd("kill", ["-s", "KILL", "--" | pids], stderr_to_stdout: true)
      true
    else
      _ -> false
    end
  end

  defp positive_pids(text) do
    for line <- String.split(text, "\n", trim: true),
        {pid, ""} <- [Integer.parse(String.trim(line))],
        pid > 1,
        do: Integer.to_string(pid)
  end

  defp read_port(handle) do
    handle |> ChildVM.ready_file() |> File.read!() |> String.trim() |> String.to_integer()
  end

  defp wrk_args(port, duration_s) do
    [
      "-t#{@wrk_threads}",
      "-c#{@wrk_connections}",
      "-d#{duration_s}s",
      "--latency",
      "--timeout",
      "#{@wrk_timeout_s}s",
      "http://127.0.0.1:#{port}/"
    ]
  end

  defp wrk_command(port, duration_s), do: Enum.join(["wrk" | wrk_args(port, duration_s)], " ")

  defp run_wrk(plan, port) do
    bound_s = Integer.to_string(plan.duration_s + @wrk_timeout_s + 5)
    args = ["--signal=KILL", bound_s, plan.wrk | wrk_args(port, plan.duration_s)]
    {output, status} = System.cmd(plan.timeout, args, stderr_to_stdout: true)
    parsed = parse_wrk(output)
    Map.merge(parsed, %{wrk_exit_status: status, wrk_output: String.slice(output, 0, 4000)})
  end

  defp empty_wrk do
    %{
      req_s: 0.0,
      requests: 0,
      latency_ms: Map.new(@percentiles, &{String.to_atom(&1), nil}),
      errors: %{connect: 0, read: 0, write: 0, timeout: 0, non_2xx: 0},
      errors_total: 0,
      wrk_exit_status: nil,
      wrk_output: ""
    }
  end

  @doc """
  Parses the output of `wrk --latency`: requests/s, completed requests,
  latency percentiles in ms (`nil` when wrk printed none) and error counts.

      iex> out = \"""
      ...>   Latency Distribution
      ...>      50%  250.00us
      ...>      75%    1.50ms
      ...>      90%    2.00ms
      ...>      99%    1.20s
      ...>   120 requests in 1.00s, 10.00KB read
      ...>   Socket errors: connect 0, read 1, write 0, timeout 3
      ...> Requests/sec:    119.50
      ...> \"""
      iex> r = WellBehaved.Lab.HttpLoad.parse_wrk(out)
      iex> {r.req_s, r.requests, r.latency_ms.p50, r.latency_ms.p99, r.errors_total}
      {119.5, 120, 0.25, 1200.0, 4}
  """
  @spec parse_wrk(String.t()) :: map()
  def parse_wrk(output) do
    latency =
      Map.new(@percentiles, fn "p" <> pct = key ->
        value =
          case Regex.run(~r/^\s*#{pct}(?:\.0+)?%\s+([\d.]+)(us|ms|s|m)\s*$/m, output) do
            [_, number, unit] -> to_float(number) * unit_ms(unit)
            nil -> nil
          end

        {String.to_atom(key), value}
      end)

    errors =
      case Regex.run(
             ~r/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/,
             output
           ) do
        [_, c, r, w, t] -> %{connect: int(c), read: int(r), write: int(w), timeout: int(t)}
        nil -> %{connect: 0, read: 0, write: 0, timeout: 0}
      end

    non_2xx =
      case Regex.run(~r/Non-2xx or 3xx responses: (\d+)/, output) do
        [_, n] -> int(n)
        nil -> 0
      end

    errors = Map.put(errors, :non_2xx, non_2xx)
    requests = capture_int(~r/(\d+) requests in /, output) || 0
    # with no request completed, wrk prints zeros
    latency = if requests > 0, do: latency, else: Map.new(latency, fn {k, _} -> {k, nil} end)

    %{
      req_s: capture_float(~r/Requests\/sec:\s+([\d.]+)/, output) || 0.0,
      requests: requests,
      latency_ms: latency,
      errors: errors,
      errors_total: errors |> Map.values() |> Enum.sum()
    }
  end

  defp unit_ms("us"), do: 1.0e-3
  defp unit_ms("ms"), do: 1.0
  defp unit_ms("s"), do: 1.0e3
  defp unit_ms("m"), do: 6.0e4

  defp capture_float(re, text) do
    case Regex.run(re, text) do
      [_, x] -> to_float(x)
      nil -> nil
    end
  end

  defp capture_int(re, text) do
    case Regex.run(re, text) do
      [_, x] -> int(x)
      nil -> nil
    end
  end

  defp to_float(text) do
    {x, _} = Float.parse(text)
    x
  end

  defp int(text), do: String.to_integer(text)

  defp child_entry({:ok, measurements}, _killed), do: Map.put(measurements, :status, "ok")

  defp child_entry({:timeout, _ms}, true),
    do: %{status: "hogged: killed #{div(@stop_grace_ms, 1000)} s after the load"}

  defp child_entry({:timeout, ms}, false), do: %{status: "killed at its #{ms} ms bound"}

  defp child_entry({:crashed, status, output}, _killed),
    do: %{status: "crashed (exit status #{status})", output: output}

  defp add_ratios(cases) do
    idle = Enum.find(cases, &(&1.case == "idle"))

    for c <- cases do
      Map.merge(c, %{
        ratio_to_idle: ratio(c.req_s, idle.req_s),
        p99_to_idle: ratio(c.latency_ms.p99, idle.latency_ms.p99)
      })
    end
  end

  defp ratio(x, base) when is_number(x) and is_number(base) and base > 0, do: x / base
  defp ratio(_, _), do: nil

  defp progress_line(c) do
    "http under load, #{c.case}: #{fmt(c.req_s, 0)} req/s, " <>
      "p50 #{fmt_ms(c.latency_ms.p50)}, p99 #{fmt_ms(c.latency_ms.p99)}, " <>
      "#{c.errors_total} errors (#{c.errors.timeout} timeouts), " <>
      "child #{c.child.status}" <>
      if(is_integer(c.child[:spin_calls]), do: ", #{c.child.spin_calls} Spin calls", else: "")
  end

  # ---- one case, child side ---------------------------------------------------

  @doc false
  # Runs in the child VM: httpd, background workers, the window, the
  # measurements.
  @spec child(atom(), pos_integer(), pos_integer()) :: map()
  def child(name, iterations, window_ms) do
    :ok = WellBehaved.Lab.Suite.settle_calibration()
    dir = System.fetch_env!("WB_CHILD_DIR")
    {:ok, _} = Application.ensure_all_started(:inets)
    root = String.to_charlist(dir)

    {:ok, httpd} =
      otp(:inets, :start, [
        :httpd,
        [
          port: 0,
          bind_address: {127, 0, 0, 1},
          ipfamily: :inet,
          server_name: ~c"wb_http_load",
          server_root: root,
          document_root: root,
          modules: [__MODULE__.Handler],
          # without it the header and the body go out as two segments and
          # the second waits for the client's delayed ACK: ~40 ms a request
          socket_type: {:ip_comm, [nodelay: true]}
        ]
      ])

    [port: port] = otp(:httpd, :info, [httpd, [:port]])
    :erlang.system_flag(:scheduler_wall_time, true)
    # the first request loads httpd's request path (dozens of modules);
    # under load that alone takes seconds, and it is not what is measured
    :ok = warm_up(port)

    # Ready before the workers start: a VM hogged by :normal workers may
    # not get round to writing a file for seconds. The parent waits the
    # same warm-up before it starts wrk.
    ready = ChildVM.ready_file(dir)
    File.write!(ready <> ".tmp", Integer.to_string(port))
    File.rename!(ready <> ".tmp", ready)

    # this process only keeps time and counts; it must not wait for turns
    # behind the workers more than it has to
    Process.flag(:priority, :high)
    schedulers = :erlang.system_info(:schedulers_online)
    workers = if name == :idle, do: 0, else: @workers_per_scheduler * schedulers
    counter = :counters.new(1, [:write_concurrency])
    parent = self()

    pids = for _ <- 1..workers//1, do: spawn(fn -> work(name, iterations, counter, parent) end)

    Process.sleep(@warmup_ms)

    calls0 = :counters.get(counter, 1)
    wall0 = :erlang.statistics(:scheduler_wall_time_all)
    t0 = System.monotonic_time(:millisecond)
    stopped_by = wait_stop(Path.join(dir, "stop"), t0 + window_ms)

    calls = :counters.get(counter, 1) - calls0
    wall1 = :erlang.statistics(:scheduler_wall_time_all)
    elapsed_ms = System.monotonic_time(:millisecond) - t0
    Enum.each(pids, &Process.exit(&1, :kill))
    worker_errors = worker_errors([])
    :ok = otp(:inets, :stop, [:httpd, httpd])
    dirty_cpu = :erlang.system_info(:dirty_cpu_schedulers_online)

    ids =
      WellBehaved.Probe.scheduler_ids(
        :erlang.system_info(:schedulers),
        schedulers,
        :erlang.system_info(:dirty_cpu_schedulers),
        dirty_cpu
      )

    %{
      port: port,
      workers: workers,
      schedulers_online: schedulers,
      dirty_cpu_schedulers_online: dirty_cpu,
      window_ms: elapsed_ms,
      stopped_by: stopped_by,
      worker_errors: length(worker_errors),
      worker_error: List.first(worker_errors),
      spin_calls: calls,
      spin_calls_per_s: calls * 1000 / max(elapsed_ms, 1),
      normal_utilization: utilization(wall0, wall1, ids.normal),
      dirty_cpu_utilization: utilization(wall0, wall1, ids.dirty_cpu)
    }
  end

  # Two keep-alive requests on one connection, as wrk makes them.
  defp warm_up(port) do
    {:ok, socket} = :gen_tcp.connect({127, 0, 0, 1}, port, [:binary, active: false], 5_000)
    request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    for _ <- 1..2 do
      :ok = :gen_tcp.send(socket, request)
      {:ok, _} = recv_response(socket, "")
    end

    :gen_tcp.close(socket)
  end

  defp recv_response(socket, acc) do
    if String.ends_with?(acc, @body) do
      {:ok, acc}
    else
      with {:ok, data} <- :gen_tcp.recv(socket, 0, 5_000), do: recv_response(socket, acc <> data)
    end
  end

  # :inets is started in the child VMs only and is not an application the
  # library depends on (mix.exs does not list it), so it is called through
  # apply/3 with a variable module, which the compiler does not check
  defp otp(module, function, args), do: apply(module, function, args)

  # A worker that fails reports why and stops: the case is then reported
  # with its worker errors rather than as a quiet VM.
  defp work(mode, iterations, counter, parent) do
    case spin_once(mode, iterations) do
      :ok ->
        :counters.add(counter, 1, 1)
        work(mode, iterations, counter, parent)

      {:error, text} ->
        send(parent, {:worker_error, text})
    end
  end

  defp spin_once(mode, iterations) do
    _ = Spin.run(iterations, schedule: mode)
    :ok
  catch
    kind, reason -> {:error, Exception.format_banner(kind, reason, __STACKTRACE__)}
  end

  defp worker_errors(acc) do
    receive do
      {:worker_error, text} -> worker_errors([text | acc])
    after
      0 -> Enum.reverse(acc)
    end
  end

  defp wait_stop(stop, deadline) do
    cond do
      File.exists?(stop) ->
        "parent"

      System.monotonic_time(:millisecond) >= deadline ->
        "window"

      true ->
        Process.sleep(20)
        wait_stop(stop, deadline)
    end
  end

  # Mean utilization of the schedulers with the given ids between two
  # samples of :scheduler_wall_time_all; nil if there is none.
  defp utilization(wall0, wall1, ids) do
    pick = fn wall -> Map.new(for {id, a, t} <- wall, id in ids, do: {id, {a, t}}) end
    s0 = pick.(wall0)
    s1 = pick.(wall1)

    {active, total} =
      Enum.reduce(s1, {0, 0}, fn {id, {a1, t1}}, {a, t} ->
        {a0, t0} = Map.get(s0, id, {0, 0})
        {a + a1 - a0, t + t1 - t0}
      end)

    if total > 0, do: active / total, else: nil
  end

  # ---- Markdown, charts, tables -------------------------------------------------

  @doc """
  Renders a result of `run/1` as Markdown: what was run, and a table of
  req/s, latency percentiles and errors per case, relative to `:idle`.
  """
  @impl WellBehaved.Lab.Suite
  @spec to_markdown(result()) :: String.t()
  def to_markdown(result) do
    c = result.config
    workers = workers_text(result)

    [
      "## HTTP under load\n\n",
      "Each case runs in a fresh VM: OTP's `:inets` httpd on 127.0.0.1 answers every " <>
        "request with the same #{c.body_bytes}-byte body, while #{workers} background " <>
        "workers (#{c.workers_per_scheduler} per online scheduler; none in `idle`) loop " <>
        "`Spin.run(#{c.iterations}, schedule: mode)`, about #{c.work_ms} ms of work per call " <>
        "(calibrated at #{fmt(c.ns_per_iteration, 2)} ns/iteration in `:normal`). " <>
        "After a #{c.warmup_ms} ms warm-up the load is generated on loopback, on the same " <>
        "cores, with\n\n",
      "    #{c.wrk_command}\n\n",
      "Latency percentiles are wrk's, over the requests that completed within its " <>
        "#{c.wrk_timeout_s} s timeout; the others count as timeouts. `vs idle` is the " <>
        "case's req/s over idle's; `p99 x idle` its p99 over idle's. Spin calls/s is the " <>
        "background work the VM got done meanwhile; utilization is the mean busy share " <>
        "of the online normal (and dirty CPU) schedulers.\n\n",
      "Run: #{if c.quick, do: "quick", else: "full"}, rounds_scale #{c.rounds_scale}, " <>
        "#{c.duration_s} s of wrk per case, #{fmt(result.elapsed_s, 1)} s in all.\n\n",
      table(
        [
          "case",
          "req/s",
          "vs idle",
          "p50 ms",
          "p75 ms",
          "p90 ms",
          "p99 ms",
          "p99 x idle",
          "errors (timeouts)",
          "Spin calls/s",
          "normal / dirty util",
          "child"
        ],
        Enum.map(result.cases, &markdown_row/1)
      ),
      notes_md(result)
    ]
    |> IO.iodata_to_binary()
  end

  defp workers_text(result) do
    case result.cases |> Enum.map(& &1.child[:workers]) |> Enum.filter(&(&1 not in [nil, 0])) do
      [n | _] -> Integer.to_string(n)
      [] -> "the"
    end
  end

  defp markdown_row(c) do
    l = c.latency_ms
    child = c.child

    util =
      case {child[:normal_utilization], child[:dirty_cpu_utilization]} do
        {nil, _} -> "-"
        {n, nil} -> pct(n)
        {n, d} -> "#{pct(n)} / #{pct(d)}"
      end

    [
      label(c),
      fmt(c.req_s, 0),
      fmt_opt(c.ratio_to_idle, 3),
      fmt_opt(l.p50, 2),
      fmt_opt(l.p75, 2),
      fmt_opt(l.p90, 2),
      fmt_opt(l.p99, 2),
      fmt_opt(c.p99_to_idle, 1),
      "#{c.errors_total} (#{c.errors.timeout})",
      if(is_number(child[:spin_calls_per_s]), do: fmt(child.spin_calls_per_s, 0), else: "-"),
      util,
      child.status
    ]
  end

  defp notes_md(result) do
    notes = Enum.flat_map(result.cases, &case_notes/1)
    if notes == [], do: "", else: ["\n", Enum.join(notes, "\n"), "\n"]
  end

  defp case_notes(c) do
    server =
      if c.server != "ready",
        do: ["- `#{c.case}`: the server never reported ready (#{c.server}); no load was run."],
        else: []

    wrk =
      if c.wrk_exit_status not in [0, nil] do
        last_line = c.wrk_output |> String.split("\n", trim: true) |> List.last()
        detail = if last_line, do: " (`#{String.trim(last_line)}`)", else: ""
        ["- `#{c.case}`: wrk exited with status #{c.wrk_exit_status}#{detail}."]
      else
        []
      end

    workers =
      case c.child[:worker_errors] do
        n when is_integer(n) and n > 0 ->
          ["- `#{c.case}`: #{n} worker(s) failed: `#{String.trim(c.child.worker_error)}`."]

        _ ->
          []
      end

    silent =
      if c.server == "ready" and c.requests == 0,
        do: [
          "- `#{c.case}`: no request completed during the #{duration_text(c)} run " <>
            "(wrk counts a timeout only at its checks every 2 s, so requests still " <>
            "unanswered at the end are in no column)."
        ],
        else: []

    server ++ wrk ++ silent ++ workers
  end

  defp duration_text(%{wrk_output: out}) do
    case Regex.run(~r/Running (\S+) test/, out) do
      [_, d] -> d
      nil -> "whole"
    end
  end

  defp label(%{case: "idle"}), do: "idle"
  defp label(%{case: name}), do: ":#{name}"

  @doc """
  Two charts: wrk's latency percentiles per case (`:lines`, log scale) and
  req/s per case (`:bars`).
  """
  @impl WellBehaved.Lab.Suite
  @spec charts(result()) :: [WellBehaved.Lab.Suite.chart()]
  def charts(result) do
    [
      %{
        name: "http_latency",
        title: "HTTP latency percentiles under load (wrk)",
        kind: :lines,
        x_label: "percentile",
        y_label: "ms",
        log_y: true,
        categories: @percentiles,
        series:
          for c <- result.cases do
            %{
              label: label(c),
              values:
                for p <- @percentiles do
                  v = c.latency_ms[String.to_atom(p)]
                  if is_number(v) and v > 0, do: v, else: nil
                end
            }
          end
      },
      %{
        name: "http_req_s",
        title: "HTTP requests/s under load (wrk)",
        kind: :bars,
        x_label: "case",
        y_label: "req/s",
        log_y: false,
        categories: Enum.map(result.cases, &label/1),
        series: [%{label: "req/s", values: Enum.map(result.cases, & &1.req_s)}]
      }
    ]
  end

  @doc "The raw rows: one per case."
  @impl WellBehaved.Lab.Suite
  @spec tables(result()) :: [WellBehaved.Lab.Suite.table()]
  def tables(result) do
    [
      %{
        name: "http_load",
        columns: [
          "case",
          "req_s",
          "requests",
          "ratio_to_idle",
          "p50_ms",
          "p75_ms",
          "p90_ms",
          "p99_ms",
          "p99_to_idle",
          "connect_errors",
          "read_errors",
          "write_errors",
          "timeouts",
          "non_2xx",
          "server",
          "wrk_exit_status",
          "workers",
          "spin_calls",
          "spin_calls_per_s",
          "normal_utilization",
          "dirty_cpu_utilization",
          "child_status"
        ],
        rows:
          for c <- result.cases do
            l = c.latency_ms
            e = c.errors
            ch = c.child

            [
              c.case,
              c.req_s,
              c.requests,
              c.ratio_to_idle,
              l.p50,
              l.p75,
              l.p90,
              l.p99,
              c.p99_to_idle,
              e.connect,
              e.read,
              e.write,
              e.timeout,
              e.non_2xx,
              c.server,
              c.wrk_exit_status,
              ch[:workers],
              ch[:spin_calls],
              ch[:spin_calls_per_s],
              ch[:normal_utilization],
              ch[:dirty_cpu_utilization],
              ch.status
            ]
          end
      }
    ]
  end

  defp fmt_opt(nil, _), do: "-"
  defp fmt_opt(x, digits), do: fmt(x, digits)

  defp fmt_ms(nil), do: "-"
  defp fmt_ms(x), do: "#{fmt(x, 2)} ms"

  defp pct(x), do: Markdown.pct(x)
end

defmodule WellBehaved.Lab.HttpLoad.Handler do
  @moduledoc """
  The httpd callback module of `WellBehaved.Lab.HttpLoad`: answers every
  request with `200 OK` and the same small plain-text body.
  """

  @body ~c"hello, world\n"

  # httpd calls Module:do(ModData); `do` is a keyword in Elixir
  @doc false
  def unquote(:do)(_mod_data) do
    headers = [
      code: 200,
      content_type: ~c"text/plain",
      content_length: Integer.to_charlist(length(@body))
    ]

    {:proceed, [response: {:response, headers, @body}]}
  end
end
