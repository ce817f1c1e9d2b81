defmodule WellBehaved.Lab.Plot do
  @moduledoc """
  Renders a lab chart (the map described in `WellBehaved.Lab.Suite`) with
  gnuplot.

  `render/3` writes `<name>.dat` (the numbers: for `:bars` and `:lines` one
  row per category, one column per series; for `:heatmap` one row per
  cell) and `<name>.gp` (the gnuplot script) into a folder, runs gnuplot on
  them under coreutils `timeout`, and returns the path of the image. The
  data and script files stay, so a chart can be redrawn or restyled by hand
  (`cd DIR && gnuplot NAME.gp`).

    * `:bars` - a clustered histogram: the categories on the x axis, one bar
      per series in each cluster.
    * `:lines` - one line with points per series over the categories.
    * `:heatmap` - a grid of coloured cells: the categories are the columns
      (x axis), `rows:` the rows (y axis, the first at the top), `values:`
      one list per row. A sequential, colour-blind-safe scale (light yellow
      to dark red, ColorBrewer's YlOrRd) with a colour box titled
      `color_label:`, logarithmic with `log_scale: true`. Each cell shows a
      label: `labels:` (one list per row; `nil` or `""` for none), by
      default the value, formatted short; dark text on light cells, white on
      dark ones. The canvas grows with the number of columns and rows.

  A value that is `nil`, not a number, or (with `log_y: true`, or a
  heatmap's `log_scale: true`) not above zero is missing: no bar, no point;
  a neutral grey heatmap cell with its label (by default `-`). A chart with
  no value at all still renders: bars and lines as an empty frame that
  says "no data", a heatmap as grey cells (or, with no cell at all, as
  "no data").

  gnuplot comes from the Debian package `gnuplot-nox` (or `gnuplot`).
  """

  alias WellBehaved.Lab.Suite
  # Chart checks the map; XY (bars and lines) and Heatmap write the data
  # file and the script, from the pieces in Script.
  alias WellBehaved.Lab.Plot.{Chart, Heatmap, XY}

  @default_timeout_s 30
  @package "gnuplot-nox"

  @doc """
  Renders `chart` into `dir` (created if needed) and returns the image's
  path, `dir/<name>.svg`.

  Options:

    * `format:` - `:svg` (default) or `:png` (gnuplot's `pngcairo`
      terminal, for a quick look at a chart without a browser).
    * `timeout_s:` - gnuplot is killed after this many seconds (default 30).

  Raises if gnuplot is not installed (naming the Debian package), if it
  fails or times out, or if the chart map is malformed.
  """
  @spec render(Suite.chart(), Path.t(), keyword()) :: Path.t()
  def render(chart, dir, opts \\ []) do
    opts = Keyword.validate!(opts, format: :svg, timeout_s: @default_timeout_s)
    format = Keyword.fetch!(opts, :format)
    unless format in [:svg, :png], do: raise(ArgumentError, "format: expects :svg or :png")

    chart = Chart.normalize!(chart)
    kind = if chart.kind == :heatmap, do: Heatmap, else: XY
    gnuplot = gnuplot!()
    File.mkdir_p!(dir)

    stem = file_stem(chart.name)
    data_file = stem <> ".dat"
    script_file = stem <> ".gp"
    image_file = "#{stem}.#{format}"

    File.write!(Path.join(dir, data_file), kind.data(chart))
    File.write!(Path.join(dir, script_file), kind.script(chart, data_file, image_file, format))

    image = Path.join(dir, image_file)
    File.rm(image)
    run_gnuplot(gnuplot, dir, script_file, Keyword.fetch!(opts, :timeout_s))

    case File.stat(image) do
      {:ok, %{size: size}} when size > 0 -> image
      _ -> raise "gnuplot wrote no image for chart #{inspect(chart.name)} (#{image})"
    end
  end

  @doc """
  A file name stem made of `name`: letters, digits, `-`, `_` and `.` are
  kept, anything else becomes `_`.
  """
  @spec file_stem(String.t()) :: String.t()
  def file_stem(name) do
    case String.replace(to_string(name), ~r/[^A-Za-z0-9_.-]/u, "_") do
      "" -> "chart"
      "." <> _ = stem -> "_" <> stem
      stem -> stem
    end
  end

  @doc "The path of the gnuplot executable, or a raise naming the Debian package."
  @spec gnuplot!() :: String.t()
  def gnuplot! do
    System.find_executable("gnuplot") ||
      raise "gnuplot is not installed: the lab's charts need the Debian package " <>
              "#{@package} (as root: apt-get install -y #{@package})"
  end

  # ---- running gnuplot ----------------------------------------------------------------

  defp run_gnuplot(gnuplot, dir, script_file, timeout_s) do
    {cmd, args} =
      case System.find_executable("timeout") do
        nil -> {gnuplot, ["-d", script_file]}
        timeout -> {timeout, ["--kill-after=5", to_string(timeout_s), gnuplot, "-d", script_file]}
      end

    case System.cmd(cmd, args, cd: dir, stderr_to_stdout: true, env: [{"DISPLAY", nil}]) do
      {_output, 0} ->
        :ok

      {_output, status} when status in [124, 137] ->
        raise "gnuplot did not finish #{Path.join(dir, script_file)} within #{timeout_s} s"

      {output, status} ->
        raise "gnuplot failed (exit status #{status}) on #{Path.join(dir, script_file)}:\n" <>
                String.trim(output)
    end
  end
end
