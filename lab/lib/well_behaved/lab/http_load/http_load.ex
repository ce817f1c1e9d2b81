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

  ## Parts

    * `WellBehaved.Lab.HttpLoad.Plan` - the cases, durations, work per call
      and the result's `config:`;
    * `WellBehaved.Lab.HttpLoad.Runner` - one case, parent side;
    * `WellBehaved.Lab.HttpLoad.Child`, `WellBehaved.Lab.HttpLoad.Server`,
      `WellBehaved.Lab.HttpLoad.Handler` - one case, in its child VM;
    * `WellBehaved.Lab.HttpLoad.Wrk` - running wrk and parsing its output;
    * `WellBehaved.Lab.HttpLoad.Analysis` - the ratios to `idle`;
    * `WellBehaved.Lab.HttpLoad.Render` - Markdown, charts, tables and
      progress lines.
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.Lab.Suite
  alias WellBehaved.Lab.HttpLoad.{Analysis, Plan, Render, Runner, Wrk}

  {quick_s, full_s} = Plan.base_durations_s()

  @typedoc "A result map as returned by `run/1`."
  @type result :: %{atom() => term()}

  @doc """
  Runs every case and returns the result map.

  Options:

    * `quick:` - `true` (default): wrk runs #{quick_s} s per case;
      `false`: #{full_s} s.
    * `rounds_scale:` - multiplies wrk's duration (default `1.0`; rounded to
      whole seconds, at least 1 s).
    * `progress:` - a one-argument function called with a line of text per
      case. Default: none.

  Raises if `wrk` is not installed.
  """
  @impl Suite
  @spec run(keyword()) :: result()
  def run(opts \\ []) do
    {quick, scale, progress} = Suite.options!(opts)
    tools = Wrk.tools!()
    started = System.monotonic_time(:millisecond)
    duration_s = Plan.duration_s(quick, scale)
    {ns_per_iteration, iterations} = Plan.calibrate()
    plan = Map.merge(tools, %{iterations: iterations, duration_s: duration_s})
    progress.(Render.start_line(plan, ns_per_iteration))

    cases =
      for name <- Plan.case_names() do
        entry = Runner.run_case(name, plan)
        progress.(Render.progress_line(entry))
        entry
      end

    %{
      suite: "http_load",
      config: Plan.config(quick, scale, plan, ns_per_iteration),
      cases: Analysis.add_ratios(cases),
      elapsed_s: (System.monotonic_time(:millisecond) - started) / 1000
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
  @spec parse_wrk(String.t()) :: Wrk.measured()
  defdelegate parse_wrk(output), to: Wrk, as: :parse

  @doc """
  Renders a result of `run/1` as Markdown: what was run, and a table of
  req/s, latency percentiles and errors per case, relative to `:idle`.
  """
  @impl Suite
  @spec to_markdown(result()) :: String.t()
  defdelegate to_markdown(result), to: Render

  @doc """
  Two charts: wrk's latency percentiles per case (`:lines`, log scale) and
  req/s per case (`:bars`).
  """
  @impl Suite
  @spec charts(result()) :: [Suite.chart()]
  defdelegate charts(result), to: Render

  @doc "The raw rows: one per case."
  @impl Suite
  @spec tables(result()) :: [Suite.table()]
  defdelegate tables(result), to: Render
end
