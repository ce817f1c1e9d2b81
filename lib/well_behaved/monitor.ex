defmodule WellBehaved.Monitor do
  @moduledoc """
  A production guard: reports each process (or port) that held a normal
  scheduler longer than a threshold, as an event and a log line.

  It is the VM's system monitor (`:erlang.system_monitor/2` with
  `{:long_schedule, ms}`): a process that runs longer than `ms` in one
  turn, as one that makes a long `schedule: :normal` NIF call does, is
  reported when it is scheduled out. Nothing starts it: add it to your
  own supervision tree.

      children = [
        {WellBehaved.Monitor, long_schedule_ms: 100},
        # ...
      ]

      Supervisor.start_link(children, strategy: :one_for_one)

  ## Options

    * `:long_schedule_ms` - the threshold, in milliseconds
      (1..4294967295, default 100).
    * `:takeover` - what to do when another process is the system monitor
      (`true` or `false`, default `false`); see "Sharing" below.
    * `:check_ms` - how often it checks that it is still the system monitor
      (1..86400000, default 5000).
    * `:log_interval_ms` - at most one warning per interval; the reports
      in between are counted and the count said in the next warning
      (0..86400000, default 1000; 0 logs every report). Events are never
      limited.
    * `:name` - the name it registers (an atom, or `nil` for none;
      default `WellBehaved.Monitor`).

  ## The event

  `[:well_behaved, :monitor, :long_schedule]`, emitted through
  `WellBehaved.Telemetry` (nothing happens while no one listens) for
  each report over the threshold.

  Measurements:

    * `:duration` - how long the turn took, in native time units (the VM
      reports whole milliseconds). It is wall time: a host that takes the
      CPU from the VM's thread lengthens it.

  Metadata:

    * `:pid` - the process, or `nil` for a port.
    * `:port` - the port, or `nil` for a process.
    * `:registered_name` - its registered name, or `nil`.
    * `:in` and `:out` - the functions (`{module, function, arity}`, or
      `nil` when the VM cannot name one) where the turn began and ended,
      as the VM reports them; `nil` for a port.
    * `:current_function` - the function the process is in when the
      report is handled, which may be later work (`nil` for a port or a
      process that has exited).
    * `:nif` - the first of `:in`, `:out` and `:current_function` whose
      module is a NIF library built on the WellBehaved runtime (its
      module exports `runtime_stats/0`), or `nil`.
    * `:port_op` - for a port, the operation the VM names (such as
      `:command`); `nil` for a process.

  ### Which NIF held the scheduler

  The VM does not name the NIF that held a scheduler. On OTP 25, for a
  whole `schedule: :normal` NIF call, `:in` is where the process's turn
  began (`nil` for a new process or one woken from `receive`) and `:out`
  is where the process went after the call returned: for
  `WellBehaved.Levenshtein.distance/3`, `{WellBehaved.Levenshtein,
  :unwrap, 1}`, and `nil` when the process exited right after the call.
  A turn that ended inside a NIF continuing through `enif_schedule_nif`
  (a `:yielding` slice that ran long) shows `nil` for both; such a
  process is usually still in that NIF when the report is handled, and
  its `:current_function`, hence `:nif`, names it (for WellBehaved's own
  jobs, `{WellBehaved.Native, job, arity}`). `:nif` is therefore a lead,
  not a proof: a process that ran long Erlang code and then entered a
  NIF would be named by it too.

  ## The log line

  A `Logger.warning` per report, at most one per `:log_interval_ms`,
  with metadata `process:` (or `port:`), `registered_as:` (its
  registered name), `duration_ms:`, `in:`, `out:` and `nif:`, and
  `suppressed:` (reports not logged since the previous line). Logger's
  own `pid:` and `registered_name:` keep describing the process that
  logs.

  ## Sharing

  A node has one system monitor, and its settings are all in one holder.
  At start:

    * no holder: the monitor takes it;
    * another holder and `takeover: false` (the default): the start fails
      with `{:system_monitor_taken, holder_pid, holder_settings}` (so a
      supervisor starting it fails to start too), and the holder keeps
      it;
    * another holder and `takeover: true`: the monitor takes it with the
      holder's settings merged into its own (each threshold the least
      asked for), forwards to the holder every message it asked for
      (its types, over its thresholds). When it stops (`terminate/2`,
      as a supervisor stops it) and still holds the system monitor, it
      gives it back, with its own settings, to the first holder it took
      it from that is alive (the one found at start, if it is), or
      clears it. A monitor killed brutally cannot: the VM then clears the
      system monitor.

  Every `:check_ms` (and when a process it watches exits) it checks that
  it is still the holder, with its own settings:

    * its settings changed (someone set the monitor to it with other
      settings): it sets its own again;
    * the monitor was cleared, or its holder exited: it takes it back and
      logs a warning;
    * another live process holds it (as `WellBehaved.Probe.measure/2`
      does while it runs: it takes the monitor and gives it back after):
      with `takeover: false`, it logs a warning once, reports nothing
      until that process gives the monitor back (then it logs that it
      reports again) or exits (then it takes it back); with
      `takeover: true`, it takes the monitor back at once, as at start,
      and forwards what that process asked for while it lives.

  A long schedule in the window between a change and the next check is
  not reported.
  """

  use GenServer

  require Logger

  alias WellBehaved.{Options, Telemetry}
  alias WellBehaved.Monitor.Settings

  @event [:well_behaved, :monitor, :long_schedule]
  @start "WellBehaved.Monitor.start_link/1"
  @defaults [
    long_schedule_ms: 100,
    takeover: false,
    check_ms: 5000,
    log_interval_ms: 1000,
    name: __MODULE__
  ]
  @known Keyword.keys(@defaults)
  @max_ms 4_294_967_295
  @day_ms 86_400_000

  @typedoc "An option of `start_link/1`."
  @type option ::
          {:long_schedule_ms, pos_integer()}
          | {:takeover, boolean()}
          | {:check_ms, pos_integer()}
          | {:log_interval_ms, non_neg_integer()}
          | {:name, atom() | nil}

  @doc """
  Starts the monitor, linked to the caller (see the options in the module
  doc). Returns `{:error, {:system_monitor_taken, pid, settings}}` when
  another process is the system monitor and `takeover:` is not `true`.

  Raises `ArgumentError` on an unknown option or value.
  """
  @spec start_link([option()]) :: GenServer.on_start()
  def start_link(opts \\ []) do
    config = options!(opts)

    case config.name do
      nil -> GenServer.start_link(__MODULE__, config)
      name -> GenServer.start_link(__MODULE__, config, name: name)
    end
  end

  defp options!(opts) when is_list(opts) do
    Enum.each(opts, fn
      {key, _} when key in @known -> :ok
      other -> Options.bad_option!(@start, other, @known, opts)
    end)

    opts = Keyword.merge(@defaults, opts)

    %{
      ms: Options.integer!(@start, :long_schedule_ms, opts[:long_schedule_ms], 1..@max_ms),
      takeover: Options.boolean!(@start, :takeover, opts[:takeover]),
      check_ms: Options.integer!(@start, :check_ms, opts[:check_ms], 1..@day_ms),
      log_interval_ms:
        Options.integer!(@start, :log_interval_ms, opts[:log_interval_ms], 0..@day_ms),
      name: name!(opts[:name])
    }
  end

  defp options!(opts), do: Options.not_keyword!(@start, opts)

  defp name!(name) when is_atom(name), do: name
  defp name!(name), do: Options.invalid!(@start, :name, name, "an atom or nil")

  # ---- the server ----------------------------------------------------------------

  @impl true
  def init(config) do
    # so that a supervisor's shutdown runs terminate/2, which gives the
    # monitor back
    Process.flag(:trap_exit, true)

    state =
      Map.merge(config, %{
        settings: [],
        held_for: [],
        displaced_by: nil,
        last_log: nil,
        suppressed: 0
      })

    found = :erlang.system_monitor()

    case found do
      :undefined -> start_holding(state, [], found)
      {holder, settings} when config.takeover -> start_holding(state, [{holder, settings}], found)
      {holder, settings} -> {:stop, {:system_monitor_taken, holder, settings}}
    end
  end

  defp start_holding(state, holders, found) do
    state = %{state | held_for: Enum.map(holders, &watch_holder/1)}

    case :erlang.system_monitor(self(), Settings.merge(state.ms, holder_settings(state))) do
      # what was read, or nothing: its holder exited meanwhile (its DOWN
      # drops it from held_for)
      previous when previous == found or previous == :undefined ->
        schedule_check(state)
        {:ok, %{state | settings: current_settings()}}

      # another process took it between the read and the write: it keeps it
      {holder, settings} = other ->
        give_back(other)
        {:stop, {:system_monitor_taken, holder, settings}}
    end
  end

  defp watch_holder({pid, settings}),
    do: %{pid: pid, settings: settings, ref: Process.monitor(pid)}

  defp holder_settings(state), do: Enum.map(state.held_for, & &1.settings)

  defp current_settings do
    case :erlang.system_monitor() do
      {_pid, settings} -> settings
      :undefined -> []
    end
  end

  defp schedule_check(state), do: Process.send_after(self(), :check, state.check_ms)

  @impl true
  def handle_info({:monitor, who, type, info} = message, state) do
    for h <- state.held_for, Settings.wants?(h.settings, type, info), do: send(h.pid, message)

    if type == :long_schedule and is_list(info) and Keyword.get(info, :timeout, 0) >= state.ms,
      do: {:noreply, report(who, info, state)},
      else: {:noreply, state}
  end

  def handle_info(:check, state) do
    schedule_check(state)
    {:noreply, check(state)}
  end

  def handle_info({:DOWN, ref, :process, pid, _reason}, state) do
    case state.displaced_by do
      {^pid, ^ref} ->
        {:noreply, check(%{state | displaced_by: nil})}

      _ ->
        held_for = Enum.reject(state.held_for, &(&1.ref == ref))
        state = %{state | held_for: held_for}
        # a holder we forwarded to is gone: drop its settings
        if holding?(), do: {:noreply, hold(state)}, else: {:noreply, state}
    end
  end

  def handle_info(_other, state), do: {:noreply, state}

  @impl true
  def terminate(_reason, state) do
    if holding?() do
      case Enum.find(state.held_for, &Process.alive?(&1.pid)) do
        %{pid: pid, settings: settings} -> give_back({pid, settings})
        nil -> :erlang.system_monitor(:undefined)
      end
    end

    :ok
  end

  defp holding? do
    self = self()
    match?({^self, _}, :erlang.system_monitor())
  end

  # sets the system monitor back to `holder`; one that exited meanwhile
  # cannot have it (badarg), and then nothing holds it
  defp give_back({pid, settings}) do
    :erlang.system_monitor(pid, settings)
  rescue
    ArgumentError -> :erlang.system_monitor(:undefined)
  end

  defp hold(state) do
    :erlang.system_monitor(self(), Settings.merge(state.ms, holder_settings(state)))
    %{state | settings: current_settings()}
  end

  # ---- displacement --------------------------------------------------------------

  defp check(state) do
    self = self()

    case :erlang.system_monitor() do
      {^self, settings} ->
        state = back(state)
        if Settings.same?(settings, state.settings), do: state, else: hold(state)

      :undefined ->
        warn("the system monitor was cleared; WellBehaved.Monitor took it back", [])
        state |> back() |> hold()

      {other, settings} ->
        displaced(state, other, settings)
    end
  end

  defp displaced(state, other, settings) do
    cond do
      not Process.alive?(other) ->
        warn(
          "the system monitor's holder #{inspect(other)} exited; WellBehaved.Monitor took it back",
          holder: other
        )

        state |> back() |> hold()

      state.takeover ->
        warn(
          "#{inspect(other)} took the system monitor; WellBehaved.Monitor took it back and " <>
            "forwards what it asked for (#{inspect(settings)})",
          holder: other
        )

        held_for =
          case Enum.find(state.held_for, &(&1.pid == other)) do
            nil ->
              state.held_for ++ [watch_holder({other, settings})]

            _ ->
              Enum.map(
                state.held_for,
                &if(&1.pid == other, do: %{&1 | settings: settings}, else: &1)
              )
          end

        hold(%{back(state) | held_for: held_for})

      match?({^other, _}, state.displaced_by) ->
        state

      true ->
        state = back(state)

        warn(
          "#{inspect(other)} holds the system monitor: long schedules are not reported " <>
            "until it gives it back or exits",
          holder: other
        )

        %{state | displaced_by: {other, Process.monitor(other)}}
    end
  end

  # no longer displaced (or displaced by another process from now on)
  defp back(%{displaced_by: nil} = state), do: state

  defp back(%{displaced_by: {pid, ref}} = state) do
    Process.demonitor(ref, [:flush])

    if holding?(),
      do:
        Logger.info(
          "WellBehaved.Monitor reports long schedules again (#{inspect(pid)} gave the system monitor back)"
        )

    %{state | displaced_by: nil}
  end

  defp warn(message, metadata), do: Logger.warning(message, metadata)

  # ---- reports -------------------------------------------------------------------

  defp report(who, info, state) do
    ms = Keyword.get(info, :timeout, 0)
    metadata = metadata(who, info)

    Telemetry.execute(
      @event,
      %{duration: System.convert_time_unit(ms, :millisecond, :native)},
      metadata
    )

    log(ms, metadata, state)
  end

  defp metadata(pid, info) when is_pid(pid) do
    {name, current} =
      case Process.info(pid, [:registered_name, :current_function]) do
        [registered_name: name, current_function: current] -> {name(name), mfa(current)}
        nil -> {nil, nil}
      end

    {in_mfa, out_mfa} = {mfa(info[:in]), mfa(info[:out])}

    %{
      pid: pid,
      port: nil,
      registered_name: name,
      in: in_mfa,
      out: out_mfa,
      current_function: current,
      nif: Enum.find([in_mfa, out_mfa, current], &runtime_nif?/1),
      port_op: nil
    }
  end

  defp metadata(port, info) when is_port(port) do
    name =
      case Port.info(port, :registered_name) do
        {:registered_name, name} -> name(name)
        _ -> nil
      end

    %{
      pid: nil,
      port: port,
      registered_name: name,
      in: nil,
      out: nil,
      current_function: nil,
      nif: nil,
      port_op: info[:port_op]
    }
  end

  defp name(name) when is_atom(name) and name not in [nil, :undefined], do: name
  defp name(_none), do: nil

  defp mfa({m, f, a} = mfa) when is_atom(m) and is_atom(f) and is_integer(a), do: mfa
  defp mfa(_none), do: nil

  # a module of a NIF library built on the runtime registers runtime_stats/0
  defp runtime_nif?({m, _f, _a}), do: function_exported?(m, :runtime_stats, 0)
  defp runtime_nif?(nil), do: false

  defp log(ms, metadata, state) do
    now = System.monotonic_time(:millisecond)

    if state.last_log == nil or now - state.last_log >= state.log_interval_ms do
      Logger.warning(
        fn -> line(ms, metadata, state.suppressed) end,
        log_metadata(ms, metadata, state.suppressed)
      )

      %{state | last_log: now, suppressed: 0}
    else
      %{state | suppressed: state.suppressed + 1}
    end
  end

  defp line(ms, m, suppressed) do
    who = m.pid || m.port
    name = if m.registered_name, do: " (#{inspect(m.registered_name)})", else: ""

    where =
      [in: m.in, out: m.out, nif: m.nif, port_op: m.port_op]
      |> Enum.reject(fn {_key, value} -> value == nil end)
      |> Enum.map_join(", ", fn {key, value} -> "#{key}: #{show(value)}" end)

    where = if where == "", do: "", else: "; #{where}"
    more = if suppressed > 0, do: " (#{suppressed} more not logged since the last line)", else: ""
    "long schedule: #{inspect(who)}#{name} held a scheduler for #{ms} ms#{where}#{more}"
  end

  defp show({m, f, a}), do: Exception.format_mfa(m, f, a)
  defp show(other), do: inspect(other)

  defp log_metadata(ms, m, suppressed) do
    who = if m.pid, do: [process: m.pid], else: [port: m.port]

    who ++
      [
        registered_as: m.registered_name,
        duration_ms: ms,
        in: m.in,
        out: m.out,
        nif: m.nif,
        suppressed: suppressed
      ]
  end
end
