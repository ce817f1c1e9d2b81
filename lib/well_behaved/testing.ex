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
      longer than pure Erlang code does in any one turn of its calls
      (every call judged whole, from its first turn to its last), or
      takes the CPU from the schedulers (judged by `WellBehaved.Probe`,
      which measures without ExUnit);
    * `modes_agree/3` - a job's answer in every mode (`:external` too, for
      a library with a server build), with and without one unit per
      slice, against a reference;
    * `kill_mid_job/2` and `assert_no_live_jobs/2` - callers killed
      mid-job, and the runtime's live jobs and bytes back to 0 (and its
      servers', for a library with a server build);
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
  and no queued `:threaded` job, and, when `native` declares a server
  build (`WellBehaved.Runtime.modes/1` has `:external`) and its pool is
  running, until every server says it holds no live job and no bytes
  (`WellBehaved.External.server_stats/1`); `:ok`, so that it can be a
  `setup`. Fails after `limit_ms`, naming what was still live.
  """
  @spec assert_no_live_jobs(module(), pos_integer()) :: :ok
  def assert_no_live_jobs(native \\ WellBehaved.Native, limit_ms \\ 60_000) do
    wait_idle(native, limit_ms, System.monotonic_time(:millisecond) + limit_ms)
  end

  defp wait_idle(native, limit_ms, deadline) do
    case live(native) do
      [] ->
        :ok

      live ->
        if System.monotonic_time(:millisecond) > deadline do
          flunk("#{inspect(native)}: still live after #{limit_ms} ms: #{inspect(live)}")
        else
          Process.sleep(5)
          wait_idle(native, limit_ms, deadline)
        end
    end
  end

  # what is still live: the runtime's counters, then each server's
  defp live(native) do
    stats = WellBehaved.Runtime.stats(native)
    in_vm = Map.take(stats, [:live_jobs, :live_bytes, :queued])

    if(Enum.all?(in_vm, fn {_, n} -> n == 0 end), do: [], else: [runtime: in_vm]) ++
      live_in_servers(native)
  end

  defp live_in_servers(native) do
    servers =
      if :external in WellBehaved.Runtime.modes(native),
        do: WellBehaved.External.server_stats(Keyword.fetch!(native.__wb_external__(), :name))

    for {index, answer} <- servers || [], not idle_server?(answer) do
      {:server, index, answer}
    end
  end

  defp idle_server?({:ok, %{live_jobs: 0, live_bytes: 0}}), do: true
  defp idle_server?(_), do: false

  @doc """
  Calls `fun.(opts)` with `schedule:` each of `modes`, and each again with
  `tiny_slices: true` (one unit of work per slice, so every resume path
  runs: keep the work small), and asserts that every answer equals
  `expected`. `:ok`.

  `modes` is a list of modes, or the module of the job's NIF library
  (`native`): then `WellBehaved.Runtime.modes(native)`, every in-VM mode
  and `:external` when the library declares a server build (the
  `:well_behaved` application must be started for it). The default is
  `WellBehaved.Runtime.modes(WellBehaved.Native)`, the in-VM modes.
  """
  @spec modes_agree(
          (keyword() -> term()),
          term(),
          [WellBehaved.Runtime.mode() | :external] | module()
        ) :: :ok
  def modes_agree(fun, expected, modes \\ WellBehaved.Native)

  def modes_agree(fun, expected, native) when is_atom(native),
    do: modes_agree(fun, expected, WellBehaved.Runtime.modes(native))

  def modes_agree(fun, expected, modes) when is_list(modes) do
    for mode <- modes, tiny <- [false, true] do
      opts = [schedule: mode, tiny_slices: tiny]
      answer = fun.(opts)

      assert answer == expected,
             "#{inspect(opts)}: got #{inspect(answer, limit: 20)}, want #{inspect(expected, limit: 20)}"
    end

    :ok
  end

  def modes_agree(_fun, _expected, modes) do
    raise ArgumentError,
          "WellBehaved.Testing.modes_agree/3: invalid modes #{inspect(modes)}, expected a " <>
            "list of modes or the module of a NIF library"
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
  does, measured with `WellBehaved.Probe.turns/2`, so a busy machine
  neither fails a good function nor passes a bad one.

  Each of `rounds:` (3) rounds takes two traced windows, alternately: the
  function in worker processes beside as many pure-Erlang control
  workers, and those control workers alone. A window holds **whole
  calls**: every call it counts, from its first turn to its last (at least
  one per worker; workers start new calls for `duration_ms:`, 200, then
  finish the one they are in, within `timeout_ms:`, 60_000). So a turn a
  call makes once, such as a result built in one go at its end, is in
  every window. A window lasts at least a call (and the warm-up's calls
  before it), so a judgement of 0.8 s calls took about 10 s: judge inputs
  whose calls last well under a second. Then:

    * **holding**: the turns of the function on normal schedulers, in the
      CPU time of their thread (what the OS gave to other work does not
      count), against a limit relative to pure Erlang in the same VM:
      `max_ratio:` (default 1.5) times the 99th percentile turn of the
      control alone, plus `max_block_ms:` (default 1, the erl_nif
      guideline). The bound is that limit plus 5 ms for the CPU clock's
      imprecision (a thread's CPU clock charged 0.5-2.5 ms at a context
      switch on a 2-vCPU virtual machine, whatever the thread ran; with
      the defaults the bound is about 6 ms, so a 50 ms turn always
      fails). **Any one turn beyond the bound fails the round** (a turn
      of a call still running at the timeout counts with its wall time).
      Turns between the limit and the bound fail it when they are many:
      at least 3, 1% of the function's turns, and more than 3 times as
      many as the control's own rate of such turns (plus one) predicts
      in the same CPU time;
    * **competing**: the share of their turns' wall time that the control
      workers lost to the OS (wall time that was not their thread's CPU
      time), with the function running beside them and without it. Work
      off the normal schedulers (dirty, threads) that the OS runs in
      their place raises it; a busy machine raises both alike. It fails
      beyond 0.25 more while the VM's threads other than its normal
      schedulers worked more, or when the control hardly ran beside the
      function (fewer than 20 turns).

  A round says nothing (`:inconclusive`, with the reason) when a control
  worker had a turn beyond the bound itself (the CPU clock was not to be
  trusted in that round), when the control alone was disturbed even in
  CPU time (its 99th percentile turn over 4x its median) or hardly ran,
  when the tracer lost events, or when a worker was still in its call at
  the timeout. Off-scheduler work is judged by the second rule only: how
  late it makes processes that sleep and wake is what
  `WellBehaved.Probe.measure/2` and the lab's lateness suite show. The
  function fails when it fails in most rounds that say something; when
  none does, the verdict is `:inconclusive` and a warning says so (no
  failure). Takes `workers:` and `warmup_ms:` too, as
  `WellBehaved.Probe.turns/2` does.

      test "my NIF is well behaved" do
        assert_well_behaved(fn -> MyNif.work(input) end)
      end

  Returns `%{verdict: :pass | :inconclusive, rounds: [...], message: ...}`
  (`WellBehaved.Probe.summary/1` prints it), each round with its turns
  (`function`, `control`, `control_alone`: see
  `t:WellBehaved.Probe.turn_stats/0`), its `limit_us` and `bound_us`, the
  lost shares, and its own `result` and `reason`.
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
