defmodule WellBehaved.Lab.Markdown do
  @moduledoc false
  # Small pieces of Markdown that the lab's suites share.

  @doc "A Markdown table as iodata: a header row, the rule, then the rows."
  @spec table([iodata()], [[iodata()]]) :: iodata()
  def table(headers, rows) do
    line = fn cells -> ["| ", Enum.intersperse(cells, " | "), " |\n"] end
    [line.(headers), line.(Enum.map(headers, fn _ -> "---" end)) | Enum.map(rows, line)]
  end

  @doc "A number with `digits` decimals (0: rounded to an integer)."
  @spec fmt(number(), non_neg_integer()) :: String.t()
  def fmt(x, 0), do: x |> round() |> Integer.to_string()
  def fmt(x, digits), do: :erlang.float_to_binary(x * 1.0, decimals: digits)
end
