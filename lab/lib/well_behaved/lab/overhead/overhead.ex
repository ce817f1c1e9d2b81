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
    * Spin also times the same job written in Rust
      (`WellBehaved.Lab.Spin.run_rust/2`) in `:yielding`, right beside the
      C job's `:yielding` in every round (first in every other round): its
      time over the C job's is taken round by round as well.
    * Each case is warmed up once per mode before timing.
    * Short calls are timed in batches (`:erlang.monotonic_time/1` around a
      whole batch, never around one call) and reported per call.
    * Cells are `byte_size(a) * byte_size(b)`, so Gcell/s is cells per
      nanosecond of median time.

  The parts: `WellBehaved.Lab.Overhead.Plan` (inputs, rounds, targets),
  `WellBehaved.Lab.Overhead.Measure` (the timed work),
  `WellBehaved.Lab.Overhead.Analysis` (ratios, intervals, targets) and
  `WellBehaved.Lab.Overhead.Render` (Markdown, charts, tables).
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.Lab.{Machine, Suite}
  alias WellBehaved.Lab.Overhead.{Analysis, Measure, Plan, Render}

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
  @impl Suite
  @spec run(keyword()) :: result()
  def run(opts \\ []) do
    {quick, scale, progress} = Suite.options!(opts)

    started = :erlang.monotonic_time(:nanosecond)
    machine = Machine.describe()
    modes = Plan.modes()

    random =
      for plan <- Plan.random_cases(quick, scale, modes) do
        a = :crypto.strong_rand_bytes(plan.bytes)
        b = :crypto.strong_rand_bytes(plan.bytes)
        Measure.pair("random #{plan.bytes} B", "random", a, b, plan, plan.modes, progress)
      end

    seed_plan = Plan.scale(Plan.seed_case(), scale)
    seed_a = :binary.copy(<<0>>, seed_plan.bytes)
    seed_b = :binary.copy(<<1>>, seed_plan.bytes)
    seed = Measure.pair("seed pair", "seed", seed_a, seed_b, seed_plan, modes, progress)

    calls = Measure.calls(Plan.scale(Plan.call_case(), scale), progress)
    spin = Measure.spin(Plan.scale(Plan.spin_case(), scale), modes, progress)
    slices = Measure.slices(Plan.scale(Plan.slice_case(), scale), progress)
    seed_normal = Analysis.mode_entry(seed, :normal)

    result = %{
      suite: "levenshtein",
      machine: machine,
      config: %{quick: quick, rounds_scale: scale * 1.0, modes: modes},
      cases: random ++ [seed],
      seed_normal_median_ms: seed_normal.median_ns / 1.0e6,
      calls: calls,
      spin: spin,
      slices: slices,
      context: Plan.context(),
      elapsed_s: (:erlang.monotonic_time(:nanosecond) - started) / 1.0e9
    }

    Map.put(result, :targets, Analysis.targets(result))
  end

  @doc """
  Renders a result of `run/1` as Markdown (the machine is in the report's
  header): throughput and ratio
  tables, call cost, Spin, and the targets with whether each was met.
  """
  @impl Suite
  @spec to_markdown(result()) :: String.t()
  def to_markdown(result), do: Render.markdown(result)

  @doc """
  Two bar charts, the inputs on the x axis and one bar per mode (in the same
  colours in both): the throughput relative to `:normal` (`:normal` itself,
  always 1, is the reference bar), Spin included; and the throughput in
  Gcell/s.
  """
  @impl Suite
  @spec charts(result()) :: [Suite.chart()]
  def charts(result), do: Render.charts(result)

  @doc """
  The raw medians, one row per input (or variant) and mode: `medians`
  (Levenshtein inputs), `spin` (with a row for the Rust job, `lang`
  `rust`) and `calls` (cost of one call), times in ns.
  """
  @impl Suite
  @spec tables(result()) :: [Suite.table()]
  def tables(result), do: Render.tables(result)
end
