defmodule WellBehaved.Lab.Overhead do
  @moduledoc """
  The lab's Levenshtein suite: throughput of `WellBehaved.Levenshtein` in
  every scheduling mode, the cost of a tiny call, and `WellBehaved.Lab.Spin` as
  a fixed-work reference.

  Lab code, not library code: `run/1` measures and returns a plain result
  map (atoms, numbers, strings, lists and maps only, so it can be written as
  JSON), and `to_markdown/1` renders it.

  ## Method

    * All timed work runs in the calling process, one call at a time: many
      concurrent `:normal` calls could stall the VM.
    * The modes are compared side by side: each round times every mode once
      (the starting mode rotates from round to round), so machine noise hits
      them alike. A mode's figure is its MEDIAN time; its ratio to `:normal`
      is the median over the rounds of `normal time / mode time` in the
      same round (above 1 is faster), with a 95% bootstrap interval: pairing
      by round takes out the machine's drift.
    * Each case is warmed up once per mode before timing.
    * Short calls are timed in batches (`:erlang.monotonic_time/1` around a
      whole batch, never around one call) and reported per call.
    * Cells are `byte_size(a) * byte_size(b)`, so Gcell/s is cells per
      nanosecond of median time.
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.{Levenshtein, Native, Runtime}
  alias WellBehaved.Lab.Spin
  alias WellBehaved.Lab.{Machine, Stats}
  import WellBehaved.Lab.Markdown, only: [table: 2, fmt: 2]

  # Repetitions, tuned for a quick run of about 20 s (full: 40 s) on 2 cores.
  # `batch` calls make one timed sample; a round takes one sample per mode.
  @random_cases [
    %{bytes: 100, batch: 500, rounds: 101, quick: true},
    %{bytes: 1_000, batch: 50, rounds: 101, quick: true},
    # 3% margins need many samples on a noisy 2-core machine
    %{bytes: 10_000, batch: 1, rounds: 201, quick: true},
    # about 0.35-0.45 s per call: 5 rounds x 6 modes + warm-up is ~15 s;
    # the quick run times only :normal and :yielding
    %{bytes: 100_000, batch: 1, rounds: 5, quick: true, quick_modes: [:normal, :yielding]}
  ]
  @seed_case %{bytes: 10_000, batch: 1, rounds: 201}
  @call_case %{bytes: 10, batch: 100_000, rounds: 15}
  @spin_case %{iterations: 10_000_000, rounds: 31}
  # :yielding at each slice length against :normal: Spin 10M and a 10 kB pair
  @slice_case %{
    slices: [10, 20, 30, 40, 50, 100, 1000],
    rounds: 15,
    lev_bytes: 10_000,
    lev_batch: 4
  }

  @targets %{
    normal_gcells_10k: 30.0,
    seed_normal_ms: 3.0,
    yielding_ratio: 0.97,
    call_ns: 300.0
  }

  @context %{
    best_library_gcells: 41.0,
    naive_dp_gcells: 0.9,
    blog_yielding_cost: 1.4
  }

  @typedoc "A result map as returned by `run/1`."
  @type result :: %{atom() => term()}

  @doc """
  Runs the suite and returns its result map.

  Options:

    * `quick:` - `true` (default) leaves out the 100 000-byte inputs.
    * `rounds_scale:` - multiplies every number of rounds (default `1.0`;
      at least one round is always run). Use a small value in tests.
    * `progress:` - a one-argument function called with a line of text
      after each measurement, e.g.
      `"levenshtein 10000 bytes, yielding: 27.1 Gcell/s"`. Default: none.
  """
  @impl WellBehaved.Lab.Suite
  @spec run(keyword()) :: result()
  def run(opts \\ []) do
    {quick, scale, progress} = WellBehaved.Lab.Suite.options!(opts)

    started = :erlang.monotonic_time(:nanosecond)
    machine = Machine.describe()
    modes = modes()

    random =
      for plan <- @random_cases, plan.quick or not quick do
        modes = if quick, do: Map.get(plan, :quick_modes, modes), else: modes
        a = :crypto.strong_rand_bytes(plan.bytes)
        b = :crypto.strong_rand_bytes(plan.bytes)

        measure_pair(
          "random #{plan.bytes} B",
          "random",
          a,
          b,
          scale(plan, scale),
          modes,
          progress
        )
      end

    seed_a = :binary.copy(<<0>>, @seed_case.bytes)
    seed_b = :binary.copy(<<1>>, @seed_case.bytes)

    seed =
      measure_pair("seed pair", "seed", seed_a, seed_b, scale(@seed_case, scale), modes, progress)

    calls = measure_calls(scale(@call_case, scale), progress)
    spin = measure_spin(scale(@spin_case, scale), modes, progress)
    slices = measure_slices(scale(@slice_case, scale), progress)
    seed_normal = mode_entry(seed, :normal)

    result = %{
      suite: "levenshtein",
      machine: machine,
      config: %{quick: quick, rounds_scale: scale * 1.0, modes: modes},
      cases: random ++ [seed],
      seed_normal_median_ms: seed_normal.median_ns / 1.0e6,
      calls: calls,
      spin: spin,
      slices: slices,
      context: @context,
      elapsed_s: (:erlang.monotonic_time(:nanosecond) - started) / 1.0e9
    }

    Map.put(result, :targets, targets(result))
  end

  # :normal first, as the reference; then every other mode, :auto last.
  defp modes, do: [:normal | Runtime.modes() -- [:normal, :auto]] ++ [:auto]

  defp scale(plan, scale), do: %{plan | rounds: max(1, round(plan.rounds * scale))}

  # ---- measurements -----------------------------------------------------------

  defp measure_pair(name, kind, a, b, plan, modes, progress) do
    %{bytes: bytes, batch: batch, rounds: rounds} = plan
    cells = byte_size(a) * byte_size(b)

    what =
      if kind == "seed",
        do: "levenshtein seed pair (#{bytes} bytes)",
        else: "levenshtein #{bytes} bytes"

    progress.("#{what}: #{rounds} rounds x #{length(modes)} modes x #{plural(batch, "call")} ...")

    :erlang.garbage_collect()
    # warm-up, and every mode must give the same distance
    distances = Enum.map(modes, &Levenshtein.distance(a, b, schedule: &1))

    samples = interleave(modes, rounds, fn mode -> time_lev(batch, a, b, schedule: mode) end)

    entries =
      for mode <- modes do
        s = summary(samples[mode], batch)

        s
        |> Map.merge(%{mode: mode, gcells_per_s: cells / s.median_ns})
        |> Map.merge(paired_ratio(samples[:normal], samples[mode]))
      end

    for e <- entries do
      time = if kind == "seed", do: "#{fmt_ns(e.median_ns)}, ", else: ""
      progress.("#{what}, #{e.mode}: #{time}#{fmt(e.gcells_per_s, 1)} Gcell/s")
    end

    %{
      name: name,
      kind: kind,
      bytes: bytes,
      cells: cells,
      batch: batch,
      rounds: rounds,
      distance: hd(distances),
      modes_agree: Enum.uniq(distances) |> length() == 1,
      modes: entries
    }
  end

  defp measure_calls(plan, progress) do
    %{bytes: bytes, batch: batch, rounds: rounds} = plan
    a = :crypto.strong_rand_bytes(bytes)
    b = :crypto.strong_rand_bytes(bytes)
    progress.("call cost, #{bytes} bytes: #{rounds} rounds x 5 variants x #{batch} calls ...")

    variants = [
      {:default, "Levenshtein.distance(a, b)", &loop_default/3},
      {:normal, "Levenshtein.distance(a, b, schedule: :normal)", &loop_normal/3},
      {:raw_nif, "Native.levenshtein(a, b, :byte, nil, :normal, false, nil) (internal)",
       &loop_raw/3},
      {:spin_1, "Spin.run(1, schedule: :normal)", fn n, _, _ -> loop_spin(n) end},
      {:empty, "empty loop (overhead of the timing loop)", &loop_empty/3}
    ]

    funs = Map.new(variants, fn {key, _, fun} -> {key, fun} end)
    :erlang.garbage_collect()
    Enum.each(variants, fn {_, _, fun} -> fun.(batch, a, b) end)

    samples =
      interleave(Enum.map(variants, &elem(&1, 0)), rounds, fn key ->
        fun = funs[key]
        t0 = :erlang.monotonic_time(:nanosecond)
        fun.(batch, a, b)
        :erlang.monotonic_time(:nanosecond) - t0
      end)

    entries =
      for {key, label, _} <- variants do
        Map.merge(summary(samples[key], batch), %{variant: key, label: label})
      end

    for e <- entries do
      progress.("call cost, #{bytes} bytes, #{e.label}: #{fmt(e.median_ns, 0)} ns")
    end

    %{bytes: bytes, batch: batch, rounds: rounds, variants: entries}
  end

  defp measure_spin(plan, modes, progress) do
    %{iterations: iterations, rounds: rounds} = plan
    progress.("spin #{iterations} iterations: #{rounds} rounds x #{length(modes)} modes ...")
    :erlang.garbage_collect()
    checksums = Enum.map(modes, &Spin.run(iterations, schedule: &1))

    samples =
      interleave(modes, rounds, fn mode ->
        t0 = :erlang.monotonic_time(:nanosecond)
        Spin.run(iterations, schedule: mode)
        :erlang.monotonic_time(:nanosecond) - t0
      end)

    entries =
      for mode <- modes do
        s = summary(samples[mode], 1)

        s
        |> Map.merge(%{mode: mode, ns_per_iteration: s.median_ns / iterations})
        |> Map.merge(paired_ratio(samples[:normal], samples[mode]))
      end

    for e <- entries do
      progress.(
        "spin #{iterations} iterations, #{e.mode}: #{fmt_ns(e.median_ns)}, " <>
          "ratio to normal #{fmt(e.ratio_to_normal, 3)}"
      )
    end

    %{
      iterations: iterations,
      rounds: rounds,
      modes_agree: Enum.uniq(checksums) |> length() == 1,
      modes: entries
    }
  end

  # :yielding's throughput at each slice length, as a ratio to :normal, for
  # Spin and Levenshtein; the runtime's slice is restored afterwards.
  defp measure_slices(plan, progress) do
    %{slices: slices, rounds: rounds, lev_bytes: bytes, lev_batch: batch} = plan
    a = :crypto.strong_rand_bytes(bytes)
    b = :crypto.strong_rand_bytes(bytes)
    keys = [:normal | slices]

    progress.(
      "slices #{inspect(slices)} us: #{rounds} rounds of Spin #{compact(@spin_case.iterations)} " <>
        "and #{batch} x #{size_label(bytes)} pairs ..."
    )

    try do
      for {workload, work} <- [
            spin: fn mode -> Spin.run(@spin_case.iterations, schedule: mode) end,
            levenshtein: fn mode -> loop_lev(batch, a, b, schedule: mode) end
          ] do
        samples =
          interleave(keys, rounds, fn key ->
            mode = if key == :normal, do: :normal, else: :yielding
            if key != :normal, do: WellBehaved.Lab.Suite.configure_runtimes(slice_us: key)
            t0 = :erlang.monotonic_time(:nanosecond)
            work.(mode)
            :erlang.monotonic_time(:nanosecond) - t0
          end)

        normal = Stats.median(samples[:normal])

        entries =
          for s <- slices do
            Map.merge(
              %{slice_us: s, median_ns: Stats.median(samples[s])},
              paired_ratio(samples[:normal], samples[s])
            )
          end

        progress.(
          "slices, #{workload}: " <>
            Enum.map_join(entries, ", ", &"#{&1.slice_us} us #{fmt(&1.ratio_to_normal, 3)}x")
        )

        %{workload: workload, normal_median_ns: normal, slices: entries}
      end
    after
      WellBehaved.Lab.Suite.configure_runtimes(slice_us: :calibrated)
    end
  end

  # A mode's throughput against :normal, round by round: the median over
  # the rounds of the :normal sample's time over the mode's in the same
  # round, and its 95% bootstrap interval. Pairing by round takes out the
  # machine's drift, which moved the ratio of the two medians by +-3% from
  # one run to the next on a shared 2-vCPU machine (0.916-0.977 for the
  # same calls; paired, 0.972-0.974).
  defp paired_ratio(normal, mode) do
    ratios = Enum.zip_with(normal, mode, fn n, m -> n / m end)
    {low, high} = Stats.bootstrap_interval(ratios, &Stats.median/1)
    %{ratio_to_normal: Stats.median(ratios), ratio_low: low, ratio_high: high}
  end

  # Round r times every key once, starting at key r (mod the number of keys).
  # Each timed sample follows one untimed run of the same key: switching
  # modes has a cost of its own (a different thread, cold caches), which
  # would otherwise be charged to whichever mode runs next.
  defp interleave(keys, rounds, sample) do
    n = length(keys)

    Enum.reduce(0..(rounds - 1), Map.new(keys, &{&1, []}), fn r, acc ->
      {front, back} = Enum.split(keys, rem(r, n))

      Enum.reduce(back ++ front, acc, fn key, acc ->
        _warm = sample.(key)
        ns = sample.(key)
        Map.update!(acc, key, &[ns | &1])
      end)
    end)
  end

  defp time_lev(batch, a, b, opts) do
    t0 = :erlang.monotonic_time(:nanosecond)
    loop_lev(batch, a, b, opts)
    :erlang.monotonic_time(:nanosecond) - t0
  end

  defp loop_lev(0, _a, _b, _opts), do: :ok

  defp loop_lev(n, a, b, opts) do
    _ = Levenshtein.distance(a, b, opts)
    loop_lev(n - 1, a, b, opts)
  end

  defp loop_default(0, _a, _b), do: :ok

  defp loop_default(n, a, b) do
    _ = Levenshtein.distance(a, b)
    loop_default(n - 1, a, b)
  end

  defp loop_normal(0, _a, _b), do: :ok

  defp loop_normal(n, a, b) do
    _ = Levenshtein.distance(a, b, schedule: :normal)
    loop_normal(n - 1, a, b)
  end

  # The NIF without the Elixir wrapper, to split the cost of a call.
  defp loop_raw(0, _a, _b), do: :ok

  defp loop_raw(n, a, b) do
    _ = Native.levenshtein(a, b, :byte, nil, :normal, false, nil)
    loop_raw(n - 1, a, b)
  end

  defp loop_spin(0), do: :ok

  defp loop_spin(n) do
    _ = Spin.run(1, schedule: :normal)
    loop_spin(n - 1)
  end

  defp loop_empty(0, _a, _b), do: :ok

  defp loop_empty(n, a, b) do
    _ = nothing(a, b)
    loop_empty(n - 1, a, b)
  end

  defp nothing(_a, _b), do: 0

  # Per-call statistics of batch samples.
  defp summary(samples, batch) do
    sorted = Enum.sort(samples)

    %{
      median_ns: Stats.median(sorted) / batch,
      min_ns: hd(sorted) / batch,
      max_ns: List.last(sorted) / batch,
      samples: length(sorted)
    }
  end

  defp mode_entry(%{modes: entries}, mode), do: Enum.find(entries, &(&1.mode == mode))

  defp case_named(result, name), do: Enum.find(result.cases, &(&1.name == name))

  # ---- targets ------------------------------------------------------------------

  defp targets(result) do
    t = @targets
    r1k = case_named(result, "random 1000 B")
    r10k = case_named(result, "random 10000 B")
    r100k = case_named(result, "random 100000 B")
    seed = case_named(result, "seed pair")
    default_call = Enum.find(result.calls.variants, &(&1.variant == :default))

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

        target(
          ":yielding throughput / :normal, #{label}",
          ">= #{t.yielding_ratio}x",
          e.ratio_to_normal,
          "#{fmt(e.ratio_to_normal, 4)}x (95% #{fmt(e.ratio_low, 3)}-#{fmt(e.ratio_high, 3)}" <>
            if(e.ratio_low < t.yielding_ratio and e.ratio_high >= t.yielding_ratio,
              do: ", not distinguishable from the bound)",
              else: ")"
            ),
          e.ratio_to_normal >= t.yielding_ratio
        )
      end

    g10k = mode_entry(r10k, :normal).gcells_per_s
    seed_ms = result.seed_normal_median_ms

    [
      target(
        "Throughput at 10 kB, :normal",
        ">= #{fmt(t.normal_gcells_10k, 0)} Gcell/s",
        g10k,
        "#{fmt(g10k, 1)} Gcell/s",
        g10k >= t.normal_gcells_10k
      ),
      target(
        "Seed pair wall time, :normal",
        "<= #{fmt(t.seed_normal_ms, 0)} ms",
        seed_ms,
        "#{fmt(seed_ms, 2)} ms",
        seed_ms <= t.seed_normal_ms
      )
    ] ++
      yielding_rows ++
      [
        target(
          "One call on 10-byte strings, default options",
          "<= #{fmt(t.call_ns / 1000, 1)} us",
          default_call.median_ns,
          "#{fmt(default_call.median_ns / 1000, 3)} us",
          default_call.median_ns <= t.call_ns
        )
      ]
  end

  defp target(name, wanted, value, shown, met) do
    %{
      target: "#{name} #{wanted}",
      name: name,
      wanted: wanted,
      value: value,
      measured: shown,
      met: met
    }
  end

  # ---- Markdown -------------------------------------------------------------------

  @doc """
  Renders a result of `run/1` as Markdown: machine, throughput and ratio
  tables, call cost, Spin, and the targets with whether each was met.
  """
  @impl WellBehaved.Lab.Suite
  @spec to_markdown(result()) :: String.t()
  def to_markdown(result) do
    modes = result.config.modes

    [
      "## Levenshtein\n\n",
      machine_md(result.machine),
      "Run: #{if result.config.quick, do: "quick (100 kB inputs in :normal and :yielding only)", else: "full"}, " <>
        "rounds_scale #{result.config.rounds_scale}, #{fmt(result.elapsed_s, 1)} s. " <>
        "Figures are medians; modes interleaved round by round.\n\n",
      "Every mode runs through the public API, `Levenshtein.distance(a, b, schedule: mode)`, " <>
        "so the small inputs include its option handling (see the cost of one call).\n\n",
      "### Throughput, Gcell/s (median)\n\n",
      table(
        ["input", "samples" | Enum.map(modes, &":#{&1}")],
        for c <- result.cases do
          [case_label(c), "#{c.rounds} x #{plural(c.batch, "call")}"] ++
            by_mode(c, modes, &fmt(&1.gcells_per_s, gdigits(&1.gcells_per_s)))
        end
      ),
      "\n### Median time per call\n\n",
      table(
        ["input", "distance" | Enum.map(modes, &":#{&1}")],
        for c <- result.cases do
          [case_label(c), "#{c.distance}#{unless c.modes_agree, do: " (MODES DISAGREE)"}"] ++
            by_mode(c, modes, &fmt_ns(&1.median_ns))
        end
      ),
      "\n### Throughput relative to :normal (median over rounds of normal time / mode time in the round)\n\n",
      table(
        ["input" | Enum.map(modes, &":#{&1}")],
        Enum.map(result.cases, fn c ->
          [case_label(c) | by_mode(c, modes, &fmt(&1.ratio_to_normal, 3))]
        end) ++
          [
            [
              "Spin #{compact(result.spin.iterations)}"
              | Enum.map(result.spin.modes, &fmt(&1.ratio_to_normal, 3))
            ]
          ]
      ),
      "\n### Seed pair\n\n",
      seed_md(result),
      slices_md(Map.get(result, :slices)),
      "\n### Spin, #{compact(result.spin.iterations)} iterations (#{result.spin.rounds} rounds)\n\n",
      table(
        ["mode", "median", "ns/iteration", "min", "max", "ratio to :normal"],
        for e <- result.spin.modes do
          [
            ":#{e.mode}",
            fmt_ns(e.median_ns),
            fmt(e.ns_per_iteration, 2),
            fmt_ns(e.min_ns),
            fmt_ns(e.max_ns),
            fmt(e.ratio_to_normal, 3)
          ]
        end
      ),
      if(result.spin.modes_agree,
        do: "",
        else: "\nWARNING: Spin checksums differ between modes.\n"
      ),
      "\n### Cost of one call, two #{result.calls.bytes}-byte random strings\n\n",
      "#{plural(result.calls.rounds, "batch")} of #{result.calls.batch} calls per variant, " <>
        "interleaved; the last rows split the cost.\n\n",
      table(
        ["call", "median ns/call", "min", "max"],
        for v <- result.calls.variants do
          [v.label, fmt(v.median_ns, 0), fmt(v.min_ns, 0), fmt(v.max_ns, 0)]
        end
      ),
      "\n### Targets\n\n",
      table(
        ["target", "wanted", "measured", "met"],
        for t <- result.targets do
          [t.name, t.wanted, t.measured, if(t.met, do: "yes", else: "**no**")]
        end
      ),
      "\n",
      context_md(result.context)
    ]
    |> IO.iodata_to_binary()
  end

  # ---- charts and tables ------------------------------------------------------------

  @doc """
  Two bar charts, the inputs on the x axis and one bar per mode (in the same
  colours in both): the throughput relative to `:normal` (`:normal` itself,
  always 1, is the reference bar), Spin included; and the throughput in
  Gcell/s.
  """
  @impl WellBehaved.Lab.Suite
  @spec charts(result()) :: [WellBehaved.Lab.Suite.chart()]
  def charts(result) do
    modes = result.config.modes
    rows = Enum.map(result.cases, &{case_label(&1), &1.modes})
    spin = {"Spin #{compact(result.spin.iterations)}", result.spin.modes}

    [
      %{
        name: "overhead_ratio",
        title: "Throughput relative to :normal, by input (median of per-round ratios)",
        kind: :bars,
        x_label: "input",
        y_label: "normal time / mode time (above 1: faster)",
        log_y: false,
        categories: Enum.map(rows ++ [spin], &elem(&1, 0)),
        series: series(modes, rows ++ [spin], :ratio_to_normal)
      },
      %{
        name: "overhead_throughput",
        title: "Levenshtein throughput by scheduling mode (median)",
        kind: :bars,
        x_label: "input",
        y_label: "Gcell/s",
        log_y: false,
        categories: Enum.map(rows, &elem(&1, 0)),
        series: series(modes, rows, :gcells_per_s)
      }
    ]
  end

  defp series(modes, rows, key) do
    for mode <- modes do
      %{
        label: ":#{mode}",
        values:
          Enum.map(rows, fn {_, entries} ->
            case Enum.find(entries, &(&1.mode == mode)) do
              nil -> nil
              entry -> Map.get(entry, key)
            end
          end)
      }
    end
  end

  @doc """
  The raw medians, one row per input (or variant) and mode: `medians`
  (Levenshtein inputs), `spin` and `calls` (cost of one call), times in ns.
  """
  @impl WellBehaved.Lab.Suite
  @spec tables(result()) :: [WellBehaved.Lab.Suite.table()]
  def tables(result) do
    [
      %{
        name: "medians",
        columns: ~w(input kind bytes cells batch rounds distance modes_agree mode
                    median_ns min_ns max_ns samples gcells_per_s ratio_to_normal),
        rows:
          for c <- result.cases, e <- c.modes do
            [case_label(c), c.kind, c.bytes, c.cells, c.batch, c.rounds, c.distance] ++
              [c.modes_agree, e.mode, e.median_ns, e.min_ns, e.max_ns, e.samples] ++
              [e.gcells_per_s, e.ratio_to_normal]
          end
      },
      %{
        name: "spin",
        columns: ~w(iterations rounds modes_agree mode median_ns min_ns max_ns samples
                    ns_per_iteration ratio_to_normal),
        rows:
          for e <- result.spin.modes do
            [result.spin.iterations, result.spin.rounds, result.spin.modes_agree, e.mode] ++
              [e.median_ns, e.min_ns, e.max_ns, e.samples, e.ns_per_iteration, e.ratio_to_normal]
          end
      },
      %{
        name: "calls",
        columns: ~w(variant call bytes batch median_ns min_ns max_ns samples),
        rows:
          for v <- result.calls.variants do
            [v.variant, v.label, result.calls.bytes, result.calls.batch] ++
              [v.median_ns, v.min_ns, v.max_ns, v.samples]
          end
      }
    ]
  end

  # one cell per mode, "-" where the case did not time that mode
  defp by_mode(c, modes, cell) do
    for mode <- modes do
      case Enum.find(c.modes, &(&1.mode == mode)) do
        nil -> "-"
        entry -> cell.(entry)
      end
    end
  end

  defp slices_md(nil), do: ""

  defp slices_md(workloads) do
    slices = workloads |> hd() |> Map.fetch!(:slices) |> Enum.map(& &1.slice_us)

    [
      "\n### `:yielding` throughput by slice length (ratio to :normal, median)\n\n",
      "`WellBehaved.Runtime.configure(slice_us: n)`; the ticker lateness at each slice is in ",
      "the lateness suite.\n\n",
      table(
        ["workload" | Enum.map(slices, &"#{&1} us")],
        for w <- workloads do
          [
            if(w.workload == :spin,
              do: "Spin #{compact(@spin_case.iterations)}",
              else: "#{@slice_case.lev_batch} x #{size_label(@slice_case.lev_bytes)} pairs"
            )
            | Enum.map(w.slices, &fmt(&1.ratio_to_normal, 3))
          ]
        end
      )
    ]
  end

  defp machine_md(m) do
    rt = m.runtime

    """
    | machine | |
    |---|---|
    | OTP / ERTS / Elixir | #{m.otp_release} / #{m.erts_version} / #{m.elixir_version} |
    | schedulers online | #{m.schedulers_online} of #{m.schedulers} |
    | dirty CPU / dirty IO schedulers | #{m.dirty_cpu_schedulers_online} of #{m.dirty_cpu_schedulers} / #{m.dirty_io_schedulers} |
    | CPU | #{m.cpu_model} |
    | logical cores | #{m.logical_cores} (available: #{m.logical_cores_available}) |
    | OS | #{m.os} |
    | runtime | #{rt.pool_threads} pool threads; :auto is :normal under #{rt.normal_max_us} us, :yielding under #{rt.yielding_max_us} us |
    | date (UTC) | #{m.utc} |

    """
  end

  defp seed_md(result) do
    seed = case_named(result, "seed pair")
    n = mode_entry(seed, :normal)

    "`:binary.copy(<<0>>, #{seed.bytes})` vs `:binary.copy(<<1>>, #{seed.bytes})`, " <>
      "distance #{seed.distance}: median wall time in :normal " <>
      "**#{fmt(result.seed_normal_median_ms, 2)} ms** " <>
      "(min #{fmt_ns(n.min_ns)}, max #{fmt_ns(n.max_ns)}, #{n.samples} samples).\n"
  end

  defp context_md(c) do
    "Earlier figures, for context: best library ~#{fmt(c.best_library_gcells, 0)} Gcell/s; " <>
      "naive DP ~#{fmt(c.naive_dp_gcells, 1)} Gcell/s; the blog's yielding cost " <>
      "#{fmt(c.blog_yielding_cost, 1)}x (a throughput ratio of " <>
      "#{fmt(1 / c.blog_yielding_cost, 2)}).\n"
  end

  defp case_label(%{kind: "seed"}), do: "seed pair"
  defp case_label(%{bytes: bytes}), do: "random #{size_label(bytes)}"

  defp size_label(bytes) when bytes >= 1000, do: "#{div(bytes, 1000)} kB"
  defp size_label(bytes), do: "#{bytes} B"

  defp compact(n) when rem(n, 1_000_000) == 0, do: "#{div(n, 1_000_000)}M"
  defp compact(n), do: Integer.to_string(n)

  defp plural(1, word), do: "1 #{word}"
  defp plural(n, "batch"), do: "#{n} batches"
  defp plural(n, word), do: "#{n} #{word}s"

  defp gdigits(x) when x < 10, do: 2
  defp gdigits(_), do: 1

  defp fmt_ns(ns) when ns >= 1.0e9, do: "#{fmt(ns / 1.0e9, 3)} s"
  defp fmt_ns(ns) when ns >= 1.0e6, do: "#{fmt(ns / 1.0e6, 2)} ms"
  defp fmt_ns(ns) when ns >= 1.0e3, do: "#{fmt(ns / 1.0e3, 2)} us"
  defp fmt_ns(ns), do: "#{fmt(ns, 0)} ns"
end
