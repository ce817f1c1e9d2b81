defmodule WellBehaved.Lab.Overhead.Measure do
  @moduledoc """
  The overhead suite's timed work, all in the calling process, one call at
  a time (many concurrent `:normal` calls could stall the VM).

  Each function warms its work up once per mode (or variant), times the
  modes interleaved round by round (`interleave/3`), hands the samples to
  `WellBehaved.Lab.Overhead.Analysis` and reports each figure through
  `progress`. Short calls are timed in batches, `:erlang.monotonic_time/1`
  around a whole batch and never around one call.
  """

  alias WellBehaved.{Levenshtein, Native, Telemetry}
  alias WellBehaved.Lab.{Spin, Stats, Suite}
  alias WellBehaved.Lab.Overhead.Analysis
  import WellBehaved.Lab.Markdown, only: [fmt: 2]
  import WellBehaved.Lab.Overhead.Format, only: [compact: 1, fmt_ns: 1, plural: 2, size_label: 1]

  @typedoc "Called with a line of text after each measurement."
  @type progress :: (String.t() -> any())

  @doc """
  Times `Levenshtein.distance(a, b, schedule: mode)` in each of `modes`
  (`:normal` first), `plan.batch` calls a sample, `plan.rounds` rounds.
  Returns the case: `name`, `kind` (`"random"` or `"seed"`), sizes, the
  `distance` and whether every mode gave it (`modes_agree`), and one
  entry per mode (`WellBehaved.Lab.Overhead.Analysis.pair_entries/4`).
  """
  @spec pair(String.t(), String.t(), binary(), binary(), map(), [atom()], progress()) :: map()
  def pair(name, kind, a, b, plan, modes, progress) do
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
    entries = Analysis.pair_entries(samples, modes, batch, cells)

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

  @doc """
  The cost of one call on two `plan.bytes`-byte random strings, split by
  six variants: the public API with default options and with
  `schedule: :normal`, the NIF without its Elixir wrapper, a one-iteration
  Spin, the events' check (`WellBehaved.Telemetry.enabled?/0`, what a job
  call pays with no handler attached) and an empty loop (the timing
  loop's own cost).
  """
  @spec calls(map(), progress()) :: map()
  def calls(plan, progress) do
    %{bytes: bytes, batch: batch, rounds: rounds} = plan
    a = :crypto.strong_rand_bytes(bytes)
    b = :crypto.strong_rand_bytes(bytes)
    progress.("call cost, #{bytes} bytes: #{rounds} rounds x 6 variants x #{batch} calls ...")

    variants = [
      {:default, "Levenshtein.distance(a, b)", &loop_default/3},
      {:normal, "Levenshtein.distance(a, b, schedule: :normal)", &loop_normal/3},
      {:raw_nif, "Native.levenshtein(a, b, :byte, nil, :normal, false, nil) (internal)",
       &loop_raw/3},
      {:spin_1, "Spin.run(1, schedule: :normal)", fn n, _, _ -> loop_spin(n) end},
      {:gate, "the events' check, no handler attached (internal)", &loop_gate/3},
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
      Analysis.call_entries(samples, Enum.map(variants, fn {k, l, _} -> {k, l} end), batch)

    for e <- entries do
      progress.("call cost, #{bytes} bytes, #{e.label}: #{fmt(e.median_ns, 0)} ns")
    end

    shares = Analysis.check_shares(samples, [:normal, :default])

    for e <- shares do
      progress.(
        "call cost, #{bytes} bytes, events' check / #{e.variant}: #{fmt(e.share * 100, 2)}%"
      )
    end

    %{bytes: bytes, batch: batch, rounds: rounds, variants: entries, check_shares: shares}
  end

  @doc """
  Spin, `plan.iterations` per call, in each of `modes`, and the same job
  written in Rust (`WellBehaved.Lab.Spin.run_rust/2`) in `:yielding` when
  `modes` has it, timed right beside the C job's `:yielding` in the same
  rounds, first in every other round. Returns whether every run gave the
  same checksum, one entry per mode
  (`WellBehaved.Lab.Overhead.Analysis.spin_entries/3`) and the Rust job's
  (`rust`, `WellBehaved.Lab.Overhead.Analysis.rust_spin_entry/2`).
  """
  @spec spin(map(), [atom()], progress()) :: map()
  def spin(plan, modes, progress) do
    %{iterations: iterations, rounds: rounds} = plan
    rust = :yielding in modes
    keys = if rust, do: modes ++ [:rust_yielding], else: modes

    progress.(
      "spin #{iterations} iterations: #{rounds} rounds x #{length(modes)} modes" <>
        "#{if rust, do: " and Rust :yielding", else: ""} ..."
    )

    :erlang.garbage_collect()
    checksums = Enum.map(keys, &run_spin(&1, iterations))
    opts = if rust, do: [beside: {:yielding, :rust_yielding}], else: []

    samples =
      interleave(
        keys,
        rounds,
        fn key ->
          t0 = :erlang.monotonic_time(:nanosecond)
          run_spin(key, iterations)
          :erlang.monotonic_time(:nanosecond) - t0
        end,
        opts
      )

    entries = Analysis.spin_entries(samples, modes, iterations)

    for e <- entries do
      progress.(
        "spin #{iterations} iterations, #{e.mode}: #{fmt_ns(e.median_ns)}, " <>
          "ratio to normal #{fmt(e.ratio_to_normal, 3)}"
      )
    end

    rust_entry = if rust, do: Analysis.rust_spin_entry(samples, iterations)

    if rust_entry do
      e = rust_entry

      progress.(
        "spin #{iterations} iterations, yielding (Rust): #{fmt_ns(e.median_ns)}, " <>
          "ratio to normal #{fmt(e.ratio_to_normal, 3)}, Rust/C time #{fmt(e.c_ratio, 4)} " <>
          "(95% #{fmt(e.c_ratio_low, 3)}-#{fmt(e.c_ratio_high, 3)})"
      )
    end

    %{
      iterations: iterations,
      rounds: rounds,
      modes_agree: Enum.uniq(checksums) |> length() == 1,
      modes: entries,
      rust: rust_entry
    }
  end

  defp run_spin(:rust_yielding, n), do: Spin.run_rust(n, schedule: :yielding)
  defp run_spin(mode, n), do: Spin.run(n, schedule: mode)

  @doc """
  `:yielding`'s throughput at each slice length, as a ratio to `:normal`,
  for Spin and Levenshtein: one map per workload. The runtimes' slice is
  set back to the calibrated one afterwards.
  """
  @spec slices(map(), progress()) :: [map()]
  def slices(plan, progress) do
    %{slices: slices, rounds: rounds, lev_bytes: bytes, lev_batch: batch} = plan
    iterations = plan.spin_iterations
    a = :crypto.strong_rand_bytes(bytes)
    b = :crypto.strong_rand_bytes(bytes)
    keys = [:normal | slices]

    progress.(
      "slices #{inspect(slices)} us: #{rounds} rounds of Spin #{compact(iterations)} " <>
        "and #{batch} x #{size_label(bytes)} pairs ..."
    )

    try do
      for {workload, work} <- [
            spin: fn mode -> Spin.run(iterations, schedule: mode) end,
            levenshtein: fn mode -> loop_lev(batch, a, b, schedule: mode) end
          ] do
        samples =
          interleave(keys, rounds, fn key ->
            mode = if key == :normal, do: :normal, else: :yielding
            if key != :normal, do: Suite.configure_runtimes(slice_us: key)
            t0 = :erlang.monotonic_time(:nanosecond)
            work.(mode)
            :erlang.monotonic_time(:nanosecond) - t0
          end)

        normal = Stats.median(samples[:normal])
        entries = Analysis.slice_entries(samples, slices)

        progress.(
          "slices, #{workload}: " <>
            Enum.map_join(entries, ", ", &"#{&1.slice_us} us #{fmt(&1.ratio_to_normal, 3)}x")
        )

        %{workload: workload, normal_median_ns: normal, slices: entries}
      end
    after
      Suite.configure_runtimes(slice_us: :calibrated)
    end
  end

  @doc """
  Takes `rounds` samples of every key: `sample.(key)` returns one. Round
  *r* times every key once, in the order `round_order/3` gives. Each timed
  sample follows one untimed run of the same key: switching modes has a
  cost of its own (a different thread, cold caches), which would
  otherwise be charged to whichever mode runs next. Returns a map of key
  to its samples, the same round at the same position for every key.

  Option `beside: {a, b}`: `b` is timed right beside `a` (see
  `round_order/3`), for a ratio of the two taken round by round.

      iex> WellBehaved.Lab.Overhead.Measure.interleave([:a, :b], 2, fn key -> key end)
      %{a: [:a, :a], b: [:b, :b]}
  """
  @spec interleave([term()], pos_integer(), (term() -> term()), keyword()) :: %{
          term() => [term()]
        }
  def interleave(keys, rounds, sample, opts \\ []) do
    beside = Keyword.get(opts, :beside)

    Enum.reduce(0..(rounds - 1), Map.new(keys, &{&1, []}), fn r, acc ->
      Enum.reduce(round_order(keys, r, beside), acc, fn key, acc ->
        _warm = sample.(key)
        ns = sample.(key)
        Map.update!(acc, key, &[ns | &1])
      end)
    end)
  end

  @doc """
  The order of round `r` (from 0): every key once, starting at key *r*
  (mod the number of keys). With `beside` `{a, b}`, `b` is left out of
  that rotation and timed right beside `a`: after it in even rounds,
  before it in odd ones, so that neither is always first of the two.

      iex> WellBehaved.Lab.Overhead.Measure.round_order([:a, :b, :c], 1, nil)
      [:b, :c, :a]
      iex> WellBehaved.Lab.Overhead.Measure.round_order([:a, :b, :c, :r], 0, {:b, :r})
      [:a, :b, :r, :c]
      iex> WellBehaved.Lab.Overhead.Measure.round_order([:a, :b, :c, :r], 1, {:b, :r})
      [:r, :b, :c, :a]
      iex> WellBehaved.Lab.Overhead.Measure.round_order([:a, :b, :c, :r], 2, {:b, :r})
      [:c, :a, :b, :r]
  """
  @spec round_order([term()], non_neg_integer(), {term(), term()} | nil) :: [term()]
  def round_order(keys, r, nil) do
    {front, back} = Enum.split(keys, rem(r, length(keys)))
    back ++ front
  end

  def round_order(keys, r, {a, b}) do
    keys
    |> List.delete(b)
    |> round_order(r, nil)
    |> Enum.flat_map(fn
      ^a when rem(r, 2) == 0 -> [a, b]
      ^a -> [b, a]
      key -> [key]
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

  # The empty loop plus the check every job call makes before emitting an
  # event: its time less the empty loop's is what events cost when nothing
  # listens.
  defp loop_gate(0, _a, _b), do: :ok

  defp loop_gate(n, a, b) do
    _ = if Telemetry.enabled?(), do: nothing(b, a), else: nothing(a, b)
    loop_gate(n - 1, a, b)
  end

  defp loop_empty(0, _a, _b), do: :ok

  defp loop_empty(n, a, b) do
    _ = nothing(a, b)
    loop_empty(n - 1, a, b)
  end

  defp nothing(_a, _b), do: 0
end
