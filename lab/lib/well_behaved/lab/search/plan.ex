defmodule WellBehaved.Lab.Search.Plan do
  @moduledoc """
  What the search suite measures: the candidate counts, the rounds of the
  throughput, the lateness repeats and windows, quick or full, scaled by
  `rounds_scale`.
  """

  @methods [:nearest_index, :nearest_list, :distances_index, :distances_list, :enum_map]
  @query_bytes 20
  @queries 100
  @quick_queries 30
  @bound 1.5
  @window_ms 1000

  @doc "The methods compared, in the order of the tables."
  @spec methods() :: [atom()]
  def methods, do: @methods

  @doc "The length of a query, in bytes."
  @spec query_bytes() :: pos_integer()
  def query_bytes, do: @query_bytes

  @doc "The bound on the ticker's p99 ratio to pure Erlang while searching."
  @spec bound() :: float()
  def bound, do: @bound

  @doc """
  The plan of a run. A `rounds_scale` (`scale`) under 1 (a rough run, as
  the lab's tests make) also shrinks the candidate sets (to 2,000 at
  least) and the lateness windows (to 100 ms at least).
  """
  @spec new(boolean(), number()) :: %{
          counts: [pos_integer()],
          queries: pos_integer(),
          rounds_one: pos_integer(),
          rounds_many: pos_integer(),
          repeats: pos_integer(),
          window_ms: pos_integer()
        }
  def new(quick, scale) do
    shrink = min(scale, 1.0)
    size = fn n -> max(2_000, round(n * shrink)) end

    %{
      counts: Enum.map(if(quick, do: [100_000], else: [100_000, 1_000_000]), size),
      # a quick run times 30 queries one after the other, a full one 100
      queries: if(quick, do: @quick_queries, else: @queries),
      rounds_one: max(3, round(9 * scale)),
      rounds_many: max(3, round(3 * scale)),
      repeats: max(3, round(if(quick, do: 9, else: 11) * scale)),
      window_ms: max(100, round(@window_ms * shrink))
    }
  end
end
