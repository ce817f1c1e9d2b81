defmodule WellBehaved.Lab.Search.Plan do
  @moduledoc """
  What the search suite measures: the candidate counts, the rounds of the
  throughput, the lateness repeats and windows, quick or full, scaled by
  `rounds_scale`.
  """

  @methods [
    :nearest_index,
    :nearest_index_codepoint,
    :nearest_list,
    :distances_index,
    :distances_index_binary,
    :distances_list,
    :copy_list,
    :enum_map
  ]
  @long_methods [:nearest_index, :within_3_index, :distances_index_binary, :enum_map]
  @query_bytes 20
  # candidates past one machine word: the pair core with the query's table
  # made once, and its cutoffs (mbleven for k <= 3, the band's early stop)
  @shapes [
    %{shape: "10-30", shortest: 10, longest: 30, query_bytes: @query_bytes, methods: @methods},
    %{shape: "100-200", shortest: 100, longest: 200, query_bytes: 150, methods: @long_methods}
  ]
  # the long shape's "many queries": its Enum.map takes ~0.2 s a query
  # (the quick run of every suite is held to 360 s)
  @long_queries 3
  # figures of an earlier run, shown beside the new ones: one query, ns per
  # candidate, median over the rounds
  @before_source "the lab's quick run of 2026-11-26 00:41 UTC on a 2 vCPU AMD EPYC " <>
                   "(AVX-512, KVM, shared), before the cutoffs that stop early, the " <>
                   "batches in flight, the cheap lists and the binary distances"
  @before %{
    {"10-30", 100_000} => %{
      nearest_index: 8.2,
      nearest_list: 138.7,
      distances_index: 119.2,
      distances_list: 262.6,
      enum_map: 324.1
    }
  }
  @queries 100
  @quick_queries 30
  @bound 1.5
  # the lateness windows and repeats: quick, full (a quick run of every
  # suite is held to 360 s)
  @window_ms {500, 1000}
  @repeats {5, 11}
  # extract_many on one scheduler and on two (the issue's sizes), its
  # rounds: quick, full (each round two child VMs, ~15 s on 2 vCPU)
  @many_queries 1_000
  @many_candidates 100_000
  @many_rounds {3, 7}
  # dedupe: titles, rounds (quick, full), and the titles `numbers:
  # :ignore` runs on once (quick, full): one block of every title, its
  # time grows faster than the titles' count (~14 s for 20,000 on a
  # loaded 2 vCPU machine)
  @dedupe_titles 50_000
  @dedupe_rounds {3, 5}
  @dedupe_ignore_titles {10_000, 50_000}

  @doc "The methods compared on short candidates, in the order of the tables."
  @spec methods() :: [atom()]
  def methods, do: @methods

  @doc """
  The candidate shapes: their lengths, the query's and the methods
  compared on them.
  """
  @spec shapes() :: [map()]
  def shapes, do: @shapes

  @doc "How many of the queries the long shape times one after the other."
  @spec long_queries() :: pos_integer()
  def long_queries, do: @long_queries

  @doc "An earlier run's figure per method for a shape and count (`%{}` when none)."
  @spec before(String.t(), pos_integer()) :: %{atom() => float()}
  def before(shape, count), do: Map.get(@before, {shape, count}, %{})

  @doc "Where the earlier figures come from."
  @spec before_source() :: String.t()
  def before_source, do: @before_source

  @doc "The length of a query, in bytes."
  @spec query_bytes() :: pos_integer()
  def query_bytes, do: @query_bytes

  @doc "The bound on the ticker's p99 ratio to pure Erlang while searching."
  @spec bound() :: float()
  def bound, do: @bound

  @doc "The sizes extract_many's scaling is judged at: `{queries, candidates}`."
  @spec many_size() :: {pos_integer(), pos_integer()}
  def many_size, do: {@many_queries, @many_candidates}

  @doc "How many titles dedupe is judged at."
  @spec dedupe_titles() :: pos_integer()
  def dedupe_titles, do: @dedupe_titles

  @doc """
  The plan of a run. A `rounds_scale` (`scale`) under 1 (a rough run, as
  the lab's tests make) also shrinks the candidate sets (to 2,000 at
  least), the lateness windows (to 100 ms at least), extract_many's
  queries (to 20 at least) and candidates, and dedupe's titles (to 2,000
  at least), with two rounds of each.
  """
  @spec new(boolean(), number()) :: %{
          counts: [pos_integer()],
          queries: pos_integer(),
          rounds_one: pos_integer(),
          rounds_many: pos_integer(),
          repeats: pos_integer(),
          window_ms: pos_integer(),
          many_queries: pos_integer(),
          many_candidates: pos_integer(),
          many_rounds: pos_integer(),
          dedupe_titles: pos_integer(),
          dedupe_rounds: pos_integer(),
          dedupe_ignore_titles: pos_integer()
        }
  def new(quick, scale) do
    shrink = min(scale, 1.0)
    size = fn n -> max(2_000, round(n * shrink)) end
    pick = fn {quick_value, full_value} -> if quick, do: quick_value, else: full_value end
    # a rough run: two rounds, enough to alternate the order once
    rounds = fn pair -> if scale < 1, do: 2, else: max(3, round(pick.(pair) * scale)) end
    titles = size.(@dedupe_titles)

    %{
      counts: Enum.map(if(quick, do: [100_000], else: [100_000, 1_000_000]), size),
      # a quick run times 30 queries one after the other, a full one 100
      queries: if(quick, do: @quick_queries, else: @queries),
      rounds_one: max(3, round(9 * scale)),
      rounds_many: max(3, round(3 * scale)),
      repeats: max(3, round(pick.(@repeats) * scale)),
      window_ms: max(100, round(pick.(@window_ms) * shrink)),
      many_queries: max(20, round(@many_queries * shrink)),
      many_candidates: size.(@many_candidates),
      many_rounds: rounds.(@many_rounds),
      dedupe_titles: titles,
      dedupe_rounds: rounds.(@dedupe_rounds),
      dedupe_ignore_titles: min(titles, size.(pick.(@dedupe_ignore_titles)))
    }
  end
end
