defmodule WellBehaved.Lab.Plot.Script do
  @moduledoc false
  # Pieces of gnuplot scripts and data files that every kind of chart uses:
  # the preamble, the terminal, tics, quoting and numbers.

  @width 800
  @height 450

  @doc "The canvas of a chart, `{width, height}` in pixels; a heatmap may grow it."
  @spec size() :: {pos_integer(), pos_integer()}
  def size, do: {@width, @height}

  @doc "The lines every chart's script starts with: terminal, output, title, axis labels."
  @spec preamble(map(), :svg | :png, String.t(), pos_integer(), pos_integer()) :: [String.t()]
  def preamble(chart, format, image_file, width, height) do
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

  defp script_of(image_file), do: Path.rootname(image_file) <> ".gp"

  @doc "A script's lines (nested lists allowed) joined into its text."
  @spec join([term()]) :: String.t()
  def join(lines) do
    lines
    |> List.flatten()
    |> Enum.join("\n")
    |> Kernel.<>("\n")
  end

  @doc "Whether the x axis labels are long or many enough to be rotated."
  @spec long_labels?([String.t()], non_neg_integer()) :: boolean()
  def long_labels?(categories, many),
    do: Enum.any?(categories, &(String.length(&1) > 12)) or length(categories) > many

  @doc "The body of a `set xtics (...)`: each label at its index."
  @spec xtics([String.t()]) :: String.t()
  def xtics(categories) do
    categories
    |> Enum.with_index()
    |> Enum.map_join(", ", fn {c, i} -> "#{gp_string(c)} #{i}" end)
  end

  @doc "A gnuplot single-quoted string: `''` is a quote, nothing else is special."
  @spec gp_string(term()) :: String.t()
  def gp_string(text), do: "'" <> String.replace(one_line(text), "'", "''") <> "'"

  @doc "The text of `text` on one line: line breaks and tabs become a space."
  @spec one_line(term()) :: String.t()
  def one_line(text), do: String.replace(to_string(text), ~r/[\r\n\t]+/, " ")

  @doc "A value in a data file or script: `NaN` for a missing one."
  @spec number(number() | nil) :: String.t()
  def number(nil), do: "NaN"
  def number(v) when is_integer(v), do: Integer.to_string(v)
  def number(v) when is_float(v), do: :erlang.float_to_binary(v, [:short])

  @doc """
  A number in a few characters, for a label: 3 significant digits at most,
  no trailing zeros.
  """
  @spec short(number()) :: String.t()
  def short(v) do
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
end
