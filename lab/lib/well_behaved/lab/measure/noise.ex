defmodule WellBehaved.Lab.Noise do
  @moduledoc """
  Was the machine quiet enough for the lab's figures to mean something?

  Two instruments, both from Linux's `/proc`:

    * `cpu_snapshot/0` and `cpu_usage/2`: over a window, how many cores the
      whole machine kept busy, how many this VM used (every thread of it,
      from `/proc/self/stat`), the difference (other processes: the
      *foreign* load) and the share of time the hypervisor stole. The
      measurement window (`WellBehaved.Lab.Measure.Window`) takes them
      around every measurement, inside the measuring VM, through the
      sampler (`start_sampler/0`), so a cell measured while something else
      ran is marked.
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
  alias WellBehaved.Lab.Measure.{Sampler, Window}

  @foreign_max 0.15
  @steal_max 0.05
  @burst_ms Sampler.burst_ms()
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
  Starts the noise sampler for a window (`WellBehaved.Lab.Measure.Sampler.start/0`):
  the CPU counters every #{@burst_ms} ms and the stalls outside the VM.
  """
  @spec start_sampler() :: Sampler.t()
  defdelegate start_sampler(), to: Sampler, as: :start

  @doc """
  Stops a sampler: the window's usage and stalls
  (`WellBehaved.Lab.Measure.Sampler.stop/1`).
  """
  @spec stop_sampler(Sampler.t()) :: map()
  defdelegate stop_sampler(sampler), to: Sampler, as: :stop

  @doc """
  Each tick's lateness without the time its wait overlapped a stall
  (`WellBehaved.Lab.Measure.Window.stall_corrected/2`).
  """
  @spec stall_corrected([{integer(), non_neg_integer()}], [{integer(), integer()}]) ::
          [non_neg_integer()]
  defdelegate stall_corrected(ticks, stalls), to: Window

  @doc false
  defdelegate merge_intervals(intervals), to: Sampler

  @doc false
  defdelegate parse_stall_line(line), to: Sampler

  @doc false
  defdelegate parse_watch_line(line), to: Sampler

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
