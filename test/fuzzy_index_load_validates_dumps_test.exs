defmodule WellBehaved.FuzzyIndexLoadValidatesDumpsTest do
  # Index.load/2 reads a dump through one set of checks, here and split
  # over nodes (nodes:): a malformed dump raises the same ArgumentError on
  # both paths, naming load/2, its first argument and what is wrong; an
  # oversized one is refused before anything is inflated; a good one
  # loads on both, and an addition after a load never gives an entry's
  # key again.
  use ExUnit.Case, async: false

  alias WellBehaved.Fuzzy
  alias WellBehaved.Fuzzy.Index

  @moduletag timeout: 300_000

  # calls over nodes: generous, a bound on a lost node, not a figure
  @long 120_000
  @prefix "WellBehaved.Fuzzy.Index.load/2: invalid dump (first argument): "
  @limit Bitwise.bsl(1, 63)

  setup_all do
    if not Node.alive?() do
      {_, 0} = System.cmd("epmd", ["-daemon"])

      {:ok, _} =
        Node.start(:"wb_load_#{System.unique_integer([:positive])}@127.0.0.1", :longnames)
    end

    paths = Enum.flat_map(:code.get_path(), &[~c"-pa", &1])

    {:ok, peer, peer_node} =
      :peer.start(%{
        name: :"wb_load_peer_#{System.unique_integer([:positive])}",
        host: ~c"127.0.0.1",
        longnames: true,
        args: paths
      })

    on_exit(fn -> if Process.alive?(peer), do: :peer.stop(peer) end)
    {:ok, _} = :erpc.call(peer_node, :application, :ensure_all_started, [:well_behaved])
    %{nodes: [peer_node, node()]}
  end

  # a dump as dump/1 writes it (version 2), of any content
  defp dump(next, rows, processor \\ nil, version \\ 2),
    do: :erlang.term_to_binary({Index, version, processor, next, rows}, [:compressed])

  # the message of the ArgumentError load/2 raises here; split over nodes
  # it raises the same
  defp refused(binary, nodes, opts \\ []) do
    here = assert_raise ArgumentError, fn -> Index.load(binary, opts) end

    split =
      assert_raise ArgumentError, fn ->
        Index.load(binary, [nodes: nodes, timeout: @long] ++ opts)
      end

    assert split.message == here.message
    assert String.starts_with?(here.message, @prefix), here.message
    String.replace_prefix(here.message, @prefix, "")
  end

  # the index a dump loads into here, and split over nodes
  defp loaded(binary, nodes, opts \\ []) do
    {Index.load(binary, opts), Index.load(binary, [nodes: nodes, timeout: @long] ++ opts)}
  end

  defp keys(index), do: Enum.map(index, &elem(&1, 0))

  test "keys, texts and scored texts of different lengths", %{nodes: nodes} do
    for {rows, says} <- [
          {[{[0, 1, 2], ["a", "b"], nil}], "segment 0 has 3 keys, 2 texts and 2 scored texts"},
          {[{[0, 1], ["a", "b"], ["a"]}], "segment 0 has 2 keys, 2 texts and 1 scored texts"},
          {[{[0], ["a", "b"], ["a", "b"]}], "segment 0 has 1 keys, 2 texts and 2 scored texts"},
          {[{[0], ["a"], nil}, {[1], ["b", "c"], nil}],
           "segment 1 has 1 keys, 2 texts and 2 scored texts"}
        ] do
      message = refused(dump(3, rows), nodes)
      assert message =~ says, "#{inspect(rows)}: #{message} (expected #{says})"
    end

    # checked before any node is asked: one that does not exist is not named
    assert_raise ArgumentError, ~r/segment 0 has 3 keys/, fn ->
      Index.load(dump(3, [{[0, 1, 2], ["a"], nil}]), nodes: [:"wb_nobody@127.0.0.1"])
    end
  end

  test "improper lists", %{nodes: nodes} do
    for {rows, says} <- [
          {[{[0], ["a"], nil} | :tail], "its segments are not a proper list"},
          {[{[0 | 1], ["a", "b"], nil}], "the keys of segment 0 are [0 | 1], not a proper list"},
          {[{[0, 1], ["a" | "b"], nil}], "the texts of segment 0 are [\"a\" | \"b\"]"},
          {[{[0, 1], ["a", "b"], ["a" | "b"]}], "the scored texts of segment 0 are"},
          {[{[0], ["a"], nil}, {[1], [], nil} | [{[2], ["c"], nil} | :x]],
           "its segments are not a proper list"}
        ] do
      message = refused(dump(3, rows), nodes)
      assert message =~ says, "#{inspect(rows)}: #{message} (expected #{says})"
    end
  end

  test "malformed segments and shapes raise ArgumentError, nothing else", %{nodes: nodes} do
    ok_row = {[0], ["a"], nil}

    for {term, says} <- [
          {{Index, 2, nil, 1, [:row]}, "segment 0 is :row, expected {keys, texts"},
          {{Index, 2, nil, 1, [ok_row, {[0], ["a"]}]}, "segment 1 is {[0], [\"a\"]}"},
          {{Index, 2, nil, 1, [{:keys, ["a"], nil}]}, "the keys of segment 0 are :keys"},
          {{Index, 2, nil, 1, [{[0], %{0 => "a"}, nil}]}, "the texts of segment 0 are %{0"},
          {{Index, 2, nil, 1, [{[0], [1], nil}]}, "the text 0 of segment 0 is 1, not a binary"},
          {{Index, 2, nil, 2, [{[0, 1], ["a", "b"], ["a", :b]}]},
           "the scored text 1 of segment 0 is :b"},
          {{Index, 2, nil, 1, [{[0], [<<1::3>>], nil}]},
           "the text 0 of segment 0 is <<1::size(3)>>"},
          {{Index, 2, nil, 1, [{[0], ["a"], :scored}]},
           "the scored texts of segment 0 are :scored"},
          {{Index, 2, nil, 1, :rows}, "its segments are not a proper list"},
          {{Index, 2, nil, 1, %{}}, "its segments are not a proper list"},
          {{Index, 2, :upcase, 1, [ok_row]},
           "its processor is :upcase, expected nil, :default or :fold"},
          {{Index, 3, nil, 1, [ok_row]}, "it is of version 3, expected 1 or 2"},
          {{Index, 2, nil, 1}, "it holds {WellBehaved.Fuzzy.Index, 2, nil, 1}, expected"},
          {{:other, 2, nil, 1, [ok_row]}, "it holds {:other, 2, nil, 1"},
          {[1, 2, 3], "it holds [1, 2, 3], expected"}
        ] do
      message = refused(:erlang.term_to_binary(term, [:compressed]), nodes)
      assert message =~ says, "#{inspect(term)}: #{message} (expected #{says})"
    end

    good = dump(1, [ok_row])
    # not the external format, something after the term, an atom unknown here
    unknown = "wb_never_made_#{System.unique_integer([:positive])}"

    for {binary, says} <- [
          {"", "\"\" is not a term in the external format"},
          {"nope", "is not a term in the external format"},
          {binary_part(good, 0, byte_size(good) - 1), "is not a term in the external format"},
          {good <> "xy", "2 bytes follow its term"},
          {<<131, 119, byte_size(unknown)>> <> unknown, "names an atom unknown on this node"}
        ] do
      message = refused(binary, nodes)
      assert message =~ says, "#{inspect(binary)}: #{message} (expected #{says})"
    end

    assert_raise ArgumentError, ~r/Index.load\/2: invalid first argument :atom/, fn ->
      Index.load(:atom)
    end
  end

  test "the next key: an integer in 0..2^63 above every key an index gives", %{nodes: nodes} do
    rows = [{[0, 1, :k], ["a", "b", "c"], nil}]

    for {next, rows, says} <- [
          {-5, rows, "its next key is -5, expected an integer in 0..2^63"},
          {Bitwise.bsl(1, 200), rows, "its next key is #{Bitwise.bsl(1, 200)}, expected"},
          {@limit + 1, rows, "its next key is #{@limit + 1}, expected"},
          {1.5, rows, "its next key is 1.5, expected an integer"},
          {:next, rows, "its next key is :next, expected an integer"},
          {1, rows, "its next key 1 is not above its key 1"},
          {0, rows, "its next key 0 is not above its key 1"},
          {5, [{[0], ["a"], nil}, {[9, 2], ["b", "c"], nil}],
           "its next key 5 is not above its key 9"}
        ] do
      message = refused(dump(next, rows), nodes)
      assert message =~ says, "next #{inspect(next)}: #{message} (expected #{says})"
    end

    # keys outside 0..2^63-1 are not keys an index gives: next need not pass them
    odd = [{[-3, @limit, Bitwise.bsl(1, 200), "k", {:t}], ["a", "b", "c", "d", "e"], nil}]
    {here, split} = loaded(dump(0, odd), nodes)
    assert keys(here) == keys(split)
    assert keys(here) == [-3, @limit, Bitwise.bsl(1, 200), "k", {:t}]
    assert {here.next, split.next} == {0, 0}

    # the top of the range: it loads; an addition without keys has none left
    top = dump(@limit, [{[@limit - 1], ["a"], nil}])
    {here, split} = loaded(top, nodes)

    for index <- [here, split] do
      assert_raise ArgumentError,
                   ~r/Index.add\/2: no key is left for a candidate without one/,
                   fn ->
                     Index.add(index, ["b"])
                   end

      assert index |> Index.add([{:b, "b"}]) |> keys() == [@limit - 1, :b]
    end
  end

  test "a good dump loads on both paths and answers as its index", %{nodes: nodes} do
    entries =
      for(i <- 1..150, do: "Word #{i} " <> String.duplicate("ab", rem(i, 9))) ++
        [{:k, "Key WORD"}, {1_000, "Thousand"}, {"s", "String Key"}]

    index =
      Index.new(entries, processor: :default)
      |> Index.add(["Later One", {-7, "Negative"}])
      |> Index.add(["Third Part"])
      |> Index.delete([3, :k])

    assert length(index.segments) > 1
    # the reference: the entries as given, less the deleted ones
    expected =
      (Enum.with_index(entries, fn
         {key, text}, _ -> {key, text}
         text, at -> {at, text}
       end) ++ [{1001, "Later One"}, {-7, "Negative"}, {1003, "Third Part"}])
      |> Enum.reject(fn {key, _} -> key in [3, :k] end)

    assert Enum.to_list(index) == expected
    assert index.next == 1004

    binary = Index.dump(index)
    {here, split} = loaded(binary, nodes)

    for copy <- [here, split] do
      assert Enum.to_list(copy) == expected
      assert {copy.next, copy.processor, Index.size(copy)} == {1004, :default, length(expected)}

      for scorer <- [:wratio, :levenshtein, :token_sort_ratio], q <- ["word 12", "THOUSAND"] do
        opts = [scorer: scorer, limit: 4]

        assert Fuzzy.extract(q, copy, opts) ===
                 Fuzzy.extract(q, expected, [processor: :default] ++ opts)
      end
    end

    # its dump again is the same entries
    assert binary |> Index.load() |> Index.dump() |> Index.load() |> Enum.to_list() == expected
    assert split |> Index.dump() |> Index.load(max_bytes: :infinity) |> Enum.to_list() == expected

    # max_bytes: the uncompressed size exactly loads, a byte less does not
    <<131, 80, size::32, _::binary>> = binary
    assert binary |> Index.load(max_bytes: size + 1) |> Enum.to_list() == expected
    message = refused(binary, nodes, max_bytes: size)
    assert message =~ "it is #{size + 1} bytes uncompressed, more than max_bytes: #{size}"

    # options: checked before the dump is read
    for bad <- [0, -1, 1.5, :big, nil] do
      assert_raise ArgumentError, ~r/Index.load\/2: invalid :max_bytes #{inspect(bad)}/, fn ->
        Index.load(binary, max_bytes: bad)
      end
    end

    assert_raise ArgumentError, ~r/unknown option :bogus/, fn -> Index.load(binary, bogus: 1) end
    assert_raise ArgumentError, ~r/expected a keyword list/, fn -> Index.load(binary, [1]) end
    assert_raise ArgumentError, ~r/expected a keyword list/, fn -> Index.load(binary, %{}) end
    # timeout: alone loads here
    assert binary |> Index.load(timeout: 1_000) |> Enum.to_list() == expected
  end

  test "an addition after a load never gives an entry's key again", %{nodes: nodes} do
    # an index given integer keys keeps its next key above them: here and split
    here = Index.new(%{1 => "Paris", 2 => "Lyon"}) |> Index.add(["Nice"])
    assert Enum.sort(keys(here)) == [1, 2, 3]
    split = Index.new([{7, "a"}, "b"], nodes: nodes, timeout: @long) |> Index.add(["c"])
    assert Enum.sort(keys(split)) == [1, 7, 8]
    # a candidate without a key never gets one given beside it: the
    # positions, each entry taking one, pass such a key
    split = Index.add(split, [{10, "d"}, "e", {:f, "f"}, "g"])
    assert Enum.sort(keys(split)) == [1, 7, 8, 10, 12, 14, :f]
    split = Index.add(split, [{-1, "h"}, "i", {16, "j"}, {2 ** 70, "k"}, "l"])

    assert Enum.sort(keys(split)) ==
             [-1, 1, 7, 8, 10, 12, 14, 16, 18, 21, :f, 2 ** 70] |> Enum.sort()

    here = Index.add(here, [{4, "Lille"}, "Metz"])
    assert Enum.sort(keys(here)) == [1, 2, 3, 4, 6]

    for index <- [here, split] do
      {a, b} = loaded(Index.dump(index), nodes)

      for copy <- [a, b] do
        grown = Index.add(copy, ["x", "y"])
        all = keys(grown)
        assert length(Enum.uniq(all)) == length(all), inspect(all)
        assert Enum.sort(all) == Enum.sort(keys(index) ++ [index.next, index.next + 1])
      end
    end

    # a dump of version 1 (written before the next key was kept above the
    # keys given) loads with its next key raised above them
    v1 = dump(2, [{[0, 5, :k], ["a", "b", "c"], nil}], nil, 1)
    {a, b} = loaded(v1, nodes)

    for copy <- [a, b] do
      assert copy.next == 6
      assert copy |> Index.add(["d", "e"]) |> keys() |> Enum.sort() == [0, 5, 6, 7, :k]
    end

    # and its other checks are the same
    assert refused(dump(-5, [{[0], ["a"], nil}], nil, 1), nodes) =~ "its next key is -5"
    assert refused(dump(1, [{[0, 1], ["a"], nil}], nil, 1), nodes) =~ "segment 0 has 2 keys"
  end

  # a compressed dump holding one text of `size` zero bytes, made a
  # megabyte at a time: nothing of its size is ever allocated here
  defp expanding_dump(size) do
    template = :erlang.term_to_binary({Index, 2, nil, 1, [{[0], [<<>>], nil}]})
    {at, 5} = :binary.match(template, <<109, 0::32>>)
    <<131, head::binary-size(at - 1), _::binary-size(5), tail::binary>> = template

    z = :zlib.open()
    :ok = :zlib.deflateInit(z, 9)
    mb = :binary.copy(<<0>>, 1_048_576)

    body = [
      :zlib.deflate(z, [head, <<109, size::32>>]),
      for(_ <- 1..div(size, 1_048_576)//1, do: :zlib.deflate(z, mb)),
      :zlib.deflate(z, [:binary.copy(<<0>>, rem(size, 1_048_576)), tail], :finish)
    ]

    :ok = :zlib.deflateEnd(z)
    :zlib.close(z)
    uncompressed = byte_size(head) + 5 + size + byte_size(tail)
    IO.iodata_to_binary([<<131, 80, uncompressed::32>> | body])
  end

  test "an oversized dump is refused before anything is inflated", %{nodes: nodes} do
    # made as term_to_binary would make it: a small one decodes to its term
    small = expanding_dump(3_000_000)
    assert {Index, 2, nil, 1, [{[0], [text], nil}]} = :erlang.binary_to_term(small, [:safe])
    assert text == :binary.copy(<<0>>, 3_000_000)

    # 64 MB in a few hundred kB, over a max_bytes: given
    big = expanding_dump(64_000_000)
    assert byte_size(big) < 1_000_000
    <<131, 80, size::32, _::binary>> = big
    message = refused(big, nodes, max_bytes: 16 * 1024 * 1024)
    assert message =~ "it is #{size + 1} bytes uncompressed, more than max_bytes: 16777216"

    # 300 MB, over the default (256 MiB)
    huge = expanding_dump(300_000_000)
    <<131, 80, huge_size::32, _::binary>> = huge
    assert refused(huge, nodes) =~ "it is #{huge_size + 1} bytes uncompressed, more than"

    # nothing was inflated: the same header over a body that is not zlib
    # is refused for its size (inflating would have failed otherwise) ...
    fake = <<131, 80, huge_size::32>> <> :binary.copy("not zlib", 100)
    assert refused(fake, nodes) =~ "bytes uncompressed, more than max_bytes: 268435456"
    # ... which it does when the size is within the limit
    fake = <<131, 80, 1_000::32>> <> :binary.copy("not zlib", 100)
    assert refused(fake, nodes) =~ "is not a term in the external format"

    # a dump written without compression is its own size
    plain = :erlang.term_to_binary({Index, 2, nil, 3, [{[0, 1, 2], ["a", "b", "c"], nil}]})

    assert refused(plain, nodes, max_bytes: byte_size(plain) - 1) =~
             "it is #{byte_size(plain)} bytes uncompressed, more than max_bytes"

    {a, b} = loaded(plain, nodes, max_bytes: byte_size(plain))
    assert Enum.to_list(a) == [{0, "a"}, {1, "b"}, {2, "c"}]
    assert Enum.to_list(b) == Enum.to_list(a)
  end
end
