defmodule WellBehaved.Fuzzy.Processor do
  @moduledoc """
  Preparing text before it is scored: the `processor:` of
  `WellBehaved.Fuzzy`.

  The default processor (`processor: :default`) lowercases, turns every
  character that is not a letter or a number into a space, and trims
  white space at both ends, as rapidfuzz's `default_process` does. Text
  that is all ASCII (up to 64 KiB) is processed natively; other text by
  `String.downcase/1` and Unicode's letter and number categories.

      iex> WellBehaved.Fuzzy.Processor.default("  Hello, World! ")
      "hello  world"
      iex> WellBehaved.Fuzzy.Processor.default("Ærøskøbing-Straße")
      "ærøskøbing straße"

  The folding processor (`processor: :fold`, `fold/1`) does what the
  default one does and also folds accents and compatibility forms, so
  that text compares as people read it:

    1. `String.normalize(text, :nfkd)`: every character decomposed into
       a base and its combining marks, and compatibility forms into
       their plain ones (`"ﬁ"` to `"fi"`, `"²"` to `"2"`, full-width
       letters to ASCII ones, `"½"` to `"1⁄2"`);
    2. the nonspacing marks (Unicode category Mn) dropped: `"é"` is
       `"e"`, `"ё"` is `"е"`, `"й"` is `"и"`, `"ά"` is `"α"`;
    3. `String.downcase/1`;
    4. letters that Unicode does not decompose but that read as a base
       letter with a stroke, bar or hook folded to that letter (`"ł"`,
       `"ø"`, `"đ"`, `"ð"`, `"ħ"`, `"ı"`, `"ŧ"`, and the like of Latin
       Extended-B: `"ƀ"`, `"ɗ"`, `"ƒ"`, `"ɨ"`, `"ƶ"`, ...; see
       `folded_letters/0`), the ligatures read as two letters spelled
       out (`"ß"` and `"ẞ"` to `"ss"`, `"æ"` to `"ae"`, `"œ"` to `"oe"`;
       `"ĳ"` and `"ﬀ"` are step 1's), and the Greek final sigma `"ς"` to
       `"σ"`; letters of their own stay (`"þ"`, `"ŋ"`, `"ə"`, `"ĸ"`);
    5. every character that is not a letter or a number made a space,
       and the spaces at both ends trimmed, as the default processor.

  It differs from `String.normalize/2` alone in steps 2 to 5: NFKD keeps
  the marks (as separate codepoints, which `unit: :codepoint` would count
  and `unit: :grapheme` would put back on their letters); NFKC and NFC
  compose them again. Text made only of ASCII, Latin-1 Supplement, Latin
  Extended-A and -B, IPA, spacing modifiers, combining diacritics, Greek,
  Cyrillic (with its supplement), Latin Extended Additional and Greek
  Extended characters is folded natively, up to 64 KiB a call, by a
  table made from the steps above (the two agree on every character of
  those blocks, alone and in text, a test checks); any other text by
  the steps themselves in Elixir.

      iex> WellBehaved.Fuzzy.Processor.fold("Łępicki")
      "lepicki"
      iex> WellBehaved.Fuzzy.Processor.fold("  Ærøskøbing-Straße ")
      "aeroskobing strasse"
      iex> WellBehaved.Fuzzy.Processor.fold("ΟΔΥΣΣΕΎΣ Ёлка")
      "οδυσσευσ елка"
  """

  alias WellBehaved.Native

  @not_alphanumeric ~r/[^\p{L}\p{N}]/u
  @nonspacing_mark ~r/\p{Mn}/u

  # step 4 of the fold, after the lowercasing: letters with a stroke,
  # bar or hook that Unicode does not decompose, ligatures, final sigma
  @folded_letters %{
    "ß" => "ss",
    "æ" => "ae",
    "œ" => "oe",
    "ø" => "o",
    "ð" => "d",
    "đ" => "d",
    "ħ" => "h",
    "ı" => "i",
    "ł" => "l",
    "ŧ" => "t",
    "ƀ" => "b",
    "ɓ" => "b",
    "ƃ" => "b",
    "ƈ" => "c",
    "ȼ" => "c",
    "ɖ" => "d",
    "ɗ" => "d",
    "ƌ" => "d",
    "ȡ" => "d",
    "ɇ" => "e",
    "ƒ" => "f",
    "ɠ" => "g",
    "ǥ" => "g",
    "ɨ" => "i",
    "ɉ" => "j",
    "ȷ" => "j",
    "ƙ" => "k",
    "ƚ" => "l",
    "ȴ" => "l",
    "ɲ" => "n",
    "ƞ" => "n",
    "ȵ" => "n",
    "ɵ" => "o",
    "ƥ" => "p",
    "ɋ" => "q",
    "ɍ" => "r",
    "ƫ" => "t",
    "ƭ" => "t",
    "ʈ" => "t",
    "ȶ" => "t",
    "ʉ" => "u",
    "ƴ" => "y",
    "ɏ" => "y",
    "ƶ" => "z",
    "ȥ" => "z",
    "ⱥ" => "a",
    "ⱦ" => "t",
    "ȿ" => "s",
    "ɀ" => "z",
    "ẜ" => "s",
    "ẝ" => "s",
    "ς" => "σ"
  }
  @folded_keys Map.keys(@folded_letters)

  @doc "The default processor on one binary (see the module's documentation)."
  @spec default(binary()) :: binary()
  def default(text) when is_binary(text) do
    case Native.fuzzy_default_process(text) do
      :other ->
        utf8!("default/1", text, "neither ASCII nor valid UTF-8")
        text |> String.downcase() |> String.replace(@not_alphanumeric, " ") |> String.trim()

      processed ->
        processed
    end
  end

  @doc """
  The folding processor on one binary (see the module's documentation).
  Raises `ArgumentError` on a binary that is not valid UTF-8.
  """
  @spec fold(binary()) :: binary()
  def fold(text) when is_binary(text) do
    size = byte_size(text)

    case Native.fuzzy_fold(text, 0) do
      {folded, ^size} -> folded
      {chunk, next} -> fold_chunks(text, size, next, [chunk])
      :other -> fold_in_elixir(text)
    end
  end

  # text past one call's bytes: a call a chunk, each untrimmed (only a
  # whole text is trimmed natively), joined and trimmed here
  defp fold_chunks(text, size, at, chunks) do
    case Native.fuzzy_fold(text, at) do
      {chunk, ^size} ->
        [chunk | chunks] |> Enum.reverse() |> IO.iodata_to_binary() |> String.trim(" ")

      {chunk, next} ->
        fold_chunks(text, size, next, [chunk | chunks])

      :other ->
        fold_in_elixir(text)
    end
  end

  @doc """
  The letters the folding processor folds after lowercasing (its step
  4), each with what it becomes.

      iex> WellBehaved.Fuzzy.Processor.folded_letters()["ł"]
      "l"
  """
  @spec folded_letters() :: %{String.t() => String.t()}
  def folded_letters, do: @folded_letters

  @doc false
  # the fold in Elixir, the definition the native table is made from
  # (scripts/fold_table.exs) and the path of text the table lacks
  @spec fold_in_elixir(binary()) :: binary()
  def fold_in_elixir(text) do
    utf8!("fold/1", text, "not valid UTF-8")
    text |> fold_untrimmed() |> String.trim()
  end

  @doc false
  # steps 1 to 5 but the trim: per codepoint, so a text's fold is its
  # codepoints' folds joined, then trimmed
  @spec fold_untrimmed(binary()) :: binary()
  def fold_untrimmed(text) do
    text
    |> String.normalize(:nfkd)
    |> String.replace(@nonspacing_mark, "")
    |> String.downcase()
    |> String.replace(@folded_keys, &Map.fetch!(@folded_letters, &1))
    |> String.replace(@not_alphanumeric, " ")
  end

  defp utf8!(function, text, what) do
    if not String.valid?(text) do
      raise ArgumentError,
            "WellBehaved.Fuzzy.Processor.#{function}: #{inspect(text)} is #{what} " <>
              "(process such text with a function of your own)"
    end
  end

  @doc false
  # the function a `processor:` option stands for (nil: none)
  @spec function(nil | :default | :fold | (binary() -> binary())) ::
          (binary() -> binary()) | nil
  def function(nil), do: nil
  def function(:default), do: &default/1
  def function(:fold), do: &fold/1
  def function(fun) when is_function(fun, 1), do: fun
end
