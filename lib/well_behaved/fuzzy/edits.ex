defmodule WellBehaved.Fuzzy.Edits do
  @moduledoc false
  # Edit scripts (WellBehaved.Fuzzy.editops/3, opcodes/3, apply_edits/4):
  # the options checked, the native job run (c_src/nif/fuzzy_editops_job.c
  # over c_src/metric/editops.h) in the schedule asked, its records decoded
  # here (Elixir code, preemptible: a long script is never one term built
  # in one native call), turned into opcodes, applied.

  alias WellBehaved.{External, Job, Native, Options}
  alias WellBehaved.Fuzzy.{Call, Graphemes, Processor}
  alias WellBehaved.Search.Errors

  @known [:scorer, :weights, :processor, :unit, :schedule, :tiny_slices]
  @scorers [:levenshtein, :indel, :osa]
  # the record types of editops.h's wb_eo_op, in their order (a test checks
  # one script of each against the C side)
  @types {:insert, :delete, :replace, :transpose}

  @typedoc "An edit: its type, its position in the source, in the destination."
  @type editop ::
          {:insert | :delete | :replace | :transpose, non_neg_integer(), non_neg_integer()}

  @typedoc "A block of the two strings: its tag, source start and end, destination start and end."
  @type opcode ::
          {:equal | :replace | :insert | :delete, non_neg_integer(), non_neg_integer(),
           non_neg_integer(), non_neg_integer()}

  @doc """
  The script of `a` into `b` for `name` (editops/3, opcodes/3), `as`
  editops or opcodes, read from the job's records.
  """
  @spec script(String.t(), term(), term(), term(), :editops | :opcodes) ::
          [editop()] | [opcode()] | {:error, :enomem}
  def script(name, a, b, opts, as) do
    if not is_binary(a), do: Options.invalid!(name, "first argument", a, "a binary")
    if not is_binary(b), do: Options.invalid!(name, "second argument", b, "a binary")
    {scorer, opts} = scorer!(name, opts)
    call = Call.options!(name, opts, @known, [:external])

    if call.weights != {1, 1, 1} do
      Options.invalid!(name, :weights, call.weights, "{1, 1, 1}: edit scripts have unit costs")
    end

    {a, b} = processed(call, a, b)
    {a, b, call} = in_units(name, a, b, call, scorer)
    args = [a, b, call.unit, scorer]

    result =
      case call.schedule do
        :external ->
          External.editops!(a, b, call.unit, scorer, call.tiny_slices)

        mode ->
          Job.checked(&Native.fuzzy_editops/7, args, mode, call.tiny_slices, :infinity, name)
      end

    case result do
      {width, _m, _n, ops} when as == :editops ->
        decode(ops, width * 8, [])

      {width, m, n, ops} ->
        blocks(ops, width * 8, 0, 0, m, n, [])

      {:error, :enomem} = error ->
        error

      {:error, {:invalid_utf8, which}} ->
        Errors.raise!(name, {:invalid_utf8, {:argument, which}})

      {:error, :broken_script} ->
        raise RuntimeError, "#{name}: the native script was inconsistent"

      {:error, reason} ->
        Errors.raise!(name, reason)
    end
  end

  # the scorer, :levenshtein unless given (the other options' checks are
  # Call's; only these three scorers have scripts)
  defp scorer!(name, opts) when is_list(opts) do
    case List.keyfind(opts, :scorer, 0) do
      nil ->
        {:levenshtein, [{:scorer, :levenshtein} | opts]}

      {:scorer, scorer} ->
        if scorer not in @scorers, do: Options.invalid!(name, :scorer, scorer, listing())
        {scorer, opts}
    end
  end

  defp scorer!(name, opts), do: Options.not_keyword!(name, opts)

  defp listing, do: Options.listing(@scorers)

  # graphemes: the pair as codepoints, one a cluster (Graphemes), so that
  # the positions of the codepoints' script are the clusters'
  defp in_units(name, a, b, %{unit: :grapheme} = call, scorer) do
    case Graphemes.prepare(name, [a, b], scorer) do
      {:ok, [a, b]} -> {a, b, %{call | unit: :codepoint}}
      {:invalid_utf8, at} -> Errors.raise!(name, {:invalid_utf8, {:argument, at + 1}})
    end
  end

  defp in_units(_name, a, b, call, _scorer), do: {a, b, call}

  defp processed(%{processor: nil}, a, b), do: {a, b}

  defp processed(call, a, b) do
    fun = Processor.function(call.processor)
    {fun.(a), fun.(b)}
  end

  # a loop with an accumulator (a comprehension's body recursion kept a
  # frame a record: every garbage collection then scanned a stack as
  # long as the script, in one go); positions of 4 or 8 bytes
  defp decode(ops, bits, acc) do
    case next(ops, bits) do
      {type, src, dest, rest} -> decode(rest, bits, [{type, src, dest} | acc])
      :done -> :lists.reverse(acc)
    end
  end

  # the next record: its type and positions, and the records after it
  defp next(<<type, src::32-native, dest::32-native, rest::binary>>, 32),
    do: {elem(@types, type), src, dest, rest}

  defp next(<<type, src::64-native, dest::64-native, rest::binary>>, 64),
    do: {elem(@types, type), src, dest, rest}

  defp next(<<>>, _bits), do: :done

  # Opcodes straight from the records, as rapidfuzz makes them from its
  # editops (no list of editops in between): the blocks between edits
  # :equal, each run of edits of one tag that follow each other one
  # block (a transposition a :replace of two by two); m and n the lengths
  defp blocks(ops, bits, s, d, m, n, acc) do
    case next(ops, bits) do
      {type, sp, dp, rest} ->
        acc = if s < sp or d < dp, do: [{:equal, s, sp, d, dp} | acc], else: acc
        {s2, d2} = past(type, sp, dp)
        run(rest, bits, tag(type), sp, dp, s2, d2, m, n, acc)

      :done ->
        acc = if s < m or d < n, do: [{:equal, s, m, d, n} | acc], else: acc
        :lists.reverse(acc)
    end
  end

  # a run of one tag while each edit starts where the last ended
  defp run(ops, bits, tag, s0, d0, s, d, m, n, acc) do
    case next(ops, bits) do
      {type, ^s, ^d, rest} when tag == :replace and type in [:replace, :transpose] ->
        {s2, d2} = past(type, s, d)
        run(rest, bits, tag, s0, d0, s2, d2, m, n, acc)

      {^tag, ^s, ^d, rest} ->
        {s2, d2} = past(tag, s, d)
        run(rest, bits, tag, s0, d0, s2, d2, m, n, acc)

      _other ->
        blocks(ops, bits, s, d, m, n, [{tag, s0, s, d0, d} | acc])
    end
  end

  defp tag(:transpose), do: :replace
  defp tag(type), do: type

  defp past(:insert, s, d), do: {s, d + 1}
  defp past(:delete, s, d), do: {s + 1, d}
  defp past(:replace, s, d), do: {s + 1, d + 1}
  defp past(:transpose, s, d), do: {s + 2, d + 2}

  # ---- applying edits -------------------------------------------------------------

  @doc """
  Rebuilds the destination from `source` by `edits` (editops or opcodes),
  taking what is inserted or replaced from `dest` and what is equal from
  `source`, as rapidfuzz's `Editops.apply` and `Opcodes.apply` do; raises
  when the edits do not fit the two strings.
  """
  @spec apply!(String.t(), term(), term(), term(), term()) :: binary()
  def apply!(name, edits, source, dest, opts) do
    if not is_list(edits),
      do: Options.invalid!(name, "first argument", edits, "a list of editops or opcodes")

    if not is_binary(source), do: Options.invalid!(name, "second argument", source, "a binary")
    if not is_binary(dest), do: Options.invalid!(name, "third argument", dest, "a binary")
    unit = unit!(name, opts)
    src = cursor(name, source, unit)
    dst = cursor(name, dest, unit)

    {opcodes?, {out, src, dst}} =
      case edits do
        [{_, _, _, _, _} | _] -> {true, apply_opcodes(name, edits, src, dst, [])}
        _ -> {false, apply_editops(name, edits, src, dst, [])}
      end

    {rest, src_left} = to_end(name, src, "the source")
    {_, dst_left} = to_end(name, dst, "the destination")

    # opcodes cover both strings; after editops, what is left is equal
    if opcodes? and src_left + dst_left > 0 do
      unfit!(
        name,
        "the opcodes end before the strings do (#{src_left} units of the source and " <>
          "#{dst_left} of the destination left)"
      )
    end

    if src_left != dst_left do
      unfit!(
        name,
        "the edits leave #{src_left} units of the source and #{dst_left} of the destination " <>
          "after the last one"
      )
    end

    IO.iodata_to_binary([out | rest])
  end

  defp unit!(name, opts) when is_list(opts) do
    Enum.each(opts, fn
      {:unit, _} -> :ok
      other -> Options.bad_option!(name, other, [:unit], opts)
    end)

    case Keyword.get(opts, :unit, :byte) do
      unit when unit in [:byte, :codepoint, :grapheme] -> unit
      unit -> Options.invalid!(name, :unit, unit, ":byte, :codepoint or :grapheme")
    end
  end

  defp unit!(name, opts), do: Options.not_keyword!(name, opts)

  defp unfit!(name, what),
    do: raise(ArgumentError, "#{name}: the edits do not fit the strings: #{what}")

  defp apply_editops(_name, [], src, dst, out), do: {out, src, dst}

  defp apply_editops(name, [{type, sp, dp} = edit | rest], src, dst, out)
       when type in [:insert, :delete, :replace, :transpose] and is_integer(sp) and sp >= 0 and
              is_integer(dp) and dp >= 0 do
    if sp < src.index or dp < dst.index or sp - src.index != dp - dst.index do
      unfit!(
        name,
        "#{inspect(edit)} is not where the edits before it end " <>
          "(source #{src.index}, destination #{dst.index}), the units between equal in number"
      )
    end

    {equal, src} = take(name, src, sp - src.index, edit)
    {_, dst} = take(name, dst, dp - dst.index, edit)

    {piece, src, dst} =
      case type do
        :insert ->
          {ins, dst} = take(name, dst, 1, edit)
          {ins, src, dst}

        :delete ->
          {_, src} = take(name, src, 1, edit)
          {[], src, dst}

        :replace ->
          {_, src} = take(name, src, 1, edit)
          {rep, dst} = take(name, dst, 1, edit)
          {rep, src, dst}

        :transpose ->
          {x, src} = take(name, src, 1, edit)
          {y, src} = take(name, src, 1, edit)
          {_, dst} = take(name, dst, 2, edit)
          {[y, x], src, dst}
      end

    apply_editops(name, rest, src, dst, [out, equal, piece])
  end

  defp apply_editops(name, [edit | _], _src, _dst, _out) do
    Options.invalid!(
      name,
      "edit",
      edit,
      "{:insert | :delete | :replace | :transpose, " <>
        "source position, destination position}, every edit of one shape"
    )
  end

  defp apply_editops(name, tail, _src, _dst, _out),
    do: Options.invalid!(name, "first argument", tail, "a proper list")

  defp apply_opcodes(_name, [], src, dst, out), do: {out, src, dst}

  defp apply_opcodes(name, [{tag, s1, s2, d1, d2} = op | rest], src, dst, out)
       when tag in [:equal, :replace, :insert, :delete] and is_integer(s1) and is_integer(s2) and
              is_integer(d1) and is_integer(d2) and s1 <= s2 and d1 <= d2 do
    if s1 != src.index or d1 != dst.index do
      unfit!(
        name,
        "#{inspect(op)} does not start where the opcodes before it end " <>
          "(source #{src.index}, destination #{dst.index})"
      )
    end

    fits =
      case tag do
        :equal -> s2 - s1 == d2 - d1
        :insert -> s1 == s2
        :delete -> d1 == d2
        :replace -> true
      end

    if not fits, do: unfit!(name, "#{inspect(op)}: its lengths do not fit a #{inspect(tag)}")
    {from_src, src} = take(name, src, s2 - s1, op)
    {from_dst, dst} = take(name, dst, d2 - d1, op)
    piece = if tag == :equal, do: from_src, else: from_dst
    apply_opcodes(name, rest, src, dst, [out, piece])
  end

  defp apply_opcodes(name, [op | _], _src, _dst, _out) do
    Options.invalid!(
      name,
      "opcode",
      op,
      "{:equal | :replace | :insert | :delete, " <>
        "source start, source end, destination start, destination end}, starts at most ends, " <>
        "every opcode of one shape"
    )
  end

  defp apply_opcodes(name, tail, _src, _dst, _out),
    do: Options.invalid!(name, "first argument", tail, "a proper list")

  # A place in a string, in the call's units: `index` units, `at` bytes in
  defp cursor(name, bin, :grapheme) do
    if not String.valid?(bin),
      do: Options.invalid!(name, "string", bin, "valid UTF-8 with unit: :grapheme")

    %{bin: bin, unit: :grapheme, index: 0, at: 0}
  end

  defp cursor(_name, bin, unit), do: %{bin: bin, unit: unit, index: 0, at: 0}

  # the next `count` units: their bytes and the cursor past them
  defp take(name, %{unit: :byte} = c, count, edit) do
    if c.at + count > byte_size(c.bin), do: unfit!(name, "#{inspect(edit)} reaches past a string")
    {binary_part(c.bin, c.at, count), %{c | index: c.index + count, at: c.at + count}}
  end

  defp take(name, %{unit: :codepoint} = c, count, edit) do
    case skip(c.bin, c.at, count) do
      {:ok, at} ->
        {binary_part(c.bin, c.at, at - c.at), %{c | index: c.index + count, at: at}}

      :end ->
        unfit!(name, "#{inspect(edit)} reaches past a string")

      :invalid ->
        Options.invalid!(name, "string", c.bin, "valid UTF-8 with unit: :codepoint")
    end
  end

  defp take(name, %{unit: :grapheme} = c, count, edit) do
    case skip_graphemes(c.bin, c.at, count) do
      {:ok, at} -> {binary_part(c.bin, c.at, at - c.at), %{c | index: c.index + count, at: at}}
      :end -> unfit!(name, "#{inspect(edit)} reaches past a string")
    end
  end

  defp skip_graphemes(_bin, at, 0), do: {:ok, at}

  defp skip_graphemes(bin, at, count) do
    case String.next_grapheme(binary_part(bin, at, byte_size(bin) - at)) do
      {cluster, _rest} -> skip_graphemes(bin, at + byte_size(cluster), count - 1)
      nil -> :end
    end
  end

  defp skip(_bin, at, 0), do: {:ok, at}

  defp skip(bin, at, count) do
    case bin do
      <<_::binary-size(at), c::utf8, _::binary>> -> skip(bin, at + utf8_size(c), count - 1)
      <<_::binary-size(at)>> -> :end
      _ -> :invalid
    end
  end

  defp utf8_size(c) when c < 0x80, do: 1
  defp utf8_size(c) when c < 0x800, do: 2
  defp utf8_size(c) when c < 0x10000, do: 3
  defp utf8_size(_c), do: 4

  # what is left of a string: its bytes and its units
  defp to_end(_name, %{unit: :byte} = c, _what),
    do: {binary_part(c.bin, c.at, byte_size(c.bin) - c.at), byte_size(c.bin) - c.at}

  defp to_end(_name, %{unit: :grapheme} = c, _what) do
    rest = binary_part(c.bin, c.at, byte_size(c.bin) - c.at)
    {rest, String.length(rest)}
  end

  defp to_end(name, %{unit: :codepoint} = c, what) do
    case count_rest(c.bin, c.at, 0) do
      {:ok, units} ->
        {binary_part(c.bin, c.at, byte_size(c.bin) - c.at), units}

      :invalid ->
        Options.invalid!(name, "string", c.bin, "valid UTF-8 with unit: :codepoint (#{what})")
    end
  end

  defp count_rest(bin, at, units) do
    case bin do
      <<_::binary-size(at), c::utf8, _::binary>> -> count_rest(bin, at + utf8_size(c), units + 1)
      <<_::binary-size(at)>> -> {:ok, units}
      _ -> :invalid
    end
  end
end
