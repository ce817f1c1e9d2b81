defmodule WellBehaved.LongResultsAreBuiltASliceAtATimeTest do
  # nearest/3 with a large limit: the hits are sorted by the search job's
  # steps (a heapsort a budget at a time, not one qsort of a million hits
  # in the last step), and a result of more than 4096 hits comes back as a
  # resource from which hits_more/2 makes the list, stopping after each
  # slice of the runtime. A million tuples cannot be made within one slice
  # (at most 100 us) on any machine, so the number of calls is > 1 on a
  # fast machine as on a slow one.
  use ExUnit.Case, async: true

  alias WellBehaved.{Levenshtein, Native}
  alias WellBehaved.Levenshtein.Index

  # the nearest by (distance, position), from distances/3
  defp reference(query, list, limit) do
    list
    |> Enum.zip(Levenshtein.distances(query, list))
    |> Enum.with_index()
    |> Enum.sort_by(fn {{_, d}, i} -> {d, i} end)
    |> Enum.take(limit)
    |> Enum.map(&elem(&1, 0))
  end

  test "a million hits come back in order, made over many calls" do
    list = for i <- 1..1_000_000, do: Integer.to_string(i)
    %{segments: [%{ref: ref}]} = index = Index.new(list)

    assert {:hits, hits, 1_000_000} =
             Native.search("12345", ref, 1_000_000, :byte, nil, 1_000_000, :normal, false, nil)

    calls =
      Stream.unfold({:more, []}, fn
        {:more, acc} -> {:call, Native.hits_more(hits, acc)}
        {:done, _} -> nil
      end)
      |> Enum.count()

    assert calls > 1
    # the same resource gives nothing more once done
    assert {:done, []} = Native.hits_more(hits, [])

    expected = reference("12345", list, 1_000_000)
    assert Levenshtein.nearest("12345", index, limit: 1_000_000) == expected
  end

  test "every mode and unit agrees with the reference, around the 4096-hit threshold" do
    list = for i <- 1..9_000, do: Integer.to_string(rem(i * 7919, 10_007))

    for limit <- [1, 4095, 4096, 4097, 9_000],
        mode <- WellBehaved.Runtime.modes(),
        unit <- [:byte, :codepoint] do
      assert Levenshtein.nearest("5000", list, limit: limit, schedule: mode, unit: unit) ==
               reference("5000", list, limit),
             "#{limit} #{mode} #{unit}"
    end

    assert Levenshtein.nearest("5000", list, limit: 9_000, tiny_slices: true, schedule: :yielding) ==
             reference("5000", list, 9_000)
  end
end
