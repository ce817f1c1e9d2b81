defmodule WellBehaved.Telemetry do
  @moduledoc """
  The events the library emits, in the shape of `:telemetry`'s events and
  spans. The guide "Observability" lists every event with its
  measurements and metadata.

  Every event name starts with `:well_behaved`. The library depends on no
  package: events go to `:telemetry` when that application is loaded, or
  to a handler named in the application environment, and cost one check
  of a cached flag when nothing listens.

  ## Where events go

  The backend is chosen when the application starts:

    1. `config :well_behaved, event_handler: {module, function, config}`:
       every event is a call `module.function(event, measurements,
       metadata, config)`, the signature of a `:telemetry` handler. A
       handler that raises is logged, and events stop until `refresh/0`.
    2. Else `:telemetry`, when its module can be loaded: events go through
       `:telemetry.execute/3`, to the handlers attached there.
    3. Else none: no event is emitted.

  ## When events are on

  `config :well_behaved, events: ...`:

    * `:auto` (the default): on when the backend is a handler of
      `event_handler:`, or when `:telemetry` has a handler attached to an
      event starting with `:well_behaved`. A small process of the
      application looks again every 5 seconds;
      `refresh/0` looks at once (after `:telemetry.attach/4` in a test,
      say).
    * `:always`: on whenever there is a backend, handlers or not.
    * `:never`: off. Set at compile time
      (`config/config.exs`), it also takes the checks out of the code.

  Every emission point asks `enabled?/0` before it builds anything: a
  call of a function that returns a constant (turning events on or off
  loads the other version of it, a few milliseconds). With events off a
  job call pays that call and a branch, and no map, clock read or lookup.
  """

  use GenServer
  require Logger

  alias WellBehaved.Telemetry.{Gate, GateWriter}

  @backend {__MODULE__, :backend}
  @poll_ms 5_000
  @compiled_off Application.compile_env(:well_behaved, :events) == :never
  @settings [:auto, :always, :never]

  @typedoc "An event name: a list of atoms starting with `:well_behaved`."
  @type event :: [atom(), ...]

  @doc """
  Whether events are emitted: `false` while nothing listens, checked once
  per call by every emission point (a read of a cached flag).
  """
  @spec enabled?() :: boolean()
  if @compiled_off do
    def enabled?, do: false
  else
    def enabled?, do: Gate.on?()
  end

  @doc false
  # enabled?/0 inlined at the call site (the library's own emission
  # points): `false` itself when events are compiled out
  defmacro on? do
    if @compiled_off,
      do: false,
      else: quote(do: WellBehaved.Telemetry.Gate.on?())
  end

  @doc """
  Emits `event` with `measurements` and `metadata` when events are on;
  does nothing otherwise.
  """
  @spec execute(event(), map(), map()) :: :ok
  def execute(event, measurements, metadata) do
    if enabled?(), do: dispatch(event, measurements, metadata)
    :ok
  end

  @doc """
  Runs `fun` inside a span named `prefix`, as `:telemetry.span/3` does:
  a `prefix ++ [:start]` event before (`monotonic_time`, `system_time`),
  `prefix ++ [:stop]` after (`duration`, `monotonic_time`) or
  `prefix ++ [:exception]` when `fun` raises, throws or exits (with
  `kind`, `reason` and `stacktrace`; the exception is raised again). The
  three share a `telemetry_span_context` reference, and the stop and
  exception events repeat the start's metadata.

  `fun` returns `{result, stop_metadata}` or
  `{result, extra_measurements, stop_metadata}`; the span returns
  `result`. With events off, `fun` runs alone.
  """
  @spec span(event(), map(), (() -> {term(), map()} | {term(), map(), map()})) :: term()
  def span(prefix, start_metadata, fun) do
    if enabled?() do
      emit_span(prefix, start_metadata, fun)
    else
      elem(fun.(), 0)
    end
  end

  @doc false
  # span/3 once the caller has seen events on
  @spec emit_span(event(), map(), (() -> {term(), map()} | {term(), map(), map()})) :: term()
  def emit_span(prefix, start_metadata, fun) do
    start_metadata = Map.put_new_lazy(start_metadata, :telemetry_span_context, &make_ref/0)
    start = System.monotonic_time()

    dispatch(
      prefix ++ [:start],
      %{monotonic_time: start, system_time: System.system_time()},
      start_metadata
    )

    try do
      fun.()
    catch
      kind, reason ->
        now = System.monotonic_time()

        dispatch(
          prefix ++ [:exception],
          %{duration: now - start, monotonic_time: now},
          Map.merge(start_metadata, %{kind: kind, reason: reason, stacktrace: __STACKTRACE__})
        )

        :erlang.raise(kind, reason, __STACKTRACE__)
    else
      result ->
        {value, extra, stop_metadata} =
          case result do
            {value, stop_metadata} -> {value, %{}, stop_metadata}
            {value, extra, stop_metadata} -> {value, extra, stop_metadata}
          end

        now = System.monotonic_time()

        dispatch(
          prefix ++ [:stop],
          Map.merge(extra, %{duration: now - start, monotonic_time: now}),
          Map.merge(start_metadata, stop_metadata)
        )

        value
    end
  end

  @doc """
  Reads the settings again, chooses the backend and looks for handlers at
  once (rather than within 5 seconds), and returns
  whether events are now on.

  Raises `ArgumentError` when `events:` or `event_handler:` in the
  application environment is not one of the values described above.
  """
  @spec refresh() :: boolean()
  def refresh do
    case GenServer.whereis(__MODULE__) do
      nil -> settle(nil, choose())
      pid -> GenServer.call(pid, :refresh)
    end
    |> case do
      {:ok, gate} -> gate
      {:error, error} -> raise error
    end
  end

  # ---- the backend and the gate ------------------------------------------------

  # the backend from the application environment and the modules loaded,
  # and the gate's value
  defp choose do
    events = Application.get_env(:well_behaved, :events, :auto)

    if events not in @settings,
      do: bad!(:events, events, "one of #{inspect(@settings)}")

    backend = backend()

    gate =
      not @compiled_off and events != :never and backend != nil and listening?(backend, events)

    {backend, gate}
  end

  defp backend do
    case Application.get_env(:well_behaved, :event_handler) do
      nil ->
        # a test names a stand-in for :telemetry here
        module = Application.get_env(:well_behaved, :telemetry_module, :telemetry)
        if exports?(module, :execute, 3), do: {:module, module}

      {m, f, config} when is_atom(m) and is_atom(f) ->
        {:handler, m, f, config}

      other ->
        bad!(:event_handler, other, "{module, function, config}")
    end
  end

  defp exports?(module, function, arity),
    do: Code.ensure_loaded?(module) and function_exported?(module, function, arity)

  defp listening?({:module, module}, :auto) do
    # called through a variable: :telemetry may not exist at compile time
    if exports?(module, :list_handlers, 1),
      do: module.list_handlers([:well_behaved]) != [],
      else: true
  end

  defp listening?(_backend, _events), do: true

  defp bad!(key, value, accepted) do
    raise ArgumentError,
          "WellBehaved.Telemetry: the application environment's #{inspect(key)} is " <>
            "#{inspect(value)}; expected #{accepted}"
  end

  # writes the backend and the gate only when they change: replacing a
  # persistent term is costly for the whole VM, and the gate is a module
  # to load. `last` is what the previous check chose (nil: compare with
  # what is in place)
  defp settle(last, {backend, gate} = now) do
    if last == nil or last != now, do: set(backend, gate)
    {:ok, gate}
  end

  @doc false
  # puts `backend` and the gate in place (tests set a recording handler
  # this way): `{:module, m}`, `{:handler, m, f, config}` or nil
  @spec set(nil | {:module, module()} | {:handler, module(), atom(), term()}, boolean()) :: :ok
  def set(backend, gate) when is_boolean(gate) do
    put(@backend, backend, nil)
    GateWriter.set(gate and not @compiled_off)
  end

  defp put(key, value, default) do
    if :persistent_term.get(key, default) != value, do: :persistent_term.put(key, value)
  end

  # the backend chosen once and cached: `{:module, m}` for :telemetry (or a
  # stand-in with its execute/3), `{:handler, m, f, config}`
  defp dispatch(event, measurements, metadata) do
    case :persistent_term.get(@backend, nil) do
      {:module, m} -> m.execute(event, measurements, metadata)
      {:handler, m, f, config} -> handle(m, f, event, measurements, metadata, config)
      nil -> :ok
    end
  end

  defp handle(m, f, event, measurements, metadata, config) do
    apply(m, f, [event, measurements, metadata, config])
  catch
    kind, reason ->
      # as :telemetry detaches a failing handler: off until refresh/0
      set(nil, false)

      Logger.error(
        "WellBehaved.Telemetry: the event handler #{inspect(m)}.#{f}/4 failed on " <>
          "#{inspect(event)}; events are off until WellBehaved.Telemetry.refresh/0\n" <>
          Exception.format(kind, reason, __STACKTRACE__)
      )
  end

  # ---- the process that looks for handlers ---------------------------------------

  @doc false
  def start_link(_arg), do: GenServer.start_link(__MODULE__, nil, name: __MODULE__)

  @impl true
  def init(nil) do
    # a bad setting stops the application's start, with its reason
    now = choose()
    settle(nil, now)
    {:ok, schedule(now)}
  end

  @impl true
  def handle_call(:refresh, _from, last) do
    now = choose()
    {:reply, settle(nil, now), now}
  rescue
    error in ArgumentError -> {:reply, {:error, error}, last}
  end

  @impl true
  def handle_info(:check, last) do
    now =
      try do
        choose()
      rescue
        # a setting changed to a bad value at run time: as it was
        ArgumentError -> last
      end

    settle(last, now)
    {:noreply, schedule(now)}
  end

  defp schedule(state) do
    Process.send_after(self(), :check, @poll_ms)
    state
  end
end
