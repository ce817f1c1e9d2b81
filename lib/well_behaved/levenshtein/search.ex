defmodule WellBehaved.Levenshtein.Search do
  @moduledoc false
  # The native calls behind the searches on this node (c_src/nif/pack.c and
  # c_src/nif/search_job.c),
  # and nothing else: the arguments and options come checked (Call), and
  # what the native side refuses comes back as {:error, reason} for
  # Levenshtein.Errors to translate. A list is first copied into native
  # memory a slice at a time (pack/2), so that no call walks a long list
  # natively in one go, on a normal scheduler or to copy it for a thread.

  alias WellBehaved.{Job, Native}
  alias WellBehaved.Levenshtein.Call

  @typedoc "What a search runs on: a list of binaries, or an index's native resource."
  @type candidates :: {:list, [binary()]} | {:index, reference()}

  @doc """
  The distances (`limit` 0, in order) or the `limit` nearest
  `{candidate, distance}` from `query` to `count` candidates (for a list,
  nil: the packing counts them).
  """
  @spec run(
          binary(),
          candidates(),
          non_neg_integer() | nil,
          Call.t(),
          non_neg_integer(),
          String.t()
        ) ::
          [non_neg_integer()] | [{binary(), non_neg_integer()}] | {:error, term()}
  def run(query, candidates, count, %Call{} = call, limit, name) do
    max = Call.cutoff(call.max_distance, :search)

    with {:ok, set, count} <- native_set(candidates, count) do
      args = [query, set, count, call.unit, max, limit]

      try do
        case Job.checked(&Native.search/9, args, call.schedule, call.tiny_slices, :infinity, name) do
          # every other argument was checked: the index is not this node's
          {:error, :badarg} when elem(candidates, 0) == :index ->
            {:error, :not_an_index_here}

          {:error, _} = error ->
            error

          {:hits, hits, _count} ->
            hits_list(hits, [])

          distances when is_binary(distances) and call.as == :binary ->
            distances

          distances when is_binary(distances) ->
            distances_list(distances, div(byte_size(distances), 4), [])

          # a short answer of distances comes as the list itself
          distances when limit == 0 and call.as == :binary ->
            for d <- distances, into: <<>>, do: <<d::32-native>>

          hits ->
            hits
        end
      after
        # a list packed for this search: its memory now, for the next list
        # (not when the VM collects the resource)
        if elem(candidates, 0) == :list, do: Native.pack_release(set)
      end
    end
  end

  @doc "An index of `count` binaries: `{:ok, ref, size}` or `{:error, reason}`."
  @spec index([binary()], non_neg_integer(), Call.t(), String.t()) ::
          {:ok, reference(), non_neg_integer()} | {:error, term()}
  def index(list, count, %Call{} = call, name) do
    with {:ok, packed, ^count} <- pack(list, count) do
      args = [packed, count]

      case Job.checked(
             &Native.search_index/5,
             args,
             call.schedule,
             call.tiny_slices,
             :infinity,
             name
           ) do
        {ref, size} when is_reference(ref) -> {:ok, ref, size}
        {:error, _} = error -> error
      end
    end
  end

  defp native_set({:index, ref}, count), do: {:ok, ref, count}
  defp native_set({:list, list}, count), do: pack(list, count)

  # A long result of nearest, made a slice at a time, from its end.
  defp hits_list(hits, list) do
    case Native.hits_more(hits, list) do
      {:done, list} -> list
      {:more, list} -> hits_list(hits, list)
      {:error, :enomem} = error -> error
    end
  end

  # A long result of distances, made a slice at a time, from its end.
  defp distances_list(distances, count, list) do
    case Native.distances_more(distances, count, list) do
      {:done, list} -> list
      {:more, left, list} -> distances_list(distances, left, list)
    end
  end

  @doc """
  The list's binaries in native memory: each pack_more call copies what
  it can in one slice of the runtime and answers the rest of the list;
  the last answers their number. With `count` nil, the list is walked
  once, by the packing (not first by length/1 as well). Give the memory
  back with `Native.pack_release/1` once searched.
  """
  @spec pack([binary()], non_neg_integer() | nil) ::
          {:ok, reference(), non_neg_integer()} | {:error, term()}
  def pack(list, count) do
    case Native.pack_new(count || :any) do
      {:error, _} = error -> error
      packed -> pack_more(packed, list)
    end
  end

  defp pack_more(packed, list) do
    case Native.pack_more(packed, list) do
      {:done, count} -> {:ok, packed, count}
      {:more, rest} -> pack_more(packed, rest)
      {:error, _} = error -> error
    end
  end
end
