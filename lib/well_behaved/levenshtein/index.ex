defmodule WellBehaved.Levenshtein.Index do
  @moduledoc """
  A candidate set packed once into native memory, for repeated searches:
  `WellBehaved.Levenshtein.nearest/3` and `distances/3` take an index in
  place of a list, and skip copying the candidates at every call.

  The memory is freed when the index is garbage collected; while it lives,
  its bytes count in `WellBehaved.Runtime.stats/0`'s `resident_bytes`.

      iex> index = WellBehaved.Levenshtein.Index.new(["apple", "maple", "apply"])
      iex> WellBehaved.Levenshtein.Index.size(index)
      3
      iex> WellBehaved.Levenshtein.nearest("appel", index, limit: 2)
      [{"apple", 2}, {"apply", 2}]
  """

  @enforce_keys [:ref, :size]
  defstruct [:ref, :size]

  @type t :: %__MODULE__{ref: reference(), size: non_neg_integer()}

  @doc """
  Packs `candidates` (a list of binaries) into an index.

  Options: `schedule:` and `tiny_slices:`, as `WellBehaved.Job.call/4`
  takes them (packing a long list yields like any job). Raises
  `ArgumentError` naming the first element that is not a binary.
  """
  @spec new([binary()], [WellBehaved.Job.option()]) :: t()
  def new(candidates, opts \\ []), do: WellBehaved.Levenshtein.Search.index(candidates, opts)

  @doc "The number of candidates."
  @spec size(t()) :: non_neg_integer()
  def size(%__MODULE__{size: size}), do: size
end
