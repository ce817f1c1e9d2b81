defmodule WellBehaved.Lab.Report do
  @moduledoc """
  Writes a lab run's report into its output folder:

    * `results.json` - every suite's result map (`WellBehaved.Lab.JSON`),
      written first, so the numbers survive whatever fails later;
    * `charts/<name>.svg` - each chart of each suite's `charts/1`, drawn by
      `WellBehaved.Lab.Plot` (the `.dat` and `.gp` files next to them
      redraw it);
    * `csv/<suite>_<table>.csv` - each table of each suite's `tables/1`;
    * `report.md` - a header with the machine facts, each suite's
      `to_markdown/1`, and links to its charts and CSV files;
    * `report.html` - the same content as one standalone page, the charts'
      SVG inlined.

  `charts/1` and `tables/1` are optional: a suite that does not export them
  contributes none. A suite whose result has an `:error` key (it crashed,
  see `mix well_behaved.lab`) gets a section saying so. A suite callback or
  a chart that raises is noted in the report (and in the `:problems` that
  `write/3` returns) instead of stopping it.
  """

  alias WellBehaved.Lab.JSON
  # Suites gathers each suite's part (callbacks guarded, charts drawn, CSV
  # written); Document writes report.md and Html report.html from them.
  alias WellBehaved.Lab.Report.{CSV, Document, Html, MarkdownHtml, Suites}

  @typedoc """
  The run: `started_at` (a `DateTime`), `quick` (boolean), `elapsed_s`,
  and optionally `rounds_scale` (default 1.0) and `machine` (a header map
  as `machine/0` returns; default `machine/0`).
  """
  @type run_info :: %{
          required(:started_at) => DateTime.t(),
          required(:quick) => boolean(),
          required(:elapsed_s) => number(),
          optional(:rounds_scale) => number(),
          optional(:machine) => map()
        }

  @type suite :: %{name: String.t(), module: module()}

  @type written :: %{
          dir: Path.t(),
          markdown: String.t(),
          report_md: Path.t(),
          report_html: Path.t(),
          results_json: Path.t(),
          charts: [Path.t()],
          csv: [Path.t()],
          problems: [String.t()]
        }

  @doc "The machine header: `WellBehaved.Lab.Machine.describe/0`."
  @spec machine() :: map()
  defdelegate machine, to: WellBehaved.Lab.Machine, as: :describe

  @doc """
  Writes everything into `dir` (created if needed) and returns what it
  wrote, with the report's Markdown and a list of problems met (a chart
  that could not be drawn, a suite callback that raised), empty if none.
  """
  @spec write(Path.t(), run_info(), [{suite(), map()}]) :: written()
  def write(dir, info, results) do
    File.mkdir_p!(dir)
    info = Map.put_new_lazy(info, :machine, &machine/0)

    {json_results, json_problems} = json_safe(results)
    results_json = Path.join(dir, "results.json")
    File.write!(results_json, JSON.encode(json(info, json_results), pretty: true))

    taken = %{charts: MapSet.new(), csv: MapSet.new()}

    {sections, _taken} =
      Enum.map_reduce(results, taken, fn {suite, result}, taken ->
        Suites.section(dir, suite, result, taken)
      end)

    problems = json_problems ++ Enum.flat_map(sections, & &1.problems)

    {top, top_problems} = Suites.top(info, results)
    top = Map.put(top, :charts, for(s <- sections, c <- s.charts, c.top, do: c))
    problems = problems ++ top_problems
    header = Document.header(info, results, top)
    markdown = Document.markdown(header, sections)
    report_md = Path.join(dir, "report.md")
    File.write!(report_md, markdown)

    report_html = Path.join(dir, "report.html")
    File.write!(report_html, Html.page(info, header, sections, dir))

    %{
      dir: dir,
      markdown: markdown,
      report_md: report_md,
      report_html: report_html,
      results_json: results_json,
      charts: Enum.flat_map(sections, fn s -> Enum.map(s.charts, &Path.join(dir, &1.path)) end),
      csv: Enum.flat_map(sections, fn s -> Enum.map(s.csv, &Path.join(dir, &1.path)) end),
      problems: problems
    }
  end

  # ---- results.json ---------------------------------------------------------------

  defp json(info, results) do
    %{
      tool: "mix well_behaved.lab",
      started_at: DateTime.to_iso8601(info.started_at),
      quick: info.quick,
      rounds_scale: Map.get(info, :rounds_scale, 1.0) * 1.0,
      elapsed_s: info.elapsed_s,
      machine: info.machine,
      suites: Map.new(results, fn {suite, result} -> {suite.name, result} end)
    }
  end

  # A result that JSON cannot hold (a tuple, a pid) would lose the whole
  # file: in results.json it is replaced by an error (the report still
  # renders it).
  defp json_safe(results) do
    Enum.map_reduce(results, [], fn {suite, result}, problems ->
      try do
        _ = JSON.encode(result)
        {{suite, result}, problems}
      rescue
        e ->
          message = "its result cannot be written as JSON: #{Exception.message(e)}"
          {{suite, %{error: message}}, problems ++ ["suite #{suite.name}: #{message}"]}
      end
    end)
  end

  # ---- helpers others call ----------------------------------------------------------

  @doc """
  One CSV record: fields joined by commas, a field quoted (its quotes
  doubled) when it holds a comma, a quote, a line break, or leading or
  trailing spaces. `nil` is an empty field; atoms are written by name.
  """
  @spec csv_line([term()]) :: String.t()
  defdelegate csv_line(cells), to: CSV, as: :line

  @doc """
  Converts the Markdown the lab writes to HTML: ATX headings, paragraphs,
  pipe tables (with a `---` row under the header), bullet and numbered
  lists, fenced code blocks, images alone on their line (`![alt](src)`,
  drawn by the `image:` option, a function of src and alt; default an
  `<img>`), and inline code spans, `**bold**` and `[links](url)`. Other
  text is escaped and shown as it is.

  Headings get an `id` made of their text, after `id_prefix:` (default
  none), so that two suites' "Targets" stay apart.
  """
  @spec markdown_to_html(String.t(), keyword()) :: String.t()
  defdelegate markdown_to_html(markdown, opts \\ []), to: MarkdownHtml, as: :to_html
end
