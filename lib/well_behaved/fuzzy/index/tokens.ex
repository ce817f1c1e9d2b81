defmodule WellBehaved.Fuzzy.Index.Tokens do
  @moduledoc false
  # A query as the token sort scores compare it with an index's sorted
  # tokens, in bytes: split at the separators of the native scorers
  # (wb_fz_ascii_space in c_src/fuzzy/fuzzy.h, rapidfuzz's: ASCII white
  # space and 0x1C-0x1F), sorted and joined by one space. The index's
  # candidates are sorted the same way natively (c_src/fuzzy/sorted_set.c,
  # by the search_sorted job).

  @separators [" ", "\t", "\n", "\v", "\f", "\r", <<0x1C>>, <<0x1D>>, <<0x1E>>, <<0x1F>>]

  @doc "The tokens of a text sorted and joined by one space."
  @spec sorted(binary()) :: binary()
  def sorted(text), do: sorted(text, splitter())

  @doc """
  The same with `splitter/0`'s pattern at hand. A text of one token is
  itself, the same term: comparing the two is then immediate, where
  comparing a long text's bytes is one long call.
  """
  @spec sorted(binary(), :binary.cp()) :: binary()
  def sorted(text, split) do
    case :binary.split(text, split, [:global, :trim_all]) do
      [one] when byte_size(one) == byte_size(text) -> text
      [one] -> one
      [] -> ""
      many -> many |> Enum.sort() |> Enum.intersperse(" ") |> IO.iodata_to_binary()
    end
  end

  @doc """
  The compiled pattern of the separators, compiled once: compiling it
  costs 30-40 us, more than splitting a name.
  """
  @spec splitter() :: :binary.cp()
  def splitter do
    case :persistent_term.get({__MODULE__, :separators}, nil) do
      nil ->
        pattern = :binary.compile_pattern(@separators)
        :persistent_term.put({__MODULE__, :separators}, pattern)
        pattern

      pattern ->
        pattern
    end
  end

  @doc "Whether every byte is below 128."
  @spec ascii?(binary()) :: boolean()
  def ascii?(<<c, rest::binary>>) when c < 128, do: ascii?(rest)
  def ascii?(<<>>), do: true
  def ascii?(_), do: false
end
