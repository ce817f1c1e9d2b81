defmodule WellBehaved.HopCostsAreMeasuredOnThisMachineTest do
  # WellBehaved.Runtime.Hops.measure/1 times a minimal job in every mode
  # and gives each mode's median round trip and its excess over :normal;
  # bad options raise naming the function. No figure is asserted: they
  # are the machine's.
  use ExUnit.Case, async: true

  alias WellBehaved.Runtime.Hops

  @modes [:dirty_cpu, :normal, :threaded, :yielding, :yielding_dirty]

  test "every mode's round trip, and its hop: the excess over :normal" do
    %{round_trip_ns: trips, hop_ns: hops, calls: 30, rounds: 2} =
      Hops.measure(calls: 30, rounds: 2)

    assert Enum.sort(Map.keys(trips)) == @modes
    assert Enum.sort(Map.keys(hops)) == @modes
    assert Enum.all?(trips, fn {_mode, ns} -> is_integer(ns) and ns > 0 end), inspect(trips)
    assert hops.normal == 0

    for mode <- @modes,
        do: assert(hops[mode] == max(trips[mode] - trips.normal, 0), "#{mode}")
  end

  test "the defaults, and bad options" do
    assert %{calls: 200, rounds: 5} = Hops.measure()

    assert_raise ArgumentError,
                 "WellBehaved.Runtime.Hops.measure/1: invalid :calls 0, expected an integer in 1..100000",
                 fn -> Hops.measure(calls: 0) end

    assert_raise ArgumentError, ~r/Hops.measure\/1: invalid :rounds 101/, fn ->
      Hops.measure(rounds: 101)
    end

    assert_raise ArgumentError, ~r/Hops.measure\/1: unknown option :fast/, fn ->
      Hops.measure(fast: true)
    end

    assert_raise ArgumentError, ~r/Hops.measure\/1: expected a keyword list/, fn ->
      Hops.measure(:fast)
    end
  end
end
