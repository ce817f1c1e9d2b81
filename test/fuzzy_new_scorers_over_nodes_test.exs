defmodule WellBehaved.FuzzyNewScorersOverNodesTest do
  # Issue 48: an index split over nodes passes :lcs_seq, :prefix,
  # :postfix and :hamming's pad: through to every shard: the same hits as
  # the index on one node, and pad: false's error raised here, naming the
  # candidate by its key (positions are the shards' own).
  use ExUnit.Case, async: false

  alias WellBehaved.Fuzzy
  alias WellBehaved.Fuzzy.Index

  @moduletag timeout: 300_000

  # calls over nodes: generous, a bound on a lost node, not a figure
  @long 120_000

  setup_all do
    if not Node.alive?() do
      {_, 0} = System.cmd("epmd", ["-daemon"])

      {:ok, _} =
        Node.start(:"wb_scorers_#{System.unique_integer([:positive])}@127.0.0.1", :longnames)
    end

    paths = Enum.flat_map(:code.get_path(), &[~c"-pa", &1])

    {:ok, peer, peer_node} =
      :peer.start(%{
        name: :"wb_scorers_peer_#{System.unique_integer([:positive])}",
        host: ~c"127.0.0.1",
        longnames: true,
        args: paths
      })

    on_exit(fn -> if Process.alive?(peer), do: :peer.stop(peer) end)
    {:ok, _} = :erpc.call(peer_node, :application, :ensure_all_started, [:well_behaved])
    %{nodes: [peer_node, node()]}
  end

  test "the new scorers and pad: false give the one-node index's answers", %{nodes: nodes} do
    texts = ["kitten", "sitting", "mitten", "kitchen", "bitten", "kitted", "smitten", "knit"]
    here = Index.new(texts)
    split = Index.new(texts, nodes: nodes, timeout: @long)

    for scorer <- [:lcs_seq, :prefix, :postfix],
        kind <- [:distance, :similarity, :normalized_similarity] do
      opts = [scorer: scorer, score: kind, limit: :all]
      want = Fuzzy.extract("kitten", here, opts)
      assert length(want) == length(texts)
      assert Fuzzy.extract("kitten", split, opts) == want, "#{scorer} #{kind}"
      assert Fuzzy.extract_one("kitten", split, opts -- [limit: :all]) == hd(want)
    end

    # equal lengths without padding: the padded hits
    six = Index.new(["kitten", "mitten", "bitten"], nodes: nodes, timeout: @long)
    padded = Fuzzy.extract("kitted", six, scorer: :hamming, limit: :all)
    assert Fuzzy.extract("kitted", six, scorer: :hamming, pad: false, limit: :all) == padded

    # another length, on whichever shard it is: raised here by its key
    assert_raise ArgumentError, ~r/the candidate with key \d has \d bytes, the query 6/, fn ->
      Fuzzy.extract("kitten", split, scorer: :hamming, pad: false)
    end

    assert_raise ArgumentError, ~r/invalid :pad false, expected no pad/, fn ->
      Fuzzy.extract("kitten", split, scorer: :prefix, pad: false)
    end
  end
end
