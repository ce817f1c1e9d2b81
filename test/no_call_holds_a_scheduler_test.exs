defmodule WellBehaved.NoCallHoldsASchedulerTest do
  # Every phase of a long call (copying a list, packing an index, decoding
  # UTF-8, stripping affixes, sorting and building results) runs in slices
  # or off the normal schedulers. Each call below runs in a child VM with
  # one normal scheduler, beside a witness process that wants to run every
  # millisecond, under :erlang.system_monitor's long_schedule report.
  # Behaviour asserted, with margins no loaded machine reaches: the call's
  # process never held the scheduler 100 ms in one go, and the witness ran
  # during the call at least once every second. Unsliced, the codepoint
  # calls held it for 0.5 s and more on the machine these tests were
  # written on; sliced, a few milliseconds at worst.
  use ExUnit.Case, async: false

  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 300_000

  @prelude """
  alias WellBehaved.Levenshtein
  alias WellBehaved.Levenshtein.Index
  :erlang.system_monitor(self(), [{:long_schedule, 100}])
  witness = fn parent ->
    loop = fn loop, last, ticks, gap ->
      receive do
        :stop -> send(parent, {:witness, ticks, gap})
      after 1 ->
        now = System.monotonic_time(:millisecond)
        loop.(loop, now, ticks + 1, max(gap, now - last))
      end
    end
    loop.(loop, System.monotonic_time(:millisecond), 0, 0)
  end
  # {long schedules of the call's process, the witness's ticks, its
  # longest gap in ms, what the call answered (its size)}
  watch = fn f ->
    me = self()
    w = spawn(fn -> witness.(me) end)
    {pid, ref} = spawn_monitor(fn -> send(me, {:answer, f.()}) end)
    # a call that raised answers how its process ended
    answer = receive do
      {:answer, a} -> receive do {:DOWN, ^ref, :process, ^pid, _} -> a end
      {:DOWN, ^ref, :process, ^pid, reason} -> {:crashed, reason}
    end
    send(w, :stop)
    {ticks, gap} = receive do {:witness, t, g} -> {t, g} end
    # reports come when the process is scheduled out
    Process.sleep(50)
    longs = Stream.repeatedly(fn ->
      receive do
        {:monitor, ^pid, :long_schedule, info} -> info
      after 0 -> nil
      end
    end) |> Enum.take_while(& &1)
    size = cond do
      is_struct(answer) -> answer.__struct__
      is_list(answer) -> {:list, length(answer)}
      is_tuple(answer) -> {:tuple, elem(answer, 0)}
      true -> answer
    end
    {longs, ticks, gap, size}
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

  defp assert_no_hold(results) do
    for {label, {longs, ticks, gap, _size}} <- results do
      assert longs == [], "#{label}: held its scheduler: #{inspect(longs)}"
      assert ticks > 0, "#{label}: the witness never ran"
      assert gap < 1000, "#{label}: the witness waited #{gap} ms"
    end
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

    assert {:ok, {results, _}} = run_child(scenario)
    assert length(results) == 8
    assert_no_hold(results)
    answers = Map.new(results, fn {label, {_, _, _, size}} -> {label, size} end)
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

    assert {:ok, {results, _}} = run_child(scenario)
    assert length(results) == 5
    assert_no_hold(results)
    answers = Map.new(results, fn {label, {_, _, _, size}} -> {label, size} end)
    assert answers["nearest index limit all auto"] == {:list, 200_000}
    assert answers["distances index auto"] == {:list, 200_000}
    assert answers["nearest list threaded"] == {:list, 3}
    assert answers["Index.new 2 long auto"] == WellBehaved.Fuzzy.Index
  end
end
