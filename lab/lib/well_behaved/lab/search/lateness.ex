defmodule WellBehaved.Lab.Search.Lateness do
  @moduledoc """
  How late the rest of the VM runs while searches go on in `:auto`: one
  worker per scheduler searching with an index, against the same workers
  running pure Erlang work of the same length per call, in measurement
  windows (`WellBehaved.Lab.Measure.Window`) shuffled anew for each repeat,
  judged by `WellBehaved.Lab.Measure.Verdict`. A `:normal` window per
  repeat is kept beside them, for contrast only.
  """

  alias WellBehaved.{Levenshtein, Probe, Runtime}
  alias WellBehaved.Lab.Stats
  alias WellBehaved.Lab.Search.{Plan, Render}
  alias WellBehaved.Lab.Measure.{Verdict, Window}

  @doc """
  Measures the lateness while searching `index` (of `count` candidates)
  for `query`: `plan.repeats` repeats of `plan.window_ms` windows.
  """
  @spec measure(term(), pos_integer(), String.t(), map(), (String.t() -> any())) :: map()
  def measure(index, count, query, plan, progress) do
    search = fn mode -> fn -> Levenshtein.nearest(query, index, schedule: mode) end end
    measure_work(search, count, plan, progress, "search")
  end

  @doc """
  The same for any work: `work.(mode)` is a function doing one call of it
  in that mode (`:auto` measured, `:normal` for contrast), on `count`
  candidates; `label` names it in the progress lines.
  """
  @spec measure_work(
          (atom() -> (() -> any())),
          pos_integer(),
          map(),
          (String.t() -> any()),
          String.t()
        ) :: map()
  def measure_work(search, count, plan, progress, label) do
    settle()
    search_ns = Stats.median_ns(search.(:auto), 9)
    erlang_ns = Stats.median_ns(fn -> Probe.erlang_work(1_000_000) end, 5) / 1_000_000
    iterations = round(search_ns / erlang_ns)
    baseline = fn -> Probe.erlang_work(iterations) end

    windows =
      for repeat <- 1..plan.repeats do
        cells = [auto: search.(:auto), erlang: baseline, normal: search.(:normal)]

        row =
          for {name, fun} <- Enum.shuffle(cells), into: %{} do
            {name, window(fun, plan.window_ms)}
          end

        progress.(
          "#{label} lateness repeat #{repeat}: ticker p99 auto #{Render.ms(row.auto.p99_ms)}, " <>
            "erlang #{Render.ms(row.erlang.p99_ms)}, normal #{Render.ms(row.normal.p99_ms)}"
        )

        row
      end

    Map.merge(
      %{
        workers: :erlang.system_info(:schedulers_online),
        candidates: count,
        search_ms: search_ns / 1.0e6,
        erlang_iterations: iterations,
        window_ms: plan.window_ms,
        windows: windows
      },
      judge(windows)
    )
  end

  @doc """
  The verdict on the repeats (`windows`): each repeat's `:auto` p99 over
  its pure-Erlang p99, judged against the bound by
  `WellBehaved.Lab.Measure.Verdict`; `:not_measured` without a pair.
  `disturbed` are the repeats (numbered from 1) the verdict took as
  disturbed: a noisy window, or pure Erlang's p99 out of line with its
  other repeats'.
  """
  @spec judge([map()]) :: map()
  def judge(windows) do
    pairs =
      for {w, repeat} <- Enum.with_index(windows, 1),
          is_number(w.auto.p99_ms) and is_number(w.erlang.p99_ms) do
        erlang = max(w.erlang.p99_ms, 0.001)

        %{
          repeat: repeat,
          ratio: w.auto.p99_ms / erlang,
          base: erlang,
          noisy: w.auto.noisy or w.erlang.noisy
        }
      end

    case Verdict.judge(pairs, Plan.bound()) do
      nil ->
        %{
          repeats_used: 0,
          ratio: nil,
          ratio_low: nil,
          ratio_high: nil,
          verdict: :not_measured,
          disturbed: []
        }

      j ->
        %{
          repeats_used: length(j.ratios),
          ratio: j.ratio,
          ratio_low: j.ratio_low,
          ratio_high: j.ratio_high,
          verdict: j.verdict,
          disturbed: for(p <- j.pairs, p.noisy, do: p.repeat)
        }
    end
  end

  # The work before (cdist's speed-up: matrices of 400 MB) is collected and
  # its memory given back before any window: unmapped by the runtime's
  # thread during the first windows, it took a CPU for tens of
  # milliseconds (pure Erlang's p99 0.8 ms in the first two repeats of a
  # run, 0.06-0.2 ms in the others). At most 30 s.
  defp settle do
    :erlang.garbage_collect()
    deadline = System.monotonic_time(:millisecond) + 30_000
    wait_released(deadline)
  end

  defp wait_released(deadline) do
    if Runtime.stats().release_pending > 0 and System.monotonic_time(:millisecond) < deadline do
      Process.sleep(10)
      wait_released(deadline)
    end
  end

  # one window: the ticker's p99 without the stalls, and whether other work
  # disturbed it
  defp window(fun, window_ms) do
    w =
      Window.measure(fun,
        duration_ms: window_ms,
        control: false,
        timeout_ms: window_ms + 60_000
      )

    %{
      p99_ms: Window.p99_ms(w.samples_us),
      raw_p99_ms: w.report.ticker.p99_ms,
      calls: w.report.calls,
      noisy: w.noisy
    }
  end
end
