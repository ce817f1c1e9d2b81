defmodule WellBehaved.Lab.Report.Document do
  @moduledoc false
  # report.md: the header (the run, what to do, the targets, the top
  # charts, the machine, the noise checks), then each suite's section with
  # links to its charts and CSV files and the problems met.

  alias WellBehaved.Lab.{Markdown, Noise}
  alias WellBehaved.Lab.Report.Suites

  @doc """
  The report's header: the run and its suites, the machine busy warning,
  what to do, the targets, the top charts, the machine and the noise
  checks. `top` holds the `summaries`, `targets` and `charts` that open it.
  """
  @spec header(map(), [{map(), term()}], map()) :: String.t()
  def header(info, results, top) do
    m = info.machine
    mode = if info.quick, do: "quick", else: "full"

    names =
      Enum.map_join(results, ", ", fn {suite, result} ->
        took =
          if is_map(result) and is_number(result[:suite_s]),
            do: " (#{fmt(result.suite_s, 0)} s)",
            else: ""

        if Suites.failed?(result), do: "#{suite.name} (**failed**)", else: suite.name <> took
      end)

    checks = Map.get(info, :noise, [])

    """
    # WellBehaved lab report

    Started #{DateTime.to_iso8601(info.started_at)}; #{mode} run, \
    rounds_scale #{Map.get(info, :rounds_scale, 1.0)}, #{fmt(info.elapsed_s, 1)} s; \
    suites: #{names}. #{get(m, :schedulers_online)} schedulers on #{get(m, :logical_cores)} \
    cores (#{get(m, :cpu_model)}), OTP #{get(m, :otp_release)}.

    #{Noise.warning(checks) || ""}

    #{what_to_do_md(top.summaries)}

    #{targets_md(top.targets)}

    #{top_charts_md(top.charts)}

    ## Machine

    | machine | |
    |---|---|
    | OTP / ERTS / Elixir | #{get(m, :otp_release)} / #{get(m, :erts_version)} / #{get(m, :elixir_version)} |
    | schedulers: normal / dirty CPU / dirty IO | #{online(m, :schedulers)} / #{online(m, :dirty_cpu_schedulers)} / #{get(m, :dirty_io_schedulers)} |
    | CPU | #{get(m, :cpu_model)} |
    | Levenshtein paths (long pairs' columns / short candidates' lanes) | #{paths_md(Map.get(m, :levenshtein_paths))} |
    | logical cores | #{get(m, :logical_cores)} (available: #{get(m, :logical_cores_available)}) |
    | OS | #{get(m, :os)} |
    | monotonic clock | #{clock_md(Map.get(m, :clock))} |
    | date (UTC) | #{DateTime.to_iso8601(info.started_at)} |

    #{Noise.markdown(checks)}
    """
  end

  defp paths_md(%{pair_columns: pair, lanes: lanes}), do: "#{pair} / #{lanes}"
  defp paths_md(_), do: "-"

  defp top_charts_md([]), do: ""

  defp top_charts_md(charts) do
    "## At a glance\n\n" <> Enum.map_join(charts, "\n\n", &"![#{md_text(&1.title)}](#{&1.path})")
  end

  defp what_to_do_md([]), do: ""
  defp what_to_do_md(summaries), do: "## What to do\n\n" <> Enum.join(summaries, "\n")

  defp targets_md([]), do: ""

  # pass or fail: the ratios to a baseline measured in the same run;
  # absolute figures after them, as information (they depend on the machine)
  defp targets_md(targets) do
    {absolute, ratios} = Enum.split_with(targets, fn {_, t} -> Markdown.absolute?(t) end)
    met = Enum.count(ratios, fn {_, t} -> t.met end)

    row = fn {suite, t} ->
      ["#{suite}", to_string(t.target), to_string(t.measured), Markdown.met_cell(t)]
    end

    IO.iodata_to_binary([
      "## Targets\n\n#{met} of #{length(ratios)} met (ratios to a baseline measured in the same run).\n\n",
      Markdown.table(["suite", "target", "measured", "met"], Enum.map(ratios, row)),
      if(absolute == [],
        do: "",
        else: [
          "\nAbsolute figures, for information: set on the machine the lab was written on; " <>
            "another machine's differ without saying anything about the code.\n\n",
          Markdown.table(["suite", "figure", "measured", "within it"], Enum.map(absolute, row))
        ]
      )
    ])
  end

  defp get(map, key) do
    case Map.get(map, key) do
      nil -> "?"
      value -> md_cell(to_string(value))
    end
  end

  defp online(m, key) do
    total = get(m, key)

    case Map.get(m, :"#{key}_online") do
      nil -> total
      online -> "#{online} of #{total} online"
    end
  end

  defp clock_md(%{} = c) do
    resolution =
      case Map.get(c, :resolution_ns) do
        ns when is_number(ns) and ns >= 1 -> "#{fmt(ns, 0)} ns"
        ns when is_number(ns) -> "#{fmt(ns, 3)} ns"
        _ -> "unknown"
      end

    id = if Map.get(c, :clock_id) in [nil, ""], do: "", else: "(#{c.clock_id})"

    "resolution #{resolution}; `#{Map.get(c, :function, "?")}#{id}`" <>
      case Map.get(c, :native_units_per_s) do
        n when is_integer(n) -> ", native time unit 1/#{n} s"
        _ -> ""
      end
  end

  defp clock_md(_), do: "?"

  defp md_cell(text), do: String.replace(text, "|", "\\|")

  @doc "The whole of report.md: the header, then each section."
  @spec markdown(String.t(), [Suites.section()]) :: String.t()
  def markdown(header, sections) do
    [header | Enum.map(sections, &section_md/1)]
    |> Enum.join("\n")
    |> tidy()
  end

  defp section_md(s) do
    [
      String.trim_trailing(s.markdown),
      "\n",
      charts_md(s.charts),
      csv_md(s.csv),
      problems_md(s.problems)
    ]
    |> IO.iodata_to_binary()
  end

  defp charts_md([]), do: ""

  defp charts_md(charts) do
    ["\n### Charts\n\n", Enum.map(charts, &"- [#{md_text(&1.title)}](#{&1.path})\n")]
  end

  @doc "A section's \"Data (CSV)\" list, empty without CSV files."
  @spec csv_md([%{path: String.t(), rows: non_neg_integer()}]) :: iodata()
  def csv_md([]), do: ""

  def csv_md(csv) do
    ["\n### Data (CSV)\n\n", Enum.map(csv, &"- [#{&1.path}](#{&1.path}): #{&1.rows} rows\n")]
  end

  @doc "A section's \"Problems\" list, empty without problems."
  @spec problems_md([String.t()]) :: iodata()
  def problems_md([]), do: ""

  def problems_md(problems) do
    ["\n### Problems\n\n", Enum.map(problems, &"- #{md_text(&1)}\n")]
  end

  # text in a link or list item: one line, no brackets that would end a link
  defp md_text(text) do
    text |> String.replace(~r/\s*\n\s*/, " ") |> String.replace(["[", "]"], "")
  end

  defp tidy(text),
    do: String.replace(text, ~r/\n{3,}/, "\n\n") |> String.trim_trailing() |> Kernel.<>("\n")

  defp fmt(x, digits), do: Markdown.fmt(x, digits)
end
