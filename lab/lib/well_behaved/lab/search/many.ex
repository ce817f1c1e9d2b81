defmodule WellBehaved.Lab.Search.Many do
  @bound 1.8
  @flags %{
    one: ["+S", "1:1", "+SDcpu", "1:1"],
    two: ["+S", "2:2", "+SDcpu", "2:2"]
  }
  # the child VMs' bound: 60 s, and 3 µs a query-candidate pair (three
  # searches of every pair at 1 µs a pair: 30x slower than a loaded
  # 2 vCPU machine's wratio)
  @bound_base_ms 60_000
  @bound_us_per_pair 3

  @moduledoc """
  How `WellBehaved.Fuzzy.extract_many/3` scales from one scheduler to
  two: the same work in a child VM with one scheduler (`+S 1:1`, one
  dirty CPU scheduler) and in one with two (`+S 2:2`, two dirty CPU
  schedulers), the two alternated round by round (one then two, then two
  then one).

  The work: 1,000 queries of 10-30 letters against 100,000 candidates of
  10-30 letters (a fixed seed), `Fuzzy.extract_many(queries, candidates)
  |> Stream.run()` with the default options (limit 5, `:wratio`,
  `schedule: :auto`, one worker per online scheduler): the candidates'
  preparation (checked, processed and packed once) is in the timing, as
  in a user's call. Each VM also times that preparation alone
  (`extract_many([], candidates)`), `Fuzzy.Index.new/1` of the
  candidates, and the same queries against that index (its preparation
  made beforehand); the list and the index runs in an order that
  alternates by round. A round's figure is t(one scheduler) / t(two
  schedulers); the target is the median of the rounds' ratios with its
  95% bootstrap interval (`WellBehaved.Lab.Stats`), met when the interval's
  lower end is #{@bound}x or more.

  Every run is a fresh VM (`WellBehaved.Testing.ChildVM`, bounded by
  SIGKILL), not two VMs kept alive across the rounds: each round's two
  runs start from the same state (a VM just started, its runtime's
  calibration settled, the same warm-up: a few queries against every
  candidate), so nothing one round leaves (grown heaps, allocator
  carriers kept, the runtime's cost estimates refined by earlier runs)
  weighs on the next, and a VM that crashes or hits its bound costs its
  round only. The lab's child VMs run one function to its end; a VM
  kept alive would need a channel of its own. The price is a VM start
  and the data's copy per run (about a second, outside the timings).

  With fewer than 2 CPUs available to the VM nothing is run: two
  schedulers cannot run at once there, and the target reads "-".
  """

  alias WellBehaved.Fuzzy
  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.{Stats, Suite}
  import WellBehaved.Lab.Markdown, only: [fmt: 2]

  @doc "The bound on the speed-up of two schedulers over one."
  @spec bound() :: float()
  def bound, do: @bound

  @doc "The VM flags of a run on `:one` or `:two` schedulers."
  @spec flags(:one | :two) :: [String.t()]
  def flags(schedulers), do: Map.fetch!(@flags, schedulers)

  @doc """
  Measures the plan's `many_rounds` rounds of `many_queries` queries
  against `many_candidates` candidates (`plan` as
  `WellBehaved.Lab.Search.Plan.new/2` makes it).
  """
  @spec run(map(), (String.t() -> any())) :: map()
  def run(plan, progress) do
    cpus = cpus()

    base = %{
      queries: plan.many_queries,
      candidates: plan.many_candidates,
      cpus: cpus,
      bound: @bound
    }

    if cpus < 2 do
      Map.merge(base, %{
        available: false,
        reason: "#{cpus} CPU available to the VM: two schedulers cannot run at once",
        rounds: []
      })
    else
      {queries, candidates} = data(plan.many_queries, plan.many_candidates)

      rounds =
        for r <- 1..plan.many_rounds do
          round = round(r, queries, candidates)

          progress.(
            "extract_many #{plan.many_queries} x #{plan.many_candidates}, " <> line(round)
          )

          round
        end

      base |> Map.merge(summarize(rounds)) |> Map.merge(%{available: true, rounds: rounds})
    end
  end

  # the CPUs this VM may run on (all of the machine's when unknown)
  defp cpus do
    case :erlang.system_info(:logical_processors_available) do
      n when is_integer(n) -> n
      _ -> :erlang.system_info(:logical_processors)
    end
  end

  # queries and candidates of 10-30 letters, from a seed of their own
  defp data(queries, candidates) do
    state = :rand.seed_s(:exsss, {48, 3, 1000})
    {qs, state} = Enum.map_reduce(1..queries, state, fn _, st -> word(st) end)
    {cs, _state} = Enum.map_reduce(1..candidates, state, fn _, st -> word(st) end)
    {qs, cs}
  end

  defp word(state) do
    {n, state} = :rand.uniform_s(21, state)

    {letters, state} =
      Enum.map_reduce(1..(9 + n), state, fn _, st ->
        {c, st} = :rand.uniform_s(26, st)
        {?a + c - 1, st}
      end)

    {List.to_string(letters), state}
  end

  # one round: each VM once, the order alternating
  defp round(r, queries, candidates) do
    order = if rem(r, 2) == 1, do: [:one, :two], else: [:two, :one]
    spec = %{queries: queries, candidates: candidates, index_first: rem(r, 2) == 0}
    pairs = length(queries) * length(candidates)
    bound_ms = @bound_base_ms + div(pairs * @bound_us_per_pair, 1000)

    runs =
      for s <- order, into: %{} do
        result =
          ChildVM.run({__MODULE__, :child_run, [spec]}, bound_ms: bound_ms, erl_flags: flags(s))

        {s, run_entry(result)}
      end

    Map.merge(%{round: r, order: order}, ratios(runs))
  end

  defp run_entry({:ok, figures}), do: figures
  defp run_entry({:timeout, ms}), do: %{failed: "bound hit (#{ms} ms)"}
  defp run_entry({:crashed, code, _out}), do: %{failed: "crashed (exit #{code})"}

  defp ratios(%{one: %{list_s: _} = one, two: %{list_s: _} = two}) do
    %{one: one, two: two, ratio: one.list_s / two.list_s, index_ratio: one.index_s / two.index_s}
  end

  defp ratios(%{one: one, two: two}), do: %{one: one, two: two, ratio: nil, index_ratio: nil}

  @doc false
  # Runs in the child VM: the warm-up, the preparation alone, the index
  # made, then the queries against the list and against the index.
  def child_run(spec) do
    :ok = Suite.settle_calibration()
    %{queries: queries, candidates: candidates} = spec
    # code loaded, the candidates packed once
    Fuzzy.extract_many(Enum.take(queries, 10), candidates) |> Stream.run()
    prep_s = seconds(fn -> Fuzzy.extract_many([], candidates) |> Stream.run() end)
    {index_new_s, index} = timed(fn -> Fuzzy.Index.new(candidates) end)
    list = fn -> seconds(fn -> Fuzzy.extract_many(queries, candidates) |> Stream.run() end) end
    indexed = fn -> seconds(fn -> Fuzzy.extract_many(queries, index) |> Stream.run() end) end

    {list_s, index_s} =
      if spec.index_first do
        index_s = indexed.()
        {list.(), index_s}
      else
        list_s = list.()
        {list_s, indexed.()}
      end

    %{
      schedulers: System.schedulers_online(),
      dirty_cpu: :erlang.system_info(:dirty_cpu_schedulers_online),
      list_s: list_s,
      index_s: index_s,
      prep_s: prep_s,
      index_new_s: index_new_s
    }
  end

  defp seconds(fun), do: fun |> timed() |> elem(0)

  defp timed(fun) do
    t0 = System.monotonic_time(:nanosecond)
    result = fun.()
    {(System.monotonic_time(:nanosecond) - t0) / 1.0e9, result}
  end

  @doc """
  The rounds' figures: the median ratio of one scheduler's time over two
  schedulers' with its 95% bootstrap interval, the same with the index
  made beforehand, and each VM's median times; nils without a round
  whose two runs both ended.
  """
  @spec summarize([map()]) :: map()
  def summarize(rounds) do
    done = Enum.filter(rounds, &is_number(&1.ratio))

    if done == [] do
      %{
        ratio: nil,
        ratio_low: nil,
        ratio_high: nil,
        index_ratio: nil,
        index_ratio_low: nil,
        index_ratio_high: nil,
        one: nil,
        two: nil,
        rounds_done: 0
      }
    else
      {low, high} = interval(done, :ratio)
      {index_low, index_high} = interval(done, :index_ratio)

      %{
        ratio: Stats.median(Enum.map(done, & &1.ratio)),
        ratio_low: low,
        ratio_high: high,
        index_ratio: Stats.median(Enum.map(done, & &1.index_ratio)),
        index_ratio_low: index_low,
        index_ratio_high: index_high,
        one: medians(done, :one),
        two: medians(done, :two),
        rounds_done: length(done)
      }
    end
  end

  defp interval(rounds, key),
    do: Stats.bootstrap_interval(Enum.map(rounds, &Map.fetch!(&1, key)), &Stats.median/1)

  # a VM's median figures over the rounds
  defp medians(rounds, vm) do
    runs = Enum.map(rounds, &Map.fetch!(&1, vm))

    for key <- [:list_s, :index_s, :prep_s, :index_new_s], into: %{} do
      {key, Stats.median(Enum.map(runs, &Map.fetch!(&1, key)))}
    end
    |> Map.merge(%{schedulers: hd(runs).schedulers, dirty_cpu: hd(runs).dirty_cpu})
  end

  @doc "A round in a line, for the progress report."
  @spec line(map()) :: String.t()
  def line(%{ratio: ratio} = r) when is_number(ratio) do
    "round #{r.round} (#{Enum.join(r.order, " then ")}): 1 scheduler #{fmt(r.one.list_s, 2)} s " <>
      "(index #{fmt(r.one.index_s, 2)} s), 2 schedulers #{fmt(r.two.list_s, 2)} s " <>
      "(index #{fmt(r.two.index_s, 2)} s): #{fmt(ratio, 2)}x (index #{fmt(r.index_ratio, 2)}x)"
  end

  def line(r) do
    failed = for vm <- [:one, :two], msg = r[vm][:failed], do: "#{vm}: #{msg}"
    "round #{r.round}: #{Enum.join(failed, ", ")}"
  end
end
