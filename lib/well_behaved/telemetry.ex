defmodule WellBehaved.Telemetry do
  @moduledoc """
  The events the library emits, in the shape of `:telemetry`'s events and
  spans.

  Every event name starts with `:well_behaved`. The library depends on no
  package: events go to `:telemetry` when that application is loaded, or
  to a handler named in the application environment, and cost one check
  of a cached flag when nothing listens.
  """

  @gate {__MODULE__, :on}
  @backend {__MODULE__, :backend}

  @typedoc "An event name: a list of atoms starting with `:well_behaved`."
  @type event :: [atom(), ...]

  @doc """
  Whether events are emitted: `false` while nothing listens, checked once
  per call by every emission point (a read of a cached flag).
  """
  @spec enabled?() :: boolean()
  def enabled?, do: :persistent_term.get(@gate, false)

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
  Runs `fun` inside a span named `prefix`: a `prefix ++ [:start]` event
  before, `prefix ++ [:stop]` after (with `duration`) or
  `prefix ++ [:exception]` when `fun` raises, throws or exits (the
  exception is raised again).

  `fun` returns `{result, stop_metadata}` or
  `{result, extra_measurements, stop_metadata}`; the span returns
  `result`. With events off, `fun` runs alone.
  """
  @spec span(event(), map(), (() -> {term(), map()} | {term(), map(), map()})) :: term()
  def span(prefix, start_metadata, fun) do
    if enabled?() do
      run_span(prefix, start_metadata, fun)
    else
      elem(fun.(), 0)
    end
  end

  defp run_span(prefix, start_metadata, fun) do
    context = make_ref()
    start_metadata = Map.put(start_metadata, :telemetry_span_context, context)
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

  # the backend is chosen once and cached: `{:module, m}` for :telemetry
  # (or a stand-in with its execute/3), `{:handler, m, f, config}`
  defp dispatch(event, measurements, metadata) do
    case :persistent_term.get(@backend, nil) do
      {:module, m} -> m.execute(event, measurements, metadata)
      {:handler, m, f, config} -> apply(m, f, [event, measurements, metadata, config])
      nil -> :ok
    end
  end
end
