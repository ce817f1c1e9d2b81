defmodule Checksum.TestHelpers do
  import ExUnit.Assertions

  @doc "Polls `fun` until it returns true; fails after `limit_ms` (a bound, not a timing claim)."
  def eventually(fun, limit_ms \\ 60_000) do
    deadline = System.monotonic_time(:millisecond) + limit_ms
    poll(fun, deadline)
  end

  defp poll(fun, deadline) do
    cond do
      fun.() ->
        :ok

      System.monotonic_time(:millisecond) > deadline ->
        flunk("condition not reached within the bound")

      true ->
        Process.sleep(5)
        poll(fun, deadline)
    end
  end

  @doc "Waits until the runtime of Checksum's NIF library holds no job and no native memory."
  def assert_no_live_jobs do
    eventually(fn ->
      stats = WellBehaved.Runtime.stats(Checksum.Native)
      stats.live_jobs == 0 and stats.live_bytes == 0 and stats.queued == 0
    end)
  end
end

ExUnit.start()
