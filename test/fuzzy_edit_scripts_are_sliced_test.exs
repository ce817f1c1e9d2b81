defmodule WellBehaved.FuzzyEditScriptsAreSlicedTest do
  # Issue 48: an edit script's work on ONE pair is bounded by the step's
  # budget in every phase, however long the pair: both sides decoded, the
  # common affixes compared, the distance probed in narrow bands, the
  # forward pass that keeps its matrix (a column of thousands of blocks
  # resumed inside), the split's passes and the scan for its best row,
  # the traceback, the records of a side left alone, and the script read
  # into its list on the Elixir side (preemptible code). A script of a
  # million edits is asked for as opcodes (a few blocks): a list of a
  # million tuples takes the VM's collector some milliseconds to copy in
  # one go, in any code that builds one.
  #
  # Each scenario runs in a child VM with one normal scheduler, under
  # WellBehaved.Probe.turns/2, beside a process running pure Erlang code
  # (as fuzzy_scorers_are_sliced_test.exs does). Asserted: :auto and
  # :yielding give :normal's script; the longest turn of the calling
  # process, in CPU time of its scheduler thread, is at most max(5 ms, 2x
  # the pure-Erlang process's own) (a call over it fails when it is over
  # in each of three runs of its scenario: the host's stalls count as CPU
  # time too); no move of the job to a dirty scheduler (the runtime's
  # dirty_hops: a job whose init does no work proportional to its input
  # has no set-up to send there; the process's own turns there are the
  # VM collecting a heap that holds a long script, not the job's).
  use ExUnit.Case, async: false

  alias WellBehaved.Test.Holds
  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 1_200_000

  # runs in the child: {label, normal's answer, [{mode, answer, turns}]};
  # an answer is the script's length and hash (each traced call sends it)
  @prelude """
  alias WellBehaved.{Fuzzy, Probe}
  answers = fn answers, again ->
    receive do
      {:answer, got} -> again.([got | answers], again)
    after
      0 -> answers
    end
  end
  digest = fn
    list when is_list(list) -> {length(list), :erlang.phash2(list)}
    other -> other
  end
  check = fn label, f ->
    want = digest.(f.(:normal))
    me = self()
    runs =
      for mode <- [:auto, :yielding] do
        traced = fn -> send(me, {:answer, digest.(f.(mode))}) end
        hops = WellBehaved.Runtime.stats().counters.dirty_hops
        r = Probe.turns(traced, workers: 1, duration_ms: 1, warmup_ms: 0)
        hops = WellBehaved.Runtime.stats().counters.dirty_hops - hops
        got =
          case Enum.uniq(answers.([], answers)) do
            [one] -> one
            several -> {:answers_differ, several}
          end
        {mode, got, Map.put(Map.take(r.function, [:turns, :cpu_max_us, :calls]), :hops, hops),
         Map.take(r.control, [:turns, :cpu_max_us])}
      end
    {label, want, runs}
  end
  text = fn len, letters ->
    for _ <- 1..len, into: "", do: <<Enum.at(letters, :rand.uniform(length(letters)) - 1)::utf8>>
  end
  # a near copy: `edits` single edits at places spread over the text
  near = fn t, edits ->
    step = div(byte_size(t), edits + 1)
    for k <- edits..1//-1, reduce: t do
      acc ->
        at = k * step
        <<x::binary-size(at), c, y::binary>> = acc
        case rem(k, 3) do
          0 -> x <> y
          1 -> x <> <<c, ?z>> <> y
          _ -> x <> "q" <> y
        end
    end
  end
  :rand.seed(:exsss, {48, 7, 7})
  """

  defp run_child(scenario) do
    assert {:ok, {results, _}} =
             ChildVM.run({Code, :eval_string, [@prelude <> scenario]},
               bound_ms: 1_100_000,
               erl_flags: ["+S", "1:1"]
             )

    results
  end

  defp assert_sliced(scenario, count) do
    {results, held} = Holds.recurring(fn -> run_child(scenario) end, &holds/1)
    assert length(results) == count

    for {label, want, runs} <- results, {mode, got, function, control} <- runs do
      where = "#{label}, #{mode}"
      assert got == want, "#{where}: answered #{inspect(got)}, :normal #{inspect(want)}"
      assert match?({n, _} when n >= 0, want), "#{where}: :normal answered #{inspect(want)}"

      assert function.turns > 0 and function.calls > 0 and control.turns > 0,
             "#{where}: no whole call traced: #{inspect(function)} #{inspect(control)}"

      assert function.hops == 0,
             "#{where}: the job moved to a dirty scheduler #{function.hops} times in " <>
               "#{function.calls} calls"
    end

    assert held == [], Holds.message(held)
  end

  defp holds(results) do
    Holds.over_erlang(
      for {label, _want, runs} <- results,
          {mode, _got, function, control} <- runs,
          do: {"#{label}, #{mode}", function, control}
    )
  end

  test "one long side: a kept column of 15,625 blocks, a long traceback, a side alone" do
    assert_sliced(
      """
      long = :binary.copy("ab", 500_000)
      wide = :binary.copy("aé", 300_000)
      same = :binary.copy("abcd", 1_000_000)
      other = binary_part(same, 0, 2_000_000) <> "x" <> binary_part(same, 2_000_001, 1_999_999)
      for scorer <- [:levenshtein, :indel, :osa] do
        [
          check.("\#{scorer}: 1 MB into one byte", fn mode ->
            Fuzzy.opcodes(long, "b", scorer: scorer, schedule: mode)
          end),
          check.("\#{scorer}: 900 KB of codepoints into one", fn mode ->
            Fuzzy.opcodes(wide, "é", scorer: scorer, unit: :codepoint, schedule: mode)
          end),
          check.("\#{scorer}: 1 MB into nothing", fn mode ->
            Fuzzy.opcodes(long, "", scorer: scorer, schedule: mode)
          end),
          check.("\#{scorer}: 4 MB a byte apart", fn mode ->
            Fuzzy.editops(same, other, scorer: scorer, schedule: mode)
          end)
        ]
      end
      |> List.flatten()
      """,
      12
    )
  end

  test "near copies of 200 KB: probed, split, traced in narrow bands" do
    assert_sliced(
      """
      a = text.(200_000, ~c"abcdefgh")
      b = near.(a, 60)
      for scorer <- [:levenshtein, :osa] do
        check.("\#{scorer}: 200 KB near copies", fn mode ->
          Fuzzy.opcodes(a, b, scorer: scorer, schedule: mode)
        end)
      end
      """,
      2
    )
  end

  test "random pairs of 12,000 codepoints: wide splits and their scans" do
    assert_sliced(
      """
      a = text.(12_000, ~c"abcdéж")
      b = text.(11_000, ~c"abcdéж")
      for scorer <- [:levenshtein, :indel, :osa] do
        check.("\#{scorer}: 12,000 random codepoints", fn mode ->
          Fuzzy.editops(a, b, scorer: scorer, unit: :codepoint, schedule: mode)
        end)
      end
      """,
      3
    )
  end
end
