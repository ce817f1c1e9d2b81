defmodule WellBehaved.Probe.Judge do
  @moduledoc false
  # The judgement of WellBehaved.Probe.judge/2 and
  # WellBehaved.Testing.assert_well_behaved/2 (documented there): rounds of
  # two traced windows of whole calls (WellBehaved.Probe.Turns), the
  # function beside pure-Erlang control workers and those workers alone.

  alias WellBehaved.Probe.Turns

  # The CPU clock's imprecision: a turn fails outright beyond the limit
  # plus this. A thread's CPU clock is not exact at the millisecond: on a
  # virtual machine without steal time it charges the running thread for
  # the time the hypervisor took, and it jumped by 0.5-2.5 ms at a context
  # switch in a plain C loop on a 2-vCPU KVM guest (once 1.3 ms within 6.7
  # us of wall time). 5 ms is twice the largest jump seen, and a tenth of
  # the 50 ms turn the judgement must always see: with the defaults (1.5x
  # a pure-Erlang p99 of tens of us, + 1 ms) the bound is about 6 ms. A
  # control turn beyond the same bound says the clock jumped further in
  # that round: the round says nothing then.
  @clock_allowance_us 5_000
  # the control's share of turns lost to the OS may grow this much with the
  # function running before the function is said to compete for the CPU
  @lost_share_max 0.25
  # ... and only when the VM's other threads (dirty schedulers, native
  # threads) used this many CPUs' worth more
  @off_cpu_min 0.25
  # a control with fewer turns in a window says nothing
  @min_control_turns 20
  # Turns between the limit and the bound (limit + allowance) fail the
  # function when they are many: at least this many in a round, and this
  # many times as many as the control's rate predicts, and this share of
  # the function's turns (a function that holds 2-3 ms in every turn is
  # not excused by the allowance; one such turn may be the clock's)
  @min_long_turns 3
  @long_excess 3
  @min_long_share 0.01

  @doc false
  def clock_allowance_us, do: @clock_allowance_us

  @doc false
  # The rounds, with checked options: bounds (max_ratio, max_block_ms,
  # rounds) and turn_opts (as Turns.traced/2 takes them).
  def run(fun, bounds, turn_opts) do
    workers = turn_opts.workers || :erlang.system_info(:schedulers_online)
    turn_opts = %{turn_opts | workers: workers}

    rounds =
      for round <- 1..bounds.rounds do
        with_function = fn -> Turns.traced(fun, Map.put(turn_opts, :control, true)) end
        alone = fn -> Turns.traced(&Turns.control_work/0, Map.put(turn_opts, :control, false)) end

        # the two windows alternate in order from round to round
        {both, alone} =
          if rem(round, 2) == 1 do
            b = with_function.()
            {b, alone.()}
          else
            a = alone.()
            {with_function.(), a}
          end

        judge_round(
          both.function,
          both.control,
          alone.function,
          bounds.max_ratio,
          bounds.max_block_ms,
          {both.off_scheduler_cpu, alone.off_scheduler_cpu},
          {both.lost_events, alone.lost_events}
        )
      end

    verdict(rounds)
  end

  @doc false
  # One round: the function's turns, the control's beside it and the
  # control's alone (turn_stats with their turns' CPU times, `cpu_us`),
  # judged against the bounds; `off_cpu`, the CPUs' worth the VM's other
  # threads used in each window ({with the function, alone}; nil: not
  # known); `lost`, the trace events each window lost.
  def judge_round(
        function,
        control,
        control_alone,
        max_ratio,
        max_block_ms,
        off_cpu \\ {nil, nil},
        lost_events \\ {0, 0}
      ) do
    {off, off_alone} = off_cpu
    reference = (control_alone && control_alone.cpu_p99_us) || 0.0
    limit_us = max_ratio * reference + max_block_ms * 1000
    bound_us = limit_us + @clock_allowance_us
    lost = lost_share(control)
    lost_alone = lost_share(control_alone)
    long = long_turns(function, limit_us)
    control_long = long_turns(control, limit_us) + long_turns(control_alone, limit_us)
    control_max = max_of([control, control_alone], :cpu_max_us)
    lost_count = elem(lost_events, 0) + elem(lost_events, 1)
    unfinished = Map.get(function, :unfinished, 0) + Map.get(control || %{}, :unfinished, 0)
    # the control's long turns, at the function's CPU time: what the OS and
    # the hypervisor alone would give the function. Each turn counts up to
    # the limit: a long turn's own length is not time in which more could
    # have started
    expected =
      (control_long + 1) * clipped_cpu(function, limit_us) /
        max(clipped_cpu(control, limit_us) + clipped_cpu(control_alone, limit_us), 1.0)

    {result, reason} =
      cond do
        quiet_enough(control_alone) != :ok ->
          {:inconclusive, "the control alone " <> quiet_enough(control_alone)}

        control_max != nil and control_max > bound_us ->
          {:inconclusive,
           "a pure-Erlang control worker had a turn of #{fmt_us(control_max)} of CPU time, " <>
             "beyond the bound #{fmt_us(bound_us)}: the CPU clock was not to be trusted"}

        function.cpu_max_us != nil and function.cpu_max_us > bound_us ->
          {:fail,
           "the function held its scheduler for #{fmt_us(function.cpu_max_us)} of CPU time " <>
             "in one turn (bound #{fmt_us(bound_us)}: #{fmt(max_ratio)}x pure Erlang's 99th " <>
             "percentile turn, #{fmt_us(reference)}, + #{fmt(max_block_ms)} ms + " <>
             "#{fmt_us(@clock_allowance_us)} for the CPU clock)"}

        function.open_max_us != nil and function.open_max_us > bound_us ->
          {:fail,
           "the function held its scheduler for #{fmt_us(function.open_max_us)} in one turn, " <>
             "still running when the window ended (bound #{fmt_us(bound_us)})"}

        long >= @min_long_turns and long >= @min_long_share * function.turns and
            long > @long_excess * expected ->
          {:fail,
           "the function held its scheduler for more than #{fmt_us(limit_us)} of CPU time " <>
             "(#{fmt(max_ratio)}x pure Erlang's 99th percentile turn, #{fmt_us(reference)}, + " <>
             "#{fmt(max_block_ms)} ms) in #{long} of its #{function.turns} turns, the longest " <>
             "#{fmt_us(function.cpu_max_us)}; the control workers in #{control_long} of " <>
             "#{((control && control.turns) || 0) + control_alone.turns}"}

        lost_count > 0 ->
          {:inconclusive,
           "the tracer lost #{lost_count} events (its log could not hold the window): " <>
             "shorter calls or a shorter duration_ms"}

        unfinished > 0 ->
          {:inconclusive,
           "#{unfinished} workers were still in their call at the timeout (timeout_ms): " <>
             "their calls were not seen whole"}

        control == nil or control.turns < @min_control_turns ->
          {:fail,
           "pure Erlang workers beside the function ran #{(control && control.turns) || 0} " <>
             "turns in the window, #{control_alone.turns} without it"}

        lost - lost_alone > @lost_share_max and off_scheduler_work?(off, off_alone) ->
          {:fail,
           "the control workers lost #{pct(lost)} of their turns to the OS with the function " <>
             "running, #{pct(lost_alone)} without it" <>
             off_cpu_text(off, off_alone) <>
             ": the function's work takes the CPU from the schedulers"}

        true ->
          {:pass, nil}
      end

    %{
      result: result,
      reason: reason,
      limit_us: limit_us,
      bound_us: bound_us,
      long_turns: long,
      control_long_turns: control_long,
      lost_share: lost,
      lost_share_alone: lost_alone,
      off_scheduler_cpu: off,
      off_scheduler_cpu_alone: off_alone,
      lost_events: lost_count,
      function: Map.delete(function, :cpu_us),
      control: control && Map.delete(control, :cpu_us),
      control_alone: control_alone && Map.delete(control_alone, :cpu_us)
    }
  end

  defp max_of(stats, key) do
    stats
    |> Enum.map(&(&1 && Map.get(&1, key)))
    |> Enum.reject(&is_nil/1)
    |> Enum.max(fn -> nil end)
  end

  # Whether the VM's threads other than its normal schedulers worked more
  # with the function running. Without that, the control's lost share
  # moves with what else the machine runs (with CPU-bound OS processes
  # beside the VM it was 35% in one window and 67% in the next, for the
  # same pure Erlang work); unknown (no /proc), the lost share decides.
  defp off_scheduler_work?(off, off_alone) when is_number(off) and is_number(off_alone),
    do: off - off_alone > @off_cpu_min

  defp off_scheduler_work?(_, _), do: true

  defp off_cpu_text(off, off_alone) when is_number(off) and is_number(off_alone),
    do:
      ", while the VM's threads other than its normal schedulers used #{fmt(off)} CPUs, " <>
        "#{fmt(off_alone)} without it"

  defp off_cpu_text(_, _), do: ""

  # turns of more CPU time than limit_us
  defp long_turns(nil, _limit_us), do: 0
  defp long_turns(%{cpu_us: cpu}, limit_us), do: Enum.count(cpu, &(&1 > limit_us))

  defp clipped_cpu(nil, _limit_us), do: 0.0
  defp clipped_cpu(%{cpu_us: cpu}, limit_us), do: Enum.reduce(cpu, 0.0, &(min(&1, limit_us) + &2))

  @doc false
  # The verdict over rounds: most of the rounds that say something.
  def verdict(rounds) do
    conclusive = Enum.reject(rounds, &(&1.result == :inconclusive))
    failed = Enum.filter(conclusive, &(&1.result == :fail))

    verdict =
      cond do
        conclusive == [] -> :inconclusive
        2 * length(failed) > length(conclusive) -> :fail
        true -> :pass
      end

    %{verdict: verdict, rounds: rounds, message: message(verdict, rounds, failed)}
  end

  defp message(:pass, rounds, _failed),
    do: "passed #{Enum.count(rounds, &(&1.result == :pass))} of #{length(rounds)} rounds"

  defp message(:inconclusive, rounds, _failed),
    do:
      "no round said anything: " <>
        Enum.map_join(rounds, "; ", & &1.reason) <> " (is the machine very busy?)"

  defp message(:fail, rounds, [first | _] = failed) do
    "the function is less well behaved than pure Erlang code in #{length(failed)} of " <>
      "#{length(rounds)} rounds:\n" <>
      Enum.map_join(Enum.uniq_by(failed, & &1.reason), "\n", &("  - " <> &1.reason)) <>
      "\n" <> turns_summary(first) <> turns_advice(first)
  end

  defp turns_summary(round) do
    f = round.function
    c = round.control_alone

    "Turns on normal schedulers, CPU time p50 / p99 / max: the function " <>
      "#{fmt_us(f.cpu_p50_us)} / #{fmt_us(f.cpu_p99_us)} / #{fmt_us(f.cpu_max_us)} " <>
      "(#{f.turns} turns, #{f.dirty_turns} on dirty schedulers, #{f.open_turns} still running " <>
      "at the end), pure Erlang alone " <>
      "#{fmt_us(c.cpu_p50_us)} / #{fmt_us(c.cpu_p99_us)} / #{fmt_us(c.cpu_max_us)}."
  end

  # What to try, from the round's figures.
  defp turns_advice(%{function: f, lost_share: lost, lost_share_alone: alone}) do
    if lost - alone > @lost_share_max and (f.dirty_turns > 0 or f.turns < 10) do
      "\nThe work runs off the normal schedulers and the OS runs it in their place. Try " <>
        "schedule: :yielding, or start the VM with +sbwt none +sbwtdcpu none " <>
        "+sbwtdio none (see guides/scheduling.md)."
    else
      "\nRun long native work in slices that give the scheduler back (schedule: " <>
        ":yielding in WellBehaved; enif_consume_timeslice with enif_schedule_nif, or a job " <>
        "type on WellBehaved's runtime, in your own NIF)."
    end
  end

  @doc false
  # A few lines on a judgement: its verdict and message, and each round's
  # result and longest turns against its bound.
  def summary(%{verdict: verdict, rounds: rounds, message: message}) do
    lines =
      rounds
      |> Enum.with_index(1)
      |> Enum.map(fn {r, i} ->
        "round #{i}: #{r.result}: the function's longest turn " <>
          "#{fmt_us(r.function.cpu_max_us)} of CPU time (#{r.function.turns} turns, " <>
          "#{Map.get(r.function, :calls, "-")} whole calls), pure Erlang's " <>
          "#{fmt_us(max_of([r.control, r.control_alone], :cpu_max_us))}; bound " <>
          "#{fmt_us(Map.get(r, :bound_us))}" <>
          if(r.reason, do: " (#{r.reason})", else: "")
      end)

    Enum.join(["#{verdict}: #{message}" | lines], "\n")
  end

  defp quiet_enough(nil), do: "did not run"

  defp quiet_enough(%{turns: n}) when n < @min_control_turns,
    do: "ran #{n} turns in the window, too few"

  defp quiet_enough(%{cpu_p99_us: p99, cpu_p50_us: p50}) when p99 > 4 * p50,
    do:
      "was disturbed even in CPU time (99th percentile turn #{fmt_us(p99)}, median " <>
        "#{fmt_us(p50)})"

  defp quiet_enough(_), do: :ok

  # the share of the turns' wall time that was not their thread's CPU time
  defp lost_share(%{wall_total_us: wall, cpu_total_us: cpu}) when wall > 0,
    do: max(0.0, 1 - cpu / wall)

  defp lost_share(_), do: 0.0

  defp fmt_us(nil), do: "-"
  defp fmt_us(us) when us >= 1000, do: "#{fmt(us / 1000)} ms"
  defp fmt_us(us), do: "#{fmt(us)} us"

  @doc false
  # a figure as the reports print it (summary/1 too)
  def fmt(nil), do: "-"
  def fmt(x) when is_integer(x), do: Integer.to_string(x)
  def fmt(x) when abs(x) >= 10, do: :erlang.float_to_binary(x / 1, decimals: 1)
  def fmt(x), do: :erlang.float_to_binary(x / 1, decimals: 2)

  @doc false
  def pct(x), do: "#{round(x * 100)}%"
end
