defmodule WellBehaved.Test.RuntimeHelpers do
  @moduledoc false
  import ExUnit.Assertions

  @doc "Polls `fun` until it returns true; fails after `limit_ms` (a bound, not a timing claim)."
  def eventually(fun, limit_ms \\ 60_000) do
    deadline = System.monotonic_time(:millisecond) + limit_ms
    wait(fun, deadline)
  end

  defp wait(fun, deadline) do
    cond do
      fun.() ->
        :ok

      System.monotonic_time(:millisecond) > deadline ->
        flunk("condition not reached within the bound")

      true ->
        Process.sleep(5)
        wait(fun, deadline)
    end
  end

  @doc "Waits until the runtime holds no live job and no native bytes."
  def assert_no_live_jobs do
    eventually(fn ->
      stats = WellBehaved.Runtime.stats()
      stats.live_jobs == 0 and stats.live_bytes == 0 and stats.queued == 0
    end)
  end

  def random_bytes(n, alphabet \\ 256)
  def random_bytes(n, 256), do: :crypto.strong_rand_bytes(n)

  def random_bytes(n, alphabet) do
    for _ <- 1..n//1, into: <<>>, do: <<Enum.random(0..(alphabet - 1))>>
  end
end
