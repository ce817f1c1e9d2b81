defmodule WellBehaved.Lab.Report.Html do
  @moduledoc false
  # report.html: the report as one standalone page, its charts' SVG
  # inlined (each with ids of its own) and a style sheet of its own.

  alias WellBehaved.Lab.Plot
  alias WellBehaved.Lab.Report.{Document, Suites}

  import WellBehaved.Lab.Report.MarkdownHtml, only: [escape: 1, to_html: 2]

  @doc """
  The page: `header` (the report's Markdown header, its top charts
  inlined), then one `<section>` per suite; the charts are read from `dir`.
  """
  @spec page(map(), String.t(), [Suites.section()], Path.t()) :: String.t()
  def page(info, header, sections, dir) do
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
      to_html(header, image: inline),
      Enum.with_index(sections, 1)
      |> Enum.map(fn {s, i} ->
        id = "suite-#{Plot.file_stem(s.suite.name)}"
        more = IO.iodata_to_binary([Document.csv_md(s.csv), Document.problems_md(s.problems)])

        [
          ~s(<section class="suite#{if s.failed, do: " failed"}" id="#{escape(id)}">\n),
          to_html(s.markdown, id_prefix: "#{id}-"),
          charts_html(s.charts, dir, i),
          to_html(more, id_prefix: "#{id}-"),
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
end
