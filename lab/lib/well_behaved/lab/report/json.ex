defmodule WellBehaved.Lab.JSON do
  @moduledoc """
  A tiny JSON encoder for the lab's results (the project has no
  dependencies, so no Jason).

  It encodes maps (atom, string or number keys, written in sorted order),
  lists, integers, floats, UTF-8 strings and atoms (`nil` as `null`,
  `true` and `false` as themselves, other atoms as strings). Anything else,
  tuples included, raises `ArgumentError`.
  """

  @doc """
  Encodes `term` as JSON. With `pretty: true` the output is indented by two
  spaces and ends with a newline.

      iex> WellBehaved.Lab.JSON.encode(%{b: [1, 2.5, nil], a: "x\\"y"})
      ~s({"a":"x\\\\"y","b":[1,2.5,null]})
  """
  @spec encode(term(), keyword()) :: String.t()
  def encode(term, opts \\ []) do
    if Keyword.get(opts, :pretty, false) do
      IO.iodata_to_binary([value(term, 0), ?\n])
    else
      IO.iodata_to_binary(value(term, nil))
    end
  end

  # `indent` is nil for compact output, else the current depth.
  defp value(nil, _), do: "null"
  defp value(true, _), do: "true"
  defp value(false, _), do: "false"
  defp value(atom, _) when is_atom(atom), do: string(Atom.to_string(atom))
  defp value(int, _) when is_integer(int), do: Integer.to_string(int)
  defp value(float, _) when is_float(float), do: :erlang.float_to_binary(float, [:short])
  defp value(bin, _) when is_binary(bin), do: string(bin)

  defp value(list, indent) when is_list(list) do
    container(?[, ?], Enum.map(list, &value(&1, deeper(indent))), indent)
  end

  defp value(map, indent) when is_map(map) and not is_struct(map) do
    sep = if indent, do: ": ", else: ":"

    map
    |> Enum.map(fn {k, v} -> {key(k), v} end)
    |> Enum.sort_by(&elem(&1, 0))
    |> Enum.map(fn {k, v} -> [string(k), sep, value(v, deeper(indent))] end)
    |> then(&container(?{, ?}, &1, indent))
  end

  defp value(other, _) do
    raise ArgumentError, "cannot encode #{inspect(other)} as JSON"
  end

  defp deeper(nil), do: nil
  defp deeper(depth), do: depth + 1

  defp container(open, close, [], _), do: [open, close]
  defp container(open, close, items, nil), do: [open, Enum.intersperse(items, ?,), close]

  defp container(open, close, items, depth) do
    inner = ["\n", String.duplicate("  ", depth + 1)]

    [
      open,
      inner,
      Enum.intersperse(items, [?, | inner]),
      ?\n,
      String.duplicate("  ", depth),
      close
    ]
  end

  defp key(k) when is_binary(k), do: k
  defp key(k) when is_atom(k) and k not in [nil, true, false], do: Atom.to_string(k)
  defp key(k) when is_number(k), do: to_string(k)
  defp key(k), do: raise(ArgumentError, "cannot encode #{inspect(k)} as a JSON object key")

  defp string(bin) do
    if String.valid?(bin) do
      [?", escape(bin, []), ?"]
    else
      raise ArgumentError, "cannot encode a binary that is not UTF-8 as JSON: #{inspect(bin)}"
    end
  end

  defp escape(<<>>, acc), do: Enum.reverse(acc)
  defp escape(<<?", rest::binary>>, acc), do: escape(rest, ["\\\"" | acc])
  defp escape(<<?\\, rest::binary>>, acc), do: escape(rest, ["\\\\" | acc])
  defp escape(<<?\n, rest::binary>>, acc), do: escape(rest, ["\\n" | acc])
  defp escape(<<?\r, rest::binary>>, acc), do: escape(rest, ["\\r" | acc])
  defp escape(<<?\t, rest::binary>>, acc), do: escape(rest, ["\\t" | acc])

  defp escape(<<c, rest::binary>>, acc) when c < 0x20 do
    hex = c |> Integer.to_string(16) |> String.pad_leading(4, "0")
    escape(rest, ["\\u" <> hex | acc])
  end

  defp escape(<<c::utf8, rest::binary>>, acc), do: escape(rest, [<<c::utf8>> | acc])
end
