defmodule WellBehaved.FuzzyFoldTest do
  # The folding processor (processor: :fold, Processor.fold/1): its native
  # table (c_src/text/fold_table.h) against its definition in Elixir
  # (Processor.fold_in_elixir/1: NFKD, marks dropped, lowercased, the
  # folded letters, non-alphanumerics to spaces, trimmed) on every
  # codepoint of the blocks it covers, alone and in text; long text a
  # chunk a call; text the table lacks; the processor in every function
  # that takes one.
  use ExUnit.Case, async: true

  alias WellBehaved.{Fuzzy, Native}
  alias WellBehaved.Fuzzy.{Index, Processor}

  # the blocks the table covers (scripts/fold_table.exs)
  @covered Enum.concat(0..0x052F, 0x1E00..0x1FFF)

  defp native(text) do
    case Native.fuzzy_fold(text, 0) do
      {folded, size} when size == byte_size(text) -> folded
      other -> other
    end
  end

  defp assigned?(c), do: not String.match?(<<c::utf8>>, ~r/\p{Cn}/u)

  test "every covered codepoint folds natively as in Elixir, alone and in text" do
    assigned = Enum.filter(@covered, &assigned?/1)
    # the blocks are old: few holes
    assert length(assigned) > 1800

    for c <- assigned do
      s = <<c::utf8>>

      for text <- [s, "x" <> s <> "y", "Ab " <> s <> s <> " 9", s <> "\u0301", "  " <> s] do
        want = Processor.fold_in_elixir(text)
        got = native(text)
        assert got == want, "U+#{Integer.to_string(c, 16)} in #{inspect(text)}: #{inspect(got)}"
        assert Processor.fold(text) == want
      end
    end

    # unassigned ones are the Elixir fold's
    for c <- @covered, not assigned?(c), do: assert(native(<<?a, c::utf8>>) == :other)
  end

  test "random texts of covered codepoints fold natively as in Elixir" do
    assigned = Enum.filter(@covered, &assigned?/1)
    common = Enum.concat([?a..?z, ?A..?Z, ?0..?9, [?\s, ?-, ?,]])

    for _ <- 1..3000 do
      text =
        for _ <- 1..Enum.random(0..24), into: "" do
          <<Enum.random(if :rand.uniform(2) == 1, do: common, else: assigned)::utf8>>
        end

      assert native(text) == Processor.fold_in_elixir(text), inspect(text)
    end
  end

  test "examples: accents, strokes, ligatures, Greek and Cyrillic" do
    for {text, want} <- [
          {"Łępicki", "lepicki"},
          {"Ærøskøbing-Straße", "aeroskobing strasse"},
          {"ĐORĐE Ħal", "dorde hal"},
          {"İstanbul ılık", "istanbul ilik"},
          {"Œuvre ǆungla", "oeuvre dzungla"},
          {"Þór ŋ", "þor ŋ"},
          {"ΟΔΥΣΣΕΎΣ", "οδυσσευσ"},
          {"Ёлка, йод", "елка  иод"},
          {"½ ﬁ ２", "1 2 fi 2"},
          {"  ", ""},
          {"", ""}
        ] do
      assert Processor.fold(text) == want, inspect(text)
      assert Processor.fold_in_elixir(text) == want, inspect(text)
    end

    # text the table lacks: the same steps in Elixir
    assert Native.fuzzy_fold("Café 東京", 0) == :other
    assert Processor.fold("Café 東京") == "cafe 東京"
    assert Processor.fold("Ｃａｆé") == "cafe"
  end

  test "every folded letter folds as its table says, its capital too" do
    for {letter, folded} <- Processor.folded_letters() do
      assert Processor.fold(letter) == folded

      assert Processor.fold(String.upcase(letter)) ==
               Processor.fold_in_elixir(String.upcase(letter))

      # none decomposes: step 1 would have taken it
      assert String.normalize(letter, :nfkd) == letter
    end
  end

  test "long text: a chunk of 64 KiB a native call, joined, trimmed once" do
    unit = " Łódź-Ἀθῆναι, Ёж "
    text = String.duplicate(unit, 8000)
    assert byte_size(text) > 3 * 65_536

    # a native call folds 64 KiB (c_src/nif/fuzzy_text.c), a sequence never cut
    assert {chunk, next} = Native.fuzzy_fold(text, 0)
    assert next in 65_536..(65_536 + 3) and byte_size(chunk) > 0
    assert String.starts_with?(chunk, " "), "a chunk is not trimmed"

    want = Processor.fold_in_elixir(text)
    assert Processor.fold(text) == want
    assert String.starts_with?(want, "lodz αθηναι  еж  lodz")

    # all spaces, past a chunk: empty
    assert Processor.fold(String.duplicate(" ,", 50_000)) == ""

    # a codepoint the table lacks past the first chunk: Elixir's
    tail = text <> "東"
    assert Processor.fold(tail) == Processor.fold_in_elixir(tail)
    assert String.ends_with?(Processor.fold(tail), "еж 東")
  end

  test "invalid UTF-8 raises, naming fold/1" do
    for bad <- ["ab\xFF", "\xC3", String.duplicate("a", 70_000) <> "\xFF"] do
      assert_raise ArgumentError, ~r/Processor.fold\/1: .* is not valid UTF-8/, fn ->
        Processor.fold(bad)
      end
    end

    assert_raise ArgumentError,
                 ~r/score\/3: invalid :processor :folded, expected nil, :default, :fold/,
                 fn ->
                   Fuzzy.score("a", "b", processor: :folded)
                 end
  end

  test "processor: :fold in scores, searches, cdist and an index" do
    assert Fuzzy.score("Łępicki", "LEPICKI", processor: :fold, scorer: :ratio) == 1.0
    assert Fuzzy.score("Łępicki", "LEPICKI", processor: :default, scorer: :ratio) < 1.0

    names = ["Łępicki", "Müller", "Ørsted"]
    assert [{"Müller", 1.0, 1}] = Fuzzy.extract("muller", names, processor: :fold, limit: 1)
    assert [[1.0, _, _]] = Fuzzy.cdist(["lepicki"], names, processor: :fold, scorer: :ratio)

    index = Index.new(names, processor: :fold)
    assert [{"Ørsted", 1.0, 2}] = Fuzzy.extract("ORSTED", index, scorer: :ratio, limit: 1)

    # a dump keeps the processor
    loaded = index |> Index.dump() |> Index.load()
    assert loaded.processor == :fold
    assert [{"Ørsted", 1.0, 2}] = Fuzzy.extract("ORSTED", loaded, scorer: :ratio, limit: 1)

    # folded, then graphemes
    assert Fuzzy.score("e\u0301te", "ETE", processor: :fold, unit: :grapheme, scorer: :ratio) ==
             1.0
  end
end
