defmodule WellBehaved.Fuzzy.Alignment do
  @moduledoc """
  Where a score was found: the span of each string that was compared,
  as `WellBehaved.Fuzzy.score/3`, `WellBehaved.Fuzzy.extract/3` and
  `WellBehaved.Fuzzy.extract_one/3` give it with `alignment: true`
  (rapidfuzz's `ScoreAlignment`, its score apart).

  `src_start` up to `src_end` is the span of the first string (a search's
  query), `dest_start` up to `dest_end` that of the second (a
  candidate); each end is exclusive, and positions count the call's
  `unit:` (bytes, or codepoints) in the strings as the `processor:` left
  them.

    * `:ratio` compares the whole of both strings: each span is the whole
      string.
    * `:partial_ratio` compares the shorter string with every window of
      the longer (windows cut short at either end included): the shorter
      string's span is the whole of it, the longer's the best window.
      Where several windows score the best, the one rapidfuzz's
      `fuzz.partial_ratio_alignment` reports is taken (see the guide).

  `slice/4` gives the text of a span.

      iex> {_, at} = WellBehaved.Fuzzy.score("a certain string", "cetain",
      ...>   scorer: :partial_ratio, alignment: true)
      iex> at
      %WellBehaved.Fuzzy.Alignment{src_start: 2, src_end: 8, dest_start: 0, dest_end: 6}
      iex> WellBehaved.Fuzzy.Alignment.slice(at, :src, "a certain string")
      "certai"
  """

  alias WellBehaved.Options

  @slice "WellBehaved.Fuzzy.Alignment.slice/4"

  @enforce_keys [:src_start, :src_end, :dest_start, :dest_end]
  defstruct [:src_start, :src_end, :dest_start, :dest_end]

  @type t :: %__MODULE__{
          src_start: non_neg_integer(),
          src_end: non_neg_integer(),
          dest_start: non_neg_integer(),
          dest_end: non_neg_integer()
        }

  @doc false
  # the native side's {src_start, src_end, dest_start, dest_end}
  @spec new({non_neg_integer(), non_neg_integer(), non_neg_integer(), non_neg_integer()} | nil) ::
          t() | nil
  def new(nil), do: nil

  def new({src_start, src_end, dest_start, dest_end}),
    do: %__MODULE__{
      src_start: src_start,
      src_end: src_end,
      dest_start: dest_start,
      dest_end: dest_end
    }

  @doc """
  The text of the `:src` or `:dest` span of `alignment` in `string` (the
  first or the second string as it was scored, processed), counted in
  `unit` (`:byte`, the default, or `:codepoint`).

      iex> at = %WellBehaved.Fuzzy.Alignment{src_start: 0, src_end: 3, dest_start: 1, dest_end: 3}
      iex> WellBehaved.Fuzzy.Alignment.slice(at, :dest, "héllo", :codepoint)
      "él"
  """
  @spec slice(t(), :src | :dest, binary(), :byte | :codepoint) :: binary()
  def slice(alignment, side, string, unit \\ :byte)

  def slice(%__MODULE__{} = at, side, string, unit)
      when side in [:src, :dest] and is_binary(string) and unit in [:byte, :codepoint] do
    {from, to} =
      if side == :src, do: {at.src_start, at.src_end}, else: {at.dest_start, at.dest_end}

    symbols = if unit == :byte, do: string, else: String.to_charlist(string)
    size = if unit == :byte, do: byte_size(string), else: length(symbols)

    if to > size,
      do:
        Options.invalid!(@slice, "string", string, "#{to} #{unit}s or more for the #{side} span")

    case unit do
      :byte -> binary_part(string, from, to - from)
      :codepoint -> symbols |> Enum.slice(from, to - from) |> List.to_string()
    end
  end

  def slice(at, side, string, unit) do
    {what, value, accepted} =
      cond do
        not is_struct(at, __MODULE__) -> {"alignment", at, "a #{inspect(__MODULE__)}"}
        side not in [:src, :dest] -> {"side", side, ":src or :dest"}
        not is_binary(string) -> {"string", string, "a binary"}
        true -> {"unit", unit, ":byte or :codepoint"}
      end

    Options.invalid!(@slice, what, value, accepted)
  end
end
