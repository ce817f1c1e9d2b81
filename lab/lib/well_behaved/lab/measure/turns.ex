defmodule WellBehaved.Lab.Turns do
  @moduledoc """
  How long a worker holds its scheduler per turn in each mode, against
  pure Erlang workers running beside it: the mechanism behind the lateness
  suite's ticker figures, and the measure a noisy machine barely moves.

  For Spin sized to each work per call (1, 10, 100 ms) and each mode, and
  for `:yielding` at other slice lengths (10 ms calls), one worker per
  scheduler calls the work over and over while as many workers run
  `WellBehaved.Probe.erlang_work/1` beside them, and
  `WellBehaved.Probe.turns/2` takes every turn of both on the normal
  schedulers (wall and thread CPU time). Each cell is measured in several
  rounds, cells shuffled anew in each, in a child VM bounded by SIGKILL;
  a cell's figures are the medians over rounds of its turns' p50, p90 and
  p99 and of their ratios to the pure-Erlang workers' of the same window.
  Off-scheduler modes hold no normal scheduler: their turns there are the
  calls' dispatch, and the ones on dirty schedulers are counted apart.

  The same job written in Rust (`WellBehaved.Lab.Spin.run_rust/2`) has
  cells of its own in `:yielding` and `:auto` at every work size (`lang:
  :rust`; the C job's cells are `lang: :c`), shuffled among the C cells
  in the same VM and rounds: `rust_target/2` holds its turns to the C
  job's, round by round.
  """

  alias WellBehaved.{Probe, Runtime}
  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.{Markdown, Spin, Stats}

  @modes [:normal, :yielding, :auto, :yielding_dirty, :dirty_cpu, :threaded]
  @slices [10, 20, 50, 100]
  # the modes the Rust job is measured in, beside the C job
  @rust_modes [:yielding, :auto]
  # the Rust job's p50 and p90 over the C job's, at most
  @rust_bound 1.1
  @window_ms 150

  @doc """
  Measures every cell: `work_ms` sizes, Spin at `spin_ns` per iteration,
  `rounds` rounds. Returns `%{rows: [...], window_ms: ..., rounds: ...}`.
  """
  @spec measure([pos_integer()], number(), pos_integer(), (String.t() -> any())) :: map()
  def measure(work_ms, spin_ns, rounds, progress) do
    cells = Enum.map(cells(work_ms), &Map.put(&1, :size, round(&1.work_ms * 1.0e6 / spin_ns)))
    # per cell and round: the window, the warm-up, the calls in progress
    # (the bound grows with the cells, the Rust job's among them)
    bound_ms = rounds * Enum.sum(Enum.map(cells, &(3 * (@window_ms + 50 + &1.work_ms)))) + 60_000
    spec = %{cells: cells, rounds: rounds, window_ms: @window_ms}

    case ChildVM.run({__MODULE__, :child_measure, [spec]}, bound_ms: bound_ms) do
      {:ok, rows} ->
        progress.("turns: #{length(rows)} cells x #{rounds} rounds")
        %{rows: rows, window_ms: @window_ms, rounds: rounds}

      failure ->
        progress.("turns: #{inspect(failure)}")
        %{rows: [], window_ms: @window_ms, rounds: rounds, failure: inspect(failure)}
    end
  end

  @doc """
  The cells at these work sizes: the C job in every mode, then the Rust
  job in `:yielding` and `:auto` (default slice), then the C job's
  `:yielding` at other slice lengths (10 ms calls, when 10 is among the
  sizes).

      iex> cells = WellBehaved.Lab.Turns.cells([1])
      iex> Enum.map(cells, &{&1.lang, &1.mode})
      [c: :normal, c: :yielding, c: :auto, c: :yielding_dirty, c: :dirty_cpu, c: :threaded,
       rust: :yielding, rust: :auto]
  """
  @spec cells([pos_integer()]) :: [map()]
  def cells(work_ms) do
    for(w <- work_ms, mode <- @modes, do: %{work_ms: w, mode: mode, slice_us: nil, lang: :c}) ++
      for(
        w <- work_ms,
        mode <- @rust_modes,
        do: %{work_ms: w, mode: mode, slice_us: nil, lang: :rust}
      ) ++
      for s <- @slices, 10 in work_ms, do: %{work_ms: 10, mode: :yielding, slice_us: s, lang: :c}
  end

  @doc false
  # In the child VM: every cell, `rounds` times, shuffled anew each round.
  def child_measure(spec) do
    :rand.seed(:exsss, {11, 13, 17})
    :ok = WellBehaved.Lab.Suite.settle_calibration()

    measured =
      for round <- 1..spec.rounds, cell <- Enum.shuffle(spec.cells), reduce: %{} do
        acc ->
          :ok = WellBehaved.Lab.Suite.configure_runtimes(slice_us: cell.slice_us || :calibrated)
          n = cell.size
          mode = cell.mode

          work =
            case cell.lang do
              :c -> fn -> Spin.run(n, schedule: mode) end
              :rust -> fn -> Spin.run_rust(n, schedule: mode) end
            end

          r = Probe.turns(work, duration_ms: spec.window_ms)
          Map.update(acc, cell, [{round, r}], &[{round, r} | &1])
      end

    :ok = WellBehaved.Lab.Suite.configure_runtimes(slice_us: :calibrated)
    slice_ns = Runtime.stats(WellBehaved.Lab.Native).slice_ns

    for cell <- spec.cells do
      cell |> Map.drop([:size]) |> Map.merge(summary(Map.get(measured, cell, []), slice_ns))
    end
  end

  @doc false
  # A cell's figures from its rounds' Probe.turns/2 reports, and its
  # rounds' own p50 and p90 (`by_round`), for ratios taken round by round.
  def summary(rounds, slice_ns) do
    reports = Enum.map(rounds, &elem(&1, 1))
    med = fn f -> reports |> Enum.map(f) |> Enum.reject(&is_nil/1) |> median() end

    %{
      by_round:
        rounds
        |> Enum.sort_by(&elem(&1, 0))
        |> Enum.map(fn {round, r} ->
          %{round: round, p50_us: r.function.p50_us, p90_us: r.function.p90_us}
        end),
      rounds: length(reports),
      default_slice_us: slice_ns / 1000,
      p50_us: med.(& &1.function.p50_us),
      p90_us: med.(& &1.function.p90_us),
      p99_us: med.(& &1.function.p99_us),
      cpu_p99_us: med.(& &1.function.cpu_p99_us),
      turns: med.(& &1.function.turns),
      open_turns: med.(& &1.function.open_turns),
      dirty_turns: med.(& &1.function.dirty_turns),
      erlang_p50_us: med.(& &1.control.p50_us),
      erlang_p90_us: med.(& &1.control.p90_us),
      p50_ratio: med.(& &1.p50_ratio),
      p90_ratio: med.(& &1.p90_ratio)
    }
  end

  defp median([]), do: nil
  defp median(xs), do: Stats.median(xs)

  @doc """
  The turn figures of the C job in `mode` at `work_ms` (default slice),
  or nil; `lang: :rust` for the Rust job's.
  """
  @spec find(map() | nil, pos_integer(), atom(), :c | :rust) :: map() | nil
  def find(turns, w, mode, lang \\ :c)
  def find(nil, _w, _mode, _lang), do: nil

  def find(turns, w, mode, lang) do
    Enum.find(
      turns.rows,
      &(&1.work_ms == w and &1.mode == mode and &1.slice_us == nil and lang_of(&1) == lang)
    )
  end

  # rows of runs before the Rust cells have no lang: the C job's
  defp lang_of(row), do: Map.get(row, :lang, :c)

  @doc "A cell's turns in a phrase: its p50 against pure Erlang's."
  @spec text(map() | nil) :: String.t()
  def text(nil), do: "-"

  def text(%{p50_us: nil}), do: "no turns on the normal schedulers"

  def text(r) do
    "#{fmt(r.p50_us)} us per turn (p50; p90 #{fmt(r.p90_us)}) against #{fmt(r.erlang_p50_us)} " <>
      "us for pure Erlang (#{fmt(r.p50_ratio)}x, p90 #{fmt(r.p90_ratio)}x)"
  end

  @doc """
  The target on turns: `:yielding` (and `:auto`) at the default slice
  holds its scheduler per turn no longer than 1.1x pure Erlang at p50 and
  1.2x at p90, at every work size.
  """
  @spec targets(map() | nil, [pos_integer()]) :: [map()]
  def targets(nil, _work_ms), do: []

  def targets(turns, work_ms) do
    for mode <- [:yielding, :auto] do
      cells = work_ms |> Enum.map(&find(turns, &1, mode)) |> Enum.reject(&is_nil/1)
      ok = fn r -> r.p50_ratio != nil and r.p50_ratio <= 1.1 and r.p90_ratio <= 1.2 end

      worst50 =
        cells |> Enum.map(& &1.p50_ratio) |> Enum.reject(&is_nil/1) |> Enum.max(fn -> nil end)

      worst90 =
        cells |> Enum.map(& &1.p90_ratio) |> Enum.reject(&is_nil/1) |> Enum.max(fn -> nil end)

      %{
        target: ":#{mode} turn p50 <= 1.1x and p90 <= 1.2x pure Erlang's, same VM",
        measured:
          "worst p50 #{fmt(worst50)}x, p90 #{fmt(worst90)}x over #{length(cells)} work sizes " <>
            "(slice #{fmt(cells |> List.first() |> then(&(&1 && &1.default_slice_us)))} us)",
        met: cells != [] and length(cells) == length(work_ms) and Enum.all?(cells, ok)
      }
    end
  end

  @doc """
  The target on the Rust job's turns: in `:yielding` and `:auto` at the
  default slice, at every work size, its turns are as short as the C
  job's. For each work size and mode, the Rust cell's p50 over the C
  cell's of the same round, and the same of p90 (each round measures
  every cell once, in one VM), median over the rounds; each median at
  most #{@rust_bound}x. Without the Rust cells (or a C cell to pair
  them with), not met.
  """
  @spec rust_target(map() | nil, [pos_integer()]) :: [map()]
  def rust_target(nil, _work_ms), do: []

  def rust_target(turns, work_ms) do
    pairs =
      for w <- work_ms, mode <- @rust_modes do
        {w, mode, rust_ratios(find(turns, w, mode, :rust), find(turns, w, mode, :c))}
      end

    found = for {w, mode, %{} = r} <- pairs, do: Map.merge(r, %{work_ms: w, mode: mode})

    worst = fn key ->
      found |> Enum.reject(&is_nil(&1[key])) |> Enum.max_by(& &1[key], fn -> nil end)
    end

    ok = fn r ->
      r.p50 != nil and r.p90 != nil and r.p50 <= @rust_bound and r.p90 <= @rust_bound
    end

    shown = fn r, key -> if r, do: "#{fmt(r[key])}x (:#{r.mode}, #{r.work_ms} ms)", else: "-" end

    [
      %{
        target:
          "Rust :yielding/:auto turns as short as C's: median p50 and p90 each <= " <>
            "#{@rust_bound}x the C cell's, same rounds",
        measured:
          "worst p50 #{shown.(worst.(:p50), :p50)}, p90 #{shown.(worst.(:p90), :p90)} " <>
            "over #{length(found)} cells",
        met: found != [] and length(found) == length(pairs) and Enum.all?(found, ok)
      }
    ]
  end

  @doc """
  The Rust cell's turns over the C cell's, round by round: the median over
  the rounds both measured of the ratio of their p50 (`p50`) and of their
  p90 (`p90`), and how many rounds were paired (`rounds`); nil without
  both cells.

      iex> rust = %{by_round: [%{round: 1, p50_us: 11.0, p90_us: 12.0}, %{round: 2, p50_us: 30.0, p90_us: 31.0}, %{round: 3, p50_us: 10.0, p90_us: 10.0}]}
      iex> c = %{by_round: [%{round: 1, p50_us: 10.0, p90_us: 12.0}, %{round: 2, p50_us: 30.0, p90_us: 25.0}, %{round: 3, p50_us: 10.0, p90_us: 10.0}]}
      iex> WellBehaved.Lab.Turns.rust_ratios(rust, c)
      %{p50: 1.0, p90: 1.0, rounds: 3}
  """
  @spec rust_ratios(map() | nil, map() | nil) :: map() | nil
  def rust_ratios(nil, _c), do: nil
  def rust_ratios(_rust, nil), do: nil

  def rust_ratios(rust, c) do
    c_rounds = Map.new(Map.get(c, :by_round, []), &{&1.round, &1})

    paired = for r <- Map.get(rust, :by_round, []), cr = c_rounds[r.round], cr != nil, do: {r, cr}

    ratio = fn key ->
      paired
      |> Enum.map(fn {r, cr} -> ratio(r[key], cr[key]) end)
      |> Enum.reject(&is_nil/1)
      |> median()
    end

    %{p50: ratio.(:p50_us), p90: ratio.(:p90_us), rounds: length(paired)}
  end

  defp ratio(a, b) when is_number(a) and is_number(b) and b > 0, do: a / b
  defp ratio(_a, _b), do: nil

  @doc "The Markdown section."
  @spec to_markdown(map() | nil) :: iodata()
  def to_markdown(nil), do: ""
  def to_markdown(%{rows: []}), do: ""

  def to_markdown(turns) do
    rows =
      for r <-
            Enum.sort_by(
              turns.rows,
              &{&1.work_ms, &1.slice_us || 0, lang_of(&1) == :rust, mode_index(&1.mode)}
            ) do
        [
          "#{r.work_ms} ms",
          ":#{r.mode}#{if lang_of(r) == :rust, do: " (Rust)", else: ""}",
          if(r.slice_us, do: "#{r.slice_us} us", else: "default (#{fmt(r.default_slice_us)} us)"),
          fmt(r.p50_us),
          fmt(r.p90_us),
          fmt(r.p99_us),
          fmt(r.cpu_p99_us),
          "#{fmt(r.erlang_p50_us)} / #{fmt(r.erlang_p90_us)}",
          "#{fmt(r.p50_ratio)}x / #{fmt(r.p90_ratio)}x",
          "#{fmt(r.dirty_turns)}"
        ]
      end

    [
      "### Turns: how long a worker holds its scheduler\n\n",
      "`WellBehaved.Probe.turns/2`: Spin workers (one per scheduler) beside as many pure-Erlang ",
      "workers, every turn on the normal schedulers traced for #{turns.window_ms} ms; medians of ",
      "#{turns.rounds} rounds, cells shuffled in each. Wall time of a turn in us (p50, p90, p99), ",
      "the thread's CPU time at p99, pure Erlang's turns in the same windows, and the ratios. ",
      "(Rust): the same job written in Rust (`Spin.run_rust/2`), in the same rounds.\n\n",
      Markdown.table(
        [
          "work",
          "mode",
          "slice",
          "p50",
          "p90",
          "p99",
          "CPU p99",
          "Erlang p50 / p90",
          "ratio p50 / p90",
          "dirty turns"
        ],
        rows
      )
    ]
  end

  defp mode_index(mode), do: Enum.find_index(@modes, &(&1 == mode))

  defp fmt(nil), do: "-"
  defp fmt(x), do: Markdown.fmt_auto(x)
end
