defmodule WellBehaved.Search.Pack do
  @moduledoc false
  # Candidates copied into native memory (c_src/nif/pack.c), for the
  # searches of WellBehaved.Fuzzy and WellBehaved.Levenshtein alike: a list
  # packed a slice at a time (pack/2), so that no call walks a long list
  # natively in one go, on a normal scheduler or to copy it for a thread;
  # and the search core's batches made once over a packed set (index/5),
  # by a job, as are its candidates with their tokens sorted (sorted/5). What the native side refuses comes back as
  # {:error, reason}, for WellBehaved.Search.Errors to translate.

  alias WellBehaved.{Job, Native, Runtime}

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

  @doc """
  `count` binaries packed with the search core's batches, made by a job
  run in `schedule` (`tiny_slices` as `WellBehaved.Job.call/4` takes it;
  `name` the public function, for its errors): `{:ok, ref, size}` or
  `{:error, reason}`.
  """
  @spec index([binary()], non_neg_integer(), Runtime.mode(), boolean(), String.t()) ::
          {:ok, reference(), non_neg_integer()} | {:error, term()}
  def index(list, count, schedule, tiny_slices, name) do
    with {:ok, packed, ^count} <- pack(list, count) do
      case Job.checked(
             &Native.search_index/5,
             [packed, count],
             schedule,
             tiny_slices,
             :infinity,
             name
           ) do
        {ref, size} when is_reference(ref) -> {:ok, ref, size}
        {:error, _} = error -> error
      end
    end
  end

  @doc """
  The `count` candidates of a packed list or index with their tokens
  sorted and joined by one space (split at the token scores' separators),
  made natively, a budget at a time, by a job run in `schedule`
  (`tiny_slices`; `name` the public function, for its errors): `{:ok,
  nil}` when every candidate is its own sorted form, `{:ok, ref, count}`
  for an index of the sorted forms (batches made), or `{:error, reason}`.
  """
  @spec sorted(reference(), non_neg_integer(), Runtime.mode(), boolean(), String.t()) ::
          {:ok, nil} | {:ok, reference(), non_neg_integer()} | {:error, term()}
  def sorted(packed, count, schedule, tiny_slices, name) do
    case Job.checked(
           &Native.search_sorted/5,
           [packed, count],
           schedule,
           tiny_slices,
           :infinity,
           name
         ) do
      :same -> {:ok, nil}
      {ref, ^count} when is_reference(ref) -> {:ok, ref, count}
      {:error, _} = error -> error
    end
  end
end
