defmodule WellBehaved.Testing do
  @moduledoc """
  Helpers for the ExUnit tests of a NIF library built on the runtime's SDK
  (the tests of WellBehaved and of `examples/checksum` use them): a job run
  in every mode against a reference, callers killed mid-job, and waits that
  are bounds, never timing claims.

      iex> import WellBehaved.Testing
      iex> eventually(fn -> 1 + 1 end)
      2
      iex> modes_agree(fn opts -> WellBehaved.Levenshtein.distance("kitten", "sitting", opts) end, 3)
      :ok

  To judge how a function treats the schedulers, see
  `WellBehaved.Probe.assert_well_behaved/2`; to run code that may abort or
  hog a VM, `WellBehaved.ChildVM`.
  """

  import ExUnit.Assertions

  @doc """
  Polls `fun` every 5 ms until it returns a truthy value, and returns that
  value; fails after `limit_ms` (a bound for a busy machine, not a timing
  claim).
  """
  @spec eventually((() -> term()), pos_integer()) :: term()
  def eventually(fun, limit_ms \\ 60_000) do
    wait(fun, System.monotonic_time(:millisecond) + limit_ms)
  end

  defp wait(fun, deadline) do
    cond do
      result = fun.() ->
        result

      System.monotonic_time(:millisecond) > deadline ->
        flunk("condition not reached within the bound")

      true ->
        Process.sleep(5)
        wait(fun, deadline)
    end
  end

  @doc """
  Waits until the runtime of `native`'s NIF library (the module that loads
  it and registers `runtime_stats/0`) holds no live job, no native bytes
  and no queued `:threaded` job (`:ok`, so that it can be a `setup`);
  fails after `limit_ms`.
  """
  @spec assert_no_live_jobs(module(), pos_integer()) :: :ok
  def assert_no_live_jobs(native \\ WellBehaved.Native, limit_ms \\ 60_000) do
    eventually(
      fn ->
        stats = WellBehaved.Runtime.stats(native)
        stats.live_jobs == 0 and stats.live_bytes == 0 and stats.queued == 0
      end,
      limit_ms
    )

    :ok
  end

  @doc """
  Calls `fun.(opts)` with `schedule:` each of `modes` (by default
  `WellBehaved.Runtime.modes/0`), and each again
  with `tiny_slices: true` (one unit of work per slice, so every resume
  path runs: keep the work small), and asserts that every answer equals
  `expected`. `:ok`.
  """
  @spec modes_agree((keyword() -> term()), term(), [WellBehaved.Runtime.mode()]) :: :ok
  def modes_agree(fun, expected, modes \\ WellBehaved.Runtime.modes()) do
    for mode <- modes, tiny <- [false, true] do
      opts = [schedule: mode, tiny_slices: tiny]
      answer = fun.(opts)

      assert answer == expected,
             "#{inspect(opts)}: got #{inspect(answer, limit: 20)}, want #{inspect(expected, limit: 20)}"
    end

    :ok
  end

  @doc """
  Runs `fun` in a new process, waits until `native`'s runtime shows a live
  job (so give it work that lasts: `tiny_slices: true` makes any job long),
  kills the process, and asserts that the runtime frees the job and its
  memory (so nothing else may run on that runtime meanwhile). `:ok`.
  """
  @spec kill_mid_job((() -> term()), module()) :: :ok
  def kill_mid_job(fun, native \\ WellBehaved.Native) do
    pid = spawn(fun)
    eventually(fn -> WellBehaved.Runtime.stats(native).live_jobs > 0 end)
    # still at work: a job that already ended would prove nothing
    assert Process.alive?(pid), "the function returned before it could be killed"
    ref = Process.monitor(pid)
    Process.exit(pid, :kill)
    assert_receive {:DOWN, ^ref, :process, ^pid, _}, 60_000
    assert_no_live_jobs(native)
    :ok
  end
end
