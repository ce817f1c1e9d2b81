defmodule WellBehaved.Levenshtein.Call do
  @moduledoc false
  # The options of every Levenshtein function, checked once into a struct,
  # and the checks of their arguments: distance/3, distances/3, nearest/3
  # and Index.new/2 each name the options they take, and every
  # ArgumentError reads as WellBehaved.Options writes it. The distributed
  # options (nodes:, timeout:, partial:) are Distributed's to check: they
  # are kept in `remote` as given.

  alias WellBehaved.{Options, Runtime}

  defstruct unit: :byte,
            max_distance: nil,
            limit: 10,
            schedule: :auto,
            tiny_slices: false,
            as: :list,
            remote: []

  @type t :: %__MODULE__{
          unit: :byte | :codepoint | :grapheme,
          max_distance: non_neg_integer() | nil,
          limit: pos_integer(),
          schedule: Runtime.mode() | :external,
          tiny_slices: boolean(),
          as: :list | :binary,
          remote: keyword()
        }

  # the widest cutoff the native searches count (32 bits)
  @search_cutoff_max 0xFFFF_FFFF
  @limit_range 1..0xFFFF_FFFF

  @doc """
  Checks `opts` against the options `known` by `name`: every key first
  (an unknown one raises before any value is looked at), then each value.
  `modes`: schedules accepted besides the runtime's (`[:external]` for
  distance/3).
  """
  @spec options!(String.t(), term(), [atom()], [atom()]) :: t()
  def options!(name, opts, known, modes \\ [])

  def options!(name, opts, known, modes) when is_list(opts) do
    keys!(opts, name, known, opts)

    case parse(opts, %__MODULE__{}, [], {name, known, modes, opts}) do
      {call, []} -> call
      {call, remote} -> %{call | remote: Enum.reverse(remote)}
    end
  end

  def options!(name, opts, _known, _modes), do: Options.not_keyword!(name, opts)

  # tail-recursive passes, first the keys, then the values: the per-call
  # path builds no closures
  defp keys!([], _name, _known, _all), do: :ok

  defp keys!([{key, _} | rest], name, known, all) when is_atom(key) do
    if key in known, do: keys!(rest, name, known, all), else: Options.unknown!(name, key, known)
  end

  defp keys!([other | _], name, known, all), do: Options.bad_option!(name, other, known, all)
  defp keys!(_, name, _known, all), do: Options.not_keyword!(name, all)

  defp parse([], call, remote, _context), do: {call, remote}

  defp parse([{key, value} | rest], call, remote, context),
    do: parse(rest, put(call, key, value, context), remote_put(remote, key, value), context)

  defp put(call, :unit, unit, _context) when unit in [:byte, :codepoint, :grapheme],
    do: %{call | unit: unit}

  defp put(_call, :unit, unit, {name, _, _, _}),
    do: Options.invalid!(name, :unit, unit, ":byte, :codepoint or :grapheme")

  defp put(call, :max_distance, k, _context) when (is_integer(k) and k >= 0) or is_nil(k),
    do: %{call | max_distance: k}

  defp put(_call, :max_distance, k, {name, _, _, _}),
    do: Options.invalid!(name, :max_distance, k, "a non-negative integer or nil")

  defp put(call, :limit, limit, {name, _, _, _}),
    do: %{call | limit: Options.integer!(name, :limit, limit, @limit_range)}

  defp put(call, :schedule, mode, {name, _, modes, _}) do
    if mode in modes,
      do: %{call | schedule: mode},
      else: %{call | schedule: Runtime.check_mode!(mode, name, modes)}
  end

  defp put(call, :tiny_slices, tiny, {name, _, _, _}),
    do: %{call | tiny_slices: Runtime.check_tiny!(tiny, name)}

  defp put(call, :as, as, _context) when as in [:list, :binary], do: %{call | as: as}

  defp put(_call, :as, as, {name, _, _, _}),
    do: Options.invalid!(name, :as, as, ":list or :binary")

  defp put(call, _distributed, _value, _context), do: call

  defp remote_put(remote, key, value) when key in [:nodes, :timeout, :partial],
    do: [{key, value} | remote]

  defp remote_put(remote, _key, _value), do: remote

  @doc """
  The cutoff the native side gets: nil when there is none, or when `k`
  cuts nothing (at or above `longest`, the longer input's bytes, so also
  its codepoints; or above what a search counts): every mode and the
  external server then get nil, whatever integer width they decode.
  """
  @spec cutoff(non_neg_integer() | nil, non_neg_integer() | :search) :: non_neg_integer() | nil
  def cutoff(nil, _longest), do: nil
  def cutoff(k, :search), do: if(k >= @search_cutoff_max, do: nil, else: k)
  def cutoff(k, longest), do: if(k >= longest, do: nil, else: k)

  @doc "Raises unless `query` is a binary."
  def query!(_name, query) when is_binary(query), do: query
  def query!(name, query), do: Options.invalid!(name, "query", query, "a binary")

  @doc "The length of `list`, which the native side checks the list against."
  @spec count!(String.t(), list()) :: non_neg_integer()
  def count!(name, list) do
    length(list)
  rescue
    ArgumentError -> WellBehaved.Search.Errors.raise!(name, {:not_a_binary, :tail})
  end

  @doc "Raises naming the first element of `list` that is not a binary."
  @spec binaries!(String.t(), list()) :: :ok
  def binaries!(name, list) do
    case Enum.find_index(list, &(not is_binary(&1))) do
      nil -> :ok
      at -> WellBehaved.Search.Errors.raise!(name, {:not_a_binary, at})
    end
  end
end
