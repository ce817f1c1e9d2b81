defmodule WellBehaved.Search.Events do
  @moduledoc false
  # The spans of the searches (Levenshtein.distances/3 and nearest/3,
  # Fuzzy.extract/3 and extract_one/3) and of Fuzzy.cdist/3, as the guide
  # "Observability" lists them. Their callers call these only once
  # WellBehaved.Telemetry.on?/0 said yes: nothing here runs with events off.

  alias WellBehaved.Fuzzy.Index
  alias WellBehaved.Telemetry

  @doc """
  Runs `fun`, a search of `name` on `candidates` for `limit` hits (nil:
  every distance), inside a `[:well_behaved, :search]` span.
  """
  @spec search(String.t(), term(), non_neg_integer() | :all | nil, map(), (() -> term())) ::
          term()
  def search(name, candidates, limit, call, fun) do
    metadata = %{
      function: name,
      candidates: count(candidates),
      limit: limit,
      index: match?(%Index{}, candidates),
      nodes: nodes(candidates, Keyword.get(call.remote, :nodes)),
      mode: call.schedule
    }

    Telemetry.emit_span([:well_behaved, :search], metadata, fn -> searched(fun.()) end)
  end

  @doc """
  Runs `fun`, the matrix of `queries` against `candidates`, inside a
  `[:well_behaved, :cdist]` span.
  """
  @spec cdist(term(), term(), map(), (() -> term())) :: term()
  def cdist(queries, candidates, call, fun) do
    rows = count(queries)
    cols = count(candidates)

    metadata = %{
      rows: rows,
      cols: cols,
      workers: call.workers || System.schedulers_online(),
      scorer: call.scorer,
      mode: call.schedule
    }

    Telemetry.emit_span([:well_behaved, :cdist], metadata, fn ->
      case fun.() do
        {:error, reason} = error -> {error, %{cells: 0}, %{result: :error, error: reason}}
        matrix -> {matrix, %{cells: rows * cols}, %{result: :ok}}
      end
    end)
  end

  # the stop event's hits and result, from the search's answer
  defp searched({:error, reason} = answer),
    do: {answer, %{hits: 0}, %{result: :error, error: reason}}

  defp searched({:partial, hits, failed} = answer),
    do: {answer, %{hits: hits(hits)}, %{result: :partial, failed: failed}}

  defp searched(answer), do: {answer, %{hits: hits(answer)}, %{result: :ok}}

  # hits in a list, distances in a binary (32 bits each), one hit or none
  defp hits(list) when is_list(list), do: length(list)
  defp hits(binary) when is_binary(binary), do: div(byte_size(binary), 4)
  defp hits(nil), do: 0
  defp hits(_one), do: 1

  # how many: walked, not length/1, which raises on an improper list
  # (the search itself says what is wrong with it)
  defp count(%Index{size: size}), do: size
  # a count its caller knows (a search of many queries on prepared candidates)
  defp count(n) when is_integer(n), do: n
  defp count(map) when is_map(map), do: map_size(map)
  defp count(list) when is_list(list), do: count(list, 0)
  defp count(_other), do: nil

  defp count([_ | rest], n), do: count(rest, n + 1)
  defp count(_end, n), do: n

  # the nodes that search: an index's shards', those of `nodes:`, or this one
  defp nodes(%Index{shards: [_ | _] = shards}, _given),
    do: shards |> Enum.map(&elem(&1, 0)) |> Enum.uniq()

  defp nodes(_candidates, [_ | _] = given), do: given
  defp nodes(_candidates, _given), do: [node()]
end
