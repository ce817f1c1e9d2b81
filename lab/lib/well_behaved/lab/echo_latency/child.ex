defmodule WellBehaved.Lab.EchoLatency.Child do
  @moduledoc """
  One method of the latency suite, in its child VM: round trips timed one
  by one or in batches, and calls per second with concurrent callers.
  """

  alias WellBehaved.Lab.{Echo, Floors}

  @batch_target_ns 20_000

  @doc """
  Runs in the child VM: the percentiles of `iterations` timed round trips
  of the default term (a tuple holding a 64 KiB binary) and of a small
  one, and the calls per second of the default term with 1,
  schedulers_online and 4 x schedulers_online callers over `window_ms`.
  Stops the method's programs at the end.
  """
  @spec measure(%{method: Echo.method(), iterations: pos_integer(), window_ms: pos_integer()}) ::
          map()
  def measure(%{method: method, iterations: n, window_ms: window_ms}) do
    %{default: default, small: small} = terms()
    schedulers = :erlang.system_info(:schedulers_online)

    try do
      before = switches()
      answered = answered_in_call()
      default_figures = percentiles_of(method, default, n)
      # every call made, the warm-up's included: the readings count them all
      calls = default_figures.calls

      %{
        default: default_figures,
        switches: per_call(before, switches(), calls),
        # :threaded calls answered in the call that queued them (no
        # message), as a share of the calls; 0 for other methods
        answered_in_call: (answered_in_call() - answered) / calls,
        small: percentiles_of(method, small, n),
        throughput:
          for callers <- Enum.uniq([1, schedulers, 4 * schedulers]) do
            %{callers: callers, calls_per_s: throughput(method, default, callers, window_ms)}
          end
      }
    after
      Echo.stop()
    end
  end

  @doc """
  The two terms every method sends: `default`, a tuple holding a 64 KiB
  binary (the 2017 measurement's), and `small`.
  """
  @spec terms() :: %{default: {binary()}, small: tuple()}
  def terms, do: %{default: {:crypto.strong_rand_bytes(65_536)}, small: {:ok, 42, "hello"}}

  @doc """
  Context switches of this VM's threads so far, by kind of thread (its
  name without the leading index: `scheduler`, `dirty_cpu`, `dirty_io`,
  `aux`, `poller`, `wb_pool_worker`, ...): `%{kind => {voluntary, involuntary}}`. Empty
  where `/proc` has no per-thread status (not Linux).
  """
  @spec switches() :: %{String.t() => {non_neg_integer(), non_neg_integer()}}
  def switches do
    case File.ls("/proc/self/task") do
      {:ok, tasks} ->
        for task <- tasks,
            {:ok, comm} <- [File.read("/proc/self/task/#{task}/comm")],
            {:ok, status} <- [File.read("/proc/self/task/#{task}/status")],
            [_, v] <- [Regex.run(~r/\nvoluntary_ctxt_switches:\s+(\d+)/, status)],
            [_, nv] <- [Regex.run(~r/\nnonvoluntary_ctxt_switches:\s+(\d+)/, status)],
            reduce: %{} do
          acc ->
            kind = kind_of(String.trim(comm))
            {v0, nv0} = Map.get(acc, kind, {0, 0})
            Map.put(acc, kind, {v0 + String.to_integer(v), nv0 + String.to_integer(nv)})
        end

      {:error, _} ->
        %{}
    end
  end

  # a thread's name without its index; dirty schedulers' names are cut at
  # 15 characters, at a place that depends on the index's digits
  defp kind_of(name) do
    kind = String.replace(name, ~r/^\d+_/, "")

    cond do
      String.starts_with?(kind, "dirty_io") -> "dirty_io"
      String.starts_with?(kind, "dirty_cpu") -> "dirty_cpu"
      true -> kind
    end
  end

  # the lab runtime's count of :threaded jobs answered in their call
  defp answered_in_call, do: WellBehaved.Runtime.stats(WellBehaved.Lab.Native).answered_in_call

  @doc """
  The switches between two `switches/0` readings per call, by kind of
  thread (`%{kind => %{slept: voluntary, preempted: involuntary}}`, kinds
  with none left out). Threads that ended between the readings are not
  counted.
  """
  @spec per_call(map(), map(), pos_integer()) :: %{
          String.t() => %{slept: float(), preempted: float()}
        }
  def per_call(before, later, calls) do
    for {kind, {v, nv}} <- later,
        {v0, nv0} = Map.get(before, kind, {0, 0}),
        v - v0 + (nv - nv0) > 0,
        into: %{},
        do: {kind, %{slept: (v - v0) / calls, preempted: (nv - nv0) / calls}}
  end

  @doc """
  One round of the ratio targets, in the child VM: for each `{method,
  against}` pair, the method's median round trip of the small and the
  default term and its base's, measured one after the other (the base
  first when `flip`), so that both see the same machine. The base is a
  floor (`[:floor, name]`, the program run with the terms' encoded sizes)
  or another method (`[:method, name]`): lists, as a result must hold to
  be written as JSON. Returns, per pair, `%{method:, against:, small:,
  default:}` with the ratios (`nil` where a side failed).
  """
  @spec ratio_round(%{
          pairs: [{Echo.method(), [atom()]}],
          iterations: pos_integer(),
          bytes: %{small: pos_integer(), default: pos_integer()},
          flip: boolean()
        }) :: [map()]
  def ratio_round(%{pairs: pairs, iterations: n, bytes: bytes, flip: flip}) do
    for {method, against} <- pairs do
      {ours, base} =
        if flip do
          base = medians(against, n, bytes)
          {medians([:method, method], n, bytes), base}
        else
          ours = medians([:method, method], n, bytes)
          {ours, medians(against, n, bytes)}
        end

      %{
        method: method,
        against: against,
        small: ratio(ours.small, base.small),
        default: ratio(ours.default, base.default)
      }
    end
  end

  defp ratio(a, b) when is_number(a) and is_number(b) and b > 0, do: a / b
  defp ratio(_a, _b), do: nil

  # median round trips in microseconds, small and default
  defp medians([:method, method], n, _bytes) do
    %{default: default, small: small} = terms()

    try do
      %{
        small: percentiles_of(method, small, n).p50_us,
        default: percentiles_of(method, default, n).p50_us
      }
    rescue
      _ -> %{small: nil, default: nil}
    after
      Echo.stop()
    end
  end

  defp medians([:floor, floor], n, bytes) do
    for size <- [:small, :default], into: %{} do
      case Floors.measure(floor, bytes[size], n) do
        {:ok, %{p50_ns: ns}} -> {size, ns / 1000}
        {:error, _} -> {size, nil}
      end
    end
  end

  @doc """
  Nearest-rank percentiles (`WellBehaved.Stats.percentiles/2`) of samples
  in nanoseconds, in microseconds: p50, p90, p99, p99.9 and the maximum.
  """
  @spec percentiles([number(), ...]) :: %{atom() => float()}
  def percentiles(samples_ns) do
    [p50, p90, p99, p999, max] =
      WellBehaved.Stats.percentiles(samples_ns, [0.5, 0.9, 0.99, 0.999, 1])

    %{
      p50_us: p50 / 1000,
      p90_us: p90 / 1000,
      p99_us: p99 / 1000,
      p999_us: p999 / 1000,
      max_us: max / 1000
    }
  end

  defp percentiles_of(method, term, n) do
    check!(method, term)
    warm_up = min(1000, div(n, 10) + 1)
    for _ <- 1..warm_up, do: Echo.echo(term, method)
    # time 200 calls to choose the batch size
    {us, _} = :timer.tc(fn -> for _ <- 1..200, do: Echo.echo(term, method) end)
    per_call_ns = us * 1000 / 200

    batch =
      if per_call_ns < 2000, do: max(1, round(@batch_target_ns / max(per_call_ns, 1))), else: 1

    samples = max(1, div(n, batch))
    per_call = for _ <- 1..samples, do: time_batch(method, term, batch) / batch

    # calls: all of them (the check, the warm-up, the batch probe, the timed)
    calls = 1 + warm_up + 200 + samples * batch
    Map.merge(%{batch: batch, samples: samples, calls: calls}, percentiles(per_call))
  end

  defp check!(method, term) do
    case Echo.echo(term, method) do
      ^term -> :ok
      other -> raise "#{method} returned #{inspect(other, limit: 5)}, not the term sent"
    end
  end

  defp time_batch(method, term, batch) do
    t0 = :erlang.monotonic_time(:nanosecond)
    loop(method, term, batch)
    :erlang.monotonic_time(:nanosecond) - t0
  end

  defp loop(_method, _term, 0), do: :ok

  defp loop(method, term, n) do
    _ = Echo.echo(term, method)
    loop(method, term, n - 1)
  end

  defp throughput(method, term, callers, window_ms) do
    parent = self()
    deadline = System.monotonic_time(:millisecond) + window_ms

    for _ <- 1..callers do
      spawn_link(fn -> send(parent, {:calls, count_until(method, term, deadline, 0)}) end)
    end

    total = for(_ <- 1..callers, do: receive(do: ({:calls, n} -> n))) |> Enum.sum()
    total * 1000 / window_ms
  end

  defp count_until(method, term, deadline, n) do
    if System.monotonic_time(:millisecond) >= deadline do
      n
    else
      _ = Echo.echo(term, method)
      count_until(method, term, deadline, n + 1)
    end
  end
end
