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

  alias WellBehaved.Lab.{JSON, Markdown, Noise, Plot}

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
        section(dir, suite, result, taken)
      end)

    problems = json_problems ++ Enum.flat_map(sections, & &1.problems)

    {top, top_problems} = top(info, results)
    top = Map.put(top, :charts, for(s <- sections, c <- s.charts, c.top, do: c))
    problems = problems ++ top_problems
    header = header(info, results, top)
    markdown = markdown(header, sections)
    report_md = Path.join(dir, "report.md")
    File.write!(report_md, markdown)

    report_html = Path.join(dir, "report.html")
    File.write!(report_html, html(info, header, sections, dir))

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

  # ---- one suite ------------------------------------------------------------------------

  defp section(dir, suite, result, taken) do
    if failed?(result) do
      {%{
         suite: suite,
         failed: true,
         markdown: error_md(suite, result),
         charts: [],
         csv: [],
         problems: []
       }, taken}
    else
      mod = suite.module
      Code.ensure_loaded(mod)

      {markdown, md_problems} =
        case guarded(fn -> mod.to_markdown(result) end) do
          {:ok, md} when is_binary(md) ->
            {md, []}

          {:ok, other} ->
            {"## #{suite.name}\n", ["to_markdown/1 returned #{inspect(other, limit: 5)}"]}

          {:error, message} ->
            {"## #{suite.name}\n", ["to_markdown/1 raised: #{message}"]}
        end

      {charts, chart_problems, taken} = charts(dir, suite, result, taken)
      {csv, csv_problems, taken} = tables(dir, suite, result, taken)
      problems = md_problems ++ chart_problems ++ csv_problems

      {%{
         suite: suite,
         failed: false,
         markdown: markdown,
         charts: charts,
         csv: csv,
         problems: Enum.map(problems, &"suite #{suite.name}: #{&1}")
       }, taken}
    end
  end

  defp failed?(result), do: not is_map(result) or Map.has_key?(result, :error)

  defp error_md(suite, result) do
    {message, details} =
      if is_map(result) do
        {format_term(Map.get(result, :error)), Map.get(result, :stacktrace)}
      else
        {"run/1 returned #{inspect(result, limit: 10)}, not a map", nil}
      end

    [
      "## #{suite.name}\n\n",
      "**This suite failed**; it has no results in this report.\n\n",
      fence(message),
      if(is_binary(details) and details != "", do: ["\n", fence(details)], else: [])
    ]
    |> IO.iodata_to_binary()
  end

  defp format_term(text) when is_binary(text), do: text
  defp format_term(other), do: inspect(other, limit: 50, printable_limit: 4096)

  defp fence(text) do
    body = text |> String.trim_trailing() |> String.replace("```", "'''")
    "```\n#{body}\n```\n"
  end

  defp charts(dir, suite, result, taken) do
    case optional(suite.module, :charts, result) do
      {:ok, charts} ->
        Enum.reduce(charts, {[], [], taken}, fn chart, {done, problems, taken} ->
          name = Plot.file_stem(map_get(chart, :name, "#{suite.name}_chart"))
          stem = unique(name, taken.charts)
          taken = %{taken | charts: MapSet.put(taken.charts, stem)}
          title = to_string(map_get(chart, :title, stem))

          case guarded(fn ->
                 Plot.render(Map.put(chart, :name, stem), Path.join(dir, "charts"))
               end) do
            {:ok, _path} ->
              chart_entry = %{
                title: title,
                path: "charts/#{stem}.svg",
                top: map_get(chart, :top, false) == true
              }

              {done ++ [chart_entry], problems, taken}

            {:error, message} ->
              {done, problems ++ ["chart #{inspect(name)} was not drawn: #{message}"], taken}
          end
        end)

      :none ->
        {[], [], taken}

      {:error, message} ->
        {[], ["charts/1 failed: #{message}"], taken}
    end
  end

  defp tables(dir, suite, result, taken) do
    case optional(suite.module, :tables, result) do
      {:ok, tables} ->
        Enum.reduce(tables, {[], [], taken}, fn table, {done, problems, taken} ->
          name = map_get(table, :name, "table")
          stem = unique(Plot.file_stem("#{suite.name}_#{name}"), taken.csv)
          taken = %{taken | csv: MapSet.put(taken.csv, stem)}
          path = "csv/#{stem}.csv"

          case guarded(fn -> write_csv(Path.join(dir, path), table) end) do
            {:ok, rows} -> {done ++ [%{path: path, rows: rows}], problems, taken}
            {:error, message} -> {done, problems ++ ["table #{inspect(name)}: #{message}"], taken}
          end
        end)

      :none ->
        {[], [], taken}

      {:error, message} ->
        {[], ["tables/1 failed: #{message}"], taken}
    end
  end

  defp optional(mod, fun, result) do
    if function_exported?(mod, fun, 1) do
      case guarded(fn -> apply(mod, fun, [result]) end) do
        {:ok, list} when is_list(list) -> {:ok, list}
        {:ok, other} -> {:error, "returned #{inspect(other, limit: 5)}, not a list"}
        error -> error
      end
    else
      :none
    end
  end

  defp guarded(fun) do
    {:ok, fun.()}
  rescue
    e -> {:error, Exception.message(e)}
  catch
    kind, reason -> {:error, Exception.format_banner(kind, reason)}
  end

  defp map_get(map, key, default) when is_map(map), do: Map.get(map, key) || default
  defp map_get(_, _, default), do: default

  defp unique(stem, taken, n \\ 1) do
    candidate = if n == 1, do: stem, else: "#{stem}_#{n}"
    if MapSet.member?(taken, candidate), do: unique(stem, taken, n + 1), else: candidate
  end

  # ---- CSV ------------------------------------------------------------------------------

  @doc """
  One CSV record: fields joined by commas, a field quoted (its quotes
  doubled) when it holds a comma, a quote, a line break, or leading or
  trailing spaces. `nil` is an empty field; atoms are written by name.
  """
  @spec csv_line([term()]) :: String.t()
  def csv_line(cells), do: Enum.map_join(cells, ",", &csv_cell/1) <> "\n"

  defp write_csv(path, table) do
    columns = Map.get(table, :columns) || []
    rows = Map.get(table, :rows) || []

    unless is_list(columns) and is_list(rows) and Enum.all?(rows, &is_list/1) do
      raise ArgumentError, "a table needs a list of columns and a list of rows (lists)"
    end

    File.mkdir_p!(Path.dirname(path))
    File.write!(path, [csv_line(columns) | Enum.map(rows, &csv_line/1)])
    length(rows)
  end

  defp csv_cell(nil), do: ""
  defp csv_cell(v) when is_boolean(v), do: Atom.to_string(v)
  defp csv_cell(v) when is_atom(v), do: csv_quote(Atom.to_string(v))
  defp csv_cell(v) when is_integer(v), do: Integer.to_string(v)
  defp csv_cell(v) when is_float(v), do: :erlang.float_to_binary(v, [:short])
  defp csv_cell(v) when is_binary(v), do: csv_quote(v)
  defp csv_cell(v), do: csv_quote(inspect(v))

  defp csv_quote(text) do
    if text =~ ~r/[",\r\n]/ or text != String.trim(text),
      do: ~s(") <> String.replace(text, ~s("), ~s("")) <> ~s("),
      else: text
  end

  # ---- Markdown -----------------------------------------------------------------------------

  # The top of the report: what to do (the suites' summary/1), every
  # suite's targets and the run's own, a warning when the machine was busy.
  defp top(info, results) do
    ok = for {suite, result} <- results, not failed?(result), do: {suite, result}

    {summaries, problems} =
      Enum.reduce(ok, {[], []}, fn {suite, result}, {mds, problems} ->
        case optional_text(suite.module, :summary, result) do
          :none -> {mds, problems}
          {:ok, md} -> {mds ++ [md], problems}
          {:error, message} -> {mds, problems ++ ["suite #{suite.name}: summary/1 #{message}"]}
        end
      end)

    targets =
      for({suite, result} <- ok, t <- List.wrap(Map.get(result, :targets)), do: {suite.name, t}) ++
        for(t <- Map.get(info, :targets, []), do: {"run", t})

    {%{summaries: summaries, targets: targets}, problems}
  end

  defp optional_text(mod, fun, result) do
    Code.ensure_loaded(mod)

    if function_exported?(mod, fun, 1) do
      case guarded(fn -> apply(mod, fun, [result]) end) do
        {:ok, text} when is_binary(text) -> {:ok, text}
        {:ok, other} -> {:error, "returned #{inspect(other, limit: 5)}"}
        {:error, message} -> {:error, "raised: #{message}"}
      end
    else
      :none
    end
  end

  defp header(info, results, top) do
    m = info.machine
    mode = if info.quick, do: "quick", else: "full"

    names =
      Enum.map_join(results, ", ", fn {suite, result} ->
        took =
          if is_map(result) and is_number(result[:suite_s]),
            do: " (#{fmt(result.suite_s, 0)} s)",
            else: ""

        if failed?(result), do: "#{suite.name} (**failed**)", else: suite.name <> took
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
    | logical cores | #{get(m, :logical_cores)} (available: #{get(m, :logical_cores_available)}) |
    | OS | #{get(m, :os)} |
    | monotonic clock | #{clock_md(Map.get(m, :clock))} |
    | date (UTC) | #{DateTime.to_iso8601(info.started_at)} |

    #{Noise.markdown(checks)}
    """
  end

  defp top_charts_md([]), do: ""

  defp top_charts_md(charts) do
    "## At a glance\n\n" <> Enum.map_join(charts, "\n\n", &"![#{md_text(&1.title)}](#{&1.path})")
  end

  defp what_to_do_md([]), do: ""
  defp what_to_do_md(summaries), do: "## What to do\n\n" <> Enum.join(summaries, "\n")

  defp targets_md([]), do: ""

  defp targets_md(targets) do
    rows =
      for {suite, t} <- targets do
        [
          "#{suite}",
          to_string(t.target),
          to_string(t.measured),
          if(t.met, do: "yes", else: "**no**")
        ]
      end

    met = Enum.count(targets, fn {_, t} -> t.met end)

    IO.iodata_to_binary([
      "## Targets\n\n#{met} of #{length(targets)} met.\n\n",
      Markdown.table(["suite", "target", "measured", "met"], rows)
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

  defp markdown(header, sections) do
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

  defp csv_md([]), do: ""

  defp csv_md(csv) do
    ["\n### Data (CSV)\n\n", Enum.map(csv, &"- [#{&1.path}](#{&1.path}): #{&1.rows} rows\n")]
  end

  defp problems_md([]), do: ""

  defp problems_md(problems) do
    ["\n### Problems\n\n", Enum.map(problems, &"- #{md_text(&1)}\n")]
  end

  # text in a link or list item: one line, no brackets that would end a link
  defp md_text(text) do
    text |> String.replace(~r/\s*\n\s*/, " ") |> String.replace(["[", "]"], "")
  end

  defp tidy(text),
    do: String.replace(text, ~r/\n{3,}/, "\n\n") |> String.trim_trailing() |> Kernel.<>("\n")

  # ---- HTML ---------------------------------------------------------------------------------

  defp html(info, header, sections, dir) do
    title = "WellBehaved lab report, #{DateTime.to_iso8601(info.started_at)}"

    inline = fn src, alt ->
      case File.read(Path.join(dir, src)) do
        {:ok, svg} ->
          [~s(<figure class="top">\n), inline_svg(svg, Plot.file_stem(src), alt), "</figure>\n"]

        {:error, reason} ->
          "<p>(#{escape(src)}: #{:file.format_error(reason)})</p>\n"
      end
    end

    body = [
      markdown_to_html(header, image: inline),
      Enum.with_index(sections, 1)
      |> Enum.map(fn {s, i} ->
        id = "suite-#{Plot.file_stem(s.suite.name)}"
        more = IO.iodata_to_binary([csv_md(s.csv), problems_md(s.problems)])

        [
          ~s(<section class="suite#{if s.failed, do: " failed"}" id="#{escape(id)}">\n),
          markdown_to_html(s.markdown, id_prefix: "#{id}-"),
          charts_html(s.charts, dir, i),
          markdown_to_html(more, id_prefix: "#{id}-"),
          "</section>\n"
        ]
      end)
    ]

    IO.iodata_to_binary([
      """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <title>#{escape(title)}</title>
      <style>
      #{css()}
      </style>
      </head>
      <body>
      <main>
      """,
      body,
      """
      </main>
      </body>
      </html>
      """
    ])
  end

  defp charts_html([], _dir, _i), do: []

  defp charts_html(charts, dir, i) do
    figures =
      charts
      |> Enum.with_index(1)
      |> Enum.map(fn {chart, j} ->
        svg =
          case File.read(Path.join(dir, chart.path)) do
            {:ok, svg} -> inline_svg(svg, "c#{i}_#{j}", chart.title)
            {:error, reason} -> "<p>(#{escape(chart.path)}: #{:file.format_error(reason)})</p>"
          end

        [
          "<figure>\n",
          svg,
          ~s(\n<figcaption><a href="#{escape(chart.path)}">#{escape(chart.title)}</a></figcaption>\n),
          "</figure>\n"
        ]
      end)

    ["<h3>Charts</h3>\n", ~s(<div class="charts">\n), figures, "</div>\n"]
  end

  # gnuplot's SVG as an element of the page: no XML prolog, and its ids
  # (the same in every gnuplot SVG) made unique to this chart.
  defp inline_svg(svg, prefix, title) do
    svg
    |> String.replace(~r/\A.*?(?=<svg[\s>])/s, "")
    |> String.replace(~r/<title>.*?<\/title>/s, "<title>#{escape(title)}</title>", global: false)
    |> String.replace(~r/\bid=(['"])/, "id=\\1#{prefix}-")
    |> String.replace(~r/\bhref=(['"])#/, "href=\\1##{prefix}-")
    |> String.replace("url(#", "url(##{prefix}-")
    |> String.replace(~r/<svg\b/, ~s(<svg role="img"), global: false)
  end

  defp css do
    """
    body { margin: 0; background: #f6f7f9; color: #1d232b;
           font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
    main { max-width: 1100px; margin: 0 auto; padding: 1.5rem 2rem 4rem; background: #fff; }
    h1 { font-size: 1.8rem; margin-top: 0.5rem; }
    h2 { font-size: 1.4rem; margin-top: 2.5rem; padding-top: 1rem; border-top: 2px solid #e3e6ea; }
    h3 { font-size: 1.1rem; margin-top: 1.6rem; }
    table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
    th, td { border: 1px solid #d7dbe0; padding: 0.25rem 0.6rem; vertical-align: top; }
    th { background: #eef1f4; text-align: left; }
    tbody tr:nth-child(even) { background: #f8f9fb; }
    td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
    code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
           font-size: 0.88em; background: #f0f2f5; padding: 0.05rem 0.3rem; border-radius: 3px; }
    pre { background: #f0f2f5; padding: 0.8rem; overflow-x: auto; border-radius: 4px; }
    pre code { background: none; padding: 0; }
    .failed { border-left: 4px solid #c62828; padding-left: 1rem; }
    .failed h2 { color: #c62828; }
    .charts figure { margin: 1rem 0 2rem; }
    .charts svg { display: block; max-width: 100%; height: auto; border: 1px solid #e3e6ea; }
    figcaption { font-size: 0.85rem; color: #555; margin-top: 0.3rem; }
    a { color: #0b5cad; }
    """
  end

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
  def markdown_to_html(markdown, opts \\ []) do
    prefix = Keyword.get(opts, :id_prefix, "")

    image =
      Keyword.get(opts, :image, fn src, alt ->
        ~s(<p><img src="#{escape(src)}" alt="#{escape(alt)}"></p>\n)
      end)

    markdown
    |> String.replace("\r\n", "\n")
    |> String.split("\n")
    |> blocks([])
    |> Enum.map(fn
      {:image, alt, src} -> image.(src, alt)
      block -> block_html(block, prefix)
    end)
    |> IO.iodata_to_binary()
  end

  # lines -> [{:heading, level, text} | {:para, [line]} | {:table, [line]}
  #           | {:list, :ul | :ol, [item]} | {:code, [line]}]
  defp blocks([], acc), do: Enum.reverse(acc)

  defp blocks([line | rest] = lines, acc) do
    cond do
      blank?(line) ->
        blocks(rest, acc)

      String.starts_with?(String.trim_leading(line), "```") ->
        {code, rest} =
          Enum.split_while(rest, &(not String.starts_with?(String.trim_leading(&1), "```")))

        blocks(Enum.drop(rest, 1), [{:code, code} | acc])

      image = Regex.run(~r/^!\[([^\]]*)\]\(([^)\s]+)\)\s*$/, line) ->
        [_, alt, src] = image
        blocks(rest, [{:image, alt, src} | acc])

      match = Regex.run(~r/^(\#{1,6})\s+(.*?)\s*#*\s*$/, line) ->
        [_, hashes, text] = match
        blocks(rest, [{:heading, String.length(hashes), text} | acc])

      table_line?(line) ->
        {table, rest} = Enum.split_while(lines, &table_line?/1)
        blocks(rest, [{:table, table} | acc])

      list = list_kind(line) ->
        {items, rest} = list_items(lines, list, [])
        blocks(rest, [{:list, list, items} | acc])

      true ->
        {para, rest} = Enum.split_while(lines, &paragraph_line?/1)
        blocks(rest, [{:para, para} | acc])
    end
  end

  defp blank?(line), do: String.trim(line) == ""
  defp table_line?(line), do: String.starts_with?(String.trim_leading(line), "|")

  defp list_kind(line) do
    cond do
      line =~ ~r/^\s{0,3}[-*+]\s+/ -> :ul
      line =~ ~r/^\s{0,3}\d{1,9}[.)]\s+/ -> :ol
      true -> nil
    end
  end

  defp paragraph_line?(line) do
    not blank?(line) and not table_line?(line) and list_kind(line) == nil and
      not (line =~ ~r/^\#{1,6}\s/) and not String.starts_with?(String.trim_leading(line), "```")
  end

  # items of one list; an indented line continues the item above it
  defp list_items([line | rest] = lines, kind, items) do
    cond do
      list_kind(line) == kind ->
        text = String.replace(line, ~r/^\s{0,3}([-*+]|\d{1,9}[.)])\s+/, "")
        list_items(rest, kind, [text | items])

      items != [] and line =~ ~r/^\s{2,}\S/ ->
        [last | earlier] = items
        list_items(rest, kind, [last <> " " <> String.trim(line) | earlier])

      true ->
        {Enum.reverse(items), lines}
    end
  end

  defp list_items([], _kind, items), do: {Enum.reverse(items), []}

  defp block_html({:heading, level, text}, prefix) do
    id = text |> String.downcase() |> String.replace(~r/[^a-z0-9]+/u, "-") |> String.trim("-")
    ~s(<h#{level} id="#{escape(prefix)}#{id}">#{inline(text)}</h#{level}>\n)
  end

  defp block_html({:para, lines}, _) do
    ["<p>", lines |> Enum.map(&String.trim/1) |> Enum.join("\n") |> inline(), "</p>\n"]
  end

  defp block_html({:code, lines}, _) do
    ["<pre><code>", escape(Enum.join(lines, "\n")), "</code></pre>\n"]
  end

  defp block_html({:list, kind, items}, _) do
    ["<#{kind}>\n", Enum.map(items, &["<li>", inline(&1), "</li>\n"]), "</#{kind}>\n"]
  end

  defp block_html({:table, lines}, _) do
    rows = Enum.map(lines, &table_cells/1)

    {head, aligns, body} =
      case rows do
        [head, sep | body] ->
          if Enum.all?(sep, &(&1 =~ ~r/^:?-+:?$/)),
            do: {head, Enum.map(sep, &align/1), body},
            else: {nil, [], rows}

        _ ->
          {nil, [], rows}
      end

    [
      "<table>\n",
      if(head, do: ["<thead><tr>", row_html(head, "th", aligns), "</tr></thead>\n"], else: []),
      "<tbody>\n",
      Enum.map(body, &["<tr>", row_html(&1, "td", aligns), "</tr>\n"]),
      "</tbody>\n</table>\n"
    ]
  end

  defp row_html(cells, tag, aligns) do
    cells
    |> Enum.with_index()
    |> Enum.map(fn {cell, i} ->
      attrs =
        case {Enum.at(aligns, i), tag == "td" and numeric?(cell)} do
          {a, _} when a in ["center", "right"] -> ~s( style="text-align: #{a}")
          {_, true} -> ~s( class="num")
          _ -> ""
        end

      ["<#{tag}#{attrs}>", inline(cell), "</#{tag}>"]
    end)
  end

  defp align(sep) do
    case {String.starts_with?(sep, ":"), String.ends_with?(sep, ":")} do
      {true, true} -> "center"
      {false, true} -> "right"
      _ -> nil
    end
  end

  # a figure, possibly with a unit: "12.5", "1 234", "3.10 ms", "0.97x", "-4%"
  defp numeric?(cell) do
    cell =~ ~r/^[-+~]?\d[\d ,.]*(e[-+]?\d+)?\s*(x|%|[a-zA-Zµ\/]{1,8})?$/u and
      not (cell =~ ~r/^\d+\s+[a-zA-Z]+\s+\S/)
  end

  # splits "| a | b \| c |" into ["a", "b | c"]
  defp table_cells(line) do
    line
    |> String.trim()
    |> String.replace_prefix("|", "")
    |> drop_closing_pipe()
    |> String.split(~r/(?<!\\)\|/)
    |> Enum.map(&(&1 |> String.trim() |> String.replace("\\|", "|")))
  end

  defp drop_closing_pipe(text) do
    if String.ends_with?(text, "|") and not String.ends_with?(text, "\\|"),
      do: String.slice(text, 0..-2//1),
      else: text
  end

  # inline Markdown: `code`, **bold**, [text](url); everything escaped
  defp inline(text) do
    ~r/`[^`]+`/
    |> Regex.split(text, include_captures: true)
    |> Enum.map(fn piece ->
      if piece =~ ~r/\A`[^`]+`\z/,
        do: ["<code>", escape(String.slice(piece, 1..-2//1)), "</code>"],
        else: plain_inline(piece)
    end)
  end

  defp plain_inline(text) do
    text
    |> escape()
    |> String.replace(~r/\*\*(.+?)\*\*/s, "<strong>\\1</strong>")
    |> String.replace(~r/\[([^\]]+)\]\(([^)\s]+)\)/, ~s(<a href="\\2">\\1</a>))
  end

  defp escape(text) do
    text
    |> to_string()
    |> String.replace("&", "&amp;")
    |> String.replace("<", "&lt;")
    |> String.replace(">", "&gt;")
    |> String.replace(~s("), "&quot;")
  end

  defp fmt(x, digits), do: WellBehaved.Lab.Markdown.fmt(x, digits)
end
