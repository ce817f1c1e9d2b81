defmodule WellBehaved.Fuzzy.Choices do
  @moduledoc false
  # The candidates as a search or an index takes them: a map's entries in
  # the order of their keys (Erlang's term order, so that equal scores
  # rank by key whatever the map's size), a list's binaries and
  # `{key, binary}` pairs; a `nil` (an element, a pair's or a value) is
  # skipped, the others keeping their positions.

  alias WellBehaved.Options
  alias WellBehaved.Search.Errors

  @doc "A map's texts and keys, in the order of the keys."
  @spec of_map(String.t(), map()) :: {[binary()], [term()]}
  def of_map(name, map) do
    pairs = map |> Map.to_list() |> Enum.reject(&(elem(&1, 1) == nil)) |> Enum.sort()

    for {_key, text} <- pairs,
        not is_binary(text),
        do: Options.invalid!(name, "choices", text, "binaries (or nil) as the map's values")

    {Enum.map(pairs, &elem(&1, 1)), Enum.map(pairs, &elem(&1, 0))}
  end

  @doc """
  A list's texts and keys: a pair's own key, a binary's `position.(at)`
  (its position in the list); raises on anything else, naming its position.
  """
  @spec of_list(String.t(), list(), (non_neg_integer() -> term())) :: {[binary()], [term()]}
  def of_list(name, list, position) do
    list
    |> Enum.with_index()
    |> Enum.flat_map(fn
      {text, at} when is_binary(text) -> [{text, position.(at)}]
      {nil, _at} -> []
      {{_key, nil}, _at} -> []
      {{key, text}, _at} when is_binary(text) -> [{text, key}]
      {_other, at} -> Errors.raise!(name, {:not_a_binary, at})
    end)
    |> Enum.unzip()
  end
end
