defmodule Mix.Tasks.WellBehaved.Lab do
  @shortdoc "Runs the lab's benchmark suites and writes a report"

  @moduledoc """
  Runs the lab's suites, prints progress and a Markdown summary, and writes
  the report into an output folder (see `WellBehaved.Lab.Report`):
  `report.md`, `report.html` (standalone, charts inlined), `results.json`,
  `charts/*.svg` and `csv/*.csv`.

      mix well_behaved.lab [--out DIR] [--quick | --full] [--suites NAME,...]
                           [--rounds-scale X]

    * `--out DIR` - the output folder, created if needed. Default:
      `lab_results/<UTC timestamp>` (git-ignored).
    * `--quick` (default) leaves out the slowest inputs; `--full` runs
      everything.
    * `--suites` - comma-separated suite names, default all, run in the
      order given. Suites: `lateness` (`WellBehaved.Lab.Lateness`),
      `overhead` (`WellBehaved.Lab.LevenshteinBench`, throughput of each
      scheduling mode relative to `:normal`; it was called `levenshtein`),
      `http` (`WellBehaved.Lab.HttpLoad`), `latency` (`WellBehaved.Lab.EchoLatency`),
      `file` (`WellBehaved.Lab.FileRead`).
    * `--rounds-scale X` - multiplies every suite's repetitions (default
      1.0); a small value gives a fast, rough run.

  Run it alone on the machine: the figures are wall-clock times. The charts
  need gnuplot (Debian package `gnuplot-nox`); without it the report says
  which charts are missing and everything else is written.

  ## Suites

  Each suite is an entry of `@suites` below: a name and a module that
  implements `WellBehaved.Lab.Suite`. A suite that raises (or exits, or
  throws) is reported as failed, `%{error: message, stacktrace: text}` in
  `results.json`, and the others still run.
  """

  use Mix.Task

  alias WellBehaved.Lab.{EchoLatency, FileRead, HttpLoad, Lateness, LevenshteinBench, Report}

  # module atoms only: a suite's functions are called through `suite.module`
  @suites [
    %{name: "lateness", module: Lateness},
    %{name: "overhead", module: LevenshteinBench},
    %{name: "http", module: HttpLoad},
    %{name: "latency", module: EchoLatency},
    %{name: "file", module: FileRead}
  ]

  # former names, for a helpful error
  @renamed %{"levenshtein" => "overhead"}

  @switches [out: :string, quick: :boolean, full: :boolean, suites: :string, rounds_scale: :float]

  @impl Mix.Task
  def run(args) do
    opts = parse_args(args)
    suites = select_suites(opts[:suites])
    quick = quick?(opts)
    scale = opts[:rounds_scale] || 1.0

    Mix.Task.run("app.start")

    started_at = DateTime.utc_now() |> DateTime.truncate(:second)
    out = opts[:out] || Path.join("lab_results", Calendar.strftime(started_at, "%Y%m%dT%H%M%SZ"))
    File.mkdir_p!(out)
    t0 = System.monotonic_time(:millisecond)

    info(
      "well_behaved.lab: #{if quick, do: "quick", else: "full"} run of " <>
        "#{Enum.map_join(suites, ", ", & &1.name)}, rounds_scale #{scale}, output in #{out}"
    )

    results =
      for suite <- suites do
        info("== suite #{suite.name}")
        {suite, run_suite(suite, quick: quick, rounds_scale: scale, progress: &info/1)}
      end

    elapsed_s = (System.monotonic_time(:millisecond) - t0) / 1000
    info("== writing the report")

    written =
      Report.write(
        out,
        %{started_at: started_at, quick: quick, rounds_scale: scale, elapsed_s: elapsed_s},
        results
      )

    total_s = (System.monotonic_time(:millisecond) - t0) / 1000

    info("")
    info(written.markdown)

    for problem <- written.problems, do: Mix.shell().error("problem: #{problem}")

    failed = for {suite, %{error: _}} <- results, do: suite.name
    if failed != [], do: Mix.shell().error("failed suites: #{Enum.join(failed, ", ")}")

    info(
      "Lab run took #{fmt_s(total_s)} s (suites #{fmt_s(elapsed_s)} s, " <>
        "report #{fmt_s(total_s - elapsed_s)} s)."
    )

    info("Report written to #{Path.expand(out)} (report.md, report.html, results.json)")
  end

  # One failing suite must not cost the others: whatever it raises, throws
  # or exits with becomes its result.
  defp run_suite(suite, opts) do
    case suite.module.run(opts) do
      result when is_map(result) ->
        result

      other ->
        %{error: "run/1 returned #{inspect(other, limit: 10)}, not a map"}
    end
  rescue
    e -> suite_failed(suite, Exception.message(e), __STACKTRACE__)
  catch
    kind, reason -> suite_failed(suite, Exception.format_banner(kind, reason), __STACKTRACE__)
  end

  defp suite_failed(suite, message, stacktrace) do
    Mix.shell().error("suite #{suite.name} failed: #{message}")
    %{error: message, stacktrace: Exception.format_stacktrace(stacktrace)}
  end

  defp fmt_s(seconds), do: WellBehaved.Lab.Markdown.fmt(seconds, 1)

  defp parse_args(args) do
    case OptionParser.parse(args, strict: @switches) do
      {opts, [], []} ->
        opts

      {_, rest, []} ->
        Mix.raise("well_behaved.lab: unexpected arguments #{inspect(rest)}")

      {_, _, invalid} ->
        bad = Enum.map_join(invalid, ", ", fn {k, v} -> if v, do: "#{k} #{v}", else: k end)
        Mix.raise("well_behaved.lab: invalid option(s) #{bad}")
    end
  end

  defp quick?(opts) do
    case {opts[:quick], opts[:full]} do
      {true, true} -> Mix.raise("well_behaved.lab: --quick and --full exclude each other")
      {_, true} -> false
      {false, _} -> false
      _ -> true
    end
  end

  defp select_suites(nil), do: @suites

  defp select_suites(names) do
    known = Map.new(@suites, &{&1.name, &1})

    names
    |> String.split(",", trim: true)
    |> Enum.map(&String.trim/1)
    |> Enum.uniq()
    |> Enum.map(fn name ->
      Map.get(known, name) ||
        Mix.raise(
          "well_behaved.lab: unknown suite #{inspect(name)}" <>
            if(@renamed[name], do: " (now called #{@renamed[name]})", else: "") <>
            "; known: #{Enum.map_join(@suites, ", ", & &1.name)}"
        )
    end)
    |> case do
      [] -> Mix.raise("well_behaved.lab: --suites names no suite")
      suites -> suites
    end
  end

  defp info(line), do: Mix.shell().info(line)
end
