defmodule WellBehaved.Fuzzy.Graphemes do
  @moduledoc false
  # `unit: :grapheme`: the texts of one call (a pair, a query and its
  # candidates, cdist's queries and candidates) made into codepoints that
  # the native side scores with `unit: :codepoint`, one codepoint per
  # extended grapheme cluster, as String.graphemes/1 splits them:
  #
  #   - a text whose every cluster is one codepoint (checked natively, a
  #     bounded chunk a call: c_src/text/graphemes.c) is its own symbols
  #     and goes as it is (no table);
  #   - the others are split by String.graphemes/1 (Elixir: preemptible).
  #     A cluster of one codepoint below @table_first is that codepoint;
  #     every other cluster (several codepoints, or one from
  #     @table_first on: planes 4 to 16, unassigned but for tags,
  #     variation selectors and private use) gets a codepoint of the
  #     call's table, @table_first + its rank among them in codepoint
  #     order, shared by every text of the call. No text of the fast
  #     path holds a codepoint from @table_first on, so none collides.
  #
  # Words: the token scorers split at white space codepoints (tokens.c's
  # is_space, Unicode's White_Space and U+001C..U+001F). The one cluster
  # of several white space codepoints, CR LF, is given a white space
  # codepoint that no text of the call holds (@spaces, rarest first), so
  # that it splits words and stays unequal to every other cluster. Tokens
  # are sorted by their symbols: clusters of one codepoint below
  # @table_first by that codepoint, before every other cluster, the
  # others among themselves by their codepoints.

  alias WellBehaved.{Native, Options}

  @table_first 0x40000
  @table_most 0x110000 - @table_first

  # the native side's white space in codepoints (tokens.c's is_space; a
  # test checks that each splits words), rarest first
  @spaces [0x1F, 0x1E, 0x1D, 0x1C, 0x2029, 0x2028, 0x85, 0x1680, 0x205F] ++
            Enum.to_list(0x2000..0x200A) ++
            [0x202F, 0x3000, 0xA0, 0x0B, 0x0C, 0x0D, 0x0A] ++
            [0x09, 0x20]

  # the scorers that split words: a white space cluster must split them
  # (a scorer added to the native side that splits words goes here)
  @word_scorers [
    :token_sort_ratio,
    :token_set_ratio,
    :token_ratio,
    :partial_token_sort_ratio,
    :partial_token_set_ratio,
    :partial_token_ratio,
    :wratio
  ]

  @doc "The white space codepoints a cluster of white space may be given."
  def spaces, do: @spaces

  @doc "The first codepoint of a call's table."
  def table_first, do: @table_first

  @doc """
  The texts of one call as codepoints, one a grapheme cluster, in order:
  `{:ok, texts}`, or `{:invalid_utf8, at}` for the first text (its
  position in `texts`) that is not valid UTF-8. Raises `ArgumentError`
  (naming `name`) when the call has more distinct clusters than its
  table holds, or, for a scorer that splits words, more distinct white
  space clusters than white space codepoints it does not hold.
  """
  @spec prepare(String.t(), [binary()], atom()) ::
          {:ok, [binary()]} | {:invalid_utf8, non_neg_integer()}
  def prepare(name, texts, scorer) do
    verdicts = Enum.map(texts, &verdict/1)

    case Enum.find_index(verdicts, &(&1 == :invalid)) do
      nil ->
        if :clusters in verdicts,
          do: {:ok, symbols(name, texts, verdicts, scorer)},
          else: {:ok, texts}

      at ->
        {:invalid_utf8, at}
    end
  end

  @doc """
  `unit: :grapheme` is refused on an index: its candidates are packed
  without the table that numbers their clusters.
  """
  @spec no_index!(String.t(), map()) :: :ok
  def no_index!(name, %{unit: :grapheme}) do
    Options.invalid!(
      name,
      :unit,
      :grapheme,
      ":byte or :codepoint on an index (an index packs its candidates without " <>
        "the table that numbers their grapheme clusters): search a list for graphemes"
    )
  end

  def no_index!(_name, _call), do: :ok

  # :single (every cluster one codepoint), :clusters or :invalid
  defp verdict(text), do: verdict(text, 0)

  defp verdict(text, from) do
    case Native.fuzzy_graphemes_scan(text, from) do
      {:more, next} -> verdict(text, next)
      :clusters -> if String.valid?(text), do: :clusters, else: :invalid
      other -> other
    end
  end

  defp symbols(name, texts, verdicts, scorer) do
    split =
      Enum.zip_with(texts, verdicts, fn
        text, :clusters -> String.graphemes(text)
        text, :single -> text
      end)

    table = table(name, split, texts, scorer)

    Enum.map(split, fn
      text when is_binary(text) -> text
      clusters -> for cluster <- clusters, into: "", do: Map.get(table, cluster, cluster)
    end)
  end

  # every cluster that is not its own symbol, with its symbol
  defp table(name, split, texts, scorer) do
    clusters =
      for clusters <- split,
          is_list(clusters),
          cluster <- clusters,
          not own?(cluster),
          into: %{} do
        {cluster, true}
      end

    {spacing, others} = clusters |> Map.keys() |> Enum.split_with(&white_space?/1)
    {spaced, others} = spaced(name, spacing, others, texts, scorer)
    others = Enum.sort(others)

    if length(others) > @table_most do
      raise ArgumentError,
            "#{name}: unit: :grapheme numbers at most #{@table_most} distinct grapheme " <>
              "clusters of several codepoints a call; this one has #{length(others)}"
    end

    others
    |> Enum.with_index(@table_first)
    |> Map.new(fn {cluster, symbol} -> {cluster, <<symbol::utf8>>} end)
    |> Map.merge(spaced)
  end

  # a cluster of one codepoint below the table
  defp own?(<<c::utf8>>), do: c < @table_first
  defp own?(_cluster), do: false

  defp white_space?(cluster), do: Enum.all?(String.to_charlist(cluster), &(&1 in @spaces))

  # the white space clusters given white space codepoints no text holds
  # (in codepoint order); those left over go to the table, unless the
  # scorer splits words
  defp spaced(_name, [], others, _texts, _scorer), do: {%{}, others}

  defp spaced(name, spacing, others, texts, scorer) do
    spacing = Enum.sort(spacing)

    free =
      @spaces
      |> Stream.reject(fn c -> Enum.any?(texts, &String.contains?(&1, <<c::utf8>>)) end)
      |> Enum.take(length(spacing))

    given = Enum.zip(spacing, free)
    left = Enum.drop(spacing, length(given))

    if left != [] and scorer in @word_scorers do
      raise ArgumentError,
            "#{name}: unit: :grapheme with #{inspect(scorer)} gives each cluster of several " <>
              "white space codepoints (CR LF) a white space codepoint the texts do not hold; " <>
              "these texts hold all #{length(@spaces)}: process them first (processor: :default)"
    end

    {Map.new(given, fn {cluster, c} -> {cluster, <<c::utf8>>} end), left ++ others}
  end
end
