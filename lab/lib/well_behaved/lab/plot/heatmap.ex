defmodule WellBehaved.Lab.Plot.Heatmap do
  @moduledoc false
  # The data file and gnuplot script of a :heatmap chart: a grid of
  # coloured cells on a sequential, colour-blind-safe scale, each with its
  # label in dark or white text, whichever reads better on its colour.

  import WellBehaved.Lab.Plot.Script,
    only: [
      gp_string: 1,
      join: 1,
      long_labels?: 2,
      number: 1,
      one_line: 1,
      preamble: 5,
      short: 1,
      size: 0,
      xtics: 1
    ]

  # ColorBrewer YlOrRd, 9 classes: sequential and colour-blind safe
  @heat_colors ~w(#ffffcc #ffeda0 #fed976 #feb24c #fd8d3c #fc4e2a #e31a1c #bd0026 #800026)
  @missing_color "#c8c8c8"
  # relative luminance below which a cell's label is white: where white and
  # black text have the same contrast
  @dark_luminance 0.179

  @doc """
  The data file: one row per cell, with its column, its row counted from
  the bottom, its value (NaN if missing) and 1 if it is missing; names and
  labels go into the script, where they can be quoted properly.
  """
  @spec data(map()) :: String.t()
  def data(chart) do
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

  @doc "The gnuplot script drawing `data_file` into `image_file`."
  @spec script(map(), String.t(), String.t(), :svg | :png) :: String.t()
  def script(chart, data_file, image_file, format) do
    ncols = length(chart.categories)
    nrows = length(chart.rows)
    {min_width, min_height} = size()
    # room for each column's label and each row's
    width = max(min_width, 200 + 75 * ncols)
    height = max(min_height, 220 + 40 * nrows)
    present = chart.values |> List.flatten() |> Enum.reject(&is_nil/1)
    range = color_range(present, chart.log_scale)
    empty = ncols == 0 or nrows == 0

    join([
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
        else: plot(data_file, present, length(present) < ncols * nrows)
      ),
      "unset output"
    ])
  end

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
  defp plot(data_file, present, missing?) do
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
end
