defmodule WellBehaved.Lab.Overhead.Analysis do
  @moduledoc """
  The overhead suite's figures from its raw samples: per-call medians and
  extremes, each mode's throughput relative to `:normal` with its 95%
  bootstrap interval, and the targets.

  A sample is the time in ns of one batch of calls; samples are listed
  round by round, the same round at the same position for every mode, so
  that the ratio to `:normal` can be taken round by round.
  """

  alias WellBehaved.Lab.Overhead.Plan
  alias WellBehaved.Lab.Stats
  import WellBehaved.Lab.Markdown, only: [fmt: 2]
  import WellBehaved.Lab.Overhead.Format, only: [compact: 1]

  @doc """
  Per-call statistics of batch samples: `median_ns`, `min_ns` and `max_ns`
  (each sample over `batch`) and the number of `samples`.

      iex> WellBehaved.Lab.Overhead.Analysis.summary([300, 100, 200], 10)
      %{median_ns: 20.0, min_ns: 10.0, max_ns: 30.0, samples: 3}
  """
  @spec summary([number(), ...], pos_integer()) :: map()
  def summary(samples, batch) do
    sorted = Enum.sort(samples)

    %{
      median_ns: Stats.median(sorted) / batch,
      min_ns: hd(sorted) / batch,
      max_ns: List.last(sorted) / batch,
      samples: length(sorted)
    }
  end

  @doc """
  A mode's throughput against `:normal`, round by round: the median over
  the rounds of the `:normal` sample's time over the mode's in the same
  round (`ratio_to_normal`, above 1 is faster), and its 95% bootstrap
  interval (`ratio_low`, `ratio_high`).

  Pairing by round takes out the machine's drift, which moved the ratio of
  the two medians by +-3% from one run to the next on a shared 2-vCPU
  machine (0.916-0.977 for the same calls; paired, 0.972-0.974).
  """
  @spec paired_ratio([number()], [number()]) :: %{
          ratio_to_normal: float(),
          ratio_low: float(),
          ratio_high: float()
        }
  def paired_ratio(normal, mode) do
    %{ratio: ratio, low: low, high: high} = round_ratio(normal, mode)
    %{ratio_to_normal: ratio, ratio_low: low, ratio_high: high}
  end

  @doc """
  The median over the rounds of `a`'s sample over `b`'s in the same
  round (`ratio`), with its 95% bootstrap interval (`low`, `high`): what
  `paired_ratio/2` gives against `:normal`, for any two keys timed in the
  same rounds.

      iex> WellBehaved.Lab.Overhead.Analysis.round_ratio([103, 206, 99], [100, 200, 100])
      %{ratio: 1.03, low: 0.99, high: 1.03}
  """
  @spec round_ratio([number(), ...], [number(), ...]) :: %{
          ratio: float(),
          low: float(),
          high: float()
        }
  def round_ratio(a, b) do
    ratios = Enum.zip_with(a, b, fn x, y -> x / y end)
    {low, high} = Stats.bootstrap_interval(ratios, &Stats.median/1)
    %{ratio: Stats.median(ratios), low: low, high: high}
  end

  @doc """
  One entry per mode of a Levenshtein input from its samples (a map of
  mode to samples, `:normal` among them): `summary/2`, the `mode`, its
  throughput `gcells_per_s` (`cells` per nanosecond of median time) and
  `paired_ratio/2`.
  """
  @spec pair_entries(%{atom() => [number()]}, [atom()], pos_integer(), pos_integer()) :: [map()]
  def pair_entries(samples, modes, batch, cells) do
    for mode <- modes do
      s = summary(samples[mode], batch)

      s
      |> Map.merge(%{mode: mode, gcells_per_s: cells / s.median_ns})
      |> Map.merge(paired_ratio(samples[:normal], samples[mode]))
    end
  end

  @doc """
  One entry per mode of Spin from its samples (one call each): as
  `pair_entries/4`, with `ns_per_iteration` for the throughput.
  """
  @spec spin_entries(%{atom() => [number()]}, [atom()], pos_integer()) :: [map()]
  def spin_entries(samples, modes, iterations) do
    for mode <- modes do
      s = summary(samples[mode], 1)

      s
      |> Map.merge(%{mode: mode, ns_per_iteration: s.median_ns / iterations})
      |> Map.merge(paired_ratio(samples[:normal], samples[mode]))
    end
  end

  @doc """
  The Rust Spin's entry from Spin's samples, where `:rust_yielding` holds
  the Rust job's in `:yielding`, timed in the same rounds as the C job's
  (`:yielding`) and `:normal`: as `spin_entries/3` (its `mode` is
  `:yielding`, its `lang` `:rust`), with `c_ratio`, the median over the
  rounds of the Rust job's time over the C job's, and its 95% interval
  (`c_ratio_low`, `c_ratio_high`).
  """
  @spec rust_spin_entry(%{atom() => [number()]}, pos_integer()) :: map()
  def rust_spin_entry(samples, iterations) do
    rust = samples[:rust_yielding]
    s = summary(rust, 1)
    c = round_ratio(rust, samples[:yielding])

    s
    |> Map.merge(%{mode: :yielding, lang: :rust, ns_per_iteration: s.median_ns / iterations})
    |> Map.merge(paired_ratio(samples[:normal], rust))
    |> Map.merge(%{c_ratio: c.ratio, c_ratio_low: c.low, c_ratio_high: c.high})
  end

  @doc """
  One entry per call variant (`{key, label}`) from its samples: `summary/2`
  with its `variant` and `label`.
  """
  @spec call_entries(%{atom() => [number()]}, [{atom(), String.t()}], pos_integer()) :: [map()]
  def call_entries(samples, variants, batch) do
    for {key, label} <- variants do
      Map.merge(summary(samples[key], batch), %{variant: key, label: label})
    end
  end

  @doc """
  What the events' check costs against a call, round by round: the median
  over the rounds of (check - empty loop) / (call - empty loop), with its
  95% bootstrap interval, for each of `calls` (variant keys) whose samples
  are in `samples` beside `:gate` and `:empty`.

      iex> samples = %{gate: [110, 112], empty: [100, 100], normal: [600, 700]}
      iex> [e] = WellBehaved.Lab.Overhead.Analysis.check_shares(samples, [:normal])
      iex> {e.variant, Float.round(e.share, 3)}
      {:normal, 0.02}
  """
  @spec check_shares(%{atom() => [number()]}, [atom()]) :: [map()]
  def check_shares(samples, calls) do
    for key <- calls, samples[key] do
      shares =
        Enum.zip_with([samples.gate, samples.empty, samples[key]], fn [g, e, c] ->
          (g - e) / max(c - e, 1)
        end)

      {low, high} = Stats.bootstrap_interval(shares, &Stats.median/1)
      %{variant: key, share: Stats.median(shares), share_low: low, share_high: high}
    end
  end

  @doc """
  One entry per slice length from the samples of `:normal` and of
  `:yielding` at each length (keyed by the length): its `median_ns` and
  `paired_ratio/2` against `:normal`.
  """
  @spec slice_entries(%{(:normal | pos_integer()) => [number()]}, [pos_integer()]) :: [map()]
  def slice_entries(samples, slices) do
    for s <- slices do
      Map.merge(
        %{slice_us: s, median_ns: Stats.median(samples[s])},
        paired_ratio(samples[:normal], samples[s])
      )
    end
  end

  @doc "The entry of `mode` in a case or Spin (`%{modes: entries}`), or `nil`."
  @spec mode_entry(%{modes: [map()]}, atom()) :: map() | nil
  def mode_entry(%{modes: entries}, mode), do: Enum.find(entries, &(&1.mode == mode))

  @doc "The case of a result with this `name` (e.g. `\"seed pair\"`), or `nil`."
  @spec case_named(map(), String.t()) :: map() | nil
  def case_named(result, name), do: Enum.find(result.cases, &(&1.name == name))

  @doc """
  The targets of a result (as `WellBehaved.Lab.Overhead.run/1` builds it,
  without `targets`): throughput at 10 kB and the seed pair's time in
  `:normal`, `:yielding`'s throughput relative to `:normal` on each input
  measured and on Spin, the Rust Spin's time against the C one's in
  `:yielding` (when the result has it), and the cost of a call. Each target is a map of
  `target`, `name`, `wanted`, `value`, `measured` (the value as shown) and
  `met`.
  """
  @spec targets(map()) :: [map()]
  def targets(result) do
    t = Plan.targets()
    r1k = case_named(result, "random 1000 B")
    r10k = case_named(result, "random 10000 B")
    r100k = case_named(result, "random 100000 B")
    seed = case_named(result, "seed pair")
    default_call = Enum.find(result.calls.variants, &(&1.variant == :default))
    check_rows = check_rows(Map.get(result.calls, :check_shares, []), t)

    yielding_rows =
      for {label, entries} <- [
            {"random 1 kB", r1k && r1k.modes},
            {"random 10 kB", r10k && r10k.modes},
            {"random 100 kB", r100k && r100k.modes},
            {"seed pair", seed.modes},
            {"Spin 10M", result.spin.modes}
          ],
          entries != nil do
        e = Enum.find(entries, &(&1.mode == :yielding))

        interval_target(
          ":yielding throughput / :normal, #{label}",
          {:>=, t.yielding_ratio},
          {e.ratio_to_normal, e.ratio_low, e.ratio_high}
        )
      end

    # the same job in Rust against C, both in :yielding, paired by round
    rust_rows =
      case Map.get(result.spin, :rust) do
        nil ->
          []

        e ->
          [
            interval_target(
              "Rust job / C job, :yielding time, Spin #{compact(result.spin.iterations)}",
              {:<=, t.rust_c_ratio},
              {e.c_ratio, e.c_ratio_low, e.c_ratio_high}
            )
          ]
      end

    g10k = mode_entry(r10k, :normal).gcells_per_s
    seed_ms = result.seed_normal_median_ms

    # the figures in Gcell/s, ms and us are information (absolute); the
    # ratios to :normal in the same run pass or fail
    [
      target(
        "Throughput at 10 kB, :normal",
        ">= #{fmt(t.normal_gcells_10k, 0)} Gcell/s",
        g10k,
        "#{fmt(g10k, 1)} Gcell/s",
        g10k >= t.normal_gcells_10k,
        true
      ),
      target(
        "Seed pair wall time, :normal",
        "<= #{fmt(t.seed_normal_ms, 0)} ms",
        seed_ms,
        "#{fmt(seed_ms, 2)} ms",
        seed_ms <= t.seed_normal_ms,
        true
      )
    ] ++
      yielding_rows ++
      rust_rows ++
      check_rows ++
      [
        target(
          "One call on 10-byte strings, default options",
          "<= #{fmt(t.call_ns / 1000, 1)} us",
          default_call.median_ns,
          "#{fmt(default_call.median_ns / 1000, 3)} us",
          default_call.median_ns <= t.call_ns,
          true
        )
      ]
  end

  # A job call (schedule: :normal) checks once whether events are on: that
  # share is held to the target. A 10-byte distance/2 with default options
  # is answered before any job and checks nothing; its share, were it
  # checked, is information.
  defp check_rows(shares, t) do
    for %{variant: v} = e <- shares do
      inline = v == :default
      call = if inline, do: "distance/2 (were it checked)", else: "a :normal job call"

      target(
        "Events' check with no handler / #{call}, 10 bytes",
        "<= #{fmt(t.events_share * 100, 0)}%",
        e.share,
        "#{fmt(e.share * 100, 2)}% (95% #{fmt(e.share_low * 100, 2)}-#{fmt(e.share_high * 100, 2)})",
        e.share <= t.events_share,
        inline
      )
    end
  end

  # A ratio held to a bound by its median, shown with its 95% interval,
  # and "not distinguishable" when the interval spans the bound.
  defp interval_target(name, {op, bound}, {ratio, low, high}) do
    {met, spans} =
      case op do
        :>= -> {ratio >= bound, low < bound and high >= bound}
        :<= -> {ratio <= bound, low <= bound and high > bound}
      end

    target(
      name,
      "#{op} #{bound}x",
      ratio,
      "#{fmt(ratio, 4)}x (95% #{fmt(low, 3)}-#{fmt(high, 3)}" <>
        if(spans, do: ", not distinguishable from the bound)", else: ")"),
      met
    )
  end

  defp target(name, wanted, value, shown, met, absolute \\ false) do
    %{
      absolute: absolute,
      target: "#{name} #{wanted}",
      name: name,
      wanted: wanted,
      value: value,
      measured: shown,
      met: met
    }
  end
end
