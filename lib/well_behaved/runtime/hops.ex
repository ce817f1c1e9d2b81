defmodule WellBehaved.Runtime.Hops do
  @moduledoc """
  What a hop off the calling scheduler costs on this machine, now.

  A call in `:dirty_cpu`, `:yielding_dirty` or `:threaded` mode moves its
  work to another thread and back; `:normal` and `:yielding` run it on the
  calling scheduler. `measure/1` times the smallest job there is (the
  Levenshtein distance of `"a"` and `"b"`, well under a microsecond of
  work) in each mode, one call at a time, in rounds that take the modes in
  a different order each time, and gives the median round trip per mode
  and its excess over `:normal`: the hop.

  What a hop costs depends on the machine and its load far more than on
  the library (on the lab's 2-vCPU machine a dirty hop took from under 1 µs
  to 19 µs between runs the same hour; with the VM's busy-waiting off,
  every hop pays a sleeping thread's wake-up). `:auto` runs work predicted
  under one slice on the calling scheduler and pays none; measure before
  choosing a mode that hops for short calls.
  """

  alias WellBehaved.{Levenshtein, Options, Stats}

  @modes [:normal, :yielding, :dirty_cpu, :yielding_dirty, :threaded]
  @function "WellBehaved.Runtime.Hops.measure/1"

  @typedoc "Median nanoseconds per mode."
  @type per_mode :: %{WellBehaved.Runtime.mode() => non_neg_integer()}

  @doc """
  Measures the round trip of a minimal job in each mode on this machine.
  Returns `%{round_trip_ns: per_mode, hop_ns: per_mode, calls: n, rounds:
  r}`, `hop_ns` being each mode's median round trip less `:normal`'s (0
  when not above it).

    * `calls:` - calls per mode and round (1..100_000, default 200).
    * `rounds:` - rounds (1..100, default 5).

  A default measure makes 5,000 calls: a few milliseconds to a few tens,
  with the calling process busy throughout.

      iex> %{hop_ns: hops} = WellBehaved.Runtime.Hops.measure(calls: 20, rounds: 1)
      iex> Map.keys(hops) |> Enum.sort()
      [:dirty_cpu, :normal, :threaded, :yielding, :yielding_dirty]
  """
  @spec measure(keyword()) :: %{
          round_trip_ns: per_mode(),
          hop_ns: per_mode(),
          calls: pos_integer(),
          rounds: pos_integer()
        }
  def measure(opts \\ []) do
    {calls, rounds} = parse(opts, {200, 5}, opts)

    # each round's median per mode, the modes in another order each round
    medians =
      for round <- 0..(rounds - 1), i <- 0..(length(@modes) - 1) do
        mode = Enum.at(@modes, rem(i + round, length(@modes)))
        {mode, round_median(mode, calls)}
      end
      |> Enum.group_by(&elem(&1, 0), &elem(&1, 1))

    round_trip = Map.new(medians, fn {mode, ms} -> {mode, round(Stats.median(ms))} end)
    base = round_trip.normal

    %{
      round_trip_ns: round_trip,
      hop_ns: Map.new(round_trip, fn {mode, ns} -> {mode, max(ns - base, 0)} end),
      calls: calls,
      rounds: rounds
    }
  end

  defp parse([], acc, _all), do: acc

  defp parse([{:calls, n} | rest], {_, rounds}, all),
    do: parse(rest, {Options.integer!(@function, :calls, n, 1..100_000), rounds}, all)

  defp parse([{:rounds, n} | rest], {calls, _}, all),
    do: parse(rest, {calls, Options.integer!(@function, :rounds, n, 1..100)}, all)

  defp parse([other | _], _acc, all) when is_list(all),
    do: Options.bad_option!(@function, other, [:calls, :rounds], all)

  defp parse(_opts, _acc, all), do: Options.not_keyword!(@function, all)

  defp round_median(mode, calls) do
    # the pool threads and dirty schedulers are awake when timing starts
    for _ <- 1..min(calls, 20), do: Levenshtein.distance("a", "b", schedule: mode)

    for _ <- 1..calls do
      t0 = System.monotonic_time(:nanosecond)
      1 = Levenshtein.distance("a", "b", schedule: mode)
      System.monotonic_time(:nanosecond) - t0
    end
    |> Stats.median()
  end
end
