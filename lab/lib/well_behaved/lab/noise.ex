defmodule WellBehaved.Lab.Noise do
  @moduledoc """
  Was the machine quiet enough for the lab's figures to mean something?

  Two instruments, both from Linux's `/proc`:

    * `cpu_snapshot/0` and `cpu_usage/2`: over a window, how many cores the
      whole machine kept busy, how many this VM used (every thread of it,
      from `/proc/self/stat`), the difference (other processes: the
      *foreign* load) and the share of time the hypervisor stole. The
      lateness suite takes them around every measurement, inside the
      measuring VM, so a cell measured while something else ran is marked.
    * `check/2`: taken by `mix well_behaved.lab` before the first suite and
      after each one: the load average, the foreign load and steal while a
      calibration loop runs, and that loop's spread (fixed native work timed
      200 times: p90 / p10) and median, which is compared with the first
      check's to catch a machine that changed speed.

  A window is noisy when other processes used more than #{0.15} of a core
  on average or #{0.5} of a core over any 100 ms of it (`start_sampler/0`),
  when more than #{5}% of the time was stolen (#{25}% of any 100 ms), or
  when a sleeping thread outside the VM woke more than 10 ms late;
  a check is busy when its
  window is noisy, the loop's spread exceeds #{1.25}, or its median
  drifted more than #{15}% from the first check's. The load average counts
  the lab's own work too, so it is shown, not judged.
  """

  alias WellBehaved.Lab.Stats

  @foreign_max 0.15
  @steal_max 0.05
  @burst_ms 100
  @burst_foreign_max 0.5
  @burst_steal_max 0.25
  @wake_late_max_us 10_000
  @spread_max 1.25
  @drift_max 0.15
  @calibration_runs 200

  @typedoc "Raw counters at one instant."
  @type snapshot :: %{at_us: integer(), cpu: [non_neg_integer()], own_ticks: non_neg_integer()}

  @typedoc "What a window between two snapshots saw."
  @type usage :: %{
          seconds: float(),
          busy_cores: float(),
          own_cores: float(),
          foreign_cores: float(),
          steal_share: float()
        }

  @doc "The machine's CPU counters and this VM's CPU time, now."
  @spec cpu_snapshot() :: snapshot()
  def cpu_snapshot do
    %{at_us: System.monotonic_time(:microsecond), cpu: machine_cpu(), own_ticks: own_ticks()}
  end

  @doc """
  The usage between two snapshots: busy cores of the whole machine, of this
  VM, of everything else (`foreign_cores`, never below zero), and the share
  of all CPU time the hypervisor stole.
  """
  @spec cpu_usage(snapshot(), snapshot()) :: usage()
  def cpu_usage(s0, s1) do
    seconds = max(s1.at_us - s0.at_us, 1) / 1.0e6
    hz = ticks_per_second()
    # /proc/stat: user nice system idle iowait irq softirq steal ...
    delta = Enum.zip_with(s1.cpu, s0.cpu, &(&1 - &2))
    [user, nice, system, idle, iowait, irq, softirq, steal | _] = delta ++ List.duplicate(0, 8)
    total = Enum.sum(Enum.take(delta, 8))
    busy = (user + nice + system + irq + softirq) / hz / seconds
    own = (s1.own_ticks - s0.own_ticks) / hz / seconds
    _ = {idle, iowait}

    %{
      seconds: seconds,
      busy_cores: busy,
      own_cores: own,
      foreign_cores: max(busy - own, 0.0),
      steal_share: if(total > 0, do: steal / total, else: 0.0)
    }
  end

  @doc "Whether a window's usage says other work disturbed it."
  @spec noisy?(usage() | map()) :: boolean()
  def noisy?(usage), do: noise_reasons(usage) != []

  defp noise_reasons(usage) do
    [
      usage.foreign_cores > @foreign_max &&
        "other processes used #{fmt(usage.foreign_cores)} cores",
      usage.steal_share > @steal_max && "#{pct(usage.steal_share)} of the time was stolen",
      Map.get(usage, :burst_foreign_cores, 0.0) > @burst_foreign_max &&
        "other processes used #{fmt(usage.burst_foreign_cores)} cores for #{@burst_ms} ms",
      Map.get(usage, :burst_steal_share, 0.0) > @burst_steal_max &&
        "#{pct(usage.burst_steal_share)} of #{@burst_ms} ms was stolen",
      Map.get(usage, :wake_late_max_us, 0) > @wake_late_max_us &&
        "a sleeping thread woke #{fmt(usage.wake_late_max_us / 1000)} ms late"
    ]
    |> Enum.filter(&is_binary/1)
  end

  @doc """
  Starts sampling the CPU counters every #{@burst_ms} ms, to catch a burst
  of other work that a window's average would hide (a 40 ms burst is 0.07
  cores over 600 ms, but 0.4 over #{@burst_ms} ms). The sampling is done by
  `priv/wb_noise_watch`, a small C program that reads the two files
  together and notes how late the OS woke it (in the VM, two file reads
  are two hops through a dirty I/O scheduler, and a VM whose normal
  schedulers are held can come back from the first only much later); if
  it was not built, by a process in this VM. `stop_sampler/1` returns the
  window's usage with `burst_foreign_cores` and `burst_steal_share`, the
  worst sub-window's, and `wake_late_max_us`.
  """
  @spec start_sampler() :: {:watch, port(), integer()} | {:vm, pid()}
  def start_sampler do
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

      {:watch, port, os_offset_us()}
    else
      parent = self()
      {:vm, spawn_link(fn -> sample_loop(parent, [cpu_snapshot()]) end)}
    end
  end

  @doc "Stops a sampler; see `start_sampler/0`."
  @spec stop_sampler({:watch, port(), integer()} | {:vm, pid()}) :: map()
  def stop_sampler({:watch, port, offset_us}) do
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
        _ -> usage_of([cpu_snapshot(), cpu_snapshot()])
      end

    # at normal priority a watcher is also delayed by the VM's own load:
    # its stalls then say nothing about the machine
    realtime = Enum.any?(lines, &(&1 =~ ~r/^watchers \d+ realtime 1$/))
    Map.merge(usage, %{stalls: if(realtime, do: stalls, else: []), stalls_seen: realtime})
  end

  def stop_sampler({:vm, pid}) do
    send(pid, {:stop, self()})

    snapshots =
      receive do
        {:snapshots, ^pid, snapshots} -> Enum.reverse([cpu_snapshot() | snapshots])
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

  @doc false
  # sorted, disjoint intervals covering the same time
  def merge_intervals(intervals) do
    intervals
    |> Enum.sort()
    |> Enum.reduce([], fn
      {from, to}, [{f, t} | rest] when from <= t -> [{f, max(t, to)} | rest]
      interval, acc -> [interval | acc]
    end)
    |> Enum.reverse()
  end

  @doc false
  # "stall <cpu> <due ns> <woken ns>" -> [{due_us, woken_us}] (OS clock)
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
  The lateness of each of `ticks` (`{due_us, late_us}`, in the VM's
  monotonic microseconds) without the time its wait overlapped a stall
  (`{from_us, to_us}`, sorted and disjoint, as `stop_sampler/1` returns
  them): while a CPU was held up outside the VM, a tick could not run
  whatever the VM was doing. A tick held up 100 ms by a normal NIF keeps
  nearly all of it; one held up 2 ms by a 2 ms stall keeps nearly none.
  """
  @spec stall_corrected([{integer(), non_neg_integer()}], [{integer(), integer()}]) ::
          [non_neg_integer()]
  def stall_corrected(ticks, []), do: Enum.map(ticks, &elem(&1, 1))

  def stall_corrected(ticks, stalls) do
    stalls = List.to_tuple(stalls)

    Enum.map(ticks, fn {due, late} ->
      i = first_ending_after(stalls, due, 0, tuple_size(stalls))
      max(late - overlap(stalls, i, due, due + late, 0), 0)
    end)
  end

  # time of the stalls from index i on that falls within [a, b]
  defp overlap(stalls, i, a, b, acc) do
    if i < tuple_size(stalls) and elem(elem(stalls, i), 0) <= b do
      {from, to} = elem(stalls, i)
      overlap(stalls, i + 1, a, b, acc + max(min(to, b) - max(from, a), 0))
    else
      acc
    end
  end

  # binary search for the first stall ending at or after a
  defp first_ending_after(_stalls, _a, lo, hi) when lo >= hi, do: lo

  defp first_ending_after(stalls, a, lo, hi) do
    mid = div(lo + hi, 2)

    if elem(elem(stalls, mid), 1) < a,
      do: first_ending_after(stalls, a, mid + 1, hi),
      else: first_ending_after(stalls, a, lo, mid)
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

  @doc false
  # "<ns> <cpu fields...> own <ticks> late <ns>" -> [snapshot] ([] if not)
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

  defp usage_of(snapshots) do
    window = cpu_usage(hd(snapshots), List.last(snapshots))

    bursts =
      snapshots
      |> Enum.chunk_every(2, 1, :discard)
      |> Enum.map(fn [a, b] -> cpu_usage(a, b) end)
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
      @burst_ms -> sample_loop(parent, [cpu_snapshot() | snapshots])
    end
  end

  @doc """
  A noise check, labelled `label` (e.g. `"before lateness"`): the load
  average, then a calibration loop (`calibrate:`, a function doing fixed
  work, by default 0.4 M rounds of `WellBehaved.Lab.Spin` in `:normal`, about
  1 ms) timed #{@calibration_runs} times while the foreign load and steal
  are measured. `busy` and `reasons` judge the check on its own; see
  `assess/1` for the drift between checks.
  """
  @spec check(String.t(), keyword()) :: map()
  def check(label, opts \\ []) do
    calibrate =
      Keyword.get(opts, :calibrate, fn -> WellBehaved.Lab.Spin.run(400_000, schedule: :normal) end)

    runs = Keyword.get(opts, :runs, @calibration_runs)
    calibrate.()
    s0 = cpu_snapshot()

    times_us =
      for _ <- 1..runs do
        t0 = System.monotonic_time(:nanosecond)
        calibrate.()
        (System.monotonic_time(:nanosecond) - t0) / 1000
      end

    usage = cpu_usage(s0, cpu_snapshot())
    judge(label, load_average(), usage, times_us)
  end

  @doc false
  # A check from its measurements (the testable half of check/2).
  def judge(label, load_average, usage, times_us) do
    median = Stats.median(times_us)
    spread = Stats.percentile(times_us, 0.9) / max(Stats.percentile(times_us, 0.1), 1.0e-9)

    reasons =
      noise_reasons(usage) ++
        if spread > @spread_max,
          do: ["the calibration loop's p90/p10 was #{fmt(spread)}"],
          else: []

    %{
      label: label,
      load_average: load_average,
      foreign_cores: usage.foreign_cores,
      steal_share: usage.steal_share,
      calibration_median_us: median,
      calibration_spread: spread,
      busy: reasons != [],
      reasons: reasons
    }
  end

  @doc """
  Judges a run's checks together: a check whose calibration median moved
  more than #{round(@drift_max * 100)}% from the first check's is busy too
  (the machine changed speed). Returns the checks, updated.
  """
  @spec assess([map()]) :: [map()]
  def assess([]), do: []

  def assess([first | _] = checks) do
    Enum.map(checks, fn check ->
      drift = check.calibration_median_us / first.calibration_median_us - 1

      if abs(drift) > @drift_max do
        reason =
          "the calibration loop ran #{pct(abs(drift))} #{if drift > 0, do: "slower", else: "faster"} than at the first check"

        %{check | busy: true, reasons: check.reasons ++ [reason]}
      else
        check
      end
    end)
  end

  @doc """
  A warning for the top of a report when any check was busy, else nil.
  """
  @spec warning([map()]) :: String.t() | nil
  def warning(checks) do
    case Enum.filter(checks, & &1.busy) do
      [] ->
        nil

      busy ->
        "**The machine was busy** during this run (" <>
          Enum.map_join(busy, "; ", &"#{&1.label}: #{Enum.join(&1.reasons, ", ")}") <>
          "). Figures taken then may be off; cells measured while other work ran are " <>
          "marked `*`."
    end
  end

  @doc "The checks as a Markdown section."
  @spec markdown([map()]) :: String.t()
  def markdown([]), do: ""

  def markdown(checks) do
    rows =
      Enum.map_join(checks, "\n", fn c ->
        [l1, l5, l15] = c.load_average

        "| #{c.label} | #{fmt(l1)} / #{fmt(l5)} / #{fmt(l15)} | #{fmt(c.foreign_cores)} | " <>
          "#{pct(c.steal_share)} | #{fmt(c.calibration_median_us)} us, p90/p10 " <>
          "#{fmt(c.calibration_spread)} | " <>
          if(c.busy, do: "**busy**: #{Enum.join(c.reasons, "; ")}", else: "quiet") <> " |"
      end)

    """
    ## Noise checks

    Before the first suite and after each one: the load average (it counts the lab's own \
    work too), the CPU used by other processes and the time stolen by the hypervisor while a \
    1 ms native loop ran #{@calibration_runs} times, that loop's median and spread.

    | when | load average 1 / 5 / 15 min | other processes (cores) | stolen | calibration loop | verdict |
    | --- | --- | --- | --- | --- | --- |
    #{rows}
    """
  end

  # ---- /proc ------------------------------------------------------------------

  defp machine_cpu do
    with {:ok, text} <- File.read("/proc/stat"),
         [line | _] <- String.split(text, "\n"),
         ["cpu" | fields] <- String.split(line) do
      Enum.map(fields, &String.to_integer/1)
    else
      _ -> List.duplicate(0, 8)
    end
  end

  # utime + stime of this OS process (all its threads), fields 14 and 15
  defp own_ticks do
    with {:ok, text} <- File.read("/proc/self/stat"),
         [_, after_name] <- String.split(text, ") ", parts: 2) do
      fields = String.split(after_name)
      # after the name, field 3 (state) is at index 0: utime is field 14
      String.to_integer(Enum.at(fields, 11)) + String.to_integer(Enum.at(fields, 12))
    else
      _ -> 0
    end
  end

  defp load_average do
    with {:ok, text} <- File.read("/proc/loadavg"),
         [a, b, c | _] <- String.split(text) do
      Enum.map([a, b, c], &String.to_float/1)
    else
      _ -> [0.0, 0.0, 0.0]
    end
  end

  defp ticks_per_second do
    case :persistent_term.get({__MODULE__, :hz}, nil) do
      nil ->
        hz =
          case System.cmd("getconf", ["CLK_TCK"], stderr_to_stdout: true) do
            {out, 0} -> out |> String.trim() |> Integer.parse() |> elem(0)
            _ -> 100
          end

        :persistent_term.put({__MODULE__, :hz}, hz)
        hz

      hz ->
        hz
    end
  rescue
    _ -> 100
  end

  defp fmt(x), do: WellBehaved.Lab.Markdown.fmt_auto(x)
  defp pct(x), do: "#{Float.round(x * 100, 1)}%"
end
