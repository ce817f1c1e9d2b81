defmodule WellBehaved.NoCallHoldsASchedulerTest do
  # Every phase of a long call (copying a list, packing an index, decoding
  # UTF-8, stripping affixes, sorting and building results) runs in slices
  # or off the normal schedulers. Each call below runs in a child VM with
  # one normal scheduler, under WellBehaved.Probe.turns/2, beside a
  # process running pure Erlang code. Asserted: no turn of the call's
  # process held the scheduler 100 ms of its thread's CPU time (CPU time,
  # so that a machine busy elsewhere does not lengthen a turn), and the
  # pure Erlang process ran during the call. Unsliced, the codepoint calls
  # held it for 0.5 s and more on the machine these tests were written on;
  # sliced, a few milliseconds at worst.
  use ExUnit.Case, async: false

  alias WellBehaved.Test.Holds
  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 300_000

  @hold_us 100_000

  @prelude """
  alias WellBehaved.{Levenshtein, Probe}
  alias WellBehaved.Levenshtein.Index
  # {the call's turns, pure Erlang's beside it, what the traced call
  # answered (its size)}
  # each call's answers under a reference of its own: Probe.turns/2 runs
  # the call again when its tracer lost events, and an answer left over
  # was once read as the next call's
  last_answer = fn ref, last, again ->
    receive do
      {:answer, ^ref, a} -> again.(ref, a, again)
    after
      0 -> last
    end
  end
  watch = fn f ->
    me = self()
    ref = make_ref()
    traced = fn -> send(me, {:answer, ref, f.()}) end
    r = Probe.turns(traced, workers: 1, duration_ms: 1, warmup_ms: 0, timeout_ms: 200_000)
    answer = last_answer.(ref, :no_answer, last_answer)
    size = cond do
      is_struct(answer) -> answer.__struct__
      is_list(answer) -> {:list, length(answer)}
      is_tuple(answer) -> {:tuple, elem(answer, 0)}
      true -> answer
    end
    {Map.take(r.function, [:turns, :calls, :unfinished, :cpu_max_us]),
     Map.take(r.control, [:turns, :cpu_max_us]), size}
  end
  # about 20 MB of text, "é" every 8 bytes; made here, not in the calls
  # watched (copying 20 MB is one step of Erlang's own)
  big = :binary.copy("abcdéfgh", 2_222_223)
  big_x = big <> "x"
  """

  defp run_child(scenario) do
    ChildVM.run({Code, :eval_string, [@prelude <> scenario]},
      bound_ms: 240_000,
      erl_flags: ["+S", "1:1"]
    )
  end

  # the scenario's calls ran whole, beside pure Erlang; a call over the
  # bound fails when it is over in every run of the scenario, each in a
  # fresh child VM (WellBehaved.Test.Holds)
  defp assert_no_hold(scenario) do
    run = fn ->
      assert {:ok, {results, _}} = run_child(scenario)
      results
    end

    over =
      &Enum.flat_map(&1, fn {label, {f, c, _size}} ->
        Holds.over(label, f.cpu_max_us, @hold_us, "pure Erlang's longest #{c.cpu_max_us} us")
      end)

    {results, held} = Holds.recurring(run, over)

    for {label, {function, control, _size}} <- results do
      assert function.calls > 0 and function.unfinished == 0,
             "#{label}: no whole call traced: #{inspect(function)}"

      assert control.turns > 0, "#{label}: pure Erlang never ran: #{inspect(control)}"
    end

    assert held == [], Holds.message(held)
    results
  end

  test "one long candidate, in bytes and in codepoints, in a list or alone" do
    scenario = """
    for mode <- [:auto, :yielding] do
      [
        {"distances a #\{mode}", watch.(fn -> Levenshtein.distances("a", [big], schedule: mode) end)},
        {"distances é codepoint #\{mode}",
         watch.(fn -> Levenshtein.distances("é", [big], unit: :codepoint, schedule: mode) end)},
        {"distance é codepoint #\{mode}",
         watch.(fn -> Levenshtein.distance("é", big, unit: :codepoint, schedule: mode) end)},
        {"distance big big max 5 #\{mode}",
         watch.(fn -> Levenshtein.distance(big, big_x, max_distance: 5, schedule: mode) end)}
      ]
    end
    |> List.flatten()
    """

    results = assert_no_hold(scenario)
    assert length(results) == 8
    answers = Map.new(results, fn {label, {_, _, size}} -> {label, size} end)
    assert answers["distances a auto"] == {:list, 1}
    # "é" is one of the 8 codepoints of each of the 2,222,223 repeats
    assert answers["distance é codepoint yielding"] == 8 * 2_222_223 - 1
    assert answers["distance big big max 5 auto"] == 1
  end

  test "indexes of long candidates, large results, long lists in :threaded" do
    scenario = """
    names = for i <- 1..200_000, do: "name" <> Integer.to_string(i)
    twice = names ++ names
    index = Index.new(names)
    [
      {"Index.new 2 long auto", watch.(fn -> Index.new([big, big_x]) end)},
      {"Index.new 2 long yielding",
       watch.(fn -> Index.new([big, big_x], schedule: :yielding) end)},
      {"nearest index limit all auto",
       watch.(fn -> Levenshtein.nearest("name77", index, limit: 200_000) end)},
      {"distances index auto", watch.(fn -> Levenshtein.distances("name77", index) end)},
      {"nearest list threaded",
       watch.(fn -> Levenshtein.nearest("name77", twice, limit: 3, schedule: :threaded) end)}
    ]
    """

    results = assert_no_hold(scenario)
    assert length(results) == 5
    answers = Map.new(results, fn {label, {_, _, size}} -> {label, size} end)
    assert answers["nearest index limit all auto"] == {:list, 200_000}
    assert answers["distances index auto"] == {:list, 200_000}
    assert answers["nearest list threaded"] == {:list, 3}
    assert answers["Index.new 2 long auto"] == WellBehaved.Fuzzy.Index
  end
end
