defmodule WellBehaved.Lab.EchoLatency do
  @moduledoc """
  The latency suite: the round-trip cost of every way of calling native
  code (`WellBehaved.Lab.Echo`), measured properly.

  Each method runs in its own child VM. The default term is a tuple holding
  a 64 KiB binary, as in the 2017 measurements, and a small term is timed
  too. After a warm-up, N round trips are timed (5,000 in quick runs,
  100,000 in full ones); methods faster than about 2 µs are timed in
  batches of ~20 µs, so that the clock's resolution cannot quantize them
  (each sample is then a batch's mean per call, which narrows the tails).
  Percentiles are exact, from all samples. Calls per second are measured
  with 1, schedulers_online and 4 x schedulers_online concurrent callers.

  In the same run, the machine's floors (`WellBehaved.Lab.Floors`: round
  trips between two C parties, no VM) are timed with as many round trips
  (at most 3 s of them), at the sizes of the two terms once encoded, and
  each method whose mechanism has one is shown as a ratio to its floor:
  `:threaded`, `:dirty_cpu` and `:dirty_io` to a futex handoff between
  threads, `:external` to a Unix socket, `:port` to a pipe, `:cnode` to
  TCP on loopback; `:external_job` (a job of the lab's SDK library in its
  server program) to the Unix socket too, and to `:external`.

  Then the same again on a loaded machine (`loaded: true`, the default):
  as many CPU-bound OS processes as schedulers (`WellBehaved.Lab.Load`)
  run while the methods that have a floor, and their floors, are timed
  again. The targets on ratios are read from 3 rounds (5 in full runs),
  each a child VM where every method and its base are timed one after the
  other, the base first in every other round: the median ratio and its
  range, "not distinguishable" when the range spans the bound.

  ## Parts

    * `WellBehaved.Lab.EchoLatency.Child` - one method, in its child VM;
    * `WellBehaved.Lab.EchoLatency.Analysis` - the targets;
    * `WellBehaved.Lab.EchoLatency.Render` - Markdown, charts, tables and
      progress lines.
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.{Echo, Floors, Load, Suite}
  alias WellBehaved.Lab.EchoLatency.{Analysis, Child, Render}

  # rounds of the ratio targets, each pair measured side by side: quick,
  # full (a quick run of every suite is held to 360 s)
  @rounds {3, 5}
  # what a child VM may take: one method's figures, one round of ratios
  @method_bound_ms 120_000
  @round_bound_ms 240_000

  @typedoc "A result map as returned by `run/1`."
  @type result :: %{atom() => term()}

  @doc """
  Measures every method available in this build, each in a child VM of
  its own, and returns the result map.

  Options:

    * `quick:` - `true` (default): 5,000 timed round trips per term,
      250 ms throughput windows and 3 rounds of ratios; `false`: 100,000,
      2000 ms and 5 rounds.
    * `rounds_scale:` - multiplies both (default `1.0`; at least 200 round
      trips and 100 ms).
    * `progress:` - a one-argument function called with a line of text per
      method. Default: none.
    * `loaded:` - `false` skips the pass on a loaded machine.
  """
  @impl Suite
  @spec run(keyword()) :: result()
  def run(opts) do
    {loaded, opts} = Keyword.pop(opts, :loaded, true)
    {quick, scale, progress} = Suite.options!(opts)
    iterations = max(200, round(if(quick, do: 5_000, else: 100_000) * scale))
    window_ms = max(100, round(if(quick, do: 250, else: 2000) * scale))
    round_count = if quick, do: elem(@rounds, 0), else: elem(@rounds, 1)
    {rows, floors} = pass(Echo.methods(), iterations, window_ms, progress, "")
    rounds = ratio_rounds(round_count, iterations, progress, "")

    loaded_pass =
      if loaded do
        burners = :erlang.system_info(:schedulers_online)
        methods = Enum.filter(Echo.methods(), &Map.has_key?(Render.floor_of(), &1))
        # each child VM is bounded, so is the load (with a minute for the floors)
        bound_ms = @method_bound_ms * length(methods) + @round_bound_ms * round_count + 60_000
        load = Load.start(burners, div(bound_ms, 1000))

        try do
          {rows, floors} = pass(methods, iterations, window_ms, progress, " (loaded)")
          rounds = ratio_rounds(round_count, iterations, progress, " (loaded)")
          %{burners: burners, rows: rows, floors: floors, rounds: rounds}
        after
          Load.stop(load)
        end
      end

    %{
      config: %{
        quick: quick,
        iterations: iterations,
        window_ms: window_ms,
        schedulers: :erlang.system_info(:schedulers_online),
        rounds: round_count
      },
      rows: rows,
      floors: floors,
      rounds: rounds,
      loaded: loaded_pass,
      targets:
        Analysis.targets(rows) ++
          Analysis.floor_targets(rounds, "quiet") ++
          if(loaded_pass, do: Analysis.floor_targets(loaded_pass.rounds, "loaded"), else: [])
    }
  end

  # The ratio targets' rounds: each in a child VM of its own, every method
  # beside its base (a floor, or another method), the base first in every
  # other round; a tenth of the iterations each. A round that failed is
  # left out.
  defp ratio_rounds(round_count, iterations, progress, label) do
    pairs = Enum.filter(Analysis.ratio_pairs(), fn {method, _} -> Echo.available?(method) end)

    for r <- 1..round_count,
        spec = %{
          pairs: pairs,
          iterations: max(200, div(iterations, 10)),
          bytes: term_bytes(),
          flip: rem(r, 2) == 0
        },
        {:ok, round} <- [
          ChildVM.run({Child, :ratio_round, [spec]},
            bound_ms: @round_bound_ms,
            start: [:well_behaved_lab]
          )
        ] do
      progress.("latency ratios, round #{r} of #{round_count}#{label}")
      round
    end
  end

  # the methods, then the floors, each reported as it ends
  defp pass(methods, iterations, window_ms, progress, label) do
    rows =
      for method <- methods do
        row = measure(method, iterations, window_ms)
        progress.(Render.progress_line(row) <> label)
        row
      end

    floors = floors(iterations)
    progress.(Render.floors_line(floors) <> label)
    {rows, floors}
  end

  @doc """
  The bytes of the two terms once encoded (`term_to_binary/1`): small and
  default, the sizes the floors move.
  """
  @spec term_bytes() :: %{small: pos_integer(), default: pos_integer()}
  def term_bytes,
    do: Map.new(Child.terms(), fn {k, t} -> {k, byte_size(:erlang.term_to_binary(t))} end)

  # every floor at both sizes: %{method:, size: :small | :default, ...}
  defp floors(iterations) do
    sizes = term_bytes()

    for method <- Floors.methods(), size <- [:small, :default] do
      bytes = sizes[size]

      case Floors.measure(method, bytes, iterations) do
        {:ok, f} -> Map.merge(f, %{size: size, status: "ok"})
        {:error, reason} -> %{method: method, size: size, bytes: bytes, status: inspect(reason)}
      end
    end
  end

  defp measure(method, iterations, window_ms) do
    if Echo.available?(method) do
      spec = %{method: method, iterations: iterations, window_ms: window_ms}

      case ChildVM.run({Child, :measure, [spec]},
             bound_ms: @method_bound_ms,
             start: [:well_behaved_lab]
           ) do
        {:ok, measured} ->
          Map.merge(%{method: method, status: "ok"}, measured)

        {:timeout, ms} ->
          %{method: method, status: "bound hit (#{ms} ms)"}

        {:crashed, code, out} ->
          %{
            method: method,
            status: "crashed (exit #{code})",
            output: String.slice(out, -400, 400)
          }
      end
    else
      %{method: method, status: "not available in this build"}
    end
  end

  @doc """
  Renders a result of `run/1` as Markdown: a row per method beside its
  2017 median, and the targets.
  """
  @impl Suite
  @spec to_markdown(result()) :: String.t()
  defdelegate to_markdown(result), to: Render

  @doc """
  Two charts: round-trip percentiles per method and calls per second by
  concurrent callers.
  """
  @impl Suite
  @spec charts(result()) :: [Suite.chart()]
  defdelegate charts(result), to: Render

  @doc "The raw rows: per method, and per method and caller count."
  @impl Suite
  @spec tables(result()) :: [Suite.table()]
  defdelegate tables(result), to: Render
end
