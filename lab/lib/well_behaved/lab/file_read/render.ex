defmodule WellBehaved.Lab.FileRead.Render do
  @moduledoc """
  The file suite's result as Markdown, charts and CSV tables: see
  `WellBehaved.Lab.FileRead.to_markdown/1`, `charts/1` and `tables/1`.
  """

  alias WellBehaved.Lab.{Markdown, Suite}
  alias WellBehaved.Lab.FileRead.Plan
  import WellBehaved.Lab.FileRead.Analysis, only: [row: 3]

  @doc "The suite's Markdown section (`WellBehaved.Lab.FileRead.to_markdown/1`)."
  @spec markdown(map()) :: String.t()
  def markdown(result) do
    c = result.config

    [
      """
      ## Reading lines from a file

      `WellBehaved.File` against `:file.read_line/1`, `File.stream!/1`, `:file.read/2` with \
      `:binary.split/3`, and plain C, on page-cached files. Medians of #{c.rounds} \
      interleaved round(s) in one child VM per file; a sample reads the whole file (small \
      files repeatedly, for at least 20 ms). "vs erl" is `:file.read_line` time over this \
      method's time at the same buffer size (higher is faster); "vs C" is this method's time \
      over C read + memchr's.

      """,
      Enum.map(result.shapes, &shape_md/1),
      "### Targets\n\n",
      Markdown.targets_table(result.targets)
    ]
    |> IO.iodata_to_binary()
  end

  defp shape_md(%{status: "ok"} = shape) do
    lines = hd(shape.rows).lines

    rows =
      for r <- shape.rows do
        erl = row(shape, :erl_read_line, r.buffer || 65_536)
        c = row(shape, :c_memchr, r.buffer || 65_536)

        [
          "`#{r.method}`",
          buffer_label(r.buffer),
          fmt(r.ns_per_line),
          fmt(r.mb_per_s),
          fmt(erl.ns_per_line / r.ns_per_line) <> "x",
          fmt(r.ns_per_line / c.ns_per_line) <> "x"
        ]
      end

    [
      "### #{shape.name}: #{lines} lines, #{shape.bytes} bytes\n\n",
      Markdown.table(["method", "buffer", "ns/line", "MB/s", "vs erl", "vs C"], rows),
      "\n"
    ]
  end

  defp shape_md(shape) do
    error =
      case Map.get(shape, :error) do
        e when e in [nil, ""] -> ""
        e -> "```\n#{String.replace(e, "`", "'")}\n```\n\n"
      end

    [
      "### #{shape.name}: #{shape.bytes} bytes\n\n",
      "**#{shape.status}**: not measured.\n\n",
      error
    ]
  end

  defp buffer_label(nil), do: "default"
  defp buffer_label(b) when b >= 1_048_576, do: "#{div(b, 1_048_576)} MiB"
  defp buffer_label(b), do: "#{div(b, 1024)} KiB"

  @doc "The suite's charts (`WellBehaved.Lab.FileRead.charts/1`)."
  @spec charts(map()) :: [Suite.chart()]
  def charts(result) do
    for shape <- result.shapes, shape.status == "ok" do
      methods = shape.rows |> Enum.map(& &1.method) |> Enum.uniq()

      %{
        name: "file_" <> Plan.slug(shape.name),
        title: "Reading lines: #{shape.name}, ns per line",
        kind: :bars,
        x_label: "method",
        y_label: "ns per line",
        log_y: true,
        categories: Enum.map(methods, &Atom.to_string/1),
        series:
          for buffer <- Plan.buffers() do
            %{
              label: buffer_label(buffer) <> " buffer",
              values:
                for m <- methods do
                  r = row(shape, m, buffer) || row(shape, m, nil)
                  r && r.ns_per_line
                end
            }
          end
      }
    end
  end

  @doc "The suite's CSV tables (`WellBehaved.Lab.FileRead.tables/1`)."
  @spec tables(map()) :: [Suite.table()]
  def tables(result) do
    rows =
      Enum.flat_map(result.shapes, fn shape ->
        case Map.get(shape, :rows, []) do
          [] ->
            [[shape.name, nil, nil, nil, shape.bytes, nil, nil, nil, shape.status]]

          rows ->
            for r <- rows do
              [
                shape.name,
                r.method,
                r.buffer,
                r.lines,
                shape.bytes,
                r.ns_per_line,
                r.mb_per_s,
                r.rounds,
                shape.status
              ]
            end
        end
      end)

    [
      %{
        name: "lines",
        columns:
          ~w(shape method buffer_bytes lines file_bytes ns_per_line mb_per_s rounds status),
        rows: rows
      }
    ]
  end

  defp fmt(x), do: Markdown.fmt_auto(x)
end
