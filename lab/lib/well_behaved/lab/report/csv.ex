defmodule WellBehaved.Lab.Report.CSV do
  @moduledoc false
  # The report's CSV files: one per table of a suite's tables/1.

  @doc """
  One CSV record: fields joined by commas, a field quoted (its quotes
  doubled) when it holds a comma, a quote, a line break, or leading or
  trailing spaces. `nil` is an empty field; atoms are written by name.
  """
  @spec line([term()]) :: String.t()
  def line(cells), do: Enum.map_join(cells, ",", &cell/1) <> "\n"

  @doc """
  Writes `table` (`columns:`, a list, and `rows:`, a list of lists) to
  `path`, its folder created if needed, and returns the number of rows.
  Raises `ArgumentError` if the table is not of that shape.
  """
  @spec write!(Path.t(), map()) :: non_neg_integer()
  def write!(path, table) do
    columns = Map.get(table, :columns) || []
    rows = Map.get(table, :rows) || []

    unless is_list(columns) and is_list(rows) and Enum.all?(rows, &is_list/1) do
      raise ArgumentError, "a table needs a list of columns and a list of rows (lists)"
    end

    File.mkdir_p!(Path.dirname(path))
    File.write!(path, [line(columns) | Enum.map(rows, &line/1)])
    length(rows)
  end

  defp cell(nil), do: ""
  defp cell(v) when is_boolean(v), do: Atom.to_string(v)
  defp cell(v) when is_atom(v), do: quote_text(Atom.to_string(v))
  defp cell(v) when is_integer(v), do: Integer.to_string(v)
  defp cell(v) when is_float(v), do: :erlang.float_to_binary(v, [:short])
  defp cell(v) when is_binary(v), do: quote_text(v)
  defp cell(v), do: quote_text(inspect(v))

  defp quote_text(text) do
    if text =~ ~r/[",\r\n]/ or text != String.trim(text),
      do: ~s(") <> String.replace(text, ~s("), ~s("")) <> ~s("),
      else: text
  end
end
