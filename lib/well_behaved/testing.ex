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

  The kit, for a NIF author's tests:

    * `assert_well_behaved/2` - fails when a function holds a scheduler
      longer than pure Erlang code does, or takes the CPU from the
      schedulers (judged by `WellBehaved.Probe`, which measures without
      ExUnit);
    * `modes_agree/3` - a job's answer in every mode, with and without
      one unit per slice, against a reference;
    * `kill_mid_job/2` and `assert_no_live_jobs/2` - callers killed
      mid-job, and the runtime's live jobs and bytes back to 0;
    * `eventually/2` - a wait that is a bound, never a timing claim;
    * `WellBehaved.Testing.ChildVM` - code that may abort or hog a VM,
      run in a VM of its own bounded by SIGKILL;
    * `WellBehaved.Stats` - the nearest-rank percentiles and medians the
      Probe and the lab report.
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
    # a job at work, or a function that ended before it was seen at work
    eventually(fn ->
      WellBehaved.Runtime.stats(native).live_jobs > 0 or not Process.alive?(pid)
    end)

    ref = Process.monitor(pid)
    # still at work: a job that already ended would prove nothing
    assert Process.alive?(pid),
           "the function returned before it could be killed: give it more work"

    Process.exit(pid, :kill)
    assert_receive {:DOWN, ^ref, :process, ^pid, _}, 60_000
    assert_no_live_jobs(native)
    :ok
  end

  @doc """
  Fails the test (`ExUnit.AssertionError`) when `fun` holds a scheduler
  longer than pure Erlang code does, or takes the CPU from the schedulers;
  returns the judgement otherwise. It judges what the function itself
  does, measured with `WellBehaved.Probe.turns/2`, so a busy machine neither fails a good
  function nor passes a bad one:

    * **holding**: the turns of the function that had more CPU time than
      `max_ratio` (default 1.5) times the 99th percentile turn of the
      pure-Erlang control workers, plus `max_block_ms` (default 1, the
      erl_nif guideline). The thread's CPU time does not count what the
      OS gave to other work, so a turn preempted inside the VM is not a
      long one. But a thread's CPU clock is not exact at the millisecond:
      on virtual machines without steal time it charges whatever thread
      runs for the time the hypervisor took, and it can jump by a
      millisecond or more at a context switch (seen on a 2-vCPU KVM guest
      in a plain C loop). So long turns are counted against the control's,
      in the same CPU time (each turn counted up to the limit): the
      function fails when at least 3 of its turns, and 1% of them, were
      long, more than 3 times as many as the control's rate (plus one)
      predicts; or when one turn, closed or still running at the end of
      the window (then with its wall time), was longer than the limit
      plus 20 ms;
    * **competing**: the share of their turns' wall time that the control
      workers lost to the OS (wall time that was not their thread's CPU
      time), with the function running beside them and without it,
      windows taken alternately. Work off the normal schedulers (dirty,
      threads) that the OS runs in their place raises it; a busy machine
      raises both alike. It fails beyond 0.25 more, or when the control
      hardly ran beside the function (fewer than 20 turns).

  Each of `rounds:` (3) rounds measures both windows (`duration_ms:`, 200
  each). A round whose control, alone, was disturbed even in CPU time (its
  99th percentile turn over 4x its median) or hardly ran says nothing.
  Off-scheduler work is judged by the second rule only: how late it makes
  processes that sleep and wake (a scheduler whose thread the OS gave to
  a dirty one) is what `WellBehaved.Probe.measure/2` and the lab's lateness suite show. The function fails when it fails in most rounds that say
  something; when none does, the verdict is `:inconclusive` and a warning
  says so (no failure). Takes `workers:` and `warmup_ms:` too, as
  `WellBehaved.Probe.turns/2` does.

      test "my NIF is well behaved" do
        assert_well_behaved(fn -> MyNif.work(input) end)
      end

  Returns `%{verdict: :pass | :inconclusive, rounds: [...]}`, each round
  with its turns (`function`, `control`, `control_alone`: see
  `t:WellBehaved.Probe.turn_stats/0`), the limit in microseconds, the lost shares and its
  own `result`.
  """
  @spec assert_well_behaved((() -> any()), keyword()) :: map()
  def assert_well_behaved(fun, opts \\ []) do
    judgement = WellBehaved.Probe.judge(fun, opts, "WellBehaved.Testing.assert_well_behaved/2")

    case judgement.verdict do
      :fail ->
        flunk(judgement.message)

      :inconclusive ->
        IO.warn(
          "WellBehaved.Testing.assert_well_behaved/2: inconclusive: " <> judgement.message,
          []
        )

        judgement

      :pass ->
        judgement
    end
  end
end
