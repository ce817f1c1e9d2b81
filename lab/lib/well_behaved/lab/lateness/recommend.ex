defmodule WellBehaved.Lab.Lateness.Recommend do
  @moduledoc """
  The lateness suite's recommendation: for each work size (Spin), the mode
  to use, with its evidence and, when it is not confidently within the
  bound, what would bring it within. See `recommend/4`.
  """

  alias WellBehaved.Lab.{Stats, Turns}
  alias WellBehaved.Lab.Lateness.{Plan, Render}
  alias WellBehaved.Lab.Measure.Verdict
  import WellBehaved.Lab.Lateness.Analysis, only: [find: 6, verdict_of: 1]
  import WellBehaved.Lab.Lateness.Render, only: [fmt: 1, ratio_text: 1]

  @preference [:normal, :yielding, :yielding_dirty, :dirty_cpu, :threaded]
  @bound Plan.bound()
  @rec_factors Plan.rec_factors()
  @off_modes Plan.off_modes()

  @doc "The modes in the recommendation's order of preference."
  @spec preference() :: [atom()]
  def preference, do: @preference

  @doc "What `:auto` runs for a call of each of `work_ms_list`, from the runtime's thresholds."
  @spec auto_picks([pos_integer()], map()) :: %{pos_integer() => atom()}
  def auto_picks(work_ms_list, rt) do
    Map.new(work_ms_list, fn w ->
      us = w * 1000

      mode =
        cond do
          us < rt.normal_max_us -> :normal
          rt.yielding_max_us == :infinity or us < rt.yielding_max_us -> :yielding
          true -> :yielding_dirty
        end

      {w, mode}
    end)
  end

  @doc """
  For each work size (Spin), the mode to use, always one where the suite
  measured any. The modes in order of preference; a mode clearly outside
  the bound with 1x or 10x workers, or whose median ratio is over the
  bound with either, is passed over. The first one left is named: it is
  recommended (verdict `:within`) when it is within the bound with the
  most workers and not clearly outside with fewer, and otherwise named as
  the closest (`:not_distinguishable`). When every mode is passed over,
  the one whose worst median ratio is the smallest is named (`:outside`):
  a mode far outside is never named because its interval happens to be
  wide.

  The evidence for a mode is its cells' per-repeat ratios, and also the
  `:auto` cells' where `:auto` runs that mode at this size (the same
  code; `auto_picks`, see `auto_picks/2`). With 1x workers ERTS often
  keeps both workers on one scheduler for seconds while the other sleeps
  and serves its timers ~1.3 ms late, so a window's p99 depends on that
  placement whatever the mode: there a mode need only not be clearly
  worse.
  """
  @spec recommend([map()], [pos_integer()], map(), map() | nil) :: [map()]
  def recommend(rows, work_ms_list, auto_picks \\ %{}, turns \\ nil) do
    for w <- work_ms_list do
      auto = Map.get(auto_picks, w)

      judged =
        for mode <- @preference ++ [:auto], into: %{} do
          evidence_modes = if mode == auto, do: [mode, :auto], else: [mode]

          {mode,
           for(f <- @rec_factors, into: %{}, do: {f, joint_judgement(rows, w, f, evidence_modes)})}
        end

      verdicts =
        Map.new(judged, fn {m, by_f} -> {m, Map.new(by_f, fn {f, j} -> {f, j.verdict} end)} end)

      {mode, verdict} = choose(judged, verdicts)

      %{
        work_ms: w,
        mode: mode,
        verdict: verdict,
        worst_ratio: mode && worst_median(judged[mode]),
        auto_runs: auto,
        auto_within: recommendable?(verdicts[:auto]),
        evidence: evidence(rows, w, mode, verdict, auto) <> turns_evidence(turns, w, mode),
        advice: if(mode && verdict != :within, do: advice(rows, mode, auto))
      }
    end
  end

  # see recommend/4
  defp choose(judged, verdicts) do
    plausible =
      Enum.find(@preference, fn mode ->
        worst = worst_median(judged[mode])
        worst != nil and worst <= @bound and :outside not in Map.values(verdicts[mode])
      end)

    measured = for mode <- @preference, worst = worst_median(judged[mode]), do: {mode, worst}

    cond do
      plausible && recommendable?(verdicts[plausible]) -> {plausible, :within}
      plausible -> {plausible, :not_distinguishable}
      measured == [] -> {nil, :none}
      true -> {measured |> Enum.min_by(&elem(&1, 1)) |> elem(0), :outside}
    end
  end

  # the largest median ratio over the numbers of workers, or nil when a
  # number of workers has none
  defp worst_median(by_factor) do
    medians = Enum.map(by_factor, fn {_, j} -> j.median end)
    if medians != [] and Enum.all?(medians, &is_number/1), do: Enum.max(medians)
  end

  # within with the most workers, and not outside with fewer
  defp recommendable?(by_factor) do
    {most, others} = by_factor |> Enum.sort() |> List.pop_at(-1)
    elem(most, 1) == :within and Enum.all?(others, fn {_, v} -> v != :outside end)
  end

  # the verdict and median on the per-repeat ratios of these modes' cells
  # together
  defp joint_judgement(rows, w, f, modes) do
    cells = modes |> Enum.map(&find(rows, :matrix, :spin, w, f, &1)) |> Enum.reject(&is_nil/1)
    # cells with too few quiet repeats for a verdict of their own add nothing
    usable = Enum.filter(cells, &(&1[:ratios] != nil and &1[:verdict_note] == nil))
    ratios = Enum.flat_map(usable, & &1.ratios)
    first = List.first(cells)
    median = if ratios != [], do: Stats.median(ratios), else: first && first[:ratio]

    verdict =
      if usable == [] and cells != [] and Enum.all?(cells, &(&1[:ratios] == nil)),
        do: verdict_of(first),
        else: Verdict.of_ratios(ratios, @bound)

    %{verdict: verdict, median: median}
  end

  defp evidence(_rows, _w, nil, :none, _auto), do: "no mode was measured at this size"

  defp evidence(rows, w, mode, verdict, auto) do
    parts =
      for f <- Enum.reverse(@rec_factors) do
        row = find(rows, :matrix, :spin, w, f, mode)

        "#{row && row.workers} workers: p99 #{fmt(row && row.p99_median_ms)} ms vs " <>
          "#{fmt(row && row[:base_p99_median_ms])} ms (#{ratio_text(row)})"
      end

    lead =
      case verdict do
        :within ->
          "`:#{mode}` kept the ticker within #{@bound}x pure Erlang"

        :not_distinguishable ->
          "no mode was confidently within #{@bound}x pure Erlang; `:#{mode}` is closest, " <>
            "its medians within the bound"

        :outside ->
          "no mode was within #{@bound}x pure Erlang; `:#{mode}` is closest"
      end

    also = if auto == mode, do: " (with the `:auto` cells, which run it here)", else: ""
    "#{lead}#{also}: " <> Enum.join(parts, "; ")
  end

  # the named mode's turns, where the turns were measured
  defp turns_evidence(turns, w, mode) do
    case Turns.find(turns, w, mode) do
      nil -> ""
      r -> "; turns: #{Turns.text(r)}"
    end
  end

  # What would bring the named mode within the bound, from the suite's own
  # cells where it has them.
  defp advice(rows, mode, auto) when mode == :yielding or (mode == :auto and auto == :yielding) do
    # a slice is worth naming when its cell was within the bound and did
    # better than the default slice's cell of the same work and workers
    better? = fn r ->
      default = find(rows, :matrix, :spin, r.work_ms, r.factor, :yielding)
      default == nil or default[:ratio] == nil or r.ratio < default.ratio
    end

    within =
      rows
      |> Enum.filter(&(&1.set == :slices and &1[:ratio] != nil and &1.ratio <= @bound))
      |> Enum.filter(better?)
      |> Enum.sort_by(&{-&1.slice_us, &1.ratio})

    case within do
      [r | _] ->
        "shorter slices: with `WellBehaved.Runtime.configure(slice_us: #{r.slice_us})` the " <>
          "#{r.work_ms} ms cell with #{r.workers} workers was #{fmt(r.ratio)}x " <>
          "(#{Render.verdict_word(r)})"

      [] ->
        "shorter slices (`WellBehaved.Runtime.configure(slice_us: n)`), at some cost in throughput"
    end
  end

  defp advice(_rows, mode, _auto) when mode in @off_modes,
    do:
      "starting the VM with `#{Enum.join(Plan.no_busy_wait(), " ")}` (see Off-scheduler work " <>
        "and busy-waiting)"

  defp advice(_rows, _mode, _auto), do: "slicing the work (`:yielding`)"
end
