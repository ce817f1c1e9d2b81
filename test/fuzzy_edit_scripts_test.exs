defmodule WellBehaved.FuzzyEditScriptsTest do
  # Issue 48, item 1: edit scripts (Fuzzy.editops/3, opcodes/3,
  # apply_edits/4) for :levenshtein, :indel and :osa. Checked against a
  # textbook matrix and traceback written here in Elixir (the common
  # affixes dropped, then from the end: a transposition when one is on a
  # shortest path (OSA), else a deletion, else an insertion when the cell
  # to the left is lower than the one up-left, else the diagonal: the
  # rule rapidfuzz-cpp's traceback follows), record by record on pairs
  # the native core keeps one matrix for; on every pair: as many edits as
  # Fuzzy.score/3's distance (its own kernels), the destination rebuilt
  # by apply_edits/4 from the editops and from the opcodes, the opcodes
  # covering both strings. Every schedule mode (and :external) with and
  # without tiny slices on pairs thousands of units long (split, probed,
  # kept); the error paths; a caller killed mid-job.
  use ExUnit.Case, async: false

  alias WellBehaved.{Fuzzy, Runtime}
  import WellBehaved.Testing

  @scorers [:levenshtein, :indel, :osa]

  # ---- the textbook reference --------------------------------------------------

  defp units(s, :byte), do: :binary.bin_to_list(s)
  defp units(s, :codepoint), do: String.to_charlist(s)
  defp units(s, :grapheme), do: String.graphemes(s)

  # the matrix, as a map {i, j} => value
  defp matrix(scorer, a, b) do
    at = List.to_tuple(a)
    bt = List.to_tuple(b)
    m = tuple_size(at)
    n = tuple_size(bt)

    for i <- 0..m, j <- 0..n, reduce: %{} do
      d ->
        v =
          if i == 0 or j == 0 do
            i + j
          else
            x = elem(at, i - 1)
            y = elem(bt, j - 1)
            best = min(d[{i - 1, j}] + 1, d[{i, j - 1}] + 1)
            best = if x == y, do: min(best, d[{i - 1, j - 1}]), else: best

            best =
              if scorer != :indel and x != y, do: min(best, d[{i - 1, j - 1}] + 1), else: best

            if scorer == :osa and i >= 2 and j >= 2 and x == elem(bt, j - 2) and
                 elem(at, i - 2) == y,
               do: min(best, d[{i - 2, j - 2}] + 1),
               else: best
          end

        Map.put(d, {i, j}, v)
    end
  end

  defp reference(scorer, a, b) do
    {pre, a, b} = drop_prefix(a, b, 0)
    {a, b} = drop_suffix(a, b)
    d = matrix(scorer, a, b)
    at = List.to_tuple(a)
    bt = List.to_tuple(b)
    ops = trace(scorer, d, at, bt, tuple_size(at), tuple_size(bt), [])
    {d[{tuple_size(at), tuple_size(bt)}], for({t, s, x} <- ops, do: {t, s + pre, x + pre})}
  end

  defp drop_prefix([x | a], [x | b], k), do: drop_prefix(a, b, k + 1)
  defp drop_prefix(a, b, k), do: {k, a, b}

  defp drop_suffix(a, b) do
    {_, ra, rb} = drop_prefix(Enum.reverse(a), Enum.reverse(b), 0)
    {Enum.reverse(ra), Enum.reverse(rb)}
  end

  defp trace(_scorer, _d, _a, _b, 0, 0, ops), do: ops
  defp trace(s, d, a, b, i, 0, ops), do: trace(s, d, a, b, i - 1, 0, [{:delete, i - 1, 0} | ops])
  defp trace(s, d, a, b, 0, j, ops), do: trace(s, d, a, b, 0, j - 1, [{:insert, 0, j - 1} | ops])

  defp trace(scorer, d, a, b, i, j, ops) do
    v = d[{i, j}]
    x = elem(a, i - 1)
    y = elem(b, j - 1)

    cond do
      scorer == :osa and i >= 2 and j >= 2 and x == elem(b, j - 2) and elem(a, i - 2) == y and
        x != y and d[{i - 2, j - 2}] + 1 == v ->
        trace(scorer, d, a, b, i - 2, j - 2, [{:transpose, i - 2, j - 2} | ops])

      d[{i - 1, j}] + 1 == v ->
        trace(scorer, d, a, b, i - 1, j, [{:delete, i - 1, j} | ops])

      d[{i, j - 1}] < d[{i - 1, j - 1}] ->
        trace(scorer, d, a, b, i, j - 1, [{:insert, i, j - 1} | ops])

      x == y ->
        trace(scorer, d, a, b, i - 1, j - 1, ops)

      true ->
        trace(scorer, d, a, b, i - 1, j - 1, [{:replace, i - 1, j - 1} | ops])
    end
  end

  # ---- what every script must be ----------------------------------------------

  defp check_script(a, b, opts) do
    unit = Keyword.get(opts, :unit, :byte)
    editops = Fuzzy.editops(a, b, opts)
    opcodes = Fuzzy.opcodes(a, b, opts)
    distance = Fuzzy.score(a, b, scorer: opts[:scorer], score: :distance, unit: unit)
    where = "#{inspect(a)} -> #{inspect(b)} #{inspect(opts)}"
    assert length(editops) == distance, "#{where}: #{length(editops)} edits, distance #{distance}"
    assert Fuzzy.apply_edits(editops, a, b, unit: unit) == b, "#{where}: editops"
    assert Fuzzy.apply_edits(opcodes, a, b, unit: unit) == b, "#{where}: opcodes"
    m = length(units(a, unit))
    n = length(units(b, unit))
    assert covers?(opcodes, 0, 0, m, n), "#{where}: opcodes #{inspect(opcodes)}"
    # the types of edit the scorer has
    allowed = %{levenshtein: 3, indel: 2, osa: 4}[opts[:scorer]]
    types = [:insert, :delete, :replace, :transpose] |> Enum.take(allowed)
    assert Enum.all?(editops, fn {t, _, _} -> t in types end), "#{where}: #{inspect(editops)}"
    editops
  end

  defp covers?([], s, d, m, n), do: s == m and d == n

  defp covers?([{tag, s, s2, d, d2} | rest], s, d, m, n) do
    shape =
      case tag do
        :equal -> s2 - s == d2 - d and s2 > s
        :insert -> s2 == s and d2 > d
        :delete -> d2 == d and s2 > s
        :replace -> s2 > s and d2 > d
      end

    shape and covers?(rest, s2, d2, m, n)
  end

  defp covers?(_, _, _, _, _), do: false

  # ---- random pairs ---------------------------------------------------------------

  defp random_text(len, alphabet),
    do: for(_ <- 1..len//1, into: "", do: Enum.random(alphabet))

  defp near(text, edits, alphabet) do
    chars = String.codepoints(text)

    Enum.reduce(1..edits, chars, fn _, cs ->
      i = :rand.uniform(max(length(cs), 1)) - 1

      case :rand.uniform(4) do
        1 ->
          List.insert_at(cs, i, Enum.random(alphabet))

        2 ->
          List.delete_at(cs, i)

        3 ->
          List.replace_at(cs, i, Enum.random(alphabet))

        _ when i + 1 < length(cs) ->
          cs |> List.replace_at(i, Enum.at(cs, i + 1)) |> List.replace_at(i + 1, Enum.at(cs, i))

        _ ->
          cs
      end
    end)
    |> Enum.join()
  end

  @bytes ~w(a b c d)
  @wide ["a", "é", "ж", "字", "😀", "b"]

  test "random pairs: the textbook script, record by record, in bytes and codepoints" do
    :rand.seed(:exsss, {48, 1, 1})

    for round <- 1..150, scorer <- @scorers do
      {alphabet, unit} = if rem(round, 2) == 0, do: {@wide, :codepoint}, else: {@bytes, :byte}
      a = random_text(:rand.uniform(40) - 1, alphabet)

      b =
        if rem(round, 3) == 0,
          do: near(a, 3, alphabet),
          else: random_text(:rand.uniform(40) - 1, alphabet)

      opts = [scorer: scorer, unit: unit]
      editops = check_script(a, b, opts)
      {distance, want} = reference(scorer, units(a, unit), units(b, unit))
      assert length(editops) == distance
      assert editops == want, "#{inspect(a)} -> #{inspect(b)} #{inspect(opts)}"
    end
  end

  # clusters of several codepoints: a letter and its marks, a flag, a family
  @clusters ["a", "e\u0301", "e\u0301\u0302", "🇫🇷", "🇩🇪", "👨‍👩‍👧", "b", "\r\n"]

  test "random pairs in graphemes: the textbook script over String.graphemes/1" do
    :rand.seed(:exsss, {48, 5, 5})

    for round <- 1..60, scorer <- @scorers do
      a = random_text(:rand.uniform(25) - 1, @clusters)

      b =
        if rem(round, 2) == 0,
          do: near(a, 3, @clusters),
          else: random_text(:rand.uniform(25) - 1, @clusters)

      opts = [scorer: scorer, unit: :grapheme]
      editops = check_script(a, b, opts)
      {distance, want} = reference(scorer, units(a, :grapheme), units(b, :grapheme))
      assert length(editops) == distance
      assert editops == want, "#{inspect(a)} -> #{inspect(b)} #{inspect(opts)}"
    end
  end

  test "longer pairs: scripts as short as the distance, rebuilding the destination" do
    :rand.seed(:exsss, {48, 2, 2})

    for round <- 1..12, scorer <- @scorers do
      {alphabet, unit} = if rem(round, 2) == 0, do: {@wide, :codepoint}, else: {@bytes, :byte}
      a = random_text(200 + :rand.uniform(400), alphabet)
      b = if rem(round, 3) == 0, do: random_text(300, alphabet), else: near(a, 40, alphabet)
      check_script(a, b, scorer: scorer, unit: unit)
    end
  end

  test "known scripts" do
    assert Fuzzy.editops("kitten", "sitting") == [
             {:replace, 0, 0},
             {:replace, 4, 4},
             {:insert, 6, 6}
           ]

    assert Fuzzy.editops("ab", "ba") == [{:insert, 0, 0}, {:delete, 1, 2}]
    assert Fuzzy.editops("ab", "ba", scorer: :osa) == [{:transpose, 0, 0}]
    assert Fuzzy.editops("xab", "ab", scorer: :indel) == [{:delete, 0, 0}]
    assert Fuzzy.editops("", "") == []
    assert Fuzzy.opcodes("ab", "ba", scorer: :osa) == [{:replace, 0, 2, 0, 2}]
    assert Fuzzy.opcodes("abc", "abc") == [{:equal, 0, 3, 0, 3}]
    # positions in the processed strings
    assert Fuzzy.editops("  Kitten!", "sitting", processor: :default) ==
             Fuzzy.editops("kitten", "sitting")

    assert Fuzzy.editops("añb", "anb", unit: :codepoint) == [{:replace, 1, 1}]
    assert Fuzzy.editops("añb", "anb") == [{:replace, 1, 1}, {:delete, 2, 2}]
    # weights of one each are unit costs
    assert Fuzzy.editops("ab", "ba", weights: {1, 1, 1}) == Fuzzy.editops("ab", "ba")
  end

  # ---- every mode, slices far smaller than the work -----------------------------------

  test "every mode, with and without tiny slices, gives the same script" do
    :rand.seed(:exsss, {48, 3, 3})
    # near copies of 2,100 (past rapidfuzz's bound: split; probed for a
    # narrow band), a random pair of 300 (one matrix kept), a side empty
    long = random_text(2100, ~w(a b c d e f g h))
    near_long = near(long, 25, ~w(a b c d e f g h))

    pairs = [
      {long, near_long},
      {random_text(300, @bytes), random_text(280, @bytes)},
      {String.duplicate("ab", 900), ""}
    ]

    for {a, b} <- pairs, scorer <- @scorers do
      want = Fuzzy.editops(a, b, scorer: scorer, schedule: :normal)
      assert Fuzzy.apply_edits(want, a, b) == b

      modes_agree(
        fn opts -> Fuzzy.editops(a, b, [scorer: scorer] ++ opts) end,
        want,
        Runtime.modes() ++ [:external]
      )
    end

    assert_no_live_jobs()
  end

  test "a caller killed mid-job leaves no live job" do
    # jobs that last a second or so, so that a loaded machine still sees
    # them at work (tiny slices; a pool thread's cost little, a dirty run
    # has none), the scorers in turn
    short = {random_text(6000, @bytes), random_text(6000, @bytes)}
    medium = {random_text(30_000, @bytes), random_text(30_000, @bytes)}
    long = {random_text(80_000, @bytes), random_text(80_000, @bytes)}
    modes = [:yielding, :yielding_dirty, :threaded, :auto, :dirty_cpu]

    for {mode, i} <- Enum.with_index(modes) do
      scorer = Enum.at(@scorers, rem(i, 3))

      {{a, b}, tiny} =
        case mode do
          :dirty_cpu -> {long, false}
          :threaded -> {medium, true}
          _ -> {short, true}
        end

      kill_mid_job(fn ->
        Fuzzy.editops(a, b, scorer: scorer, schedule: mode, tiny_slices: tiny)
      end)
    end
  end

  # ---- errors ---------------------------------------------------------------------

  test "bad arguments raise, naming the function and what it takes" do
    msg = fn f -> assert_raise(ArgumentError, f).message end
    assert msg.(fn -> Fuzzy.editops(:a, "b") end) =~ "Fuzzy.editops/3: invalid first argument :a"
    assert msg.(fn -> Fuzzy.opcodes("a", 1) end) =~ "Fuzzy.opcodes/3: invalid second argument 1"

    assert msg.(fn -> Fuzzy.editops("a", "b", scorer: :jaro) end) =~
             ":levenshtein, :indel or :osa"

    assert msg.(fn -> Fuzzy.editops("a", "b", weights: {1, 1, 2}) end) =~ "unit costs"
    assert msg.(fn -> Fuzzy.editops("a", "b", scorer: :osa, weights: {1, 1, 1}) end) =~ ":weights"
    assert msg.(fn -> Fuzzy.editops("a", "b", score: :distance) end) =~ "unknown option :score"

    assert msg.(fn -> Fuzzy.editops("a", "b", unit: :word) end) =~
             ":byte, :codepoint or :grapheme"

    assert msg.(fn -> Fuzzy.editops("a", "b", schedule: :later) end) =~ "schedule"
    assert msg.(fn -> Fuzzy.editops("a", "b", processor: 3) end) =~ "processor"
    assert msg.(fn -> Fuzzy.editops("a", "b", :osa) end) =~ "keyword"
    assert msg.(fn -> Fuzzy.editops(<<0xFF>>, "b", unit: :codepoint) end) =~ "first argument"

    assert msg.(fn -> Fuzzy.opcodes("b", <<0xC3>>, unit: :codepoint, schedule: :external) end) =~
             "second argument"

    assert msg.(fn ->
             Fuzzy.editops("a", <<0xC3>>, unit: :codepoint, schedule: :yielding, tiny_slices: true)
           end) =~
             "second argument"
  end

  test "apply_edits/4 refuses edits that do not fit the strings" do
    unfit = fn edits, a, b, opts ->
      assert_raise(ArgumentError, fn -> Fuzzy.apply_edits(edits, a, b, opts) end).message
    end

    assert unfit.([{:insert, 5, 0}], "ab", "xab", []) =~ "do not fit"
    assert unfit.([{:delete, 2, 2}], "ab", "ab", []) =~ "past a string"
    assert unfit.([{:replace, 1, 1}, {:replace, 0, 0}], "ab", "xy", []) =~ "not where"
    assert unfit.([{:replace, 1, 0}], "ab", "xy", []) =~ "not where"
    assert unfit.([], "ab", "abc", []) =~ "leave 2 units of the source and 3"
    assert unfit.([{:transpose, 1, 1}], "ab", "ab", []) =~ "past a string"
    assert unfit.([{:equal, 0, 1, 0, 1}], "ab", "ab", []) =~ "opcodes end before"
    assert unfit.([{:equal, 1, 2, 1, 2}], "ab", "ab", []) =~ "does not start"
    assert unfit.([{:insert, 0, 1, 0, 1}], "ab", "ab", []) =~ "do not fit a :insert"
    assert unfit.([{:equal, 0, 3, 0, 3}], "ab", "ab", []) =~ "past a string"
    assert unfit.([{:replace, 0, 0}, {:equal, 1, 2, 1, 2}], "ab", "xb", []) =~ "invalid edit"
    assert unfit.([{:move, 0, 0}], "ab", "ab", []) =~ "invalid edit"
    assert unfit.([{:delete, 0, 0} | :tail], "ab", "b", []) =~ "proper list"
    assert unfit.(:edits, "ab", "b", []) =~ "invalid first argument"
    assert unfit.([], 1, "b", []) =~ "invalid second argument"
    assert unfit.([], "b", nil, []) =~ "invalid third argument"
    assert unfit.([], "b", "b", unit: :word) =~ ":byte, :codepoint or :grapheme"
    assert unfit.([], "b", "b", scorer: :osa) =~ "unknown option :scorer"
    assert unfit.([{:delete, 0, 0}], <<0xFF, ?a>>, "a", unit: :codepoint) =~ "valid UTF-8"
    assert unfit.([], "a", <<?a, 0xFF>>, unit: :codepoint) =~ "valid UTF-8"
    # the same edits in the units they were made in
    edits = Fuzzy.editops("añb", "anb", unit: :codepoint)
    assert Fuzzy.apply_edits(edits, "añb", "anb", unit: :codepoint) == "anb"
    assert unfit.(edits, "añb", "anb", []) =~ "do not fit"
  end
end
