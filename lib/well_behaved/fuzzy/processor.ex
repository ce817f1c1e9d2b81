defmodule WellBehaved.Fuzzy.Processor do
  @moduledoc """
  Preparing text before it is scored: the `processor:` of
  `WellBehaved.Fuzzy`.

  The default processor (`processor: :default`) lowercases, turns every
  character that is not a letter or a number into a space, and trims
  white space at both ends, as rapidfuzz's `default_process` does. Text
  that is all ASCII (up to 64 KiB) is processed natively; other text by
  `String.downcase/1` and Unicode's letter and number categories.

      iex> WellBehaved.Fuzzy.Processor.default("  Hello, World! ")
      "hello  world"
      iex> WellBehaved.Fuzzy.Processor.default("Ærøskøbing-Straße")
      "ærøskøbing straße"
  """

  alias WellBehaved.Native

  @not_alphanumeric ~r/[^\p{L}\p{N}]/u

  @doc "The default processor on one binary (see the module's documentation)."
  @spec default(binary()) :: binary()
  def default(text) when is_binary(text) do
    case Native.fuzzy_default_process(text) do
      :other ->
        if not String.valid?(text) do
          raise ArgumentError,
                "WellBehaved.Fuzzy.Processor.default/1: #{inspect(text)} is neither ASCII nor " <>
                  "valid UTF-8 (process such text with a function of your own)"
        end

        text |> String.downcase() |> String.replace(@not_alphanumeric, " ") |> String.trim()

      processed ->
        processed
    end
  end

  @doc false
  # the function a `processor:` option stands for (nil: none)
  @spec function(nil | :default | (binary() -> binary())) :: (binary() -> binary()) | nil
  def function(nil), do: nil
  def function(:default), do: &default/1
  def function(fun) when is_function(fun, 1), do: fun
end
