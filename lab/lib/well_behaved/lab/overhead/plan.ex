defmodule WellBehaved.Lab.Overhead.Plan do
  @moduledoc """
  What the overhead suite measures: its inputs with their batch sizes and
  rounds, the modes it compares, the targets the figures are held to and
  earlier figures quoted for context.

  A quick run of the suite takes about 50 s on 2 cores (51-64 s on 2 vCPU,
  2026-11); its seed pair and Spin carry the `:yielding` ratio target (and
  Spin the Rust job's against the C job's), so their rounds are the same
  in quick and full runs. `batch` calls make one timed sample; a round takes one sample
  per mode.
  """

  alias WellBehaved.Runtime

  @spin_iterations 10_000_000

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
  @spin_case %{iterations: @spin_iterations, rounds: 31}
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
    # a Rust job's time over the same job's in C, both :yielding
    rust_c_ratio: 1.03,
    call_ns: 300.0,
    # what events add to a call when no handler is attached, as a share
    events_share: 0.02
  }

  @context %{
    best_library_gcells: 41.0,
    naive_dp_gcells: 0.9,
    blog_yielding_cost: 1.4
  }

  @doc """
  The modes compared: `:normal` first, as the reference; then every other
  mode of `WellBehaved.Runtime`, `:auto` last.
  """
  @spec modes() :: [Runtime.mode()]
  def modes, do: [:normal | Runtime.modes() -- [:normal, :auto]] ++ [:auto]

  @doc """
  The random-input cases of a run, their rounds scaled by `scale`: all of
  them, each with the `modes` it times (in a quick run, the 100 000-byte
  case times only `:normal` and `:yielding`).
  """
  @spec random_cases(boolean(), number(), [Runtime.mode()]) :: [map()]
  def random_cases(quick, scale, modes) do
    for plan <- @random_cases, plan.quick or not quick do
      modes = if quick, do: Map.get(plan, :quick_modes, modes), else: modes
      plan |> scale(scale) |> Map.put(:modes, modes)
    end
  end

  @doc "The seed pair: `bytes` zero bytes against as many one bytes."
  @spec seed_case() :: map()
  def seed_case, do: @seed_case

  @doc "The cost of one call: two `bytes`-byte strings, `batch` calls a sample."
  @spec call_case() :: map()
  def call_case, do: @call_case

  @doc "Spin, the fixed-work reference: `iterations` per call."
  @spec spin_case() :: map()
  def spin_case, do: @spin_case

  @doc """
  `:yielding` at each slice length in `slices` (microseconds) against
  `:normal`, on Spin (`spin_iterations`) and on `lev_batch` pairs of
  `lev_bytes` random bytes.
  """
  @spec slice_case() :: map()
  def slice_case, do: Map.put(@slice_case, :spin_iterations, @spin_iterations)

  @doc "The bounds the targets hold the figures to."
  @spec targets() :: map()
  def targets, do: @targets

  @doc "Earlier figures, quoted in the Markdown for context."
  @spec context() :: map()
  def context, do: @context

  @doc """
  `plan` with its rounds multiplied by `scale`, rounded, at least one.

      iex> WellBehaved.Lab.Overhead.Plan.scale(%{rounds: 15}, 0.01)
      %{rounds: 1}
  """
  @spec scale(%{required(:rounds) => pos_integer(), optional(atom()) => term()}, number()) ::
          map()
  def scale(plan, scale), do: %{plan | rounds: max(1, round(plan.rounds * scale))}
end
