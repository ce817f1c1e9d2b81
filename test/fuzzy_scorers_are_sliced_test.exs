defmodule WellBehaved.FuzzyScorersAreSlicedTest do
  # Issue 44, item 1: every scorer's work on ONE pair is bounded by the
  # step's budget, however long the pair. Before, a short query against
  # one candidate of 4 MB held the only normal scheduler 42-48 ms
  # (:osa), 126-133 ms (:damerau_levenshtein), 12 ms (:jaro_winkler) and
  # 3-9 ms (the token scorers) in :auto and :yielding alike, and every
  # call hopped to a dirty scheduler for its set-up (the pair decoded and
  # tokenized whole in the job's init); a pair of a million words each
  # held it for seconds.
  #
  # Each scorer runs in a child VM with one normal scheduler, under
  # WellBehaved.Probe.turns/2, beside a process running pure Erlang code.
  # Asserted, with margins no loaded machine reaches:
  #   * :auto and :yielding give :normal's answer (the same C code, so
  #     the same float);
  #   * the longest turn of the calling process, in CPU time of its
  #     scheduler thread, is at most max(5 ms, 2x the pure-Erlang
  #     process's own): the turn a step takes, whatever the input's size
  #     (a call over it fails when it is over in each of three runs of
  #     its scenario: the host's stalls also count as CPU time);
  #   * no turn on a dirty scheduler: a job whose init does no work
  #     proportional to its input (an extract's query included) has no
  #     set-up to send there.
  # The kinds of score rotate over the scorers (the kind changes only the
  # verdict at the end, not the work); bytes on one text, codepoints on
  # the other.
  use ExUnit.Case, async: false

  alias WellBehaved.Test.Holds
  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 1_200_000

  # one long candidate against a short query, and for the token scorers a
  # pair of many words on each side: each thousands of times a step's
  # budget (a pair of 250,000 words took 130-160 ms to score)
  @bytes 4_000_000
  @words 250_000

  @kinds [:similarity, :distance, :normalized_similarity, :normalized_distance]
  @edit [:levenshtein, :indel, :osa, :damerau_levenshtein, :hamming, :jaro, :jaro_winkler] ++
          [:lcs_seq, :prefix, :postfix]
  @ratios [:ratio, :partial_ratio, :qratio, :wratio]
  @tokens [
    :token_sort_ratio,
    :token_set_ratio,
    :token_ratio,
    :partial_token_sort_ratio,
    :partial_token_set_ratio,
    :partial_token_ratio
  ]

  # the token scorers whose work on two texts of the same words is the
  # token work alone (the sets' differences are short) or linear: the
  # sorted texts differ by "extra" at the start (it sorts before "w..."),
  # and a ratio's common affix is stripped before its Indel kernel. The
  # others (wratio: the plain ratio of the texts in two orders) take the
  # Indel distance of two texts of megabytes, quadratic in them
  @linear_tokens [
    :token_set_ratio,
    :partial_token_set_ratio,
    :partial_token_ratio,
    :token_sort_ratio,
    :token_ratio
  ]

  # runs in the child: {label, normal's answer, [{mode, answer, turns}]};
  # the answer is that of the traced calls (each sends it), so every
  # input is scored once per mode, not twice
  @prelude """
  alias WellBehaved.{Fuzzy, Probe}
  answers = fn answers, again ->
    receive do
      {:answer, got} -> again.([got | answers], again)
    after
      0 -> answers
    end
  end
  check = fn label, f ->
    want = f.(:normal)
    me = self()
    runs =
      for mode <- [:auto, :yielding] do
        traced = fn -> send(me, {:answer, f.(mode)}) end
        r = Probe.turns(traced, workers: 1, duration_ms: 1, warmup_ms: 0)
        got =
          case Enum.uniq(answers.([], answers)) do
            [one] -> one
            several -> {:answers_differ, several}
          end
        {mode, got, Map.take(r.function, [:turns, :dirty_turns, :cpu_max_us, :calls]),
         Map.take(r.control, [:turns, :cpu_max_us])}
      end
    {label, want, runs}
  end
  """

  defp run_child(scenario) do
    assert {:ok, {results, _}} =
             ChildVM.run({Code, :eval_string, [@prelude <> scenario]},
               bound_ms: 1_100_000,
               erl_flags: ["+S", "1:1"]
             )

    results
  end

  # the scenario's checks, `count` of them: answers and turns from its
  # first run; holds over the bound only when they come back in every run
  # (WellBehaved.Test.Holds)
  defp assert_sliced(scenario, count) do
    {results, held} = Holds.recurring(fn -> run_child(scenario) end, &holds/1)
    assert length(results) == count

    for {label, want, runs} <- results, {mode, got, function, control} <- runs do
      where = "#{label}, #{mode}"
      assert got == want, "#{where}: answered #{inspect(got)}, :normal #{inspect(want)}"

      assert function.turns > 0 and function.calls > 0 and control.turns > 0,
             "#{where}: no whole call traced: #{inspect(function)} #{inspect(control)}"

      assert function.dirty_turns == 0,
             "#{where}: #{function.dirty_turns} turns on a dirty scheduler in " <>
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

  # one scorer against one long candidate, each unit, a kind of its own
  defp long_candidate(scorer, kind) do
    """
    long = :binary.copy("ab", #{div(@bytes, 2)})
    worded = :binary.copy("ab ", #{div(@bytes, 3)})
    for {unit, name, text} <- [{:byte, "abab", long}, {:codepoint, "ab ab", worded}] do
      opts = [scorer: #{inspect(scorer)}, score: #{inspect(kind)}, unit: unit]
      check.("#{scorer} #{kind} \#{unit} \#{name}", fn mode ->
        Fuzzy.score("abcab", text, [{:schedule, mode} | opts])
      end)
    end
    """
  end

  for {scorer, i} <- Enum.with_index(@edit ++ @ratios ++ @tokens) do
    kind = Enum.at(@kinds, rem(i, length(@kinds)))

    test "#{scorer} on a #{div(@bytes, 1_000_000)} MB candidate runs a slice at a time" do
      assert_sliced(long_candidate(unquote(scorer), unquote(kind)), 2)
    end
  end

  # two texts of many words, the same words in other orders and one word
  # apart: the token work (splitting, sorting, the sets) on each side
  test "the token scorers on #{@words} words a side run a slice at a time" do
    assert_sliced(
      """
      # word i of a is w(7919 i mod 5000), of b w(4999 i + 17 mod 5000):
      # both multipliers prime to 5000, so each word comes equally often
      # on each side, in other orders (built in a fraction of the time
      # drawing and shuffling them takes)
      vocabulary = List.to_tuple(for i <- 1..5000, do: "w\#{i}")
      text = fn first, step ->
        for i <- 0..(#{@words} - 1), do: [elem(vocabulary, rem(first + step * i, 5000)), ?\s]
      end
      join = fn first, step ->
        spaced = IO.iodata_to_binary(text.(first, step))
        binary_part(spaced, 0, byte_size(spaced) - 1)
      end
      a = join.(0, 7919)
      b = "extra " <> join.(17, 4999)
      for scorer <- #{inspect(@linear_tokens)} do
        check.("\#{scorer}, #{@words} words", fn mode ->
          Fuzzy.score(a, b, scorer: scorer, schedule: mode)
        end)
      end
      """,
      length(@linear_tokens)
    )
  end

  # one long query against a few candidates, a list and an index: the
  # query copied, decoded and its pattern made in the extract's first
  # steps, a budget at a time (before, in its init, which hopped to a
  # dirty scheduler once a call), the search core's set-up left to short
  # queries (it read the whole query at once: 6 ms held), the query's and
  # the token work's blocks freed off the scheduler (the step ending a
  # token score took 7.7 ms). The candidate of 1 KB: a pattern of several
  # blocks, the 4 MB query its text
  test "an extract with a #{div(@bytes, 1_000_000)} MB query runs a slice at a time" do
    assert_sliced(
      """
      query = :binary.copy("ab ", #{div(@bytes, 3)})
      list = ["abcab", "ab ab", "xyz", String.duplicate("xy", 500)]
      index = Fuzzy.Index.new(list)
      for {scorer, name, set} <- [{:levenshtein, "list", list}, {:levenshtein, "index", index},
                                  {:token_set_ratio, "list", list}] do
        check.("extract, \#{scorer}, \#{name}", fn mode ->
          Fuzzy.extract(query, set, scorer: scorer, schedule: mode, limit: 2)
        end)
      end
      """,
      3
    )
  end
end
