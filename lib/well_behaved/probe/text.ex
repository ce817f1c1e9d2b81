defmodule WellBehaved.Probe.Text do
  @moduledoc false
  # WellBehaved.Probe.summary/1: a human summary of a measure/2 report, or
  # of a judgement (rendered by WellBehaved.Probe.Judge).

  alias WellBehaved.Probe.Judge
  import WellBehaved.Probe.Judge, only: [fmt: 1, pct: 1]

  @doc false
  def summary(%{verdict: _, rounds: _, message: _} = judgement), do: Judge.summary(judgement)

  def summary(%{ticker: t, slow_ticker: s, long_schedules: ls, utilization: u} = report) do
    "#{report.workers} workers, #{report.calls} calls in #{fmt(report.wall_ms)} ms; " <>
      ticker_summary(t) <>
      "; #{s.period_ms} ms ticker max #{fmt(s.max_ms)} ms; #{ls.count} long_schedule " <>
      "(> #{ls.threshold_ms} ms, #{ls.others} more of other processes); utilization normal " <>
      "#{pct(u.normal)}, dirty CPU #{pct(u.dirty_cpu)}, dirty IO #{pct(u.dirty_io)}" <>
      case report[:control] do
        nil -> ""
        c -> ". Pure-Erlang control: " <> ticker_summary(c.ticker)
      end
  end

  def summary(other) do
    raise ArgumentError,
          "WellBehaved.Probe.summary/1: expected a report of measure/2 or a judgement of " <>
            "judge/2 (or WellBehaved.Testing.assert_well_behaved/2), got: " <>
            inspect(other, limit: 5)
  end

  defp ticker_summary(t) do
    "#{t.period_ms} ms ticker lateness p50 #{fmt(t.p50_ms)} / p99 #{fmt(t.p99_ms)} / " <>
      "max #{fmt(t.max_ms)} ms (#{t.samples} ticks)"
  end
end
