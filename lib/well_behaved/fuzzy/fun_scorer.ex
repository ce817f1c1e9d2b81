defmodule WellBehaved.Fuzzy.FunScorer do
  @moduledoc false
  # A scorer given as a function of two binaries (`scorer: fun`), run in
  # Elixir in the calling process: the slow path, for a measure the native
  # scorers lack. Its `score:` kind says only which way is better (the
  # distance kinds: lower); `score_cutoff:` keeps the hits at least (at
  # most) that good.

  alias WellBehaved.Options
  alias WellBehaved.Fuzzy.{Call, Index, Processor}
  alias WellBehaved.Search.Errors

  @cdist "WellBehaved.Fuzzy.cdist/3"

  @doc "The function's score of `a` and `b`, checked to be a number."
  @spec score(String.t(), (binary(), binary() -> number()), binary(), binary()) :: number()
  def score(name, fun, a, b) do
    case fun.(a, b) do
      score when is_number(score) ->
        score

      other ->
        raise ArgumentError,
              "#{name}: the scorer function returned #{inspect(other)} for " <>
                "#{inspect(a, limit: 5)} and #{inspect(b, limit: 5)}; it must return a number"
    end
  end

  @doc """
  The best `call.limit` of `entries` (`{text, scored, key}`) for `query`
  (processed): `{text, score, key}`, best first, ties in the entries' order.
  """
  @spec extract(String.t(), binary(), [{binary(), binary(), term()}], Call.t()) :: [tuple()]
  def extract(name, query, entries, call) do
    fun = call.scorer
    distance = Call.distance?(call)
    cutoff = call.score_cutoff

    entries
    |> Enum.flat_map(fn {text, scored, key} ->
      score = score(name, fun, query, scored)
      if passes?(score, cutoff, distance), do: [{text, score, key}], else: []
    end)
    |> Enum.sort_by(&elem(&1, 1), if(distance, do: :asc, else: :desc))
    |> then(fn hits -> if call.limit == :all, do: hits, else: Enum.take(hits, call.limit) end)
  end

  @doc """
  The candidates of cdist/3 as a function scorer reads them (processed),
  and the processor of the queries.
  """
  @spec candidates(term(), Call.t()) :: {[binary()], (binary() -> binary()) | nil}
  def candidates(%Index{} = index, call) do
    Call.no_processor!(@cdist, call)
    proc = Processor.function(index.processor)
    {Enum.map(index, fn {_key, text} -> if proc, do: proc.(text), else: text end), proc}
  end

  def candidates(list, call) when is_list(list) do
    if not Enum.all?(list, &is_binary/1),
      do: Errors.raise!(@cdist, {:not_a_binary, Enum.find_index(list, &(not is_binary(&1)))})

    proc = Processor.function(call.processor)
    {if(proc, do: Enum.map(list, proc), else: list), proc}
  end

  def candidates(other, _call),
    do: Options.invalid!(@cdist, "candidates", other, "a list of binaries or an index")

  defp passes?(_score, nil, _distance), do: true
  defp passes?(score, cutoff, true), do: score <= cutoff
  defp passes?(score, cutoff, false), do: score >= cutoff
end
