defmodule WellBehaved.Test.Reference do
  @moduledoc false
  # Independent reference: the textbook O(n*m) dynamic program over lists
  # of units, written for clarity, not speed.

  def levenshtein(a, b) when is_list(a) and is_list(b) do
    row0 = Enum.to_list(0..length(b))

    a
    |> Enum.with_index(1)
    |> Enum.reduce(row0, fn {ca, i}, prev ->
      {row, _} =
        b
        |> Enum.zip(Enum.zip(prev, tl(prev)))
        |> Enum.reduce({[i], i}, fn {cb, {diag, up}}, {acc, left} ->
          cost = if ca == cb, do: 0, else: 1
          v = Enum.min([diag + cost, up + 1, left + 1])
          {[v | acc], v}
        end)

      Enum.reverse(row)
    end)
    |> List.last()
  end

  def bytes(a, b), do: levenshtein(:binary.bin_to_list(a), :binary.bin_to_list(b))
  def codepoints(a, b), do: levenshtein(String.to_charlist(a), String.to_charlist(b))
end
