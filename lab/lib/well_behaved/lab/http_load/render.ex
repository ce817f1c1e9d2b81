defmodule WellBehaved.Lab.HttpLoad.Render do
  @moduledoc """
  The HTTP-under-load suite's result as the report shows it: the Markdown
  section, the charts, the raw table and the progress lines.
  """

  alias WellBehaved.Lab.Markdown
  alias WellBehaved.Lab.HttpLoad
  alias WellBehaved.Lab.HttpLoad.{Plan, Wrk}
  import Markdown, only: [table: 2, fmt: 2]

  @doc "The progress line before the cases run."
  @spec start_line(Plan.t(), float()) :: String.t()
  def start_line(plan, ns_per_iteration) do
    "http under load: Spin #{plan.iterations} iterations per call " <>
      "(#{fmt(ns_per_iteration, 2)} ns/iteration, ~#{Plan.work_ms()} ms), " <>
      "wrk #{plan.duration_s} s per case ..."
  end

  @doc "The progress line of a case's entry."
  @spec progress_line(map()) :: String.t()
  def progress_line(c) do
    "http under load, #{c.case}: #{fmt(c.req_s, 0)} req/s, " <>
      "p50 #{fmt_ms(c.latency_ms.p50)}, p99 #{fmt_ms(c.latency_ms.p99)}, " <>
      "#{c.errors_total} errors (#{c.errors.timeout} timeouts), " <>
      "child #{c.child.status}" <>
      if(is_integer(c.child[:spin_calls]), do: ", #{c.child.spin_calls} Spin calls", else: "")
  end

  @doc """
  The Markdown section of a result: what was run, and a table of req/s,
  latency percentiles and errors per case, relative to `:idle`.
  """
  @spec to_markdown(HttpLoad.result()) :: String.t()
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
  @spec charts(HttpLoad.result()) :: [WellBehaved.Lab.Suite.chart()]
  def charts(result) do
    percentiles = Wrk.percentiles()

    [
      %{
        name: "http_latency",
        title: "HTTP latency percentiles under load (wrk)",
        kind: :lines,
        x_label: "percentile",
        y_label: "ms",
        log_y: true,
        categories: percentiles,
        series:
          for c <- result.cases do
            %{
              label: label(c),
              values:
                for p <- percentiles do
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
  @spec tables(HttpLoad.result()) :: [WellBehaved.Lab.Suite.table()]
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
