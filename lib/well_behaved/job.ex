defmodule WellBehaved.Job do
  @moduledoc """
  The Elixir side of a job NIF built with the runtime's C SDK (see
  `WellBehaved.SDK` and the guide "Writing your own well-behaved
  NIF").

  A job NIF registered with `wb_run` takes the job's own arguments and then
  three more: the scheduling mode, the tiny-slices flag and a reference that
  tags the reply of a `:threaded` job. `call/4` adds them from the caller's
  options, waits for a threaded job's reply, and returns what the job
  answered: its result, or `{:error, reason}` when the job's `decode` or
  `init` refused the arguments (`{:error, :badarg}`, `{:error, :enomem}` or
  the job's own reason).

  `explain/2` tells which mode `schedule: :auto` would choose for a call,
  and why, without running it. The runtime can also answer a job's result
  with a report of how it ran (the mode `:auto` chose and its reason, the
  slices, a re-run after a wrong prediction): the tiny-slices argument is
  then an integer with the report bit, and this module takes the report
  off in one place, so that no caller ever sees it.

  A public function wrapping a job is usually a line or two:

      def checksum(data, opts \\\\ []) when is_binary(data),
        do: WellBehaved.Job.call(&MyApp.Native.checksum/4, [data], opts, "MyApp.checksum/2")

  where `MyApp.Native.checksum/4` is the NIF stub of a job type whose
  `argc` is 1.

  While events are on (`WellBehaved.Telemetry`), every call is a
  `[:well_behaved, :job]` span (the guide "Observability" lists its
  measurements and metadata); while they are off, a call pays one read
  of a cached flag for them.
  """

  alias WellBehaved.{External, Options, Runtime}
  alias WellBehaved.Job.Events
  require WellBehaved.Telemetry, as: Telemetry

  @call "WellBehaved.Job.call/4"
  @known [:schedule, :tiny_slices, :timeout, :pool]

  @type option ::
          {:schedule, Runtime.mode() | :external}
          | {:tiny_slices, boolean()}
          | {:timeout, timeout()}
          | {:pool, atom()}

  @doc """
  Calls the job NIF `nif_function` with `args` and the scheduling options,
  and returns the job's answer.

  `nif_function` is a function of `length(args) + 3` arguments, normally a
  capture of the NIF stub, such as `&MyApp.Native.checksum/4`.

  Options:

    * `schedule:` - a `t:WellBehaved.Runtime.mode/0` (default `:auto`),
      or `:external`: a server program of the library's job types runs
      the job in an OS process of its own (see `WellBehaved.External`),
      with the same answer. A crash there answers `{:error, :closed}`
      and the pool starts the server again; the VM never goes down with
      it. The pool is `pool:`, or the one the NIF module declares with
      `use WellBehaved.NIF, external: ...` (started on first use).
    * `tiny_slices:` - `true` runs one unit of work per slice (per step in
      a server), so that every resume path of the job runs: for tests
      (default `false`).
    * `timeout:` - milliseconds a `:threaded` or `:external` call waits
      for its job, or `:infinity` (the default; an `:external` call then
      waits the pool's `timeout_ms`). A job not finished by then is
      cancelled (it stops at its next step and its memory is freed) and
      the call answers `{:error, :timeout}`; in a server, a job that does
      not stop within the pool's `cancel_timeout_ms` (a step that never
      returns) has its server replaced (see `WellBehaved.External`). The
      other modes run in the calling process: to bound one, call it from a
      `Task` and shut the task down (a job whose caller dies is stopped and
      freed in every mode; in a server, the pool notices the death within
      half a second and cancels the job as on a timeout).
    * `pool:` - the name of a running `WellBehaved.External` pool, for
      `schedule: :external`.

  An `ArgumentError` for a bad option names `function`: a wrapper passes
  its own name, so that its callers read about the function they called.

  A `:threaded` call waits in `receive` for the pool's word that the job
  is done, then builds the result in the calling process (an exception
  raised by the job's `result` raises here, as in every other mode). A
  caller killed meanwhile cancels its job, and the runtime frees it.

      iex> WellBehaved.Job.call(&WellBehaved.Native.levenshtein/7, ["kitten", "sitting", :byte, nil],
      ...>   schedule: :threaded)
      3
  """
  @spec call(function(), list(), [option()], String.t()) :: term()
  def call(nif_function, args, opts \\ [], function \\ @call)

  def call(nif_function, args, [], function) when is_list(args) do
    if Telemetry.on?(),
      do: spanned(nif_function, args, :auto, false, :infinity, function),
      else: run(nif_function, args, :auto, false, nil, function)
  end

  def call(nif_function, args, opts, function) when is_list(args) and is_list(opts) do
    case parse(opts, {:auto, false, :infinity, nil}, opts, function) do
      {:external, tiny, timeout, pool} ->
        if Telemetry.on?(),
          do:
            span(nif_function, :external, function, fn ->
              {external(nif_function, args, tiny, timeout, pool, function), nil}
            end),
          else: external(nif_function, args, tiny, timeout, pool, function)

      {mode, tiny, timeout, _pool} ->
        checked(nif_function, args, mode, tiny, timeout, function)
    end
  end

  def call(_nif_function, args, opts, function) when is_list(args),
    do: Options.not_keyword!(function, opts)

  def call(_nif_function, args, _opts, function),
    do: Options.invalid!(function, "args", args, "a list")

  @doc false
  # call/4 with its options already checked (by a caller that checks its
  # own options once, such as WellBehaved.Levenshtein)
  @spec checked(function(), list(), Runtime.mode(), boolean(), timeout(), String.t()) :: term()
  def checked(nif_function, args, mode, tiny, timeout, function) do
    if Telemetry.on?(),
      do: spanned(nif_function, args, mode, tiny, timeout, function),
      else: unspanned(nif_function, args, mode, tiny, timeout, function)
  end

  # (tiny: a boolean, or the flags integer of report_flags/1)
  defp unspanned(nif_function, args, :threaded, tiny, timeout, function) do
    ref = make_ref()

    case run(nif_function, args, :threaded, tiny, ref, function) do
      job when is_reference(job) -> await_job(nif_function, args, job, ref, timeout)
      # a short job that answered while the call waited for it
      {^ref, result} -> result
      error -> error
    end
  end

  defp unspanned(nif_function, args, mode, tiny, _timeout, function),
    do: run(nif_function, args, mode, tiny, nil, function)

  # checked/6 with events on: the job runs with the report bit, and what
  # the runtime reports goes in the stop event
  defp spanned(f, args, mode, tiny, timeout, function) do
    span(f, mode, function, fn -> checked_report(f, args, mode, tiny, timeout, function) end)
  end

  # The job span, [:well_behaved, :job]: its start metadata names the job
  # (only now, with events on, is the NIF looked at); `fun` answers the
  # result and the runtime's report (nil when there is none)
  defp span(f, mode, function, fun) do
    {module, job} =
      if is_function(f),
        do: {elem(Function.info(f, :module), 1), elem(Function.info(f, :name), 1)},
        else: {nil, nil}

    start = %{job: job, module: module, function: function, mode: mode}

    Telemetry.emit_span([:well_behaved, :job], start, fn ->
      {answer, info} = fun.()
      if info && info.rerun, do: Events.rerun(start, info)
      Events.stop(answer, mode, info)
    end)
  end

  # a direct call for each arity the runtime allows (WB_MAX_JOB_ARGS, 8):
  # no list to build and no apply on the per-call path
  defp run(f, [], m, t, r, _) when is_function(f, 3), do: f.(m, t, r)
  defp run(f, [a], m, t, r, _) when is_function(f, 4), do: f.(a, m, t, r)
  defp run(f, [a, b], m, t, r, _) when is_function(f, 5), do: f.(a, b, m, t, r)
  defp run(f, [a, b, c], m, t, r, _) when is_function(f, 6), do: f.(a, b, c, m, t, r)
  defp run(f, [a, b, c, d], m, t, r, _) when is_function(f, 7), do: f.(a, b, c, d, m, t, r)
  defp run(f, [a, b, c, d, e], m, t, r, _) when is_function(f, 8), do: f.(a, b, c, d, e, m, t, r)

  defp run(f, [a, b, c, d, e, g], m, t, r, _) when is_function(f, 9),
    do: f.(a, b, c, d, e, g, m, t, r)

  defp run(f, [a, b, c, d, e, g, h], m, t, r, _) when is_function(f, 10),
    do: f.(a, b, c, d, e, g, h, m, t, r)

  defp run(f, [a, b, c, d, e, g, h, i], m, t, r, _) when is_function(f, 11),
    do: f.(a, b, c, d, e, g, h, i, m, t, r)

  defp run(_f, args, _m, _t, _r, function) when length(args) > 8,
    do: too_many_args!(args, function)

  defp run(f, args, _m, _t, _r, function), do: not_job_nif!(f, args, function)

  defp too_many_args!(args, function),
    do: Options.invalid!(function, "args", args, "a list of at most 8 job arguments")

  defp not_job_nif!(f, args, function) do
    Options.invalid!(
      function,
      "job NIF",
      f,
      "a function of #{length(args) + 3} arguments (the job's #{length(args)}, then mode, tiny slices and reference)"
    )
  end

  # A job in a server of the NIF library's job types, named by its NIF (the
  # server knows each job NIF's type); the pool is given, or declared by the
  # NIF's module.
  defp external(f, args, tiny, timeout, pool, function) do
    cond do
      length(args) > 8 ->
        too_many_args!(args, function)

      not is_function(f, length(args) + 3) ->
        not_job_nif!(f, args, function)

      true ->
        {:module, module} = Function.info(f, :module)
        {:name, job} = Function.info(f, :name)
        {pool, start} = if pool, do: {pool, nil}, else: declared_pool(module, function)
        External.run_job(pool, job, args, tiny, timeout, start)
    end
  end

  defp declared_pool(module, function) do
    if Code.ensure_loaded?(module) and function_exported?(module, :__wb_external__, 0) do
      start = module.__wb_external__()
      {Keyword.fetch!(start, :name), start}
    else
      Options.invalid!(
        function,
        "schedule",
        :external,
        "a pool: option, or a server declared by `use WellBehaved.NIF, external: ...` in #{inspect(module)}"
      )
    end
  end

  # A threaded job: its answer is `{ref, :done}` (then the result is
  # collected here) or `{ref, {:error, reason}}`. On timeout the job is
  # cancelled, unless it finished meanwhile: then its answer is taken.
  defp await_job(f, args, job, ref, timeout) do
    receive do
      {^ref, answer} -> answered(f, args, job, answer)
    after
      timeout ->
        case run(f, args, :cancel, false, job, nil) do
          :cancelled ->
            {:error, :timeout}

          :done ->
            receive do
              {^ref, answer} -> answered(f, args, job, answer)
            end
        end
    end
  end

  defp answered(f, args, job, :done), do: run(f, args, :collect, false, job, nil)
  defp answered(_f, _args, _job, error), do: error

  @doc false
  # call/4 that also answers the job's report: `{result, info}`, `info`
  # the map the runtime made (the mode run, :auto's reason, slices, ...),
  # or nil when there is none (an error, :external, or a library on an
  # older runtime, which ignores the report bit). For callers that want
  # it only when someone listens (events).
  @spec call_report(function(), list(), [option()], String.t()) :: {term(), map() | nil}
  def call_report(nif_function, args, opts \\ [], function \\ @call)

  def call_report(nif_function, args, opts, function) when is_list(args) and is_list(opts) do
    case parse(opts, {:auto, false, :infinity, nil}, opts, function) do
      {:external, tiny, timeout, pool} ->
        {external(nif_function, args, tiny, timeout, pool, function), nil}

      {mode, tiny, timeout, _pool} ->
        checked_report(nif_function, args, mode, tiny, timeout, function)
    end
  end

  def call_report(nif_function, args, opts, function),
    do: call(nif_function, args, opts, function)

  @doc false
  # checked/6 that also answers the job's report, as call_report/4 does
  # (no event: the caller has the report)
  @spec checked_report(function(), list(), Runtime.mode(), boolean(), timeout(), String.t()) ::
          {term(), map() | nil}
  def checked_report(nif_function, args, mode, tiny, timeout, function),
    do: unwrap(unspanned(nif_function, args, mode, report_flags(tiny), timeout, function))

  # the flags argument with the report bit: bit 0 tiny slices, bit 1 report
  defp report_flags(true), do: 3
  defp report_flags(false), do: 2

  # The one place a report is taken off a result: a job called with the
  # report bit answers {:"$wb_report", result, info}, any other answer is
  # the result itself.
  defp unwrap({:"$wb_report", result, info}), do: {result, info}
  defp unwrap(result), do: {result, nil}

  @doc """
  Tells which mode `schedule: :auto` would choose for a call of the job
  NIF `nif_function` with `args`, and why, without running the job: the
  arguments are decoded and the work predicted as a call does.

  Returns a map:

    * `mode` - `:normal`, `:yielding` or `:yielding_dirty`;
    * `reason` - `:below_normal_max` (the predicted time is under
      `normal_max_ns`), `:below_yielding_max` (under `yielding_max_ns`),
      or `:above_yielding_max`;
    * `predicted_units`, `setup_units` - the units of work the job type
      predicts for its steps and its set-up;
    * `ps_per_unit` - the cost of a unit the runtime has learned, in
      picoseconds, and `predicted_ns`, the time it predicts from both;
    * `normal_max_ns`, `yielding_max_ns` - the thresholds in force
      (`:infinity` when there is none, see `WellBehaved.Runtime.configure/2`);
    * `cost_measured` - `false` until the cost has been measured on this
      machine: a `:normal` run is then bounded by the clock, and moves on
      sliced when it takes longer than predicted;
    * `setup_on_dirty` - whether the set-up runs on a dirty scheduler
      before the slices.

  A call can still differ from the answer: another call may change the
  learned cost in between, and a `:normal` run that needs more than
  predicted starts again `:yielding`. `{:error, reason}` when the job's
  `decode` refuses the arguments; `{:error, :unsupported}` for a library
  built on a runtime older than this function. A wrapper such as
  `WellBehaved.Levenshtein.distance/3` answers short inputs before any
  job, so its choice is not this one's.

      iex> explained = WellBehaved.Job.explain(&WellBehaved.Native.levenshtein/7, ["kitten", "sitting", :byte, nil])
      iex> explained.mode
      :normal
      iex> explained.reason
      :below_normal_max
  """
  @spec explain(function(), list()) :: map() | {:error, term()}
  def explain(nif_function, args) when is_list(args) do
    run(nif_function, args, :explain, false, nil, "WellBehaved.Job.explain/2")
  rescue
    # an older runtime knows no `explain` mode
    error in ArgumentError ->
      if is_function(nif_function, length(args) + 3) and length(args) <= 8,
        do: {:error, :unsupported},
        else: reraise(error, __STACKTRACE__)
  end

  def explain(_nif_function, args),
    do: Options.invalid!("WellBehaved.Job.explain/2", "args", args, "a list")

  @doc """
  Waits for the reply of a NIF of your own that answers by message:
  `answer` is what the NIF returned. `:ok` means the work goes on
  elsewhere (a thread) and a message `{ref, result}` will follow:
  `await/3` returns `result`, or `{:error, :timeout}` when none came
  within `timeout` milliseconds (the work itself is not stopped: that is
  the NIF's to do). Any other answer (an error) is returned as it is.
  (`call/4` waits for `:threaded` jobs itself.)
  """
  @spec await(term(), reference(), timeout()) :: term()
  def await(answer, ref, timeout \\ :infinity)

  def await(:ok, ref, timeout) do
    receive do
      {^ref, result} -> result
    after
      timeout -> {:error, :timeout}
    end
  end

  def await(answer, _ref, _timeout), do: answer

  # a tail-recursive parser: no closures on the per-call path
  defp parse([], acc, _all, _function), do: acc

  defp parse([{:schedule, mode} | rest], {_, tiny, t, p}, all, function),
    do: parse(rest, {Runtime.check_mode!(mode, function, [:external]), tiny, t, p}, all, function)

  defp parse([{:tiny_slices, tiny} | rest], {mode, _, t, p}, all, function),
    do: parse(rest, {mode, Runtime.check_tiny!(tiny, function), t, p}, all, function)

  defp parse([{:timeout, t} | rest], {mode, tiny, _, p}, all, function)
       when t == :infinity or (is_integer(t) and t >= 0),
       do: parse(rest, {mode, tiny, t, p}, all, function)

  defp parse([{:pool, p} | rest], {mode, tiny, t, _}, all, function)
       when is_atom(p) and p not in [nil, true, false],
       do: parse(rest, {mode, tiny, t, p}, all, function)

  defp parse([{:pool, p} | _], _, _all, function),
    do: Options.invalid!(function, "pool", p, "the name of a WellBehaved.External pool (an atom)")

  defp parse([{:timeout, t} | _], _, _all, function),
    do:
      Options.invalid!(
        function,
        "timeout",
        t,
        "a non-negative integer (milliseconds) or :infinity"
      )

  defp parse([other | _], _, all, function),
    do: Options.bad_option!(function, other, @known, all)

  defp parse(_, _, all, function), do: Options.not_keyword!(function, all)
end
