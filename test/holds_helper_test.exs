defmodule WellBehaved.HoldsHelperTest do
  # The hold checks' helper (test/support/holds.exs): a hold fails a
  # check only when it comes back in every run, and a run without holds
  # ends the retries.
  use ExUnit.Case, async: false

  import ExUnit.CaptureIO

  alias WellBehaved.Test.Holds

  # a run that answers the next of `figures` (the longest turn, in us)
  # each time, counting the runs
  defp runs(figures) do
    {:ok, agent} = Agent.start_link(fn -> {figures, 0} end)

    run = fn ->
      Agent.get_and_update(agent, fn {[f | rest], n} -> {%{a: f, n: n + 1}, {rest, n + 1}} end)
    end

    count = fn -> Agent.get(agent, &elem(&1, 1)) end
    {run, count}
  end

  defp over(result), do: Holds.over(:a, result.a, 5000, "test")

  test "a hold in every run fails, with its least figure" do
    {run, count} = runs([9000, 7000, 8000, 1000])

    said =
      capture_io(:stderr, fn ->
        assert {%{a: 9000, n: 1}, [%{key: :a, us: 7000, bound_us: 5000}]} =
                 Holds.recurring(run, &over/1)
      end)

    assert count.() == 3
    assert said =~ "hold check: :a (test) 9000 us over its bound; running the scenario again"
  end

  test "a hold that does not come back passes, after one more run" do
    {run, count} = runs([9000, 100, 9000])
    capture_io(:stderr, fn -> assert {%{a: 9000}, []} = Holds.recurring(run, &over/1) end)
    assert count.() == 2
  end

  test "no hold: one run" do
    {run, count} = runs([100, 9000])
    assert {%{a: 100}, []} = Holds.recurring(run, &over/1)
    assert count.() == 1
  end

  test "only a call held in every run counts" do
    {:ok, agent} = Agent.start_link(fn -> [[:x, :y], [:y, :z], [:y]] end)
    run = fn -> Agent.get_and_update(agent, fn [h | t] -> {h, t} end) end
    over = &Enum.flat_map(&1, fn key -> Holds.over(key, 6000, 5000, "test") end)
    capture_io(:stderr, fn -> assert {[:x, :y], [%{key: :y}]} = Holds.recurring(run, over) end)
  end

  test "the message names the call, its figure and its bound" do
    [hold] = Holds.over_erlang("extract", %{cpu_max_us: 22_747.79}, %{cpu_max_us: 57.4})
    assert hold.bound_us == 5000
    assert Holds.message([hold]) =~ ~s["extract" (pure Erlang's longest: 57.4 us): held its]
    assert Holds.message([hold]) =~ "22747.79 us"
    assert Holds.over_erlang("x", %{cpu_max_us: 9000}, %{cpu_max_us: 4600}) == []

    calls = [
      {"a", %{cpu_max_us: 6000}, %{cpu_max_us: 10}},
      {"b", %{cpu_max_us: 10}, %{cpu_max_us: 10}}
    ]

    assert [%{key: "a", us: 6000}] = Holds.over_erlang(calls)
  end
end
