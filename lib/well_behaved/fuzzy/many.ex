defmodule WellBehaved.Fuzzy.Many do
  @moduledoc false
  # WellBehaved.Fuzzy.extract_many/3: the candidates made ready once
  # (packed natively, or an index as it is), then each query's search a
  # job of its own in one of `workers:` processes, so that the queries
  # spread over the schedulers; a stream, so that at most `workers:`
  # queries' hits wait to be read at a time.

  alias WellBehaved.Options
  alias WellBehaved.Fuzzy.{Call, Index, Search}
  alias WellBehaved.Search.Events
  require WellBehaved.Telemetry, as: Telemetry

  @doc "The stream of `{query, hits}` (options checked); see `Fuzzy.extract_many/3`."
  @spec stream(String.t(), Enumerable.t(), term(), Call.t()) :: Enumerable.t()
  def stream(name, queries, choices, call) do
    if Enumerable.impl_for(queries) == nil,
      do: Options.invalid!(name, "queries", queries, "an enumerable of binaries")

    Stream.transform(
      [:queries],
      fn -> {Search.prepare_many(name, choices, call), described(choices)} end,
      fn :queries, {{set, call}, described} = acc ->
        {searched(name, queries, set, described, call), acc}
      end,
      fn {{set, _call}, _described} -> Search.release(set) end
    )
  end

  # what the search events say of the candidates (an index, or a count)
  defp described(%Index{} = index), do: index
  defp described(map) when is_map(map), do: map_size(map)
  defp described(list) when is_list(list), do: length(list)
  defp described(_other), do: nil

  defp searched(name, queries, set, described, call) do
    queries = Stream.map(queries, &query!(name, &1))

    case call.workers || System.schedulers_online() do
      # one worker: every query in the caller, one after the other
      1 ->
        Stream.map(queries, &{&1, one(name, &1, set, described, call)})

      workers ->
        queries
        |> Task.async_stream(&{&1, caught(name, &1, set, described, call)},
          max_concurrency: workers,
          ordered: call.ordered,
          timeout: :infinity
        )
        |> Stream.map(fn
          {:ok, {_query, {:raise, e, stack}}} -> reraise e, stack
          {:ok, pair} -> pair
        end)
    end
  end

  defp query!(_name, query) when is_binary(query), do: query
  defp query!(name, query), do: Options.invalid!(name, "queries", query, "binaries")

  # a raise in a worker (a processor's, a scorer function's) raised again
  # by the caller
  defp caught(name, query, set, described, call) do
    one(name, query, set, described, call)
  rescue
    e -> {:raise, e, __STACKTRACE__}
  end

  defp one(name, query, set, described, call) do
    if Telemetry.on?(),
      do:
        Events.search(name, described, call.limit, call, fn ->
          Search.search_in(name, query, set, call)
        end),
      else: Search.search_in(name, query, set, call)
  end
end
