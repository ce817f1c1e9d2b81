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
      `../lab_results/<UTC timestamp>`: the repository's lab_results/
      when run from lab/ (git-ignored).
    * `--quick` (default) leaves out the slowest inputs; `--full` runs
      everything.
    * `--suites` - comma-separated suite names, default all, run in the
      order given. A suite's name is its module's, underscored:
      `lateness` (`WellBehaved.Lab.Lateness`), `overhead`
      (`WellBehaved.Lab.Overhead`, throughput of each scheduling mode
      relative to `:normal`), `http_load` (`WellBehaved.Lab.HttpLoad`),
      `echo_latency` (`WellBehaved.Lab.EchoLatency`), `file_read`
      (`WellBehaved.Lab.FileRead`), `search` (`WellBehaved.Lab.Search`).
      Former names (`levenshtein`, `http`, `latency`, `file`) are refused
      with the new one.
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

  alias WellBehaved.Lab.{
    EchoLatency,
    FileRead,
    HttpLoad,
    Lateness,
    Overhead,
    Noise,
    Report,
    Search
  }

  alias WellBehaved.Lab.Report.Recommendation

  # module atoms only: a suite's functions are called through `suite.module`;
  # a suite's name is its module's last part, underscored
  @suites (for module <- [Lateness, Overhead, HttpLoad, EchoLatency, FileRead, Search] do
             %{
               name: module |> Module.split() |> List.last() |> Macro.underscore(),
               module: module
             }
           end)

  # former names, for a helpful error
  @renamed %{
    "levenshtein" => "overhead",
    "http" => "http_load",
    "latency" => "echo_latency",
    "file" => "file_read"
  }

  @switches [out: :string, quick: :boolean, full: :boolean, suites: :string, rounds_scale: :float]

  @impl Mix.Task
  def run(args) do
    opts = parse_args(args)
    suites = select_suites(opts[:suites])
    quick = quick?(opts)
    scale = opts[:rounds_scale] || 1.0

    Mix.Task.run("app.start")

    started_at = DateTime.utc_now() |> DateTime.truncate(:second)

    out =
      opts[:out] || Path.join("../lab_results", Calendar.strftime(started_at, "%Y%m%dT%H%M%SZ"))

    File.mkdir_p!(out)
    t0 = System.monotonic_time(:millisecond)

    info(
      "well_behaved.lab: #{if quick, do: "quick", else: "full"} run of " <>
        "#{Enum.map_join(suites, ", ", & &1.name)}, rounds_scale #{scale}, output in #{out}"
    )

    checks = [noise_check("before #{hd(suites).name}")]

    {results, checks} =
      Enum.map_reduce(suites, checks, fn suite, checks ->
        info("== suite #{suite.name}")
        t_suite = System.monotonic_time(:millisecond)
        result = run_suite(suite, quick: quick, rounds_scale: scale, progress: &info/1)
        suite_s = (System.monotonic_time(:millisecond) - t_suite) / 1000
        info("== suite #{suite.name}: #{fmt_s(suite_s)} s")
        result = Map.put(result, :suite_s, suite_s)
        {{suite, result}, checks ++ [noise_check("after #{suite.name}")]}
      end)

    checks = Noise.assess(checks)
    elapsed_s = (System.monotonic_time(:millisecond) - t0) / 1000
    info("== writing the report")
    recommendation = Recommendation.text(results)
    previous = Recommendation.previous(out, quick)
    Recommendation.save(out, recommendation)

    written =
      Report.write(
        out,
        %{
          started_at: started_at,
          quick: quick,
          rounds_scale: scale,
          elapsed_s: elapsed_s,
          noise: checks,
          targets: run_targets(quick, scale, suites, elapsed_s, recommendation, previous)
        },
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

  defp noise_check(label) do
    check = Noise.check(label)

    info(
      "noise check #{label}: " <>
        if(check.busy, do: "BUSY (#{Enum.join(check.reasons, "; ")})", else: "quiet")
    )

    check
  end

  @quick_limit_s 360

  # Targets of the run as a whole: the quick run's duration (every suite, at
  # full scale), and the lateness recommendation against the previous run
  # of the same kind in the same parent folder.
  defp run_targets(quick, scale, suites, elapsed_s, recommendation, previous) do
    duration =
      if quick and scale == 1.0 and length(suites) == length(@suites) do
        [
          %{
            target: "the quick lab in 6 minutes or less",
            measured: "#{fmt_s(elapsed_s)} s",
            met: elapsed_s <= @quick_limit_s,
            absolute: true
          }
        ]
      else
        []
      end

    {same, message} = Recommendation.compare(recommendation, previous)
    if message, do: info(message)

    duration ++ same
  end

  @doc false
  # the lab's tests call it here; see Recommendation.modes/1
  defdelegate recommended_modes(text), to: Recommendation, as: :modes

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
