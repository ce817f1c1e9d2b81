defmodule WellBehaved.FuzzyReferenceProgramTest do
  # The fuzzy tests' reference (c_src/test/fuzzy_reference.h as the program
  # c_src/build/fuzzy_reference, behind test/support/fuzzy_reference.exs):
  # textbook values, exact integer scores past 2^53, and every request it
  # refuses, through the client and on the wire.
  use ExUnit.Case, async: true

  alias WellBehaved.Test.FuzzyReference, as: Ref

  @program Path.expand("../c_src/build/fuzzy_reference", __DIR__)

  test "textbook values" do
    assert Ref.levenshtein(~c"kitten", ~c"sitting") == 3
    assert Ref.levenshtein(~c"kitten", ~c"sitting", {1, 1, 2}) == 5
    assert Ref.osa(~c"ca", ~c"abc") == 3
    assert Ref.damerau_levenshtein(~c"ca", ~c"abc") == 2
    assert Ref.hamming(~c"abc", ~c"abd") == 1
    assert Ref.hamming(~c"abc", ~c"a") == 2
    assert Ref.indel(~c"ab", ~c"b") == 1
    assert_in_delta Ref.jaro(~c"MARTHA", ~c"MARHTA"), 17 / 18, 1.0e-12
    assert_in_delta Ref.jaro_winkler(~c"MARTHA", ~c"MARHTA"), 0.9611111111111111, 1.0e-12
    assert_in_delta Ref.ratio(~c"ab", ~c"b"), 200 / 3, 1.0e-12
    assert Ref.partial_ratio(~c"abc", ~c"xxabcxx") == 100.0
    assert Ref.token_sort_ratio(~c"new york mets", ~c"mets new york", :byte) == 100.0
    # U+3000 splits words in codepoints only
    assert Ref.reference(:token_sort_ratio, "b\u3000a", "a b", :codepoint) == {:percent, 100.0}
    assert Ref.reference(:token_sort_ratio, "b\u3000a", "a b", :byte) != {:percent, 100.0}

    raw = Ref.reference(:levenshtein, "ab", "", :byte)
    assert raw == {:edit, 2, 2}
    assert Ref.kind_of(raw, :similarity) == 0
    assert Ref.kind_of(raw, :normalized_distance) === 1.0
    assert Ref.kind_of({:percent, 75.0}, :normalized_distance) === 0.25
    assert Ref.kind_of({:unit, 0.75}, :distance) === 0.25
  end

  test "integer scores past 2^53 are exact; a maximum past 2^64 - 1 is refused" do
    big = 0x7FFF_FFFF_FFFF_FFFF
    raw = Ref.reference(:levenshtein, "ab", "", :byte, weights: {1, big, 1})
    assert raw == {:edit, 2 * big, 2 * big}
    assert Ref.kind_of(raw, :distance) == 2 * big
    # a substitution's weight past what the sums can hold, yet unused
    most = 0xFFFF_FFFF_FFFF_FFFF
    assert Ref.reference(:levenshtein, "ab", "cd", :byte, weights: {1, 1, most}) == {:edit, 4, 4}

    assert_raise ArgumentError, ~r/weights too large/, fn ->
      Ref.reference(:levenshtein, "abc", "", :byte, weights: {1, big, 1})
    end

    assert_raise ArgumentError, ~r/weights are integers/, fn ->
      Ref.reference(:levenshtein, "a", "", :byte, weights: {1, most + 1, 1})
    end
  end

  test "the client refuses what it cannot send" do
    assert_raise ArgumentError, ~r/unknown scorer/, fn ->
      Ref.reference(:nope, "a", "b", :byte)
    end

    assert_raise ArgumentError, ~r/unknown kind/, fn -> Ref.kind_of({:unit, 0.5}, :nope) end
    assert_raise ArgumentError, ~r/symbols are integers/, fn -> Ref.ratio([-1], ~c"a") end
    assert_raise ArgumentError, ~r/prefix_weight/, fn -> Ref.jaro_winkler(~c"a", ~c"a", :x) end
    assert_raise UnicodeConversionError, fn -> Ref.reference(:ratio, <<0xFF>>, "", :codepoint) end
  end

  test "on the wire: a bad request is answered, a bad frame ends the program" do
    # built by the client's first request
    assert Ref.ratio(~c"a", ~c"a") == 100.0
    # its complaints into a file of the test's
    log = Path.join(System.tmp_dir!(), "fuzzy_reference_#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm(log) end)

    port =
      Port.open(
        {:spawn_executable, "/bin/sh"},
        [:binary, {:packet, 4}, :exit_status, args: ["-c", ~s(exec "$0" 2>"$1"), @program, log]]
      )

    ask = fn request ->
      true = Port.command(port, request)
      assert_receive {^port, {:data, answer}}, 60_000
      answer
    end

    options = <<0, 1::64, 1::64, 1::64, 0.1::float-64>>

    for {request, want} <- [
          {<<?Z>>, "unknown request"},
          {<<?S, 3, "nah">>, "unknown scorer"},
          {<<?S, 5, "ratio", 2>>, "bad options"},
          {<<?S, 5, "ratio">> <> options <> <<1::32>>, "bad symbols"},
          {<<?S, 5, "ratio">> <> options <> <<0::32, 0::32, 0>>, "bad symbols"},
          {<<?K, 3, "nah">>, "unknown kind"},
          {<<?K, 8, "distance", ?E, 3::64, 2::64>>, "bad score"},
          {<<?K, 8, "distance", ?X>>, "bad score"},
          {<<?K, 8, "distance", ?F, 0.5::float-64>>, "bad score"}
        ] do
      assert ask.(request) == "!" <> want, "#{inspect(request)}"
    end

    # still answering, then an empty frame: it ends, failing
    assert ask.(<<?S, 5, "ratio">> <> options <> <<1::32, ?a::32, 1::32, ?a::32>>) ==
             <<?F, 100.0::float-64, 100.0::float-64>>

    true = Port.command(port, <<>>)
    assert_receive {^port, {:exit_status, 1}}, 60_000
    assert File.read!(log) == "fuzzy_reference: a frame of 0 bytes\n"
  end
end
