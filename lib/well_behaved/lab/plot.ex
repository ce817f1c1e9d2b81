defmodule WellBehaved.Lab.Plot do
  @moduledoc """
  Renders a lab chart (the map described in `WellBehaved.Lab.Suite`) with
  gnuplot.

  `render/3` writes `<name>.dat` (the numbers, one row per category, one
  column per series) and `<name>.gp` (the gnuplot script) into a folder,
  runs gnuplot on them under coreutils `timeout`, and returns the path of
  the image. The data and script files stay, so a chart can be redrawn or
  restyled by hand (`cd DIR && gnuplot NAME.gp`).

    * `:bars` - a clustered histogram: the categories on the x axis, one bar
      per series in each cluster.
    * `:lines` - one line with points per series over the categories.

  A value that is `nil`, not a number, or (with `log_y: true`) not above
  zero is missing: no bar, no point. A chart with no value at all still
  renders, as an empty frame that says "no data".

  gnuplot comes from the Debian package `gnuplot-nox` (or `gnuplot`).
  """

  alias WellBehaved.Lab.Suite

  @default_timeout_s 30
  @width 800
  @height 450
  # Okabe-Ito, colour-blind safe, black last
  @colors ~w(#0072B2 #E69F00 #009E73 #D55E00 #56B4E9 #CC79A7 #F0E442 #000000)
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
    kind = fetch!(chart, :kind)
    categories = fetch!(chart, :categories)
    series = fetch!(chart, :series)

    unless kind in [:bars, :lines] do
      raise ArgumentError,
            "chart #{inspect(name)}: kind must be :bars or :lines, got #{inspect(kind)}"
    end

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

  defp normalize!(chart), do: raise(ArgumentError, "a chart is a map, got #{inspect(chart)}")

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

  defp script(chart, data_file, image_file, format) do
    n = length(chart.categories)
    empty = values(chart) == [] or chart.series == []

    terminal =
      case format do
        :svg ->
          "set terminal svg size #{@width},#{@height} noenhanced font 'sans,12' " <>
            "background rgb 'white'"

        :png ->
          "set terminal pngcairo size #{@width},#{@height} noenhanced font 'sans,10' " <>
            "background rgb 'white'"
      end

    long_labels = Enum.any?(chart.categories, &(String.length(&1) > 12)) or n > 8

    [
      "# #{one_line(chart.title)}: written by WellBehaved.Lab.Plot; redraw: gnuplot #{script_of(image_file)}",
      terminal,
      "set output #{gp_string(image_file)}",
      "set encoding utf8",
      "set datafile separator tab",
      "set datafile missing 'NaN'",
      "set title #{gp_string(chart.title)} font ',14'",
      "set xlabel #{gp_string(chart.x_label)}",
      "set ylabel #{gp_string(chart.y_label)}",
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
