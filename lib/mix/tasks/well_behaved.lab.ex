defmodule Mix.Tasks.WellBehaved.Lab do
  @shortdoc "Runs the lab's benchmark suites and writes a report"

  @moduledoc """
  Runs the lab's benchmark suites, prints progress and a Markdown summary,
  and writes `report.md` and `results.json` into an output folder.

      mix well_behaved.lab [--out DIR] [--quick | --full] [--suites NAME,...]
                           [--rounds-scale X]

    * `--out DIR` - the output folder, created if needed. Default:
      `lab_results/<UTC timestamp>` (git-ignored).
    * `--quick` (default) leaves out the slowest inputs (about 20 s in all
      on a 2-core machine); `--full` runs everything (about 40 s).
    * `--suites` - comma-separated suite names, default all. Suites:
      `levenshtein`.
    * `--rounds-scale X` - multiplies every suite's repetitions (default
      1.0); a small value gives a fast, rough run.

  Run it alone on the machine: the figures are wall-clock times.

  ## Suites

  Each suite is an entry of `@suites` below: a name and a module with
  `run(opts) :: map` and `to_markdown(map) :: String.t()`. `run/1` gets
  `quick:`, `rounds_scale:` and `progress:` (a function to call with a line
  of text) and returns a map of atoms, numbers, strings, lists and maps,
  which goes into `results.json` under the suite's name. Later suites
  (lateness, overhead, HTTP, echo latency, file I/O) are added there.
  """

  use Mix.Task

  alias WellBehaved.Lab.{JSON, LevenshteinBench}

  @suites [
    %{name: "levenshtein", module: LevenshteinBench}
  ]

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
        result = suite.module.run(quick: quick, rounds_scale: scale, progress: &info/1)
        {suite, result}
      end

    elapsed_s = (System.monotonic_time(:millisecond) - t0) / 1000

    markdown = report(results, started_at, quick, scale, elapsed_s)

    json = %{
      tool: "mix well_behaved.lab",
      started_at: DateTime.to_iso8601(started_at),
      quick: quick,
      rounds_scale: scale * 1.0,
      elapsed_s: elapsed_s,
      suites: Map.new(results, fn {suite, result} -> {suite.name, result} end)
    }

    File.write!(Path.join(out, "report.md"), markdown)
    File.write!(Path.join(out, "results.json"), JSON.encode(json, pretty: true))

    info("")
    info(markdown)
    info("Lab run took #{:erlang.float_to_binary(elapsed_s, decimals: 1)} s.")
    info("Report and results written to #{Path.expand(out)}")
  end

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
          "well_behaved.lab: unknown suite #{inspect(name)}; " <>
            "known: #{Enum.map_join(@suites, ", ", & &1.name)}"
        )
    end)
    |> case do
      [] -> Mix.raise("well_behaved.lab: --suites names no suite")
      suites -> suites
    end
  end

  defp report(results, started_at, quick, scale, elapsed_s) do
    header = """
    # WellBehaved lab report

    Started #{DateTime.to_iso8601(started_at)}; #{if quick, do: "quick", else: "full"} run, \
    rounds_scale #{scale}, #{:erlang.float_to_binary(elapsed_s, decimals: 1)} s; \
    suites: #{Enum.map_join(results, ", ", fn {suite, _} -> suite.name end)}.

    """

    [header | Enum.map(results, fn {suite, result} -> suite.module.to_markdown(result) end)]
    |> Enum.join("\n")
    |> String.replace(~r/\n{3,}/, "\n\n")
  end

  defp info(line), do: Mix.shell().info(line)
end
