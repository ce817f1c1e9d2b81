defmodule WellBehaved.ConcurrentCallersTest do
  use ExUnit.Case, async: false

  alias WellBehaved.{Levenshtein, Runtime}
  alias WellBehaved.Test.Reference
  import WellBehaved.Test.RuntimeHelpers

  test "10,000 concurrent callers over every mode get correct results" do
    cases =
      for i <- 0..99 do
        a = random_bytes(rem(i, 90) + 1, 4)
        b = random_bytes(rem(i * 7, 130) + 1, 4)
        {a, b, Reference.bytes(a, b)}
      end
      |> List.to_tuple()

    modes = List.to_tuple(Runtime.modes())

    results =
      1..10_000
      |> Enum.map(fn i ->
        {a, b, want} = elem(cases, rem(i, 100))
        mode = elem(modes, rem(i, tuple_size(modes)))
        tiny = rem(i, 13) == 0 and mode != :normal

        Task.async(fn ->
          {mode, want, Levenshtein.distance(a, b, schedule: mode, tiny_slices: tiny)}
        end)
      end)
      |> Task.await_many(120_000)

    wrong = for {mode, want, got} <- results, got != want, do: {mode, want, got}
    assert wrong == []
    assert length(results) == 10_000
    assert_no_live_jobs()
  end

  test "one long job per mode at the same time" do
    a = random_bytes(20_000)
    b = random_bytes(20_000)
    want = Levenshtein.distance(a, b, schedule: :normal)

    Runtime.modes()
    |> Enum.map(fn mode -> Task.async(fn -> Levenshtein.distance(a, b, schedule: mode) end) end)
    |> Task.await_many(120_000)
    |> Enum.each(&assert(&1 == want))
  end
end
