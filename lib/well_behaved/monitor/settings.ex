defmodule WellBehaved.Monitor.Settings do
  @moduledoc false
  # The system monitor's settings when WellBehaved.Monitor shares it with
  # the holders it took it from: one list the VM accepts, each threshold
  # the least any of them asked for, and which messages each holder asked
  # for (so that it gets what it would have got alone, no more).

  @typedoc "Settings as `:erlang.system_monitor/2` takes them"
  @type t :: [atom() | {atom(), term()}]

  @doc "Ours (`long_schedule` at `ms`) merged with each holder's settings."
  @spec merge(pos_integer(), [t()]) :: t()
  def merge(ms, others) do
    others
    |> Enum.concat()
    |> Enum.reduce([long_schedule: ms], &add/2)
    |> Enum.reverse()
  end

  # thresholds (integers) take the least; any other value the first given
  defp add({key, value}, acc) do
    case List.keyfind(acc, key, 0) do
      nil -> [{key, value} | acc]
      {^key, old} when is_integer(old) and is_integer(value) -> keymin(acc, key, old, value)
      _ -> acc
    end
  end

  defp add(flag, acc) when is_atom(flag),
    do: if(flag in acc, do: acc, else: [flag | acc])

  defp keymin(acc, key, old, value),
    do: List.keyreplace(acc, key, 0, {key, min(old, value)})

  @doc """
  Whether a holder with `settings` asked for the message
  `{:monitor, _, type, info}`: its type, over its own threshold.
  """
  @spec wants?(t(), atom(), term()) :: boolean()
  def wants?(settings, type, info) when type in [:long_schedule, :long_gc] do
    case List.keyfind(settings, type, 0) do
      {^type, ms} when is_integer(ms) -> timeout(info) >= ms
      _ -> false
    end
  end

  def wants?(settings, :large_heap, info) do
    case List.keyfind(settings, :large_heap, 0) do
      {:large_heap, words} when is_integer(words) -> heap_words(info, words) >= words
      _ -> false
    end
  end

  def wants?(settings, type, _info),
    do: type in settings or List.keymember?(settings, type, 0)

  defp timeout(info) when is_list(info), do: Keyword.get(info, :timeout, 0)
  defp timeout(_info), do: 0

  # the heap's allocated size as the VM measures it for large_heap; a
  # report without those keys goes to every holder that asked for the type
  defp heap_words(info, default) when is_list(info) do
    case {Keyword.get(info, :heap_block_size), Keyword.get(info, :old_heap_block_size, 0)} do
      {new, old} when is_integer(new) and is_integer(old) -> new + old
      _ -> default
    end
  end

  defp heap_words(_info, default), do: default

  @doc "Whether two settings are the same, in any order."
  @spec same?(t(), t()) :: boolean()
  def same?(a, b), do: Enum.sort(a) == Enum.sort(b)
end
