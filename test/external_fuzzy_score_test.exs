defmodule WellBehaved.ExternalFuzzyScoreTest do
  # Fuzzy.score/3 with schedule: :external (issue 44, "one front door"): the
  # library's fuzzy score job run by a server of the built-in pool, the path
  # of every job's schedule: :external. Its answers and errors are the VM's
  # (schedule: :normal is the reference: the same job in the VM); options
  # are checked before any call; a killed caller's job is cancelled on the
  # server; Levenshtein's :external pairs answer as Fuzzy's.
  use ExUnit.Case, async: false

  alias WellBehaved.{External, Fuzzy, Levenshtein}
  alias WellBehaved.Fuzzy.Call
  alias WellBehaved.Test.RuntimeHelpers

  setup do
    External.stop()
    on_exit(fn -> External.stop() end)
  end

  @pairs [
    {"", ""},
    {"", "abc"},
    {"kitten", "sitting"},
    {"fuzzy wuzzy was a bear", "wuzzy fuzy was a beer!"},
    {"  new york  mets", "new york meats"},
    {"héllo wörld", "hello world 中文"},
    {"a", "abcdefgh"}
  ]

  defp both(a, b, opts) do
    vm =
      try do
        {:ok, Fuzzy.score(a, b, [schedule: :normal] ++ opts)}
      rescue
        e in ArgumentError -> {:raise, e.message}
      end

    ext =
      try do
        {:ok, Fuzzy.score(a, b, [schedule: :external] ++ opts)}
      rescue
        e in ArgumentError -> {:raise, e.message}
      end

    {vm, ext}
  end

  test "every scorer, kind and unit: the same score as in the VM" do
    for scorer <- Call.scorers(),
        kind <- Call.kinds(),
        unit <- [:byte, :codepoint],
        {a, b} <- @pairs do
      opts = [scorer: scorer, score: kind, unit: unit]
      {vm, ext} = both(a, b, opts)
      assert ext == vm, "#{inspect({a, b, opts})}: external #{inspect(ext)}, VM #{inspect(vm)}"
    end
  end

  test "cutoffs, weights, prefix weights, processors and tiny slices: as in the VM" do
    cases = [
      [scorer: :levenshtein, score: :distance, score_cutoff: 2],
      [scorer: :levenshtein, score: :distance, weights: {1, 2, 3}],
      [scorer: :levenshtein, score: :similarity, weights: {5, 1, 7}, score_cutoff: 3],
      [scorer: :jaro_winkler, prefix_weight: 0.25, score_cutoff: 0.8],
      [scorer: :wratio, score: :similarity, score_cutoff: 85],
      [scorer: :token_set_ratio, processor: :default],
      [scorer: :partial_ratio, processor: &String.upcase/1, score: :distance],
      [scorer: :osa, score: :normalized_distance, score_cutoff: 0.3, tiny_slices: true],
      [scorer: :token_sort_ratio, unit: :codepoint, tiny_slices: true]
    ]

    for opts <- cases, {a, b} <- @pairs do
      {vm, ext} = both(a, b, opts)
      assert ext == vm, "#{inspect({a, b, opts})}: external #{inspect(ext)}, VM #{inspect(vm)}"
    end
  end

  test "invalid UTF-8 and scores past 2^64-1 raise as in the VM" do
    most = 0xFFFF_FFFF_FFFF_FFFF

    for {a, b, opts} <- [
          {<<0xFF>>, "a", [unit: :codepoint]},
          {"a", <<0xC3>>, [unit: :codepoint, scorer: :jaro]},
          {"aaa", "bbbb", [scorer: :levenshtein, score: :distance, weights: {most, most, most}]}
        ] do
      {vm, ext} = both(a, b, opts)
      assert {:raise, message} = vm
      assert ext == vm, "#{inspect({a, b, opts})}: external #{inspect(ext)}, VM #{inspect(vm)}"
      assert message =~ "WellBehaved.Fuzzy.score/3"
    end
  end

  test "bad arguments raise before any call: no pool is started" do
    bad = [
      {"a", 1, []},
      {"a", "b", [scorer: :nope]},
      {"a", "b", [score_cutoff: 2]},
      {"a", "b", [scorer: :ratio, weights: {1, 1, 1}]},
      {"a", "b", [unit: :word]},
      {"a", "b", [tiny_slices: :yes]}
    ]

    for {a, b, opts} <- bad do
      assert_raise ArgumentError, ~r/WellBehaved.Fuzzy.score\/3/, fn ->
        Fuzzy.score(a, b, [schedule: :external] ++ opts)
      end
    end

    assert External.info() == nil, "a pool started: #{inspect(External.info())}"

    assert_raise ArgumentError, ~r/:external/, fn ->
      Fuzzy.score("a", "b", schedule: :elsewhere)
    end

    # only a pair's score has it
    assert_raise ArgumentError, ~r/invalid :schedule :external/, fn ->
      Fuzzy.extract("a", ["b"], schedule: :external)
    end
  end

  @tag :capture_log
  test "runs on the server; a server killed mid-call raises WellBehaved.External.Error" do
    {:ok, _} = External.start(servers: 1, connections: 1)
    [{0, {:ok, %{jobs: before}}}] = External.server_stats(External.Pool)
    assert Fuzzy.score("ab", "ba", scorer: :osa, score: :distance, schedule: :external) == 1
    [{0, {:ok, %{jobs: jobs}}}] = External.server_stats(External.Pool)
    assert jobs == before + 1, "jobs #{jobs}, was #{before}: the score ran on the server"

    {a, b} = endless_pair()

    task =
      Task.async(fn ->
        try do
          Fuzzy.score(a, b, scorer: :indel, schedule: :external)
        rescue
          e in External.Error -> e
        end
      end)

    await_live_jobs(1)
    [server] = External.info().servers
    {_, 0} = System.cmd("kill", ["-s", "KILL", "--", to_string(server.os_pid)])
    assert %External.Error{reason: :closed} = Task.await(task, 60_000)

    # the pool starts it again; later calls succeed
    assert Fuzzy.score("kitten", "sitting", scorer: :ratio, schedule: :external) ==
             Fuzzy.score("kitten", "sitting", scorer: :ratio)
  end

  # minutes of work anywhere (2 MB x 2 MB, an edit matrix of 4e12 cells):
  # only ever cancelled or killed, never waited for
  defp endless_pair,
    do: {:crypto.strong_rand_bytes(2_000_000), :crypto.strong_rand_bytes(2_000_000)}

  defp await_live_jobs(n) do
    RuntimeHelpers.eventually(fn ->
      [{0, {:ok, stats}}] = External.server_stats(External.Pool)
      stats.live_jobs == n
    end)
  end

  test "a killed caller's job is cancelled on the server" do
    {:ok, _} = External.start(servers: 1, connections: 2)
    assert Fuzzy.score("warm", "up", schedule: :external) == Fuzzy.score("warm", "up")
    [{0, {:ok, %{cancelled: cancelled}}}] = External.server_stats(External.Pool)

    {a, b} = endless_pair()

    caller =
      spawn(fn ->
        Fuzzy.score(a, b, scorer: :levenshtein, score: :distance, schedule: :external)
      end)

    await_live_jobs(1)
    Process.exit(caller, :kill)

    RuntimeHelpers.eventually(fn ->
      [{0, {:ok, stats}}] = External.server_stats(External.Pool)
      stats.live_jobs == 0 and stats.cancelled == cancelled + 1
    end)

    [{0, {:ok, stats}}] = External.server_stats(External.Pool)
    assert %{live_bytes: 0} = stats

    # the connection serves on: Indel's distance, 2 deletions + 3 insertions
    assert Fuzzy.score("kitten", "sitting", scorer: :indel, score: :distance, schedule: :external) ==
             5
  end

  # (which job type a server ran is not visible from here: the two give
  # the same answers; this keeps both doors' answers tied to the VM's)
  test "Levenshtein's and Fuzzy's :external distances answer as in the VM" do
    {:ok, _} = External.start(servers: 1, connections: 1)

    for {a, b} <- @pairs, unit <- [:byte, :codepoint], max <- [nil, 0, 1, 3] do
      want = Levenshtein.distance(a, b, unit: unit, max_distance: max)
      got = Levenshtein.distance(a, b, unit: unit, max_distance: max, schedule: :external)
      assert got == want, "#{inspect({a, b, unit, max})}: external #{got}, VM #{want}"

      fuzzy =
        Fuzzy.score(a, b,
          scorer: :levenshtein,
          score: :distance,
          score_cutoff: max,
          unit: unit,
          schedule: :external
        )

      assert fuzzy == want, "#{inspect({a, b, unit, max})}: Fuzzy external #{fuzzy}, VM #{want}"
    end

    assert_raise ArgumentError,
                 ~r/Levenshtein.distance\/3: the second argument is not valid/,
                 fn ->
                   Levenshtein.distance("a", <<0xFF>>, unit: :codepoint, schedule: :external)
                 end
  end
end
