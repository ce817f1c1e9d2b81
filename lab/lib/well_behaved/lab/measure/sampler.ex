defmodule WellBehaved.Lab.Measure.Sampler do
  @burst_ms 100
  # how long start/0 waits for the watcher's first sample: a bound for a
  # watcher that never answers, not a figure of a busy machine's
  @ready_ms 30_000

  @moduledoc """
  The noise sampler: over a measurement window, the machine's CPU counters
  every #{@burst_ms} ms and the moments a CPU was stalled outside the VM.
  `WellBehaved.Lab.Noise` judges what it saw (`Noise.noisy?/1`) and
  `WellBehaved.Lab.Measure.Window` takes the stalls out of a ticker's
  lateness; both suites that measure lateness start and stop it through
  the window.

  The sampling is done by `priv/wb_noise_watch`, a small C program that
  reads `/proc/stat` and `/proc/<pid>/stat` together and, with a thread
  pinned to each CPU that wakes every millisecond, reports every wake-up
  more than 250 us late as a stall; if the program was not built, a
  process in this VM samples the counters and no stall is seen.
  """

  alias WellBehaved.Lab.Noise

  @typedoc "A running sampler."
  @type t :: {:watch, port(), integer()} | {:vm, pid()}

  @doc "The length of a sub-window, in milliseconds."
  @spec burst_ms() :: pos_integer()
  def burst_ms, do: @burst_ms

  @doc """
  Starts sampling the CPU counters every #{@burst_ms} ms, to catch a burst
  of other work that a window's average would hide (a 40 ms burst is 0.07
  cores over 600 ms, but 0.4 over #{@burst_ms} ms). The sampling is done by
  `priv/wb_noise_watch`, which reads the two files together and notes how
  late the OS woke it (in the VM, two file reads are two hops through a
  dirty I/O scheduler, and a VM whose normal schedulers are held can come
  back from the first only much later); if it was not built, by a process
  in this VM. `stop/1` returns the window's usage with
  `burst_foreign_cores` and `burst_steal_share`, the worst sub-window's,
  and `wake_late_max_us`. It returns once the first sample is taken, so
  the window holds everything after it.
  """
  @spec start() :: t()
  def start do
    watch = Path.join(:code.priv_dir(:well_behaved_lab), "wb_noise_watch")

    if File.exists?(watch) do
      # outside the VM: both files read together even while every
      # scheduler is held by a normal NIF
      port =
        Port.open({:spawn_executable, watch}, [
          :binary,
          :exit_status,
          {:line, 4096},
          args: [System.pid(), Integer.to_string(@burst_ms)]
        ])

      # the window starts at the watcher's first sample: wait for it
      await_ready(port)
      {:watch, port, os_offset_us()}
    else
      parent = self()
      {:vm, spawn_link(fn -> sample_loop(parent, [Noise.cpu_snapshot()]) end)}
    end
  end

  @doc """
  Stops a sampler (see `start/0`): the window's usage
  (`WellBehaved.Lab.Noise.cpu_usage/2` with the burst figures), `stalls`
  (`{from_us, to_us}` in the VM's monotonic time, sorted and disjoint) and
  `stalls_seen` (whether the watcher ran at real-time priority: at normal
  priority it is delayed by the VM's own load too, and its stalls are
  dropped).
  """
  @spec stop(t()) :: map()
  def stop({:watch, port, offset_us}) do
    Port.command(port, "stop\n")
    lines = collect_lines(port, [])
    snapshots = Enum.flat_map(lines, &parse_watch_line/1)

    stalls =
      lines
      |> Enum.flat_map(&parse_stall_line/1)
      |> Enum.map(fn {from, to} -> {from + offset_us, to + offset_us} end)
      |> merge_intervals()

    usage =
      case snapshots do
        [_, _ | _] -> usage_of(snapshots)
        _ -> usage_of([Noise.cpu_snapshot(), Noise.cpu_snapshot()])
      end

    # at normal priority a watcher is also delayed by the VM's own load:
    # its stalls then say nothing about the machine
    realtime = Enum.any?(lines, &(&1 =~ ~r/^watchers \d+ realtime 1$/))
    Map.merge(usage, %{stalls: if(realtime, do: stalls, else: []), stalls_seen: realtime})
  end

  def stop({:vm, pid}) do
    send(pid, {:stop, self()})

    snapshots =
      receive do
        {:snapshots, ^pid, snapshots} -> Enum.reverse([Noise.cpu_snapshot() | snapshots])
      end

    Process.unlink(pid)
    snapshots |> usage_of() |> Map.merge(%{stalls: [], stalls_seen: false})
  end

  # Erlang monotonic time minus the OS's CLOCK_MONOTONIC, in microseconds
  defp os_offset_us do
    source = :erlang.system_info(:os_monotonic_time_source)
    os = Keyword.fetch!(source, :time)
    erlang = :erlang.monotonic_time()
    :erlang.convert_time_unit(erlang - os, :native, :microsecond)
  end

  @doc "Sorted, disjoint intervals covering the same time as `intervals`."
  @spec merge_intervals([{integer(), integer()}]) :: [{integer(), integer()}]
  def merge_intervals(intervals) do
    intervals
    |> Enum.sort()
    |> Enum.reduce([], fn
      {from, to}, [{f, t} | rest] when from <= t -> [{f, max(t, to)} | rest]
      interval, acc -> [interval | acc]
    end)
    |> Enum.reverse()
  end

  @doc """
  A watcher's stall line, `"stall <cpu> <due ns> <woken ns>"`, as
  `[{due_us, woken_us}]` (the OS's clock); `[]` for any other line.
  """
  @spec parse_stall_line(String.t()) :: [{integer(), integer()}]
  def parse_stall_line("stall " <> rest) do
    with [_cpu, due, woken] <- String.split(rest),
         {due, ""} <- Integer.parse(due),
         {woken, ""} <- Integer.parse(woken) do
      [{div(due, 1000), div(woken, 1000)}]
    else
      _ -> []
    end
  end

  def parse_stall_line(_), do: []

  @doc """
  A watcher's sample line, `"<ns> <cpu fields...> own <ticks> late <ns>"`,
  as `[snapshot]` with `late_us`; `[]` for any other line.
  """
  @spec parse_watch_line(String.t()) :: [map()]
  def parse_watch_line(line) do
    with [head, rest] <- String.split(line, " own ", parts: 2),
         [own, "late", late] <- String.split(rest),
         [at | cpu] <- String.split(head),
         {at_ns, ""} <- Integer.parse(at),
         {own, ""} <- Integer.parse(own),
         {late, ""} <- Integer.parse(late) do
      [
        %{
          at_us: div(at_ns, 1000),
          cpu: Enum.map(cpu, &String.to_integer/1),
          own_ticks: own,
          late_us: div(late, 1000)
        }
      ]
    else
      _ -> []
    end
  end

  # "ready" once the watcher has taken its first sample; a watcher that
  # fails before that ends the wait too (stop/1 then falls back to the
  # VM's own snapshots)
  defp await_ready(port) do
    receive do
      {^port, {:data, {:eol, "ready"}}} -> :ok
      {^port, {:exit_status, _}} = exited -> send(self(), exited)
    after
      @ready_ms -> :ok
    end
  end

  defp collect_lines(port, lines) do
    receive do
      {^port, {:data, {:eol, line}}} -> collect_lines(port, [line | lines])
      {^port, {:data, {:noeol, _}}} -> collect_lines(port, lines)
      {^port, {:exit_status, _}} -> Enum.reverse(lines)
    after
      10_000 ->
        Port.close(port)
        Enum.reverse(lines)
    end
  end

  defp usage_of(snapshots) do
    window = Noise.cpu_usage(hd(snapshots), List.last(snapshots))

    bursts =
      snapshots
      |> Enum.chunk_every(2, 1, :discard)
      |> Enum.map(fn [a, b] -> Noise.cpu_usage(a, b) end)
      # a last sliver of a sub-window is too coarse for the tick counters
      |> Enum.filter(&(&1.seconds >= @burst_ms / 2000))

    Map.merge(window, %{
      burst_foreign_cores: bursts |> Enum.map(& &1.foreign_cores) |> Enum.max(fn -> 0.0 end),
      burst_steal_share: bursts |> Enum.map(& &1.steal_share) |> Enum.max(fn -> 0.0 end),
      wake_late_max_us: snapshots |> Enum.map(&Map.get(&1, :late_us, 0)) |> Enum.max(fn -> 0 end)
    })
  end

  defp sample_loop(parent, snapshots) do
    receive do
      {:stop, from} -> send(from, {:snapshots, self(), snapshots})
    after
      @burst_ms -> sample_loop(parent, [Noise.cpu_snapshot() | snapshots])
    end
  end
end
