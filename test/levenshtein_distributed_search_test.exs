defmodule WellBehaved.LevenshteinDistributedSearchTest do
  # Searches over shards on :peer nodes of this machine (loopback): the
  # same answers as one local search, and bounded, flagged failures when a
  # node stops or stalls mid-query.
  use ExUnit.Case, async: false

  import WellBehaved.Test.RuntimeHelpers

  alias WellBehaved.{Fuzzy, Levenshtein}
  alias WellBehaved.Levenshtein.Index

  @moduletag timeout: 180_000

  setup_all do
    if not Node.alive?() do
      {_, 0} = System.cmd("epmd", ["-daemon"])
      name = :"wb_search_#{System.unique_integer([:positive])}@127.0.0.1"
      {:ok, _} = Node.start(name, :longnames)
      on_exit(fn -> Node.stop() end)
    end

    :ok
  end

  # a peer node running :well_behaved from this build; `extra` options of
  # :peer.start (connection: :standard_io keeps the peer's control off the
  # distribution connection, which a test may then cut)
  defp start_peer(extra \\ %{}) do
    # :global's guard against overlapping partitions cuts the peers'
    # connections again when one is cut on purpose, and under load could
    # keep a peer out for a minute: the tests here are about the shards
    paths =
      [~c"-kernel", ~c"prevent_overlapping_partitions", ~c"false"] ++
        Enum.flat_map(:code.get_path(), &[~c"-pa", &1])

    name = :"wb_peer_#{System.unique_integer([:positive])}"

    {:ok, peer, node} =
      :peer.start(
        Map.merge(%{name: name, host: ~c"127.0.0.1", longnames: true, args: paths}, extra)
      )

    {:ok, _} = :erpc.call(node, :application, :ensure_all_started, [:well_behaved])
    on_exit(fn -> if Process.alive?(peer), do: :peer.stop(peer) end)
    {peer, node}
  end

  # the processes on `node` running an :erpc call (none of this test's own)
  defp remote_calls(node) do
    for pid <- :erpc.call(node, Process, :list, []),
        :erpc.call(node, Process, :info, [pid, :initial_call]) ==
          {:initial_call, {:erpc, :execute_call, 4}},
        do: pid
  end

  # the shard holders on `node` made for this process: they monitor it
  defp holders(node) do
    {:monitored_by, pids} = Process.info(self(), :monitored_by)
    for pid <- pids, is_pid(pid), node(pid) == node, do: pid
  end

  defp words(count, seed) do
    :rand.seed(:exsss, {seed, seed, seed})
    # a small alphabet: many ties, which shards must merge in input order
    for _ <- 1..count do
      for _ <- 1..(3 + :rand.uniform(12)), into: "", do: <<Enum.random(~c"abcd")>>
    end
  end

  setup do
    {_peer_a, a} = start_peer()
    {_peer_b, b} = start_peer()
    %{a: a, b: b}
  end

  test "a distributed index answers as one local index", %{a: a, b: b} do
    cands = words(3_001, 1) ++ ["", "abcd", "abcd"]
    local = Index.new(cands)
    shards = Index.new(cands, nodes: [a, b, node()])
    assert Index.size(shards) == length(cands)
    assert [{^a, _, 1002}, {^b, _, 1001}, {_, _, 1001}] = shards.shards

    for query <- ["", "abcd", "dcbaabcd", "aaaaaaaaaaaaaaaaaaaaaaaa"],
        opts <- [[], [limit: 1], [limit: 57], [limit: 5000], [max_distance: 2], [max_distance: 0]] do
      assert Levenshtein.nearest(query, shards, opts) == Levenshtein.nearest(query, local, opts),
             "#{inspect(query)} #{inspect(opts)}"
    end

    assert Levenshtein.distances("abca", shards) == Levenshtein.distances("abca", local)

    assert Levenshtein.distances("abca", shards, as: :binary) ==
             Levenshtein.distances("abca", local, as: :binary)

    assert Levenshtein.distances("abca", shards, max_distance: 1, unit: :codepoint) ==
             Levenshtein.distances("abca", cands, max_distance: 1)

    # one index type: Fuzzy's functions take it too, its keys the positions
    # of the candidates in all the shards
    assert Enum.to_list(shards) == Enum.with_index(cands, &{&2, &1})
    opts = [scorer: :levenshtein, score: :distance, limit: 40]
    assert Fuzzy.extract("abca", shards, opts) == Fuzzy.extract("abca", cands, opts)
  end

  test "nodes: splits a list per call", %{a: a, b: b} do
    cands = words(2_000, 2)

    for nodes <- [[a], [a, b], [b, a, node()]], limit <- [1, 10, 300] do
      assert Levenshtein.nearest("abcab", cands, nodes: nodes, limit: limit) ==
               Levenshtein.nearest("abcab", cands, limit: limit)
    end

    assert Levenshtein.distances("bad", cands, nodes: [a, b]) ==
             Levenshtein.distances("bad", cands)

    # more nodes than candidates: some shards are empty
    assert Levenshtein.nearest("a", ["b", "a"], nodes: [a, b, node()]) == [{"a", 0}, {"b", 1}]
  end

  test "a node stopped mid-query gives nodedown, or a flagged partial answer", %{a: a} do
    {peer_c, c} = start_peer()
    cands = words(1_000, 3)
    index = Index.new(cands, nodes: [a, c])
    [{^a, _, _}, {^c, holder_c, _}] = index.shards
    # the shard on c cannot answer (its holder takes no calls) until its node stops
    :ok = :erpc.call(c, :sys, :suspend, [holder_c])

    plain = Task.async(fn -> Levenshtein.nearest("abc", index, timeout: 60_000) end)

    partial =
      Task.async(fn -> Levenshtein.nearest("abc", index, timeout: 60_000, partial: true) end)

    Process.sleep(200)
    assert Task.yield(plain, 0) == nil
    :peer.stop(peer_c)

    assert Task.await(plain, 30_000) == {:error, {:nodedown, c}}
    assert {:partial, hits, [{^c, :nodedown}]} = Task.await(partial, 30_000)
    assert hits == Levenshtein.nearest("abc", Enum.take(cands, 500))
    # and the next query does not wait at all for the node that is gone
    assert Levenshtein.nearest("abc", index) == {:error, {:nodedown, c}}
  end

  test "a node too slow gives a timeout, within the bound", %{a: a, b: b} do
    cands = words(500, 4)
    index = Index.new(cands, nodes: [a, b])
    [_, {^b, holder_b, _}] = index.shards
    :ok = :erpc.call(b, :sys, :suspend, [holder_b])
    # the call returns (the module's timeout bounds the test, not a timing claim)
    assert Levenshtein.nearest("abc", index, timeout: 2_000) == {:error, {:timeout, b}}
    # and the process on b that made the call for it, stuck until the holder
    # resumes, was killed at the same bound: nothing runs on for nobody
    eventually(fn -> remote_calls(b) == [] end, 20_000)

    assert {:partial, [_ | _], [{^b, :timeout}]} =
             Levenshtein.nearest("abc", index, timeout: 2_000, partial: true)

    # distances keep their positions: nil for the shard that did not answer
    assert {:partial, distances, [{^b, :timeout}]} =
             Levenshtein.distances("abc", index, timeout: 2_000, partial: true)

    assert Enum.drop(distances, 250) == List.duplicate(nil, 250)
    assert Enum.take(distances, 250) == Levenshtein.distances("abc", Enum.take(cands, 250))

    # as a binary: 0xFFFFFFFF for each of them
    assert {:partial, <<here::binary-size(1000), there::binary>>, [{^b, :timeout}]} =
             Levenshtein.distances("abc", index, timeout: 2_000, partial: true, as: :binary)

    assert here == Levenshtein.distances("abc", Enum.take(cands, 250), as: :binary)
    assert there == :binary.copy(<<0xFFFF_FFFF::32-native>>, 250)

    :ok = :erpc.call(b, :sys, :resume, [holder_b])
    assert length(Levenshtein.nearest("abc", index, limit: 3)) == 3
  end

  test "shards go when the process that made the index exits", %{a: a, b: b} do
    parent = self()

    owner =
      spawn(fn ->
        index = Index.new(words(100, 5), nodes: [a, b])
        send(parent, {:shards, index.shards})
        Process.sleep(:infinity)
      end)

    assert_receive {:shards, shards}, 30_000
    for {node, pid, _} <- shards, do: assert(:erpc.call(node, Process, :alive?, [pid]))
    Process.exit(owner, :kill)

    eventually(fn ->
      Enum.all?(shards, fn {node, pid, _} -> not :erpc.call(node, Process, :alive?, [pid]) end)
    end)
  end

  test "an index made too slowly leaves no holder behind", %{b: b} do
    # a million candidates: the holder on b takes a few hundred ms to make
    # its index, far past a bound of 1 ms, so the call starting it is
    # stopped meanwhile; the holder goes once its index is made (nobody has
    # its pid)
    cands = for i <- 1..1_000_000, do: Integer.to_string(i)
    assert Index.new(cands, nodes: [b], timeout: 1) == {:error, {:timeout, b}}
    eventually(fn -> holders(b) != [] end, 20_000)
    eventually(fn -> holders(b) == [] end, 60_000)
  end

  test "an index needs its nodes up" do
    missing = :"wb_missing_#{System.unique_integer([:positive])}@127.0.0.1"

    assert Index.new(["a", "b"], nodes: [node(), missing], timeout: 5_000) ==
             {:error, {:nodedown, missing}}
  end

  test "a caller killed mid-query stops the remote search at once", %{a: a} do
    index = Index.new(words(500, 6), nodes: [a])
    [{^a, holder, _}] = index.shards
    # the call on a waits for the holder, which takes no calls, until the
    # caller's death is felt there (the bound is a minute away)
    :ok = :erpc.call(a, :sys, :suspend, [holder])
    caller = spawn(fn -> Levenshtein.nearest("abc", index, timeout: 120_000) end)
    eventually(fn -> remote_calls(a) != [] end, 20_000)
    Process.exit(caller, :kill)
    eventually(fn -> remote_calls(a) == [] end, 20_000)
    :ok = :erpc.call(a, :sys, :resume, [holder])
    assert length(Levenshtein.nearest("abc", index, limit: 3)) == 3
  end

  test "a caller killed mid-query of a list split over nodes stops the remote job", %{a: a} do
    # 20 pairs of 300 kB with nothing in common: about 2 s of work each
    # (long_pair/1), 40 s in all, far past the poll that sees the job start
    # and the bound that sees it stop (pairs of 10 kB ended in 225 ms, before
    # a busy machine's poll saw them)
    {query, other} = long_pair(300_000)
    list = List.duplicate(other, 20)
    live = fn -> :erpc.call(a, WellBehaved.Runtime, :stats, []).live_jobs end

    caller =
      spawn(fn ->
        Levenshtein.distances(query, list,
          nodes: [a],
          schedule: :yielding,
          tiny_slices: true,
          timeout: 300_000
        )
      end)

    eventually(fn -> live.() > 0 end, 30_000)
    Process.exit(caller, :kill)
    # gone within the bound, which the work could never have reached
    eventually(fn -> live.() == 0 and remote_calls(a) == [] end, 20_000)
  end

  test "shard holders outlive a brief disconnect, and the index serves again", %{b: b} do
    # a peer that lives on when its distribution connection is cut
    {_peer, a} = start_peer(%{connection: :standard_io})
    cands = words(1_000, 7)
    index = Index.new(cands, nodes: [a, b])
    expected = Levenshtein.nearest("abc", cands)
    true = Node.disconnect(a)
    # the holder on a heard that this node went away (and the nodes'
    # :global may cut other connections for a moment): the index serves
    # again once the nodes are connected, with the same holders
    serves = fn ->
      answer = Levenshtein.nearest("abc", index, timeout: 2_000, partial: true)
      send(self(), {:last_answer, answer})
      answer == expected
    end

    if not wait_until(serves, 60_000) do
      assert_received {:last_answer, last}
      flunk("the index did not serve again within 60 s; last answer: #{inspect(last)}")
    end

    # the same holders, asked until a connection holds (:global can cut one
    # again a moment later on a busy machine)
    eventually(fn -> Enum.all?(index.shards, &holder_alive?/1) end, 20_000)
  end

  # like eventually/2, but answers false at the bound instead of failing
  defp wait_until(fun, limit_ms) do
    deadline = System.monotonic_time(:millisecond) + limit_ms

    Stream.repeatedly(fn ->
      flush_last_answers()
      ok = fun.()
      if not ok, do: Process.sleep(100)
      ok
    end)
    |> Enum.find(fn ok -> ok or System.monotonic_time(:millisecond) > deadline end)
  end

  # the answers before the next one go
  defp flush_last_answers do
    receive do
      {:last_answer, _} -> flush_last_answers()
    after
      0 -> :ok
    end
  end

  defp holder_alive?({node, pid, _size}) do
    :erpc.call(node, Process, :alive?, [pid], 2_000)
  catch
    :error, {:erpc, _} -> false
  end

  test "a node without the library, and a lost shard, are named" do
    # a bare Erlang node: neither Elixir nor WellBehaved
    {:ok, bare_peer, bare} =
      :peer.start(%{
        name: :"wb_bare_#{System.unique_integer([:positive])}",
        host: ~c"127.0.0.1",
        longnames: true
      })

    on_exit(fn -> if Process.alive?(bare_peer), do: :peer.stop(bare_peer) end)
    cands = words(100, 8)

    assert Levenshtein.nearest("abc", cands, nodes: [bare, node()]) ==
             {:error, {:no_library, bare}}

    assert {:partial, hits, [{^bare, :no_library}]} =
             Levenshtein.nearest("abc", cands, nodes: [bare, node()], partial: true)

    assert hits == Levenshtein.nearest("abc", Enum.drop(cands, 50))
    assert Index.new(cands, nodes: [bare]) == {:error, {:no_library, bare}}

    # a holder that is gone: its shard is lost
    {_peer_c, c} = start_peer()
    index = Index.new(cands, nodes: [c, node()])
    [{^c, holder, _}, _] = index.shards
    :ok = :erpc.call(c, GenServer, :stop, [holder])
    assert Levenshtein.nearest("abc", index) == {:error, {:shard_lost, c}}
  end

  test "an index of another node, or a forged one, is refused by name", %{a: a} do
    local = Index.new(["abc", "abd"])
    # an index whose segment's native set is not one of this node's
    %{segments: [segment]} = local
    forged = %{local | segments: [%{segment | ref: make_ref()}]}

    assert_raise ArgumentError, ~r/the index was not made on this node/, fn ->
      Levenshtein.nearest("abc", forged)
    end

    assert_raise ArgumentError, ~r/the index was not made on this node/, fn ->
      Levenshtein.distances("abc", forged)
    end

    remote =
      try do
        :erpc.call(a, Levenshtein, :nearest, ["abc", local])
      catch
        :error, {:exception, e, _stack} -> e
      end

    assert %ArgumentError{message: message} = remote
    assert message =~ "the index was not made on this node (#{a})"
  end

  test "bad distributed arguments raise, naming the problem", %{a: a} do
    msg = fn f -> assert_raise(ArgumentError, f).message end
    assert msg.(fn -> Levenshtein.nearest("a", ["b"], nodes: []) end) =~ "nodes"
    assert msg.(fn -> Levenshtein.nearest("a", ["b"], nodes: "x") end) =~ "node names"
    assert msg.(fn -> Levenshtein.nearest("a", ["b"], nodes: [a], timeout: 0) end) =~ "timeout"

    assert msg.(fn -> Levenshtein.nearest("a", ["b"], nodes: [a], partial: :yes) end) =~
             "partial"

    assert msg.(fn -> Levenshtein.nearest("a", ["b", 3], nodes: [a]) end) =~ "position 1"
    assert msg.(fn -> Index.new(["b", :c], nodes: [a]) end) =~ "position 1"
    assert msg.(fn -> Levenshtein.nearest("a", Index.new(["b"]), nodes: [a]) end) =~ "Index.new"
    assert msg.(fn -> Levenshtein.nearest("a", ["b"], nodes: [a], limit: 0) end) =~ "limit"
    assert msg.(fn -> Levenshtein.nearest("a", ["b"], nodes: [a], unit: :x) end) =~ "unit"
  end
end
