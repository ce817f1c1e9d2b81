defmodule WellBehaved.External.WaitStats do
  @moduledoc false
  # What a pool's callers count, in a `:counters` ref (write_concurrency)
  # that the pool's ETS meta tuple carries: calls that timed out waiting
  # for a reply or for a connection, and a histogram of checkout waits in
  # log2 buckets. Bucket 0 holds the claims that found an idle slot
  # (no clock read on that path); bucket k >= 1 the waits through the
  # manager of under 2^k microseconds (0 and 1 us in bucket 1). The
  # percentiles are bucket bounds: "p90 2.048 ms" means 90% of the waits
  # took less than 2.048 ms (and at least some of them 1.024 ms or more).

  @timeouts 1
  @checkout_timeouts 2
  @first_bucket 3
  # 2^36 us is about 19 hours: past any timeout
  @buckets 37

  @doc "A new ref, every count 0."
  @spec new() :: :counters.counters_ref()
  def new, do: :counters.new(@first_bucket - 1 + @buckets, [:write_concurrency])

  @doc "A reply that did not come in time."
  @spec timeout(:counters.counters_ref()) :: :ok
  def timeout(ref), do: :counters.add(ref, @timeouts, 1)

  @doc "A connection that did not come free in time."
  @spec checkout_timeout(:counters.counters_ref()) :: :ok
  def checkout_timeout(ref), do: :counters.add(ref, @checkout_timeouts, 1)

  @doc "A claim that found an idle slot at once."
  @spec immediate(:counters.counters_ref()) :: :ok
  def immediate(ref), do: :counters.add(ref, @first_bucket, 1)

  @doc "A wait through the manager of `native` time units."
  @spec waited(:counters.counters_ref(), integer()) :: :ok
  def waited(ref, native) do
    us = max(System.convert_time_unit(native, :native, :microsecond), 0)
    :counters.add(ref, @first_bucket + bucket(us), 1)
  end

  @doc """
  The bucket of a wait of `us` microseconds through the manager.

      iex> Enum.map([0, 1, 2, 3, 4, 1_000, 1_024], &WellBehaved.External.WaitStats.bucket/1)
      [1, 1, 2, 2, 3, 10, 11]
  """
  @spec bucket(non_neg_integer()) :: pos_integer()
  def bucket(us), do: min(max(bits(us, 0), 1), @buckets - 1)

  defp bits(0, n), do: n
  defp bits(us, n), do: bits(Bitwise.bsr(us, 1), n + 1)

  @doc """
  The counts: `timeouts`, `checkout_timeouts` and `wait`: `count` (the
  checkouts) and the `p50`, `p90`, `p99` bounds in milliseconds (`nil`
  before any checkout).
  """
  @spec read(:counters.counters_ref()) :: map()
  def read(ref) do
    counts = for i <- 0..(@buckets - 1), do: :counters.get(ref, @first_bucket + i)

    %{
      timeouts: :counters.get(ref, @timeouts),
      checkout_timeouts: :counters.get(ref, @checkout_timeouts),
      wait: percentiles(counts)
    }
  end

  @doc """
  The p50, p90 and p99 bucket bounds (ms) of a histogram's `counts`.

      iex> WellBehaved.External.WaitStats.percentiles([8, 1, 0, 1])
      %{count: 10, p50: 0, p90: 0.002, p99: 0.008}
  """
  @spec percentiles([non_neg_integer()]) :: map()
  def percentiles(counts) do
    total = Enum.sum(counts)

    if total == 0 do
      %{count: 0, p50: nil, p90: nil, p99: nil}
    else
      %{
        count: total,
        p50: percentile(counts, total, 50),
        p90: percentile(counts, total, 90),
        p99: percentile(counts, total, 99)
      }
    end
  end

  # the bound of the bucket holding the ceil(p% of total)-th wait
  defp percentile(counts, total, p) do
    rank = div(total * p + 99, 100)

    counts
    |> Enum.with_index()
    |> Enum.reduce_while(0, fn {n, k}, seen ->
      if seen + n >= rank, do: {:halt, {:bucket, k}}, else: {:cont, seen + n}
    end)
    |> then(fn {:bucket, k} -> bound_ms(k) end)
  end

  defp bound_ms(0), do: 0
  defp bound_ms(k), do: Bitwise.bsl(1, k) / 1_000
end
