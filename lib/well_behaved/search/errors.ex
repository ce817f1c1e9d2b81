defmodule WellBehaved.Search.Errors do
  @moduledoc false
  # The one translation of what the native side (the NIF jobs, the
  # external server) answers when it refuses a call, for every function of
  # WellBehaved.Fuzzy and WellBehaved.Levenshtein: out of native memory is
  # an expected failure, returned as {:error, :enomem} by the searches and
  # raised by the pair scores; every other reason is a bad argument, raised
  # as ArgumentError naming the function and the argument.

  @doc "Returns `{:error, :enomem}`; raises for any other native error."
  @spec failed(String.t(), {:error, term()}) :: {:error, :enomem}
  def failed(_name, {:error, :enomem} = error), do: error
  def failed(name, {:error, reason}), do: raise!(name, reason)

  @doc "Raises the exception that `reason` stands for."
  @spec raise!(String.t(), term()) :: no_return()
  def raise!(name, {:not_a_binary, :tail}),
    do: raise(ArgumentError, "#{name}: the candidates are not a proper list")

  def raise!(name, {:not_a_binary, at}),
    do: raise(ArgumentError, "#{name}: the candidate at position #{at} is not a binary")

  def raise!(name, {:invalid_utf8, :query}),
    do: raise(ArgumentError, "#{name}: the query is #{not_utf8()}")

  # a pair score's arguments, by number
  def raise!(name, {:invalid_utf8, {:argument, which}}) do
    arg = if which == 1, do: "first", else: "second"
    raise ArgumentError, "#{name}: the #{arg} argument is #{not_utf8()}"
  end

  def raise!(name, {:invalid_utf8, at}),
    do: raise(ArgumentError, "#{name}: the candidate at position #{at} is #{not_utf8()}")

  def raise!(name, :enomem), do: raise(RuntimeError, "#{name}: out of native memory")

  # a score past the integers it is given in: never capped, never rounded
  def raise!(name, {:does_not_fit, :u32, {:candidate, at}}) do
    raise ArgumentError,
          "#{name}: the edit distance of the candidate at position #{at} is past " <>
            "4294967295, the most the search's 32-bit unsigned integer distances hold " <>
            "(a side of 4 GiB or more)"
  end

  def raise!(name, {:does_not_fit, :u32, value}) do
    raise ArgumentError,
          "#{name}: a score of #{value} does not fit the 32-bit unsigned integer cells of " <>
            "as: :binary (0..4294967295); as: :list gives every score exactly"
  end

  def raise!(name, {:does_not_fit, :u64}) do
    raise ArgumentError,
          "#{name}: a score is past 18446744073709551615, the largest 64-bit unsigned " <>
            "integer the edit distances are given in: lower the weights"
  end

  # :hamming with pad: false: sides of different lengths (in `unit`s)
  def raise!(name, {:unequal_lengths, which, m, n, unit}) do
    detail =
      case which do
        :arguments ->
          "the first argument has #{units(m, unit)}, the second #{n}"

        {:candidate, at} ->
          "the candidate at position #{at} has #{units(n, unit)}, the query #{m}"

        {:key, key} ->
          "the candidate with key #{inspect(key)} has #{units(n, unit)}, the query #{m}"

        {:candidate, at, :query, row} ->
          "the candidate at position #{at} has #{units(n, unit)}, the query at position " <>
            "#{row} has #{m}"
      end

    raise ArgumentError,
          "#{name}: :hamming with pad: false compares strings of equal length only: #{detail}"
  end

  def raise!(name, :not_an_index_here) do
    raise ArgumentError,
          "#{name}: the index was not made on this node (#{node()}): an index is native " <>
            "memory of the node that made it; for several nodes, make it with " <>
            "Index.new(candidates, nodes: nodes)"
  end

  def raise!(name, reason),
    do: raise(ArgumentError, "#{name}: invalid arguments: #{inspect(reason)}")

  defp not_utf8, do: "not valid UTF-8 (required by unit: :codepoint and :grapheme)"

  defp units(1, unit), do: "1 #{unit}"
  defp units(count, unit), do: "#{count} #{unit}s"
end
