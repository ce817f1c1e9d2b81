defmodule WellBehaved.IndexBuildingAndCodepointsAreSlicedTest do
  # Issue 43, item 2. Building an index's batches and setting a codepoint
  # pair up ran in one step: the index's batches in the job's init (on a
  # dirty scheduler once predicted long, 13 ms held on a 2-vCPU machine
  # for 5 candidates of 20 MB), the decoding of a codepoint pair in init
  # too, which made every call hop to a dirty scheduler first once the
  # cost per unit the runtime learned (codepoint units costing twice byte
  # units) put it over 100 us. Both now run in the job's steps, a budget
  # at a time, a long candidate's scan stopping inside it.
  #
  # Each call below runs in a child VM with one normal scheduler, under
  # WellBehaved.Probe.turns/2, beside processes running pure Erlang code.
  # Behaviour asserted, with margins no loaded machine reaches:
  #   * the longest turn of the calling process, in CPU time of its
  #     scheduler thread (the time the OS gave another thread is not
  #     counted), is at most max(5 ms, 2x the pure-Erlang processes' own)
  #     in at least one of three runs (the host's stalls count too);
  #   * the call never runs on a dirty scheduler (a mechanism, not a
  #     timing: a job whose init does no work has no set-up to send there).
  # Before the change: every Index.new ran on a dirty scheduler (6 turns
  # there in a window of 6 calls), and so did the codepoint calls once
  # the cost was learned (dirty scheduler busy 260 us a call).
  use ExUnit.Case, async: false

  alias WellBehaved.Test.Holds
  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 300_000

  # {label, turns report} for each call, after a warm-up that lets the
  # runtime learn its cost per unit
  @prelude """
  alias WellBehaved.{Fuzzy, Levenshtein, Probe}
  alias WellBehaved.Levenshtein.Index
  probe = fn label, workers, f ->
    for _ <- 1..5, do: f.()
    r = Probe.turns(f, workers: workers, duration_ms: 300)
    {label, Map.take(r.function, [:turns, :dirty_turns, :cpu_max_us]),
     Map.take(r.control, [:turns, :cpu_max_us])}
  end
  """

  defp run_child(scenario) do
    assert {:ok, {results, _}} =
             ChildVM.run({Code, :eval_string, [@prelude <> scenario]},
               bound_ms: 240_000,
               erl_flags: ["+S", "1:1"]
             )

    results
  end

  # turns from the scenario's first run; holds over the bound only when
  # they come back in every run (WellBehaved.Test.Holds)
  defp assert_sliced(scenario, count) do
    {results, held} = Holds.recurring(fn -> run_child(scenario) end, &Holds.over_erlang/1)
    assert length(results) == count

    for {label, function, control} <- results do
      assert function.turns > 0 and control.turns > 0,
             "#{label}: no turns traced: #{inspect(function)} #{inspect(control)}"

      assert function.dirty_turns == 0,
             "#{label}: #{function.dirty_turns} turns on a dirty scheduler, want 0"
    end

    assert held == [], Holds.message(held)
  end

  test "an index of long candidates builds its batches a slice at a time" do
    # 2 candidates of 2 MB without a space: the scan for one (the token
    # scorers' flag) goes through every byte of each
    assert_sliced(
      """
      long = for c <- [?a, ?b], do: :binary.copy(<<c>>, 2_000_000)
      [
        probe.("Levenshtein.Index.new", 1, fn -> Index.new(long) end),
        probe.("Fuzzy.Index.new", 1, fn -> Fuzzy.Index.new(long) end)
      ]
      """,
      2
    )
  end

  test "codepoint pairs set up in the steps, as bytes do" do
    # 3,000 codepoints of 1 to 3 bytes each
    assert_sliced(
      """
      :rand.seed(:exsss, {43, 2, 1})
      ranges = [?a..?z, 0xE0..0xFF, 0x3B1..0x3C9, 0x4E00..0x4E80]
      text = fn -> for _ <- 1..3000, into: "", do: <<Enum.random(Enum.random(ranges))::utf8>> end
      a = text.()
      b = text.()
      [
        probe.("codepoints, 2 workers", 2, fn -> Levenshtein.distance(a, b, unit: :codepoint) end),
        probe.("codepoints, 20 workers", 20, fn -> Levenshtein.distance(a, b, unit: :codepoint) end),
        probe.("the same bytes, 2 workers", 2, fn -> Levenshtein.distance(a, b) end)
      ]
      """,
      3
    )
  end

  test "a codepoint pair answers as before in every mode, its errors included" do
    a = String.duplicate("añb€", 300)
    b = String.duplicate("ab€ñ", 300)
    want = WellBehaved.Levenshtein.distance(a, b, unit: :codepoint, schedule: :normal)
    # the textbook distance over the codepoint lists, as a reference
    assert want == reference(String.to_charlist(a), String.to_charlist(b))

    for mode <- WellBehaved.Runtime.modes(), tiny <- [false, true] do
      opts = [unit: :codepoint, schedule: mode, tiny_slices: tiny]
      assert WellBehaved.Levenshtein.distance(a, b, opts) == want, "#{mode} #{tiny}"

      for {x, y, which} <- [{a <> <<0xFF>>, b, "first"}, {a, <<0xC3>> <> b, "second"}] do
        error = assert_raise ArgumentError, fn -> WellBehaved.Levenshtein.distance(x, y, opts) end
        assert error.message =~ "not valid UTF-8", "#{mode} #{tiny}: #{error.message}"
        assert error.message =~ which, "#{mode} #{tiny}: #{error.message}"
      end
    end
  end

  # the two-row dynamic programme over lists
  defp reference(a, b) do
    row = Enum.to_list(0..length(b))

    a
    |> Enum.with_index(1)
    |> Enum.reduce(row, fn {x, i}, prev ->
      {cur, _} =
        b
        |> Enum.zip(tl(prev))
        |> Enum.zip(prev)
        |> Enum.reduce({[i], i}, fn {{y, up}, diag}, {acc, left} ->
          d = Enum.min([up + 1, left + 1, diag + if(x == y, do: 0, else: 1)])
          {[d | acc], d}
        end)

      Enum.reverse(cur)
    end)
    |> List.last()
  end
end
