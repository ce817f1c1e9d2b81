defmodule WellBehaved.LongListsArePackedASliceAtATimeTest do
  # A search's list of candidates is copied into native memory by
  # pack_more/2 calls, each of which stops after one slice of the runtime
  # and answers the rest of the list: no NIF walks a long list, or copies a
  # long binary, in one go (a :threaded call copied the whole list on the
  # caller's scheduler; a search's set-up walked it in one step). A million
  # elements, or 20 MB, cannot be copied within one slice (at most 100 us)
  # on any machine, so every assertion on the number of calls holds on a
  # fast machine as on a slow one.
  use ExUnit.Case, async: true

  alias WellBehaved.{Levenshtein, Native}

  defp hits_list(hits, acc) do
    case Native.hits_more(hits, acc) do
      {:done, list} -> list
      {:more, list} -> hits_list(hits, list)
    end
  end

  # every pack_more call: the tails it answered, then {:done, count}
  defp pack_calls(packed, list, acc \\ []) do
    case Native.pack_more(packed, list) do
      {:more, rest} -> pack_calls(packed, rest, [rest | acc])
      other -> {other, Enum.reverse(acc)}
    end
  end

  # Where each tail starts in the list, in one walk of it: a tail is the
  # list from some position on (the same term: =:= answers at once), each
  # one further on than the one before. A tail not found ends the walk, so
  # fewer positions than tails. Linear in the list, however many calls a
  # slow or busy machine takes (a slice is time: a busy machine copies less
  # in each); measuring each tail's length and dropping to it, for every
  # tail, was calls x list: 3.6 s on an idle machine, past 60 s on a busy one.
  defp tail_positions(list, tails), do: tail_positions(list, 0, tails, [])

  defp tail_positions(_rest, _at, [], acc), do: Enum.reverse(acc)
  # a call whose time ran out right after the last element answers []
  defp tail_positions([], at, [[] | tails], acc),
    do: tail_positions([], at + 1, tails, [at | acc])

  defp tail_positions([], _at, _tails, acc), do: Enum.reverse(acc)

  defp tail_positions(rest, at, [tail | tails], acc) when rest === tail,
    do: tail_positions(tl(rest), at + 1, tails, [at | acc])

  defp tail_positions([_ | rest], at, tails, acc), do: tail_positions(rest, at + 1, tails, acc)

  test "a list of a million binaries takes many calls, each answering a shorter tail" do
    list = for i <- 1..1_000_000, do: Integer.to_string(i)
    packed = Native.pack_new(length(list))
    assert {{:done, 1_000_000}, tails} = pack_calls(packed, list)
    assert length(tails) > 1
    # every tail is a suffix of the list, each one shorter than the one
    # before (a position per tail, strictly increasing)
    assert length(tail_positions(list, tails)) == length(tails)

    # the packed candidates are the list's
    expected = Enum.map(Enum.take(list, 2000), &Levenshtein.distance("12345", &1))
    assert Enum.take(Levenshtein.distances("12345", list), 2000) == expected
  end

  test "a 20 MB binary is copied over several calls, the same element answered again" do
    big = :binary.copy("abcdefgh", 2_500_000)
    list = ["x", big, "y"]
    packed = Native.pack_new(3)
    assert {{:done, 3}, tails} = pack_calls(packed, list)
    assert [[^big, "y"] | _] = tails
    assert Enum.count(tails, &match?([^big | _], &1)) > 1
    assert Levenshtein.nearest("xy", list, limit: 1) == [{"x", 1}]
    assert Levenshtein.distances("ab", list, max_distance: 3) == [2, 4, 2]
  end

  test "what is not a list of Count binaries is refused, wherever it shows" do
    # position counted over the calls
    list = Enum.map(1..500_000, &Integer.to_string/1) ++ [:x]

    assert {{:error, {:not_a_binary, 500_000}}, [_ | _]} =
             pack_calls(Native.pack_new(500_001), list)

    assert {{:error, {:not_a_binary, :tail}}, []} = pack_calls(Native.pack_new(2), ["a" | "b"])
    # more or fewer than announced
    assert {{:error, :badarg}, []} = pack_calls(Native.pack_new(3), ["a", "b"])
    assert {{:error, :badarg}, []} = pack_calls(Native.pack_new(1), ["a", "b"])
    # nothing more once done; a search refuses a set not packed to the end
    done = Native.pack_new(1)
    assert Native.pack_more(done, ["a"]) == {:done, 1}
    assert_raise ArgumentError, fn -> Native.pack_more(done, ["b"]) end
    half = Native.pack_new(2)
    assert {:error, :badarg} = Native.pack_more(half, ["a"])

    assert Native.search("a", half, 2, :byte, nil, 1, :normal, false, nil) ==
             {:error, :badarg}

    assert_raise ArgumentError, fn -> Native.pack_new(-1) end
    assert_raise ArgumentError, fn -> Native.pack_new(:some) end
  end

  test "a list of unknown length is counted by its packing, in one walk" do
    # pack_new(:any): no count given, the offsets and bytes grow as the
    # list goes (from 4096 offsets: a million candidates double them 8
    # times), and the count comes with :done
    list = for i <- 1..1_000_000, do: Integer.to_string(i)
    packed = Native.pack_new(:any)
    assert {{:done, 1_000_000}, [_ | _]} = pack_calls(packed, list)
    q = "123456"

    assert Native.search(q, packed, 1_000_000, :byte, 0, 5000, :normal, false, nil) ==
             [{"123456", 0}]

    # every candidate where it belongs: the distances of a sample
    distances = Native.search(q, packed, 1_000_000, :byte, nil, 0, :normal, false, nil)
    assert byte_size(distances) == 4_000_000

    for i <- [1, 4095, 4096, 4097, 65_537, 999_999, 1_000_000] do
      <<_::binary-size((i - 1) * 4), d::32-native, _::binary>> = distances
      assert d == Levenshtein.distance(q, Integer.to_string(i))
    end

    # and all of them as with the count given
    counted = Native.pack_new(1_000_000)
    assert {{:done, 1_000_000}, _} = pack_calls(counted, list)

    assert Native.search(q, counted, 1_000_000, :byte, nil, 0, :normal, false, nil) ==
             distances

    assert Native.search(q, packed, 999_999, :byte, nil, 0, :normal, false, nil) ==
             {:error, :badarg}

    assert Native.pack_release(packed) == :ok

    # empty, one, and what is refused, as with a count
    assert {{:done, 0}, []} = pack_calls(Native.pack_new(:any), [])
    assert {{:done, 1}, []} = pack_calls(Native.pack_new(:any), [""])
    assert {{:error, {:not_a_binary, :tail}}, []} = pack_calls(Native.pack_new(:any), ["a" | "b"])
    assert {{:error, {:not_a_binary, 1}}, []} = pack_calls(Native.pack_new(:any), ["a", 1])
  end

  test "a list searched for the last time gives its memory back; an index, or one still read, keeps it" do
    # Search.run releases a list's packed copy as soon as its answer is
    # made (its blocks then serve the next list), not when the VM collects
    # the resource: a released set has nothing left to search
    list = for i <- 1..10_000, do: Integer.to_string(i)

    search = fn set, limit ->
      Native.search("12", set, 10_000, :byte, nil, limit, :normal, false, nil)
    end

    packed = Native.pack_new(10_000)
    assert {{:done, 10_000}, _} = pack_calls(packed, list)
    assert [{"12", 0} | _] = search.(packed, 3)
    assert Native.pack_release(packed) == :ok
    assert search.(packed, 3) == {:error, :badarg}
    assert Native.pack_release(packed) == :ok

    # more hits than one call makes into a list: the result reads the
    # candidates' bytes, so the set stays until it is done
    packed = Native.pack_new(10_000)
    assert {{:done, 10_000}, _} = pack_calls(packed, list)
    assert {:hits, hits, 10_000} = search.(packed, 10_000)
    assert Native.pack_release(packed) == :ok
    assert [{"12", 0} | _] = search.(packed, 3)
    all = hits_list(hits, [])
    assert [{"12", 0} | _] = all
    assert length(all) == 10_000
    assert Native.pack_release(packed) == :ok
    assert search.(packed, 3) == {:error, :badarg}

    # an index keeps its memory
    %{segments: [segment]} = index = Levenshtein.Index.new(list)
    assert Native.pack_release(segment.ref) == :ok
    assert Levenshtein.nearest("12", index, limit: 1) == [{"12", 0}]

    # the public searches, one list after another (reusing the blocks)
    for n <- [10, 10_000, 3, 20_000] do
      words = Enum.take(Stream.cycle(list), n)

      assert Levenshtein.distances("12", words) ==
               Enum.map(words, &Levenshtein.distance("12", &1))
    end
  end

  test "the public functions name a bad element as before" do
    assert_raise ArgumentError, ~r/position 2 is not a binary/, fn ->
      Levenshtein.nearest("a", ["a", "b", 3])
    end

    assert_raise ArgumentError, ~r/not a proper list/, fn ->
      Levenshtein.distances("a", ["a" | "b"])
    end

    assert_raise ArgumentError, ~r/position 1 is not a binary/, fn ->
      Levenshtein.Index.new(["a", nil])
    end
  end
end
