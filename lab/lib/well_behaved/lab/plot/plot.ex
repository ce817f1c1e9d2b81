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

  @default_timeout_s 30
  @width 800
  @height 450
  # Okabe-Ito, colour-blind safe, black last
  @colors ~w(#0072B2 #E69F00 #009E73 #D55E00 #56B4E9 #CC79A7 #F0E442 #000000)
  @package "gnuplot-nox"
  # ColorBrewer YlOrRd, 9 classes: sequential and colour-blind safe
  @heat_colors ~w(#ffffcc #ffeda0 #fed976 #feb24c #fd8d3c #fc4e2a #e31a1c #bd0026 #800026)
  @missing_color "#c8c8c8"
  # relative luminance below which a cell's label is white: where white and
  # black text have the same contrast
  @dark_luminance 0.179

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

    chart = normalize!(chart)
    gnuplot = gnuplot!()
    File.mkdir_p!(dir)

    stem = file_stem(chart.name)
    data_file = stem <> ".dat"
    script_file = stem <> ".gp"
    image_file = "#{stem}.#{format}"

    File.write!(Path.join(dir, data_file), data(chart))
    File.write!(Path.join(dir, script_file), script(chart, data_file, image_file, format))

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

  # ---- the chart map ------------------------------------------------------------

  defp normalize!(chart) when is_map(chart) do
    name = fetch!(chart, :name)

    case fetch!(chart, :kind) do
      kind when kind in [:bars, :lines] ->
        normalize_xy!(chart, name, kind)

      :heatmap ->
        normalize_heatmap!(chart, name)

      kind ->
        raise ArgumentError,
              "chart #{inspect(name)}: kind must be :bars, :lines or :heatmap, " <>
                "got #{inspect(kind)}"
    end
  end

  defp normalize!(chart), do: raise(ArgumentError, "a chart is a map, got #{inspect(chart)}")

  defp normalize_xy!(chart, name, kind) do
    categories = fetch!(chart, :categories)
    series = fetch!(chart, :series)

    unless is_list(categories) and is_list(series) do
      raise ArgumentError, "chart #{inspect(name)}: categories and series must be lists"
    end

    n = length(categories)

    series =
      for s <- series do
        values = Map.get(s, :values) || []

        unless is_list(values) and length(values) == n do
          raise ArgumentError,
                "chart #{inspect(name)}: series #{inspect(Map.get(s, :label))} has " <>
                  "#{if is_list(values), do: length(values), else: "no list of"} values " <>
                  "for #{n} categories"
        end

        %{label: to_string(Map.get(s, :label) || ""), values: values}
      end

    log_y = Map.get(chart, :log_y, false) == true

    %{
      name: to_string(name),
      title: to_string(Map.get(chart, :title) || name),
      kind: kind,
      x_label: to_string(Map.get(chart, :x_label) || ""),
      y_label: to_string(Map.get(chart, :y_label) || ""),
      log_y: log_y,
      categories: Enum.map(categories, &to_string/1),
      series: Enum.map(series, fn s -> %{s | values: Enum.map(s.values, &clean(&1, log_y))} end)
    }
  end

  defp normalize_heatmap!(chart, name) do
    categories = fetch!(chart, :categories)
    rows = fetch!(chart, :rows)
    values = fetch!(chart, :values)
    labels = Map.get(chart, :labels)

    unless is_list(categories) and is_list(rows) and is_list(values) do
      raise ArgumentError, "chart #{inspect(name)}: categories, rows and values must be lists"
    end

    grid!(name, "values", values, rows, categories)
    if labels != nil, do: grid!(name, "labels", labels, rows, categories)

    log_scale = Map.get(chart, :log_scale, false) == true
    values = Enum.map(values, fn row -> Enum.map(row, &clean(&1, log_scale)) end)

    labels =
      if labels == nil do
        Enum.map(values, fn row -> Enum.map(row, &default_label/1) end)
      else
        Enum.map(labels, fn row -> Enum.map(row, &label!(name, &1)) end)
      end

    %{
      name: to_string(name),
      title: to_string(Map.get(chart, :title) || name),
      kind: :heatmap,
      x_label: to_string(Map.get(chart, :x_label) || ""),
      y_label: to_string(Map.get(chart, :y_label) || ""),
      color_label: to_string(Map.get(chart, :color_label) || ""),
      log_scale: log_scale,
      categories: Enum.map(categories, &to_string/1),
      rows: Enum.map(rows, &to_string/1),
      values: values,
      labels: labels
    }
  end

  # one list per row, each with one entry per category
  defp grid!(name, what, grid, rows, categories) do
    unless is_list(grid) and length(grid) == length(rows) do
      raise ArgumentError,
            "chart #{inspect(name)}: #{what} must be a list with one list per row: " <>
              "#{length(rows)} rows, got #{if is_list(grid), do: length(grid), else: inspect(grid)}"
    end

    n = length(categories)

    for {row, list} <- Enum.zip(rows, grid), not (is_list(list) and length(list) == n) do
      raise ArgumentError,
            "chart #{inspect(name)}: row #{inspect(row)} has " <>
              "#{if is_list(list), do: length(list), else: "no list of"} #{what} " <>
              "for #{n} categories"
    end

    :ok
  end

  defp label!(_name, label) when label in [nil, ""], do: nil
  defp label!(_name, label) when is_binary(label) or is_number(label), do: one_line(label)

  defp label!(name, label) do
    raise ArgumentError,
          "chart #{inspect(name)}: a label must be a string, a number or nil, " <>
            "got #{inspect(label)}"
  end

  defp default_label(nil), do: "-"
  defp default_label(v), do: short(v)

  # a number in a few characters: 3 significant digits at most, no
  # trailing zeros
  defp short(v) do
    a = abs(v)

    cond do
      a >= 1.0e6 or (a < 1.0e-3 and a > 0) ->
        :erlang.float_to_binary(v * 1.0, [{:scientific, 1}])

      a >= 100 or v == trunc(v) ->
        Integer.to_string(round(v))

      true ->
        (v * 1.0)
        |> :erlang.float_to_binary([:compact, decimals: 2 - floor(:math.log10(a))])
        |> String.trim_trailing(".0")
    end
  end

  defp fetch!(chart, key) do
    case Map.fetch(chart, key) do
      {:ok, value} -> value
      :error -> raise ArgumentError, "chart #{inspect(Map.get(chart, :name))} has no #{key}:"
    end
  end

  # a value gnuplot can draw, or nil (missing)
  defp clean(v, true) when is_number(v) and v > 0, do: v
  defp clean(v, false) when is_number(v), do: v
  defp clean(_, _), do: nil

  defp values(chart), do: Enum.flat_map(chart.series, & &1.values) |> Enum.reject(&is_nil/1)

  # ---- files ------------------------------------------------------------------------

  # One row per cell: its column, its row counted from the bottom, its value
  # (NaN if missing) and 1 if it is missing; names and labels go into the
  # script, where they can be quoted properly.
  defp data(%{kind: :heatmap} = chart) do
    header = "# column\trow (0: bottom)\tvalue\tmissing\n"

    rows =
      for {x, y, value, where} <- cells(chart) do
        [
          Integer.to_string(x),
          "\t",
          Integer.to_string(y),
          "\t",
          number(value),
          "\t",
          if(value == nil, do: "1", else: "0"),
          "\t# ",
          one_line(where),
          "\n"
        ]
      end

    IO.iodata_to_binary([header | rows])
  end

  # Numbers only: the category labels go into the script as xtics, where
  # they can be quoted properly. Column 1 is the category's index.
  defp data(chart) do
    header = ["# index", Enum.map(chart.series, &["\t", one_line(&1.label)]), "\n"]

    rows =
      chart.categories
      |> Enum.with_index()
      |> Enum.map(fn {category, i} ->
        cells = Enum.map(chart.series, &number(Enum.at(&1.values, i)))
        [Integer.to_string(i), Enum.map(cells, &["\t", &1]), "\t# ", one_line(category), "\n"]
      end)

    IO.iodata_to_binary([header | rows])
  end

  defp number(nil), do: "NaN"
  defp number(v) when is_integer(v), do: Integer.to_string(v)
  defp number(v) when is_float(v), do: :erlang.float_to_binary(v, [:short])

  defp script(%{kind: :heatmap} = chart, data_file, image_file, format) do
    ncols = length(chart.categories)
    nrows = length(chart.rows)
    # room for each column's label and each row's
    width = max(@width, 200 + 75 * ncols)
    height = max(@height, 220 + 40 * nrows)
    present = chart.values |> List.flatten() |> Enum.reject(&is_nil/1)
    range = color_range(present, chart.log_scale)
    empty = ncols == 0 or nrows == 0

    [
      preamble(chart, format, image_file, width, height),
      "set border 0",
      "set tics scale 0",
      "unset key",
      if(empty,
        do: ["unset xtics", "unset ytics"],
        else: [
          "set xtics (#{xtics(chart.categories)})",
          if(long_labels?(chart.categories, 6), do: "set xtics rotate by -30 left", else: []),
          "set ytics (#{chart.rows |> Enum.reverse() |> xtics()})"
        ]
      ),
      "set xrange [-0.5:#{max(ncols, 1) - 0.5}]",
      "set yrange [-0.5:#{max(nrows, 1) - 0.5}]",
      "set palette defined (#{palette()})",
      "set cblabel #{gp_string(chart.color_label)}",
      color_axis(range, chart.log_scale),
      "set style fill solid 1.0 border lc rgb 'white'",
      cell_labels(chart, range, if(ncols > 8, do: 9, else: 10)),
      if(empty,
        do: [
          "set label 'no data' at graph 0.5, graph 0.5 center font ',16' tc rgb '#888888'",
          "plot NaN notitle"
        ],
        else: heatmap_plot(data_file, present, length(present) < ncols * nrows)
      ),
      "unset output"
    ]
    |> List.flatten()
    |> Enum.join("\n")
    |> Kernel.<>("\n")
  end

  defp script(chart, data_file, image_file, format) do
    n = length(chart.categories)
    empty = values(chart) == [] or chart.series == []
    long_labels = long_labels?(chart.categories, 8)

    [
      preamble(chart, format, image_file, @width, @height),
      "set border 3",
      "set tics nomirror",
      "set style line 100 lc rgb '#d0d0d0' lw 1 dt 1",
      "set style line 101 lc rgb '#ececec' lw 1 dt 1",
      "set grid ytics ls 100",
      "set key outside right top vertical Left reverse noautotitle samplen 2",
      Enum.with_index(@colors, 1)
      |> Enum.map(fn {c, i} -> "set linetype #{i} lc rgb '#{c}' lw 2 pt #{point(i)} ps 1.1" end),
      "set linetype cycle #{length(@colors)}",
      "set xtics (#{xtics(chart.categories)})",
      if(long_labels, do: "set xtics rotate by -30 left", else: "set xtics norotate"),
      "set xrange [-0.5:#{max(n, 1) - 0.5}]",
      y_axis(chart, empty),
      if(empty,
        do: [
          "set label 1 'no data' at graph 0.5, graph 0.5 center font ',16' tc rgb '#888888'",
          "plot NaN notitle"
        ],
        else: plot(chart, data_file)
      ),
      "unset output"
    ]
    |> List.flatten()
    |> Enum.join("\n")
    |> Kernel.<>("\n")
  end

  # the lines every chart's script starts with
  defp preamble(chart, format, image_file, width, height) do
    [
      "# #{one_line(chart.title)}: written by WellBehaved.Lab.Plot; redraw: gnuplot #{script_of(image_file)}",
      terminal(format, width, height),
      "set output #{gp_string(image_file)}",
      "set encoding utf8",
      "set datafile separator tab",
      "set datafile missing 'NaN'",
      "set title #{gp_string(chart.title)} font ',14'",
      "set xlabel #{gp_string(chart.x_label)}",
      "set ylabel #{gp_string(chart.y_label)}"
    ]
  end

  defp terminal(:svg, width, height),
    do:
      "set terminal svg size #{width},#{height} noenhanced font 'sans,12' background rgb 'white'"

  defp terminal(:png, width, height),
    do:
      "set terminal pngcairo size #{width},#{height} noenhanced font 'sans,10' " <>
        "background rgb 'white'"

  defp long_labels?(categories, many),
    do: Enum.any?(categories, &(String.length(&1) > 12)) or length(categories) > many

  defp script_of(image_file), do: Path.rootname(image_file) <> ".gp"

  defp xtics(categories) do
    categories
    |> Enum.with_index()
    |> Enum.map_join(", ", fn {c, i} -> "#{gp_string(c)} #{i}" end)
  end

  defp point(i), do: Enum.at([7, 5, 9, 11, 13, 15, 1, 2], rem(i - 1, 8))

  defp y_axis(chart, true = _empty) do
    if chart.log_y,
      do: ["set logscale y", "set yrange [1:10]"],
      else: "set yrange [0:1]"
  end

  defp y_axis(chart, false) do
    if chart.log_y do
      ["set logscale y 10", "set format y '%g'", "set grid ytics mytics ls 100, ls 101"]
    else
      # bars start at zero; so do lines of non-negative data
      if Enum.all?(values(chart), &(&1 >= 0)), do: "set yrange [0:*]", else: "set autoscale y"
    end
  end

  defp plot(%{kind: :bars} = chart, data_file) do
    # a series without a value would stop gnuplot ("no valid points")
    plots =
      chart.series
      |> Enum.with_index(2)
      |> Enum.map(fn {s, col} ->
        if Enum.all?(s.values, &is_nil/1),
          do: "keyentry with boxes lt #{col - 1} title #{gp_string(s.label <> " (no data)")}",
          else: "#{gp_string(data_file)} using #{col} lt #{col - 1} title #{gp_string(s.label)}"
      end)

    [
      "set style data histograms",
      "set style histogram clustered gap 1",
      "set style fill solid 0.9 border rgb '#333333'",
      "set boxwidth 0.9 relative",
      "plot " <> Enum.join(plots, ", \\\n     ")
    ]
  end

  defp plot(%{kind: :lines} = chart, data_file) do
    plots =
      chart.series
      |> Enum.with_index(2)
      |> Enum.map(fn {s, col} ->
        if Enum.all?(s.values, &is_nil/1),
          do:
            "keyentry with linespoints lt #{col - 1} title #{gp_string(s.label <> " (no data)")}",
          else:
            "#{gp_string(data_file)} using 1:#{col} with linespoints lt #{col - 1} " <>
              "title #{gp_string(s.label)}"
      end)

    ["plot " <> Enum.join(plots, ", \\\n     ")]
  end

  # ---- heatmaps ------------------------------------------------------------------------

  # {column, row from the bottom, value or nil, "category / row"}, the top
  # row first
  defp cells(chart) do
    top = length(chart.rows) - 1

    for {{row, values}, i} <- Enum.with_index(Enum.zip(chart.rows, chart.values)),
        {{category, value}, x} <- Enum.with_index(Enum.zip(chart.categories, values)),
        do: {x, top - i, value, "#{category} / #{row}"}
  end

  # the colour scale's ends: those of the values, widened if they are one
  defp color_range([], true), do: {1, 10}
  defp color_range([], false), do: {0, 1}

  defp color_range(values, log) do
    {lo, hi} = Enum.min_max(values)

    cond do
      lo < hi -> {lo, hi}
      log -> {lo / 2, hi * 2}
      lo == 0 -> {-1, 1}
      true -> {lo - abs(lo) / 2, hi + abs(hi) / 2}
    end
  end

  defp color_axis({lo, hi}, log) do
    range = "set cbrange [#{number(lo)}:#{number(hi)}]"

    if log,
      do: ["set logscale cb 10", range, "set cbtics (#{log_tics(lo, hi)})"],
      else: [range, "set cbtics"]
  end

  # tics on a log colour box: 1, 2, 5 per decade within a few decades,
  # decades only over a wider range
  defp log_tics(lo, hi) do
    first = floor(:math.log10(lo))
    last = ceil(:math.log10(hi))
    steps = if last - first > 3, do: [1], else: [1, 2, 5]

    tics =
      for e <- first..last,
          m <- steps,
          t = m * :math.pow(10, e),
          t >= lo * 0.999,
          t <= hi * 1.001,
          do: t

    tics = if tics == [], do: [lo, hi], else: tics
    Enum.map_join(tics, ", ", &"#{gp_string(short(&1))} #{number(&1 * 1.0)}")
  end

  defp palette do
    n = length(@heat_colors) - 1

    @heat_colors
    |> Enum.with_index()
    |> Enum.map_join(", ", fn {c, i} -> "#{number(i / n)} '#{c}'" end)
  end

  defp cell_labels(chart, range, font_size) do
    for {{x, y, value, _}, label} <- Enum.zip(cells(chart), List.flatten(chart.labels)),
        label != nil do
      color = if dark?(value, range, chart.log_scale), do: "#ffffff", else: "#000000"

      "set label #{gp_string(label)} at #{x}, #{y} center front " <>
        "font ',#{font_size}' tc rgb '#{color}'"
    end
  end

  # whether a cell's colour is dark enough for white text
  defp dark?(nil, _range, _log), do: luminance(@missing_color) < @dark_luminance

  defp dark?(value, {lo, hi}, log) do
    t =
      if log,
        do: (:math.log10(value) - :math.log10(lo)) / (:math.log10(hi) - :math.log10(lo)),
        else: (value - lo) / (hi - lo)

    luminance(palette_rgb(min(max(t, 0.0), 1.0))) < @dark_luminance
  end

  # the palette's colour at t in 0..1, as gnuplot interpolates it (linearly
  # in RGB between the defined colours)
  defp palette_rgb(t) do
    n = length(@heat_colors) - 1
    i = min(floor(t * n), n - 1)
    f = t * n - i
    {r0, g0, b0} = rgb(Enum.at(@heat_colors, i))
    {r1, g1, b1} = rgb(Enum.at(@heat_colors, i + 1))
    {r0 + (r1 - r0) * f, g0 + (g1 - g0) * f, b0 + (b1 - b0) * f}
  end

  defp rgb("#" <> hex) do
    <<r::8, g::8, b::8>> = Base.decode16!(hex, case: :mixed)
    {r, g, b}
  end

  # WCAG relative luminance of an sRGB colour
  defp luminance("#" <> _ = color), do: luminance(rgb(color))

  defp luminance({r, g, b}) do
    [r, g, b] =
      for c <- [r, g, b] do
        c = c / 255
        if c <= 0.04045, do: c / 12.92, else: :math.pow((c + 0.055) / 1.055, 2.4)
      end

    0.2126 * r + 0.7152 * g + 0.0722 * b
  end

  # coloured cells, then grey ones; a plot without a valid point would stop
  # gnuplot, so a kind of cell that is not there is not plotted
  defp heatmap_plot(data_file, present, missing?) do
    file = gp_string(data_file)

    plots =
      if(present != [],
        do: ["#{file} using 1:2:(0.5):(0.5):3 with boxxyerror fc palette"],
        else: []
      ) ++
        if missing?,
          do: [
            "#{file} using 1:($4 > 0 ? $2 : NaN):(0.5):(0.5) with boxxyerror " <>
              "fc rgb '#{@missing_color}'"
          ],
          else: []

    ["plot " <> Enum.join(plots, ", \\\n     ")]
  end

  # a gnuplot single-quoted string: '' is a quote, nothing else is special
  defp gp_string(text), do: "'" <> String.replace(one_line(text), "'", "''") <> "'"

  defp one_line(text), do: String.replace(to_string(text), ~r/[\r\n\t]+/, " ")

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
