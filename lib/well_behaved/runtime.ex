defmodule WellBehaved.Runtime do
  @moduledoc """
  The scheduling runtime behind every native function of WellBehaved.

  A native job runs in one of these modes, chosen per call with the
  `schedule:` option:

    * `:normal` - the whole job in one NIF call on a normal scheduler. The
      fastest for short work and dangerous for long work: nothing else runs
      on that scheduler until it returns (the erl_nif guideline is 1 ms).
    * `:dirty_cpu` - the whole job in one call on a dirty CPU scheduler.
      The caller cannot be garbage collected or suspended until it returns;
      a killed caller's job stops at its next check.
    * `:yielding` - time-sliced on normal schedulers: the job reports its
      time with `enif_consume_timeslice` and continues through
      `enif_schedule_nif` when its timeslice is used up.
    * `:yielding_dirty` - on a dirty CPU scheduler, rescheduling itself
      every 5 ms so the caller can be collected, suspended or killed.
    * `:threaded` - on a fixed pool of native threads; the caller waits in
      `receive`. A caller that dies cancels its job.
    * `:auto` (the default) - `:normal` when the job is predicted to take
      under 100 µs, `:yielding` under 100 ms, `:yielding_dirty` beyond. The
      prediction is the job's size times a cost per unit that the runtime
      keeps measuring. See `configure/1`.

  Every mode gives the same result.
  """

  alias WellBehaved.Native

  @modes [:auto, :normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded]

  @typedoc "How a native job is scheduled."
  @type mode :: :auto | :normal | :dirty_cpu | :yielding | :yielding_dirty | :threaded

  @doc """
  The scheduling modes.

      iex> WellBehaved.Runtime.modes()
      [:auto, :normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded]
  """
  @spec modes() :: [mode()]
  def modes, do: @modes

  @doc """
  Counters of the runtime: `live_jobs` and `live_bytes` (jobs whose native
  state exists now, and its size; a short `:normal` job that owns no heap
  memory is not counted), the `pool_threads` of `:threaded` mode, jobs
  `queued` for them, the `:auto` thresholds, and `ps_per_unit`: per job
  type, the measured cost of one unit of work in picoseconds, from which
  `:auto` predicts a call's duration.
  """
  @spec stats() :: %{atom() => integer() | %{atom() => pos_integer()}}
  def stats, do: Native.runtime_stats()

  @doc """
  Sets the `:auto` thresholds: `normal_max_us` (default 100) and
  `yielding_max_us` (default 100_000). Returns `:ok`.
  """
  @spec configure(keyword()) :: :ok
  def configure(opts) when is_list(opts) do
    current = stats()

    {normal, yielding} =
      Enum.reduce(opts, {current.normal_max_us, current.yielding_max_us}, fn
        {:normal_max_us, v}, {_, y} when is_integer(v) and v >= 0 -> {v, y}
        {:yielding_max_us, v}, {n, _} when is_integer(v) and v >= 0 -> {n, v}
        other, _ -> raise ArgumentError, "invalid runtime option: #{inspect(other)}"
      end)

    if normal > yielding do
      raise ArgumentError,
            "normal_max_us (#{normal}) must not exceed yielding_max_us (#{yielding})"
    end

    Native.runtime_configure(normal, yielding)
  end

  @doc false
  # Validation of the options every job function takes; raises with a
  # message naming the bad value.
  def check_mode!(mode) when mode in @modes, do: mode

  def check_mode!(mode) do
    raise ArgumentError, "invalid :schedule #{inspect(mode)}, expected one of #{inspect(@modes)}"
  end

  @doc false
  def check_tiny!(tiny) when is_boolean(tiny), do: tiny

  def check_tiny!(tiny) do
    raise ArgumentError, "invalid :tiny_slices #{inspect(tiny)}, expected a boolean"
  end

  @doc false
  def bad_opts!(opts) do
    raise ArgumentError, "expected a keyword list of options, got: #{inspect(opts)}"
  end

  @doc false
  def unknown_option!(key, function, known) do
    raise ArgumentError,
          "unknown option #{inspect(key)} for #{function} (known: #{Enum.map_join(known, ", ", &inspect/1)})"
  end

  @doc false
  # The reply of a job NIF started in :threaded mode with tag `ref`.
  def await(:ok, ref) do
    receive do
      {^ref, result} -> result
    end
  end

  def await(error, _ref), do: error
end
