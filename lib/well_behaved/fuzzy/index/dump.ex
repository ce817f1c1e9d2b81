defmodule WellBehaved.Fuzzy.Index.Dump do
  @moduledoc false
  # The one reader (and writer) of Fuzzy.Index dumps. Every path that makes
  # an index from a dump (Index.load/2 here, split over nodes, and each
  # node's share of it) reads it through decode!/2, which checks all of it
  # before anything is built, and raises ArgumentError naming
  # Index.load/2, its first argument and what is wrong:
  #
  #   - its size, before anything is inflated or decoded: the external term
  #     format of the dump, uncompressed, is at most `max_bytes` (for a
  #     compressed dump the header says that size, and the runtime inflates
  #     no more than it says);
  #   - the term, decoded with [:safe] (no new atoms), with no byte after it;
  #   - its shape {Index, version, processor, next, segments}: processor nil,
  #     :default or :fold, next an integer in 0..2^63, segments a proper list of
  #     {keys, texts, scored | nil}, three proper lists of one length, texts
  #     and scored texts binaries;
  #   - `next` above every key the index could give (integers in
  #     0..2^63-1), so that a candidate added without a key never gets the
  #     key of an entry. A dump of version 1 (written before the index kept
  #     its next above the integer keys given to it) has its next raised
  #     above them instead.
  #
  # Keys the index gives candidates without one are positions: integers in
  # 0..@key_limit-1. `next` stays in 0..@key_limit: above every position
  # given and every integer key given within that range (next_after/3);
  # integer keys outside it never meet a position.

  @load "WellBehaved.Fuzzy.Index.load/2"
  # a dump's tag, the index module's name: an atom, so that the decoder
  # does not depend on the module that calls it
  @index :"Elixir.WellBehaved.Fuzzy.Index"
  @version 2
  @key_limit Bitwise.bsl(1, 63)
  @default_max_bytes 256 * 1024 * 1024

  @typedoc "A segment of a dump: its keys, texts as given, and as scored (nil: the same)."
  @type row :: {[term()], [binary()], [binary()] | nil}

  @doc "The default of `load/2`'s `max_bytes:`."
  @spec default_max_bytes() :: pos_integer()
  def default_max_bytes, do: @default_max_bytes

  @doc "Keys the index gives are integers below this."
  @spec key_limit() :: pos_integer()
  def key_limit, do: @key_limit

  @doc "The dump of an index's processor, next key and segments."
  @spec encode(nil | :default | :fold | function(), non_neg_integer(), [row()]) :: binary()
  def encode(processor, next, rows) do
    processor = if processor in [:default, :fold], do: processor, else: nil
    # the term encoded, then compressed, in two steps that each yield to
    # other processes (term_to_binary/2 with :compressed deflated it in
    # one go: 80 ms held for 16 MB of text); the result is what
    # term_to_binary/2 with :compressed makes, readable by
    # binary_to_term/2 (tag 80, the size of the term's bytes after the
    # version byte, then those bytes deflated)
    <<131, term::binary>> = :erlang.term_to_binary({@index, @version, processor, next, rows})
    z = :zlib.open()

    try do
      # level 1: 7x faster than the default 6 on names (70 vs 500 ms for
      # 5 MB), the dump 8% larger
      :ok = :zlib.deflateInit(z, 1)
      deflated = :zlib.deflate(z, term, :finish)
      :ok = :zlib.deflateEnd(z)
      IO.iodata_to_binary([<<131, 80, byte_size(term)::32>> | deflated])
    after
      :zlib.close(z)
    end
  end

  @doc """
  `max_bytes:` of load/2's options (a positive integer or :infinity), or
  raises.
  """
  @spec max_bytes!(keyword()) :: pos_integer() | :infinity
  def max_bytes!(opts) do
    case Keyword.get(opts, :max_bytes, @default_max_bytes) do
      max when (is_integer(max) and max > 0) or max == :infinity ->
        max

      other ->
        WellBehaved.Options.invalid!(
          @load,
          :max_bytes,
          other,
          "a positive integer (bytes) or :infinity"
        )
    end
  end

  @doc """
  `{processor, next, rows}` of a dump, every part checked (see the
  module's comment), or raises ArgumentError.
  """
  @spec decode!(binary(), pos_integer() | :infinity) ::
          {nil | :default | :fold, non_neg_integer(), [row()]}
  def decode!(binary, max_bytes) when is_binary(binary) do
    size!(binary, max_bytes)

    case term!(binary) do
      {@index, version, processor, next, rows} when version in [1, @version] ->
        if processor not in [nil, :default, :fold],
          do: bad!("its processor is #{short(processor)}, expected nil, :default or :fold")

        if not (is_integer(next) and next >= 0 and next <= @key_limit),
          do: bad!("its next key is #{short(next)}, expected an integer in 0..2^63")

        {rows, top} = rows!(rows)

        cond do
          top < next -> {processor, next, rows}
          version == 1 -> {processor, top + 1, rows}
          true -> bad!("its next key #{next} is not above its key #{top}")
        end

      {@index, version, _, _, _} ->
        bad!("it is of version #{short(version)}, expected 1 or #{@version}")

      other ->
        bad!(
          "it holds #{short(other)}, expected {#{inspect(@index)}, #{@version}, " <>
            "processor, next, segments}"
        )
    end
  end

  @doc """
  An index's next key after `count` entries with `keys` came in from
  `next`: above each of them and every integer key given in 0..2^63-1.
  """
  @spec next_after(non_neg_integer(), [term()], non_neg_integer()) :: non_neg_integer()
  def next_after(next, keys, count) do
    top = Enum.reduce(keys, -1, &top_key/2)
    min(max(next + count, top + 1), @key_limit)
  end

  @doc """
  The position of the first of `choices` (a list of binaries and `{key,
  binary}`, each taking a position) added from `next`: `next`, or when
  one of the integer keys given among them is one of those positions,
  above every such key, so that no candidate gets a key given beside it.
  """
  @spec first_position(non_neg_integer(), list()) :: non_neg_integer()
  def first_position(next, choices) do
    given =
      for {key, text}
          when is_binary(text) and is_integer(key) and key >= next and
                 key < @key_limit <- choices,
          do: key

    if Enum.any?(given, &(&1 < next + length(choices))), do: Enum.max(given) + 1, else: next
  end

  @doc "`position`, the key of a candidate given without one, or raises past the keys' range."
  @spec position!(String.t(), non_neg_integer()) :: non_neg_integer()
  def position!(_name, position) when position < @key_limit, do: position

  def position!(name, _position) do
    raise ArgumentError,
          "#{name}: no key is left for a candidate without one: the index gives keys " <>
            "0..2^63-1, above every integer key it was given in that range; give the " <>
            "candidates keys ({key, text} pairs or a map)"
  end

  # ---- the checks -------------------------------------------------------------

  defp bad!(what), do: raise(ArgumentError, "#{@load}: invalid dump (first argument): #{what}")

  # the external format's size, uncompressed: the header of a compressed
  # one says it (tag 80), and binary_to_term inflates no more than that
  defp size!(binary, max_bytes) do
    size =
      case binary do
        <<131, 80, size::32, _::binary>> -> size + 1
        _ -> byte_size(binary)
      end

    if max_bytes != :infinity and size > max_bytes do
      bad!(
        "it is #{size} bytes uncompressed, more than max_bytes: #{max_bytes} " <>
          "(nothing was inflated or decoded)"
      )
    end
  end

  defp term!(binary) do
    case safe_decode(binary) do
      {term, used} when used == byte_size(binary) ->
        term

      {_term, used} ->
        bad!("#{byte_size(binary) - used} bytes follow its term")

      :error ->
        bad!(
          "#{short(binary)} is not a term in the external format, or names an atom " <>
            "unknown on this node"
        )
    end
  end

  # A compressed dump is inflated first, by zlib (which yields to other
  # processes), at most to the size its header gives, then decoded by
  # decoded/1 (binary_to_term/2 inflated in one call: 150 ms held for
  # 64 MB). What zlib cannot inflate to exactly that size, or decoded/1
  # does not decode, goes to binary_to_term/2 as it is, which decodes it
  # or refuses it as before.
  defp safe_decode(<<131, 80, size::32, deflated::binary>> = binary) do
    with {:ok, pieces} <- inflated(deflated, size),
         {:ok, term} <- decoded(IO.iodata_to_binary(pieces)) do
      {term, byte_size(binary)}
    else
      _ -> plain_decode(binary)
    end
  end

  defp safe_decode(<<131, rest::binary>> = binary) do
    case decoded(rest) do
      {:ok, term} -> {term, byte_size(binary)}
      :error -> plain_decode(binary)
    end
  end

  defp safe_decode(binary), do: plain_decode(binary)

  defp plain_decode(binary) do
    :erlang.binary_to_term(binary, [:safe, :used])
  rescue
    ArgumentError -> :error
  end

  # `deflated` inflated (an iolist) when it is one zlib stream of exactly
  # `size` bytes, nothing after it; safeInflate/2 hands the output over a
  # piece at a time, so that no more than `size` (and one piece) is held.
  # zlib ignores bytes after the end of a stream, so it is given all but
  # the last byte: a stream that ends there has bytes after it (then
  # inflateEnd/1 returns), one that ends at the binary's end lacks the
  # last byte of its Adler-32 checksum (inflateEnd/1 raises), which is
  # then checked here against the output.
  defp inflated(deflated, size) when byte_size(deflated) > 4 do
    z = :zlib.open()

    try do
      :ok = :zlib.inflateInit(z)
      first = :zlib.safeInflate(z, binary_part(deflated, 0, byte_size(deflated) - 1))
      <<sum::32>> = binary_part(deflated, byte_size(deflated) - 4, 4)

      with {:ok, out, ^sum} <- inflate_pieces(z, first, size, [], :erlang.adler32(<<>>), false),
           :cut_short <- stream_end(z),
           do: {:ok, out},
           else: (_ -> :error)
    rescue
      _ -> :error
    after
      :zlib.close(z)
    end
  end

  defp inflated(_deflated, _size), do: :error

  defp stream_end(z) do
    :zlib.inflateEnd(z)
  rescue
    ErlangError -> :cut_short
  end

  # (a stream cut short gives no output again and again: two calls in a
  # row without any end it)
  defp inflate_pieces(z, {:continue, out}, left, acc, sum, empty_before) do
    case IO.iodata_length(out) do
      0 when empty_before ->
        :error

      n when n > left ->
        :error

      n ->
        sum = :erlang.adler32(sum, out)
        inflate_pieces(z, :zlib.safeInflate(z, []), left - n, [acc | out], sum, n == 0)
    end
  end

  defp inflate_pieces(_z, {:finished, out}, left, acc, sum, _empty_before) do
    if left == IO.iodata_length(out),
      do: {:ok, [acc | out], :erlang.adler32(sum, out)},
      else: :error
  end

  defp inflate_pieces(_z, _other, _left, _acc, _sum, _empty_before), do: :error

  # ---- decoding in Erlang code ---------------------------------------------

  # The term the external format `bytes` (after its version byte) holds,
  # as binary_to_term/2 with :safe gives it, every byte used: {:ok, term},
  # or :error for anything it does not read (binary_to_term/2 then does).
  # In Erlang code, which the VM preempts, where binary_to_term/2 copies
  # each binary in one go (3 ms held for a text of 16 MB, more on fresh
  # memory): a binary here is a part of `bytes`, not a copy. It reads
  # integers, atoms that exist, binaries, tuples and lists (proper or
  # not), what dumps hold, and keys of those.
  defp decoded(bytes) do
    case term(bytes) do
      {term, <<>>} -> {:ok, term}
      _ -> :error
    end
  catch
    :unread -> :error
  end

  defp term(<<97, n, rest::binary>>), do: {n, rest}
  defp term(<<98, n::32-signed, rest::binary>>), do: {n, rest}

  defp term(<<110, n, sign, digits::binary-size(n), rest::binary>>),
    do: {big(sign, digits), rest}

  defp term(<<111, n::32, sign, digits::binary-size(n), rest::binary>>),
    do: {big(sign, digits), rest}

  defp term(<<109, n::32, data::binary-size(n), rest::binary>>), do: {data, rest}
  defp term(<<100, n::16, name::binary-size(n), rest::binary>>), do: {atom(name, :latin1), rest}
  defp term(<<115, n, name::binary-size(n), rest::binary>>), do: {atom(name, :latin1), rest}
  defp term(<<118, n::16, name::binary-size(n), rest::binary>>), do: {atom(name, :utf8), rest}
  defp term(<<119, n, name::binary-size(n), rest::binary>>), do: {atom(name, :utf8), rest}
  defp term(<<104, n, rest::binary>>), do: tuple(n, rest, [])
  defp term(<<105, n::32, rest::binary>>), do: tuple(n, rest, [])
  defp term(<<106, rest::binary>>), do: {[], rest}

  defp term(<<107, n::16, chars::binary-size(n), rest::binary>>),
    do: {:binary.bin_to_list(chars), rest}

  defp term(<<108, n::32, rest::binary>>), do: list(n, rest, [])
  defp term(_other), do: throw(:unread)

  defp big(0, digits), do: :binary.decode_unsigned(digits, :little)
  defp big(1, digits), do: -:binary.decode_unsigned(digits, :little)
  defp big(_sign, _digits), do: throw(:unread)

  # an atom that exists (:safe makes none)
  defp atom(name, encoding) do
    :erlang.binary_to_existing_atom(name, encoding)
  rescue
    ArgumentError -> throw(:unread)
  end

  defp tuple(0, rest, acc), do: {acc |> Enum.reverse() |> List.to_tuple(), rest}

  defp tuple(n, bytes, acc) do
    {x, rest} = term(bytes)
    tuple(n - 1, rest, [x | acc])
  end

  # n elements, then the tail
  defp list(0, bytes, acc) do
    {tail, rest} = term(bytes)
    {:lists.reverse(acc, tail), rest}
  end

  defp list(n, bytes, acc) do
    {x, rest} = term(bytes)
    list(n - 1, rest, [x | acc])
  end

  # the rows, checked, and the largest integer key in 0..2^63-1 (-1: none)
  defp rows!(rows) do
    length = proper_length(rows)
    if length == :improper, do: bad!("its segments are not a proper list")

    top =
      rows
      |> Enum.with_index()
      |> Enum.reduce(-1, fn {row, at}, top -> max(top, row!(row, at)) end)

    {rows, top}
  end

  defp row!({keys, texts, scored}, at) do
    keys_count = count!(keys, at, "keys")
    texts_count = count!(texts, at, "texts")
    scored_count = if scored == nil, do: texts_count, else: count!(scored, at, "scored texts")

    if keys_count != texts_count or scored_count != texts_count do
      bad!(
        "segment #{at} has #{keys_count} keys, #{texts_count} texts and " <>
          "#{scored_count} scored texts, expected as many of each"
      )
    end

    binaries!(texts, at, "text")
    if scored != nil, do: binaries!(scored, at, "scored text")
    Enum.reduce(keys, -1, &top_key/2)
  end

  defp row!(row, at),
    do: bad!("segment #{at} is #{short(row)}, expected {keys, texts, scored texts or nil}")

  defp count!(list, at, what) do
    case proper_length(list) do
      :improper -> bad!("the #{what} of segment #{at} are #{short(list)}, not a proper list")
      length -> length
    end
  end

  defp binaries!(list, at, what) do
    case Enum.find_index(list, &(not is_binary(&1))) do
      nil -> :ok
      i -> bad!("the #{what} #{i} of segment #{at} is #{short(Enum.at(list, i))}, not a binary")
    end
  end

  defp proper_length(list) when is_list(list) do
    length(list)
  rescue
    ArgumentError -> :improper
  end

  defp proper_length(_other), do: :improper

  defp top_key(key, top) when is_integer(key) and key >= 0 and key < @key_limit,
    do: max(key, top)

  defp top_key(_key, top), do: top

  # a value in a message: at most a line of it
  defp short(value), do: inspect(value, limit: 8, printable_limit: 32)
end
