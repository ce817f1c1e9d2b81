defmodule WellBehaved.Lab.Report.MarkdownHtml do
  @moduledoc false
  # The subset of Markdown the lab writes, converted to HTML for
  # report.html; see to_html/2.

  @doc """
  Converts `markdown` to HTML; the subset it knows and its options
  (`image:`, `id_prefix:`) are those of
  `WellBehaved.Lab.Report.markdown_to_html/2`.
  """
  @spec to_html(String.t(), keyword()) :: String.t()
  def to_html(markdown, opts \\ []) do
    prefix = Keyword.get(opts, :id_prefix, "")

    image =
      Keyword.get(opts, :image, fn src, alt ->
        ~s(<p><img src="#{escape(src)}" alt="#{escape(alt)}"></p>\n)
      end)

    markdown
    |> String.replace("\r\n", "\n")
    |> String.split("\n")
    |> blocks([])
    |> Enum.map(fn
      {:image, alt, src} -> image.(src, alt)
      block -> block_html(block, prefix)
    end)
    |> IO.iodata_to_binary()
  end

  # lines -> [{:heading, level, text} | {:para, [line]} | {:table, [line]}
  #           | {:list, :ul | :ol, [item]} | {:code, [line]}]
  defp blocks([], acc), do: Enum.reverse(acc)

  defp blocks([line | rest] = lines, acc) do
    cond do
      blank?(line) ->
        blocks(rest, acc)

      String.starts_with?(String.trim_leading(line), "```") ->
        {code, rest} =
          Enum.split_while(rest, &(not String.starts_with?(String.trim_leading(&1), "```")))

        blocks(Enum.drop(rest, 1), [{:code, code} | acc])

      image = Regex.run(~r/^!\[([^\]]*)\]\(([^)\s]+)\)\s*$/, line) ->
        [_, alt, src] = image
        blocks(rest, [{:image, alt, src} | acc])

      match = Regex.run(~r/^(\#{1,6})\s+(.*?)\s*#*\s*$/, line) ->
        [_, hashes, text] = match
        blocks(rest, [{:heading, String.length(hashes), text} | acc])

      table_line?(line) ->
        {table, rest} = Enum.split_while(lines, &table_line?/1)
        blocks(rest, [{:table, table} | acc])

      list = list_kind(line) ->
        {items, rest} = list_items(lines, list, [])
        blocks(rest, [{:list, list, items} | acc])

      true ->
        {para, rest} = Enum.split_while(lines, &paragraph_line?/1)
        blocks(rest, [{:para, para} | acc])
    end
  end

  defp blank?(line), do: String.trim(line) == ""
  defp table_line?(line), do: String.starts_with?(String.trim_leading(line), "|")

  defp list_kind(line) do
    cond do
      line =~ ~r/^\s{0,3}[-*+]\s+/ -> :ul
      line =~ ~r/^\s{0,3}\d{1,9}[.)]\s+/ -> :ol
      true -> nil
    end
  end

  defp paragraph_line?(line) do
    not blank?(line) and not table_line?(line) and list_kind(line) == nil and
      not (line =~ ~r/^\#{1,6}\s/) and not String.starts_with?(String.trim_leading(line), "```")
  end

  # items of one list; an indented line continues the item above it
  defp list_items([line | rest] = lines, kind, items) do
    cond do
      list_kind(line) == kind ->
        text = String.replace(line, ~r/^\s{0,3}([-*+]|\d{1,9}[.)])\s+/, "")
        list_items(rest, kind, [text | items])

      items != [] and line =~ ~r/^\s{2,}\S/ ->
        [last | earlier] = items
        list_items(rest, kind, [last <> " " <> String.trim(line) | earlier])

      true ->
        {Enum.reverse(items), lines}
    end
  end

  defp list_items([], _kind, items), do: {Enum.reverse(items), []}

  defp block_html({:heading, level, text}, prefix) do
    id = text |> String.downcase() |> String.replace(~r/[^a-z0-9]+/u, "-") |> String.trim("-")
    ~s(<h#{level} id="#{escape(prefix)}#{id}">#{inline(text)}</h#{level}>\n)
  end

  defp block_html({:para, lines}, _) do
    ["<p>", lines |> Enum.map(&String.trim/1) |> Enum.join("\n") |> inline(), "</p>\n"]
  end

  defp block_html({:code, lines}, _) do
    ["<pre><code>", escape(Enum.join(lines, "\n")), "</code></pre>\n"]
  end

  defp block_html({:list, kind, items}, _) do
    ["<#{kind}>\n", Enum.map(items, &["<li>", inline(&1), "</li>\n"]), "</#{kind}>\n"]
  end

  defp block_html({:table, lines}, _) do
    rows = Enum.map(lines, &table_cells/1)

    {head, aligns, body} =
      case rows do
        [head, sep | body] ->
          if Enum.all?(sep, &(&1 =~ ~r/^:?-+:?$/)),
            do: {head, Enum.map(sep, &align/1), body},
            else: {nil, [], rows}

        _ ->
          {nil, [], rows}
      end

    [
      "<table>\n",
      if(head, do: ["<thead><tr>", row_html(head, "th", aligns), "</tr></thead>\n"], else: []),
      "<tbody>\n",
      Enum.map(body, &["<tr>", row_html(&1, "td", aligns), "</tr>\n"]),
      "</tbody>\n</table>\n"
    ]
  end

  defp row_html(cells, tag, aligns) do
    cells
    |> Enum.with_index()
    |> Enum.map(fn {cell, i} ->
      attrs =
        case {Enum.at(aligns, i), tag == "td" and numeric?(cell)} do
          {a, _} when a in ["center", "right"] -> ~s( style="text-align: #{a}")
          {_, true} -> ~s( class="num")
          _ -> ""
        end

      ["<#{tag}#{attrs}>", inline(cell), "</#{tag}>"]
    end)
  end

  defp align(sep) do
    case {String.starts_with?(sep, ":"), String.ends_with?(sep, ":")} do
      {true, true} -> "center"
      {false, true} -> "right"
      _ -> nil
    end
  end

  # a figure, possibly with a unit: "12.5", "1 234", "3.10 ms", "0.97x", "-4%"
  defp numeric?(cell) do
    cell =~ ~r/^[-+~]?\d[\d ,.]*(e[-+]?\d+)?\s*(x|%|[a-zA-Zµ\/]{1,8})?$/u and
      not (cell =~ ~r/^\d+\s+[a-zA-Z]+\s+\S/)
  end

  # splits "| a | b \| c |" into ["a", "b | c"]
  defp table_cells(line) do
    line
    |> String.trim()
    |> String.replace_prefix("|", "")
    |> drop_closing_pipe()
    |> String.split(~r/(?<!\\)\|/)
    |> Enum.map(&(&1 |> String.trim() |> String.replace("\\|", "|")))
  end

  defp drop_closing_pipe(text) do
    if String.ends_with?(text, "|") and not String.ends_with?(text, "\\|"),
      do: String.slice(text, 0..-2//1),
      else: text
  end

  # inline Markdown: `code`, **bold**, [text](url); everything escaped
  defp inline(text) do
    ~r/`[^`]+`/
    |> Regex.split(text, include_captures: true)
    |> Enum.map(fn piece ->
      if piece =~ ~r/\A`[^`]+`\z/,
        do: ["<code>", escape(String.slice(piece, 1..-2//1)), "</code>"],
        else: plain_inline(piece)
    end)
  end

  defp plain_inline(text) do
    text
    |> escape()
    |> String.replace(~r/\*\*(.+?)\*\*/s, "<strong>\\1</strong>")
    |> String.replace(~r/\[([^\]]+)\]\(([^)\s]+)\)/, ~s(<a href="\\2">\\1</a>))
  end

  @doc "`text` with `&`, `<`, `>` and `\"` escaped, for HTML text and attributes."
  @spec escape(term()) :: String.t()
  def escape(text) do
    text
    |> to_string()
    |> String.replace("&", "&amp;")
    |> String.replace("<", "&lt;")
    |> String.replace(">", "&gt;")
    |> String.replace(~s("), "&quot;")
  end
end
