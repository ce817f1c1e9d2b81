defmodule WellBehaved.Lab.Plot.XY do
  @moduledoc false
  # The data file and gnuplot script of a :bars or :lines chart: one row per
  # category, one column per series.

  import WellBehaved.Lab.Plot.Script,
    only: [
      gp_string: 1,
      join: 1,
      long_labels?: 2,
      number: 1,
      one_line: 1,
      preamble: 5,
      size: 0,
      xtics: 1
    ]

  # Okabe-Ito, colour-blind safe, black last
  @colors ~w(#0072B2 #E69F00 #009E73 #D55E00 #56B4E9 #CC79A7 #F0E442 #000000)

  @doc """
  The data file: numbers only, column 1 the category's index; the category
  labels go into the script as xtics, where they can be quoted properly.
  """
  @spec data(map()) :: String.t()
  def data(chart) do
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

  @doc "The gnuplot script drawing `data_file` into `image_file`."
  @spec script(map(), String.t(), String.t(), :svg | :png) :: String.t()
  def script(chart, data_file, image_file, format) do
    n = length(chart.categories)
    empty = values(chart) == [] or chart.series == []
    long_labels = long_labels?(chart.categories, 8)
    {width, height} = size()

    join([
      preamble(chart, format, image_file, width, height),
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
    ])
  end

  defp values(chart), do: Enum.flat_map(chart.series, & &1.values) |> Enum.reject(&is_nil/1)

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
end
