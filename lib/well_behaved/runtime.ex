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
      time with `enif_consume_timeslice`, as a fraction of a slice, and
      continues through `enif_schedule_nif` when its process has used its
      reductions, so other processes wait for it no longer than they wait
      for Erlang code. The slice is derived from how long this VM's Erlang
      code runs per turn, measured when the library loads and again over
      its first seconds (`WellBehaved.Runtime.Calibration`: 15-18 µs on
      the lab's machines); `configure/2` overrides it.
    * `:yielding_dirty` - on a dirty CPU scheduler, rescheduling itself
      every 5 ms so the caller can be collected, suspended or killed.
    * `:threaded` - on a fixed pool of native threads; the caller waits in
      `receive`. A caller that dies cancels its job.
    * `:auto` (the default) - `:normal` when the job is predicted to take
      under one slice, `:yielding` otherwise (`:yielding_dirty`
      only beyond `yielding_max_us:`, which is not set by default). The
      prediction is the job's size times a cost per unit that the runtime
      keeps measuring. See `configure/1`.

  Every mode gives the same result.
  """

  alias WellBehaved.{Native, Options}

  @modes [:auto, :normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded]

  @typedoc "How a native job is scheduled."
  @type mode :: :auto | :normal | :dirty_cpu | :yielding | :yielding_dirty | :threaded

  @doc """
  The scheduling modes in the VM, which every job type runs in.

  One more mode exists: `:external` (`WellBehaved.Job.call/4` with
  `schedule: :external`) runs a job in a server program of its library's
  job types, in a pool of OS processes, for a library whose module
  declares a server build (`use WellBehaved.NIF, external: ...`). It is
  not in this list, which callers iterate in the VM; `modes/1` gives a
  library's modes, `:external` included when it has one.

      iex> WellBehaved.Runtime.modes()
      [:auto, :normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded]
  """
  @spec modes() :: [mode()]
  def modes, do: @modes

  @doc """
  The modes a NIF library's jobs run in: `modes/0`, plus `:external` when
  `native` (the module that loads the library) declares a server build
  (`use WellBehaved.NIF, external: ...`, which defines its
  `__wb_external__/0`).

      iex> WellBehaved.Runtime.modes(WellBehaved.Native)
      [:auto, :normal, :dirty_cpu, :yielding, :yielding_dirty, :threaded]
  """
  @spec modes(module()) :: [mode() | :external]
  def modes(native) when is_atom(native) do
    if Code.ensure_loaded?(native) and function_exported?(native, :__wb_external__, 0),
      do: @modes ++ [:external],
      else: @modes
  end

  def modes(native),
    do: Options.invalid!("WellBehaved.Runtime.modes/1", "native", native, "a module")

  @doc """
  Counters and settings of a runtime: `live_jobs` and `live_bytes` (jobs
  whose native state exists now, and its size; a short `:normal` job that
  owns no heap memory is not counted), `resident_bytes` (native memory the
  library holds outside jobs, such as `WellBehaved.Levenshtein.Index`es), the `pool_threads` of `:threaded`
  mode, jobs `queued` for them, `answered_in_call` (short `:threaded`
  jobs whose caller took the answer in the call that queued them, without
  a message: see the scheduling guide), the settings of `configure/2`
  (`normal_max_us`, `yielding_max_us`, `slice_us`, `dirty_slice_us`), and
  `ps_per_unit`: per job type, the measured cost of one unit of work in
  picoseconds, from which `:auto` predicts a call's duration, and
  `cost_measured`: per job type, whether that cost has been measured on
  this machine yet (until then it is the type's seed, which `:auto` does
  not trust: its `:normal` runs are bounded by the clock), and
  `limits`: what the C side accepts (its `modes`, `max_job_args`, and the
  slice settings' range, `slice_us_min`..`slice_us_max`), against which
  this module's own checks are tested; and
  `released_later`: how many large blocks handed to the runtime's own
  threads, so that no scheduler spends milliseconds on them, have been
  given back to the system (by those threads, or where they were handed
  when no thread could take them), and `release_pending`: how many are
  handed to the threads and not given back yet (a benchmark waits for 0 before it
  measures, so that the previous work's memory is not unmapped meanwhile).

  `counters`: counts since the library loaded, each only ever growing
  (monotonic; a new instance of the library, loaded again, starts at 0),
  cheap enough to stay on (each thread counts in memory of its own, and
  this call sums them):

    * `calls` - job NIF calls by the mode asked: a map with a key for each
      mode and `:auto` (a `:threaded` job's `:collect` or `:cancel`, and
      `WellBehaved.Job.explain/2`, are not calls);
    * `auto_chosen` - the mode `:auto` chose, by mode;
    * `completed`, `failed`, `cancelled` - how each job ended, by the mode
      that ran it, exactly one of the three per job: it answered its
      result; it answered an error (arguments refused by `decode`, an
      `init` that failed, `:enomem`) or its result raised (`failed` has
      an `:auto` key too: calls refused before `:auto` chose a mode); it
      was cancelled (a `:threaded` call's timeout, a caller that died, a
      job dropped unfinished);
    * `reruns` - `:auto`'s `:normal` runs that needed more work than
      predicted and started again `:yielding` (counted there neither as a
      call nor as a choice);
    * `yields` - slices that gave their scheduler back and rescheduled the
      job; `dirty_hops` - moves of a job between normal and dirty
      schedulers; `requeues` - `:threaded` quanta after which a job queued
      again behind others; `caller_deaths` - callers a running job found
      dead (a dirty run's check, a `:threaded` job's monitor; a `:yielding`
      job whose caller died between slices is counted `cancelled` only);
      `answered_in_call` - as the key of that name.

  So at rest, for each mode: `calls` + `auto_chosen` (+ `reruns` for
  `:yielding`) = `completed` + `failed` + `cancelled` (+ `reruns` for
  `:normal`), and `calls.auto` = the sum of `auto_chosen` + `failed.auto`;
  while jobs run, the difference is what is in flight. A library built
  on an older runtime has no `counters` key.

  The slice: `slice_ns` (`slice_us` rounded), `slice_source` (where it
  comes from: `:erlang_turn`, derived from `erlang_turn_ns`, the time this
  VM's Erlang code runs per turn, measured when the library loaded;
  `:configured` by `configure/2`; `:default`, the compiled 30 µs of a
  library loaded without `WellBehaved.SDK.load_info/0`), and
  `calibrated_slice_ns`, the slice `configure(slice_us: :calibrated)`
  restores.

  Each NIF library built with the runtime has a runtime of its own.
  `native` names the module of that library, which registers the SDK's
  `runtime_stats/0` NIF; the default is WellBehaved's own library, which
  runs `WellBehaved.Levenshtein`. Jobs run with `schedule: :external`
  are not counted here: their servers' counts (live, cancelled and
  abandoned jobs) are `WellBehaved.External.server_stats/1`'s.

      iex> WellBehaved.Runtime.stats().ps_per_unit |> Map.has_key?(:levenshtein)
      true
      iex> WellBehaved.Runtime.stats().counters.calls |> Map.keys() |> Enum.sort()
      [:auto, :dirty_cpu, :normal, :threaded, :yielding, :yielding_dirty]
  """
  @spec stats(module()) :: %{atom() => term()}
  def stats(native \\ Native)

  def stats(native) when is_atom(native) do
    check_native!(native, :runtime_stats, 0, "WellBehaved.Runtime.stats/1")
    native.runtime_stats()
  end

  def stats(native),
    do: Options.invalid!("WellBehaved.Runtime.stats/1", "native", native, "a module")

  @settings [:normal_max_us, :yielding_max_us, :slice_us, :dirty_slice_us]
  @slice_range 1..100_000
  @max_threshold_us div(0xFFFF_FFFF_FFFF_FFFF, 1000) - 1
  @configure "WellBehaved.Runtime.configure/2"

  @doc """
  Changes a runtime's settings; the ones not given keep their value.
  Returns `:ok`. Jobs started afterwards use the new values. `native` is
  the module of the NIF library whose runtime changes (see `stats/1`; it
  registers the SDK's `runtime_configure/4` NIF), by default WellBehaved's
  own.

    * `slice_us:` - how long a `:yielding` job runs before it gives its
      scheduler back, in microseconds (#{inspect(@slice_range)}), or
      `:calibrated` (the default): the slice derived from this VM's Erlang
      turn (see `WellBehaved.Runtime.Calibration`). The job reports its
      time to the VM as a fraction of this slice, so the VM switches
      processes at the pace it does for Erlang code. A slice is at least
      one step of the job.
    * `dirty_slice_us:` - how often a `:yielding_dirty` job reschedules
      itself (a point where its caller can be collected, suspended or
      killed), in microseconds (#{inspect(@slice_range)}, default 5000).
    * `normal_max_us:` and `yielding_max_us:` - the `:auto` thresholds:
      `:normal` under `normal_max_us` of predicted work (default `:slice`,
      one slice whatever the slice is: a shorter call delays other
      processes no more than a slice does), `:yielding` under
      `yielding_max_us`, `:yielding_dirty` beyond.
      `yielding_max_us` defaults to `:infinity`: on the lab's 2-core
      machine `:yielding` kept the VM as responsive as pure Erlang code at
      every work size measured, and `:yielding_dirty` did not (see the
      lab guide, guides/lab.md). `normal_max_us` may not exceed `yielding_max_us`.

        iex> WellBehaved.Runtime.configure(slice_us: 50)
        :ok
        iex> WellBehaved.Runtime.stats().slice_us
        50
        iex> WellBehaved.Runtime.stats().slice_source
        :configured
        iex> WellBehaved.Runtime.configure(slice_us: :calibrated)
        :ok
        iex> WellBehaved.Runtime.stats().slice_source
        :erlang_turn
  """
  @spec configure(module(), keyword()) :: :ok
  def configure(native \\ Native, opts)

  def configure(native, opts) when is_atom(native) and is_list(opts) do
    check_native!(native, :runtime_configure, 4, @configure)
    keep = Map.new(@settings, &{&1, :keep})

    given =
      Enum.reduce(opts, keep, fn
        {key, value}, acc when key in @settings ->
          Map.put(acc, key, check_setting!(key, value))

        other, _ ->
          Options.bad_option!(@configure, other, @settings, opts)
      end)

    check_thresholds!(given, native.runtime_stats())

    try do
      native.runtime_configure(
        given.normal_max_us,
        given.yielding_max_us,
        given.slice_us,
        given.dirty_slice_us
      )
    rescue
      # the runtime's own check: a normal_max_us that follows the slice
      # would exceed yielding_max_us
      ArgumentError ->
        raise ArgumentError,
              "#{@configure}: normal_max_us (one slice) must not exceed yielding_max_us " <>
                "(#{inspect(given.yielding_max_us)})"
    end
  end

  def configure(native, opts) when is_atom(native), do: Options.not_keyword!(@configure, opts)
  def configure(native, _opts), do: Options.invalid!(@configure, "native", native, "a module")

  defp check_native!(native, function, arity, caller) do
    if not (Code.ensure_loaded?(native) and function_exported?(native, function, arity)) do
      Options.invalid!(
        caller,
        "native",
        native,
        "a module whose NIF library registers the runtime's #{function}/#{arity}"
      )
    end
  end

  # explicit thresholds must keep normal_max <= yielding_max
  defp check_thresholds!(given, current) do
    normal = if is_integer(given.normal_max_us), do: given.normal_max_us

    yielding =
      if given.yielding_max_us == :keep, do: current.yielding_max_us, else: given.yielding_max_us

    normal =
      normal ||
        if(given.normal_max_us == :keep and given.slice_us == :keep, do: current.normal_max_us)

    if normal != nil and yielding != :infinity and normal > yielding do
      raise ArgumentError,
            "#{@configure}: normal_max_us (#{normal}) must not exceed yielding_max_us (#{yielding})"
    end
  end

  defp check_setting!(:slice_us, :calibrated), do: :calibrated

  defp check_setting!(key, value) when key in [:slice_us, :dirty_slice_us] do
    if key == :slice_us and not is_integer(value) do
      Options.invalid!(
        @configure,
        key,
        value,
        "an integer in #{inspect(@slice_range)} or :calibrated"
      )
    end

    Options.integer!(@configure, key, value, @slice_range)
  end

  defp check_setting!(:yielding_max_us, :infinity), do: :infinity
  defp check_setting!(:normal_max_us, :slice), do: :slice

  defp check_setting!(_key, value) when is_integer(value) and value in 0..@max_threshold_us,
    do: value

  defp check_setting!(key, value) do
    Options.invalid!(
      @configure,
      key,
      value,
      "an integer of microseconds in 0..#{@max_threshold_us}" <>
        if(key == :yielding_max_us, do: " or :infinity", else: " or :slice")
    )
  end

  @doc """
  Gives a runtime this VM's slice (`WellBehaved.Runtime.Calibration`) if
  its library was loaded without it (`slice_source: :default`), as happens
  to a library whose module loads while it is being compiled, before the
  calibration's own module exists. A configured slice stays. Returns `:ok`.
  WellBehaved's application does this for its own library when it starts.

      iex> WellBehaved.Runtime.calibrate()
      :ok
      iex> WellBehaved.Runtime.stats().slice_source in [:erlang_turn, :configured]
      true
  """
  @spec calibrate(module()) :: :ok
  def calibrate(native \\ Native) when is_atom(native) do
    check_native!(native, :runtime_configure, 4, "WellBehaved.Runtime.calibrate/1")
    native.runtime_configure(:keep, :keep, WellBehaved.Runtime.Calibration.load_info(), :keep)
  end

  @doc false
  # Validation of the options every job function takes; raises naming the
  # function and the bad value. `extra`: modes the function takes besides
  # the runtime's.
  def check_mode!(mode, _function, _extra) when mode in @modes, do: mode

  def check_mode!(mode, function, extra),
    do: Options.one_of!(function, :schedule, mode, @modes ++ extra)

  @doc false
  def check_tiny!(tiny, function), do: Options.boolean!(function, :tiny_slices, tiny)
end
