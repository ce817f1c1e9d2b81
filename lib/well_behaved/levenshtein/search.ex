defmodule WellBehaved.Levenshtein.Search do
  @moduledoc false
  # The checks and native calls behind Levenshtein.distances/3,
  # Levenshtein.nearest/3 and Levenshtein.Index.new/2: one search job
  # (c_src/nif/search_job.c) over an index, or over a list of binaries
  # first copied into native memory a slice at a time (pack/3), so that
  # no call walks a long list natively in one go, on a normal scheduler or
  # to copy it for a thread.

  alias WellBehaved.{Job, Native, Options}
  alias WellBehaved.Levenshtein.{Distributed, Index}

  @common [:unit, :max_distance, :schedule, :tiny_slices, :nodes, :timeout, :partial]

  @doc "The distances from `query` to each candidate, in order."
  def distances(query, candidates, opts) do
    name = "WellBehaved.Levenshtein.distances/3"
    {set, count, opts} = check!(name, query, candidates, opts, @common)
    check_common!(name, opts)

    case where(name, candidates, opts) do
      {:here, opts} ->
        case run(name, query, set, count, opts, 0) do
          bin when is_binary(bin) -> for <<d::32-native <- bin>>, do: d
          {:error, :enomem} = error -> error
        end

      {:shards, settings, opts} ->
        Distributed.distances(query, candidates, count, settings, opts)
    end
  end

  @doc "The `limit:` nearest candidates as {candidate, distance}."
  def nearest(query, candidates, opts) do
    name = "WellBehaved.Levenshtein.nearest/3"
    {set, count, opts} = check!(name, query, candidates, opts, [:limit | @common])
    limit = Options.integer!(name, :limit, Keyword.get(opts, :limit, 10), 1..0xFFFF_FFFF)
    check_common!(name, opts)

    case where(name, candidates, opts) do
      {:here, opts} -> run(name, query, set, count, opts, limit)
      {:shards, settings, opts} -> Distributed.nearest(query, candidates, count, settings, opts)
    end
  end

  @doc "Packs the candidates into an index (its shards on `nodes:`)."
  def index(candidates, opts) do
    name = "WellBehaved.Levenshtein.Index.new/2"
    opts = keyword!(name, opts, [:schedule, :tiny_slices, :nodes, :timeout])

    if not is_list(candidates),
      do: Options.invalid!(name, "candidates", candidates, "a list of binaries")

    count = count!(name, candidates)

    case Distributed.options(name, opts) do
      {%{nodes: nil}, opts} ->
        with {:ok, packed} <- pack(name, candidates, count) do
          case Job.call(&Native.search_index/5, [packed, count], opts, name) do
            {ref, size} when is_reference(ref) -> %Index{ref: ref, size: size}
            error -> failed(name, error)
          end
        end

      {settings, opts} ->
        binaries!(name, candidates)
        Distributed.index(candidates, count, settings, opts)
    end
  end

  # where the search runs: here, or on shards (a distributed index, or a
  # list with nodes:)
  defp where(name, candidates, opts) do
    {settings, rest} = Distributed.options(name, opts)

    case candidates do
      %Index{shards: [_ | _]} when settings.nodes == nil ->
        {:shards, settings, rest}

      %Index{} when settings.nodes != nil ->
        Options.invalid!(name, :nodes, settings.nodes, "a list of candidates: an index is split \
        over nodes when made, by Index.new(candidates, nodes: nodes)")

      list when is_list(list) and settings.nodes != nil ->
        binaries!(name, list)
        {:shards, settings, rest}

      _ ->
        {:here, rest}
    end
  end

  # a shard would name a position in its own slice
  defp binaries!(name, list) do
    case Enum.find_index(list, &(not is_binary(&1))) do
      nil -> :ok
      at -> fail!(name, {:not_a_binary, at})
    end
  end

  defp check_common!(name, opts) do
    unit = Keyword.get(opts, :unit, :byte)
    max = Keyword.get(opts, :max_distance)

    if unit not in [:byte, :codepoint],
      do: Options.invalid!(name, :unit, unit, ":byte or :codepoint")

    if not (is_nil(max) or (is_integer(max) and max >= 0)),
      do: Options.invalid!(name, :max_distance, max, "a non-negative integer or nil")
  end

  defp run(name, query, set, count, opts, limit) do
    unit = Keyword.get(opts, :unit, :byte)
    max = Keyword.get(opts, :max_distance)

    # a cutoff beyond 32 bits cuts nothing the native side can count
    max = if is_integer(max) and max >= 0xFFFF_FFFF, do: nil, else: max
    job_opts = Keyword.take(opts, [:schedule, :tiny_slices])

    with {:ok, packed} <- if(is_list(set), do: pack(name, set, count), else: {:ok, set}) do
      case Job.call(&Native.search/9, [query, packed, count, unit, max, limit], job_opts, name) do
        # every other argument was checked here: the index is not this node's
        {:error, :badarg} when is_reference(set) -> fail!(name, :not_an_index_here)
        {:error, _} = error -> failed(name, error)
        {:hits, hits, _count} -> hits_list(hits, [])
        result -> result
      end
    end
  end

  defp check!(name, query, candidates, opts, known) do
    opts = keyword!(name, opts, known)
    if not is_binary(query), do: Options.invalid!(name, "query", query, "a binary")

    case candidates do
      %Index{ref: ref, size: size} -> {ref, size, opts}
      list when is_list(list) -> {list, count!(name, list), opts}
      other -> Options.invalid!(name, "candidates", other, "a list of binaries or an index")
    end
  end

  # A long result of nearest/3, made a slice at a time, from its end.
  defp hits_list(hits, list) do
    case Native.hits_more(hits, list) do
      {:done, list} -> list
      {:more, list} -> hits_list(hits, list)
      {:error, :enomem} = error -> error
    end
  end

  # The list's binaries in native memory: each pack_more call copies what
  # it can in one slice of the runtime and answers the rest of the list.
  # {:ok, packed}, or {:error, :enomem}; a bad element raises.
  defp pack(name, list, count) do
    case Native.pack_new(count) do
      {:error, _} = error -> failed(name, error)
      packed -> pack_more(name, packed, list)
    end
  end

  defp pack_more(name, packed, list) do
    case Native.pack_more(packed, list) do
      :done -> {:ok, packed}
      {:more, rest} -> pack_more(name, packed, rest)
      {:error, _} = error -> failed(name, error)
    end
  end

  # the list's length, which the native side checks the list against
  defp count!(name, list) do
    length(list)
  rescue
    ArgumentError -> fail!(name, {:not_a_binary, :tail})
  end

  defp keyword!(name, opts, known) when is_list(opts) do
    Enum.each(opts, fn
      {key, _} = pair when is_atom(key) ->
        if key not in known, do: Options.bad_option!(name, pair, known, opts)

      other ->
        Options.bad_option!(name, other, known, opts)
    end)

    # schedule: and tiny_slices: are Job.call's to check
    opts
  end

  defp keyword!(name, opts, _known), do: Options.not_keyword!(name, opts)

  # out of native memory is an expected failure, answered as it is; any
  # other native error is a bad argument
  defp failed(_name, {:error, :enomem} = error), do: error
  defp failed(name, {:error, reason}), do: fail!(name, reason)

  defp fail!(name, {:not_a_binary, :tail}),
    do: raise(ArgumentError, "#{name}: the candidates are not a proper list")

  defp fail!(name, {:not_a_binary, at}),
    do: raise(ArgumentError, "#{name}: the candidate at position #{at} is not a binary")

  defp fail!(name, {:invalid_utf8, :query}),
    do:
      raise(ArgumentError, "#{name}: the query is not valid UTF-8 (required by unit: :codepoint)")

  defp fail!(name, {:invalid_utf8, at}) do
    raise ArgumentError,
          "#{name}: the candidate at position #{at} is not valid UTF-8 (required by unit: :codepoint)"
  end

  defp fail!(name, :not_an_index_here) do
    raise ArgumentError,
          "#{name}: the index was not made on this node (#{node()}): an index is native " <>
            "memory of the node that made it; for several nodes, make it with " <>
            "Index.new(candidates, nodes: nodes)"
  end

  defp fail!(name, reason),
    do: raise(ArgumentError, "#{name}: invalid arguments: #{inspect(reason)}")
end
