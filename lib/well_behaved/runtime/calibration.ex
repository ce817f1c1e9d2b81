defmodule WellBehaved.Runtime.Calibration do
  @moduledoc """
  How long this VM's Erlang code holds a scheduler per turn, and the
  `:yielding` slice derived from it.

  The VM switches an Erlang process out after 4000 reductions (a reduction
  is about one function call). What that is in microseconds depends on the
  CPU: 5 µs on one machine, 15 µs on another, for the same loop. A native
  job that yields after a fixed time holds its scheduler longer than Erlang
  code on a fast machine and shorter on a slow one, so the runtime's slice
  is measured instead, once per VM, when the first library built on the
  runtime loads (`WellBehaved.SDK.load_info/0`):

    1. `WellBehaved.Probe.erlang_work/1`, a loop of pure Erlang code that
       does not allocate, is timed in a fresh process: its reductions per
       iteration (from `Process.info(pid, :reductions)`), then 8 batches of
       25 runs of 1000 iterations each (about a quarter of a turn), 2 ms
       apart, so that a run the OS or another process interrupts is an
       outlier its batch's median ignores; the time of the two clock reads
       around a run is taken out.
    2. The turn is 4000 reductions at the cost per reduction of the fastest
       batch (its median): the time this loop holds a scheduler per turn
       when nothing else slows the CPU down. A VM calibrated while it
       boots, with its other schedulers loading code on the same core's
       other hardware thread, ran the loop 1.3-1.5x slower for tens of
       milliseconds (a child VM's turn came out 25.2 us, its siblings'
       17.4-18.6 us); the batches spread over 16 ms see past most of it.
       It is the tightest Erlang code there is (no allocation, no garbage
       collection), the one that switches most often, so a job whose
       slices fit in it never holds a scheduler longer than Erlang code
       does.
    3. The slice is 0.95 of the turn, clamped to 5-1000 µs: a `:yielding`
       job holds its scheduler for its slice plus the hop in and out of
       the NIF (under a microsecond), so its turns end as long as this
       Erlang code's. Traced on the lab's machine (15.2 µs turns), a
       `:yielding` job's turns were 0.91x this loop's at 0.9 of the turn
       and 1.05x at 1.0. Below 5 µs the hop would cost over 5% of the
       throughput; 1 ms is erl_nif's bound. A slice costs about 350 ns of
       throughput there, 270 of them the VM's process switch.

  It takes about 17 ms of wall time, 1.5 ms of it CPU. The result is kept
  in `:persistent_term` and passed to every runtime as its library loads;
  `WellBehaved.Runtime.stats/1` shows the slice in force (`slice_ns`),
  where it came from (`slice_source`) and the turn (`erlang_turn_ns`).

  A machine can run slow for seconds at a time (a virtual CPU's neighbour
  on the same core busy: the same loop took 18 us per turn in one VM and
  22-23 in the next), and a turn measured then is too long. So
  WellBehaved's application measures again 0.1, 0.4, 1.6 and 6.4 s after
  it starts (`refine/0`), and a faster turn replaces the one in force, in
  every runtime loaded in the VM whose slice comes from it. The slice only
  ever shrinks: never longer than Erlang code's turn when the machine is
  at its fastest, and shorter than it when Erlang code is slowed down
  too.
  """

  alias WellBehaved.Probe

  # CONTEXT_REDS in erts: the reductions of one turn
  @context_reductions 4000
  @slice_share 0.95
  @min_slice_ns 5_000
  @max_slice_ns 1_000_000
  @batches 8
  @batch_runs 25
  @batch_gap_ms 2
  @iterations 1000
  @key {__MODULE__, :erlang_turn}
  # refine/0: when, after the application starts (each a delay after the
  # previous one), and by how much a turn must be shorter to be taken
  @refine_after_ms [100, 300, 1200, 4800]
  @refine_gain 0.97

  @typedoc "A calibration: the turn, the slice, and what they were derived from."
  @type t :: %{
          turn_ns: pos_integer(),
          slice_ns: pos_integer(),
          ns_per_reduction: float(),
          reductions_per_iteration: float(),
          runs: pos_integer(),
          batches: pos_integer()
        }

  @doc """
  The load info a NIF library built on the runtime passes to
  `:erlang.load_nif/2`: `%{slice_ns: slice, erlang_turn_ns: turn}`.

      iex> %{slice_ns: s, erlang_turn_ns: t} = WellBehaved.Runtime.Calibration.load_info()
      iex> s == round(t * 0.95) or s in [5_000, 1_000_000]
      true
  """
  @spec load_info() :: %{slice_ns: pos_integer(), erlang_turn_ns: pos_integer()}
  def load_info do
    %{turn_ns: turn, slice_ns: slice} = erlang_turn()
    %{slice_ns: slice, erlang_turn_ns: turn}
  end

  @doc """
  This VM's calibration: measured by the first call, then kept.
  """
  @spec erlang_turn() :: t()
  def erlang_turn do
    case :persistent_term.get(@key, nil) do
      nil ->
        calibration = measure()
        :persistent_term.put(@key, calibration)
        calibration

      calibration ->
        calibration
    end
  end

  @doc """
  Measures the turn again and keeps it when it is at least 3% shorter than
  the one in force, giving its slice to every runtime in the VM that
  follows the calibration (`slice_source: :erlang_turn` in
  `WellBehaved.Runtime.stats/1`; a configured slice stays). Returns the
  calibration in force.
  """
  @spec refine() :: t()
  def refine do
    current = erlang_turn()
    new = measure()

    if new.turn_ns < current.turn_ns * @refine_gain do
      replace(new)
    else
      current
    end
  end

  @doc false
  # Keeps `calibration` as this VM's and gives its slice to the runtimes
  # that follow the calibration.
  def replace(calibration) do
    :persistent_term.put(@key, calibration)
    info = load_info()

    for native <- runtimes(), follows_calibration?(native) do
      :ok = native.runtime_configure(:keep, :keep, info, :keep)
    end

    calibration
  end

  # a module whose stubs have not been replaced by its NIF yet raises
  defp follows_calibration?(native) do
    native.runtime_stats().slice_source == :erlang_turn
  rescue
    ErlangError -> false
  end

  # the modules of the NIF libraries built on the runtime that are loaded
  # now: they register the SDK's runtime_stats/0 and runtime_configure/4
  defp runtimes do
    for {module, _} <- :code.all_loaded(),
        function_exported?(module, :runtime_configure, 4),
        function_exported?(module, :runtime_stats, 0),
        do: module
  end

  @doc """
  A process that calls `refine/0` 0.1, 0.4, 1.6 and 6.4 s after it starts,
  then ends; WellBehaved's application supervises one.
  """
  @spec child_spec(term()) :: Supervisor.child_spec()
  def child_spec(_) do
    %{id: __MODULE__, start: {__MODULE__, :start_link, []}, restart: :temporary}
  end

  @doc false
  def start_link do
    Task.start_link(fn ->
      Enum.each(@refine_after_ms, fn ms ->
        Process.sleep(ms)
        refine()
      end)
    end)
  end

  @doc """
  Measures the turn now, in a fresh process (nothing kept).
  """
  @spec measure() :: t()
  def measure do
    {_pid, ref} = spawn_monitor(fn -> exit({:calibration, sample()}) end)

    receive do
      {:DOWN, ^ref, :process, _, {:calibration, {batches, per_iteration}}} ->
        derive(batches, @iterations, per_iteration)

      {:DOWN, ^ref, :process, _, reason} ->
        exit({:calibration_failed, reason})
    end
  end

  @doc """
  The calibration from its measurements: `batches`, each a list of the
  times of runs of `iterations` iterations (a plain list of times is one
  batch), and the reductions one iteration costs. The fastest batch's
  median is the cost.

      iex> c = WellBehaved.Runtime.Calibration.derive([3650, 3600, 9000], 1000, 1.0)
      iex> {c.turn_ns, c.slice_ns}
      {14600, 13870}
      iex> c = WellBehaved.Runtime.Calibration.derive([[5400, 5500, 5300], [3650, 3600, 9000]], 1000, 1.0)
      iex> {c.turn_ns, c.runs, c.batches}
      {14600, 6, 2}
  """
  @spec derive([pos_integer()] | [[pos_integer()]], pos_integer(), number()) :: t()
  def derive([first | _] = runs_ns, iterations, reductions_per_iteration)
      when is_integer(first) and is_integer(iterations),
      do: derive([runs_ns], iterations, reductions_per_iteration)

  def derive([[_ | _] | _] = batches, iterations, reductions_per_iteration)
      when is_integer(iterations) and iterations > 0 and reductions_per_iteration > 0 do
    fastest = batches |> Enum.map(&median/1) |> Enum.min()
    per_reduction = fastest / (iterations * reductions_per_iteration)
    turn = max(1, round(per_reduction * @context_reductions))

    %{
      turn_ns: turn,
      slice_ns: slice_ns(turn),
      ns_per_reduction: per_reduction,
      reductions_per_iteration: reductions_per_iteration / 1,
      runs: batches |> Enum.map(&length/1) |> Enum.sum(),
      batches: length(batches)
    }
  end

  @doc """
  The slice for an Erlang turn of `turn_ns`.

      iex> WellBehaved.Runtime.Calibration.slice_ns(15_000)
      14250
      iex> WellBehaved.Runtime.Calibration.slice_ns(2_000)
      5000
  """
  @spec slice_ns(pos_integer()) :: pos_integer()
  def slice_ns(turn_ns) when is_integer(turn_ns) and turn_ns > 0,
    do: turn_ns |> Kernel.*(@slice_share) |> round() |> max(@min_slice_ns) |> min(@max_slice_ns)

  defp sample do
    # warm the loop up (CPU frequency, caches) before anything is timed
    Probe.erlang_work(50_000)
    {:reductions, r0} = Process.info(self(), :reductions)
    Probe.erlang_work(100_000)
    {:reductions, r1} = Process.info(self(), :reductions)

    batches =
      for batch <- 1..@batches do
        if batch > 1, do: Process.sleep(@batch_gap_ms)
        for _ <- 1..@batch_runs, do: time_ns(@iterations)
      end

    # what reading the clock twice costs, taken out of every run
    clock = median(for _ <- 1..50, do: time_ns(0))

    {Enum.map(batches, fn runs -> Enum.map(runs, &max(&1 - clock, 1)) end),
     max(r1 - r0, 1) / 100_000}
  end

  defp time_ns(iterations) do
    t0 = :erlang.monotonic_time(:nanosecond)
    Probe.erlang_work(iterations)
    :erlang.monotonic_time(:nanosecond) - t0
  end

  defp median(xs) do
    sorted = Enum.sort(xs)
    Enum.at(sorted, div(length(sorted), 2))
  end
end
