defmodule WellBehaved.Options do
  @moduledoc """
  Argument checks for the public functions of WellBehaved and of NIF
  wrappers built on it, so that every `ArgumentError` reads the same way:
  the function first, then the argument or option, what was given, and
  what is accepted.

      iex> WellBehaved.Options.integer!("MyApp.run/2", :count, 5, 1..10)
      5
      iex> WellBehaved.Options.integer!("MyApp.run/2", :count, 0, 1..10)
      ** (ArgumentError) MyApp.run/2: invalid :count 0, expected an integer in 1..10
  """

  @doc """
  Raises: `function` was given `value` for `what` (an option name as an
  atom, or a phrase such as "first argument"); `accepted` says what it takes.
  """
  @spec invalid!(String.t(), atom() | String.t(), term(), String.t()) :: no_return()
  def invalid!(function, what, value, accepted) do
    raise ArgumentError,
          "#{function}: invalid #{name(what)} #{inspect(value)}, expected #{accepted}"
  end

  @doc "Raises: `key` is not an option of `function`, whose options are `known`."
  @spec unknown!(String.t(), term(), [atom()]) :: no_return()
  def unknown!(function, key, known) do
    raise ArgumentError,
          "#{function}: unknown option #{inspect(key)}, expected one of " <>
            Enum.map_join(known, ", ", &inspect/1)
  end

  @doc "Raises: `opts` is not a keyword list."
  @spec not_keyword!(String.t(), term()) :: no_return()
  def not_keyword!(function, opts) do
    raise ArgumentError, "#{function}: expected a keyword list of options, got: #{inspect(opts)}"
  end

  @doc """
  Raises for the first element of an option list that is not a known
  `{key, value}` pair: an unknown key, a bare atom or anything else.
  """
  @spec bad_option!(String.t(), term(), [atom()], term()) :: no_return()
  def bad_option!(function, {key, _value}, known, _all) when is_atom(key),
    do: unknown!(function, key, known)

  def bad_option!(function, key, known, _all) when is_atom(key) do
    if key in known,
      do: invalid!(function, "option", key, "#{inspect(key)}: value, a keyword pair"),
      else: unknown!(function, key, known)
  end

  def bad_option!(function, _element, _known, all), do: not_keyword!(function, all)

  @doc "`value` when it is an integer in `range`, else raises."
  @spec integer!(String.t(), atom() | String.t(), term(), Range.t()) :: integer()
  def integer!(_function, _what, value, first..last//1)
      when is_integer(value) and value >= first and value <= last,
      do: value

  def integer!(function, what, value, first..last//1),
    do: invalid!(function, what, value, "an integer in #{first}..#{last}")

  @doc "`value` when it is a boolean, else raises."
  @spec boolean!(String.t(), atom(), term()) :: boolean()
  def boolean!(_function, _what, value) when is_boolean(value), do: value
  def boolean!(function, what, value), do: invalid!(function, what, value, "true or false")

  @doc "`value` when it is one of `accepted`, else raises listing them."
  @spec one_of!(String.t(), atom(), term(), [term()]) :: term()
  def one_of!(function, what, value, accepted) do
    if value in accepted, do: value, else: invalid!(function, what, value, listing(accepted))
  end

  @doc "`:a`, `:a or :b`, `one of :a, :b or :c`."
  @spec listing([term()]) :: String.t()
  def listing([one]), do: inspect(one)
  def listing([a, b]), do: "#{inspect(a)} or #{inspect(b)}"

  def listing(many) do
    {init, [last]} = Enum.split(many, -1)
    "one of #{Enum.map_join(init, ", ", &inspect/1)} or #{inspect(last)}"
  end

  defp name(what) when is_atom(what), do: inspect(what)
  defp name(what), do: what
end
