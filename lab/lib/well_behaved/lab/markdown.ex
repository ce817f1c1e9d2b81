defmodule WellBehaved.Lab.Markdown do
  @moduledoc false
  # Small pieces of Markdown that the lab's suites share.

  @doc "A Markdown table as iodata: a header row, the rule, then the rows."
  @spec table([iodata()], [[iodata()]]) :: iodata()
  def table(headers, rows) do
    line = fn cells -> ["| ", Enum.intersperse(cells, " | "), " |\n"] end
    [line.(headers), line.(Enum.map(headers, fn _ -> "---" end)) | Enum.map(rows, line)]
  end

  @doc """
  The targets table: one row per `%{target:, measured:, met:}`. A target
  marked `absolute: true` (a figure in ns, ms or Gcell/s, not a ratio to a
  baseline of the same run) is information: its row says so.
  """
  @spec targets_table([%{target: iodata(), measured: iodata(), met: boolean()}]) :: iodata()
  def targets_table(targets) do
    table(
      ["target", "measured", "met"],
      for(t <- targets, do: [t.target, t.measured, met_cell(t)])
    )
  end

  @doc "Whether a target is an absolute figure (information, not pass or fail)."
  @spec absolute?(map()) :: boolean()
  def absolute?(target), do: Map.get(target, :absolute, false) == true

  @doc "A target's `met` cell: yes or **no**; for an absolute one, information."
  @spec met_cell(map()) :: String.t()
  def met_cell(target) do
    cond do
      absolute?(target) and target.met -> "within (information)"
      absolute?(target) -> "over (information)"
      target.met -> "yes"
      true -> "**no**"
    end
  end

  @doc """
  A measurement with its digits chosen by magnitude: none from 100, one from
  10, two from 1, and `small` below 1; an integer as it is; `nil` as "-".
  """
  @spec fmt_auto(number() | nil, non_neg_integer()) :: String.t()
  def fmt_auto(x, small \\ 2)
  def fmt_auto(nil, _small), do: "-"
  def fmt_auto(x, _small) when is_integer(x), do: Integer.to_string(x)
  def fmt_auto(x, _small) when x >= 100, do: fmt(x, 0)
  def fmt_auto(x, _small) when x >= 10, do: fmt(x, 1)
  def fmt_auto(x, _small) when x >= 1, do: fmt(x, 2)
  def fmt_auto(x, small), do: fmt(x, small)

  @doc "A fraction as a whole percentage; `nil` as \"-\"."
  @spec pct(number() | nil) :: String.t()
  def pct(nil), do: "-"
  def pct(x), do: fmt(x * 100, 0) <> "%"

  @doc "A number with `digits` decimals (0: rounded to an integer)."
  @spec fmt(number(), non_neg_integer()) :: String.t()
  def fmt(x, 0), do: x |> round() |> Integer.to_string()
  def fmt(x, digits), do: :erlang.float_to_binary(x * 1.0, decimals: digits)
end
