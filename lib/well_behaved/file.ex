defmodule WellBehaved.File do
  @moduledoc """
  Buffered file I/O through NIFs that keep the VM's schedulers responsive:
  lines at a few tens of nanoseconds each, without a dirty-scheduler hop per
  line.

  Finding lines and handing out buffered bytes happens in normal NIFs with
  no copy: a line longer than 64 bytes is a binary that points into the
  read buffer (shorter ones are copied, which is cheaper). The read buffer
  is refilled on the normal scheduler only from the page cache
  (`preadv2` with `RWF_NOWAIT`, which fails instead of waiting for the
  disk; at most 256 KiB at a time), so a cached file is read with no
  dirty-scheduler hop at all. Every system call that may wait (`open`, a
  read of uncached bytes, `write`, `fsync`, `close`) runs on a dirty I/O
  scheduler, once per buffer fill, never once per line.

  Lines end at `"\\n"`, which is removed; nothing else is: a line of a CRLF
  file keeps its `"\\r"` (strip it with `String.trim_trailing(line, "\\r")`),
  where `:file.read_line/1` and `File.stream!/1` turn `"\\r\\n"` into `"\\n"`.
  A file ending in `"\\n"` gives no extra empty line, and a last line without
  `"\\n"` is returned. Lines over 64 bytes share their read buffer: keeping
  one for long keeps its buffer (`buffer_bytes`) in memory; copy it with
  `:binary.copy/1` to keep it alone.

  A handle may be used by several processes: each call sees the handle
  alone, so every line goes to exactly one reader. The file is closed by
  `close/1`, when the process that opened it exits, or when the handle is
  garbage collected, whichever comes first; a closed handle answers
  `{:error, :closed}`. Written data is flushed before the file closes.

  ## Examples

      iex> path = Path.join(System.tmp_dir!(), "lines_#{System.unique_integer([:positive])}.txt")
      iex> {:ok, out} = WellBehaved.File.open(path, :write, [:create, :truncate])
      iex> WellBehaved.File.write(out, ["one\\n", "two\\n", "three\\n"])
      :ok
      iex> WellBehaved.File.close(out)
      :ok
      iex> {:ok, f} = WellBehaved.File.open(path, :read)
      iex> WellBehaved.File.read_line(f)
      {:ok, "one"}
      iex> WellBehaved.File.read_lines(f, 10)
      {:ok, ["two", "three"]}
      iex> WellBehaved.File.read_line(f)
      :eof
      iex> WellBehaved.File.close(f)
      :ok
      iex> WellBehaved.File.read_line(f)
      {:error, :closed}
      iex> path |> WellBehaved.File.stream!() |> Enum.count()
      3
      iex> WellBehaved.File.open(path <> ".missing", :read)
      {:error, :enoent}
      iex> File.rm(path)
      :ok
  """

  alias WellBehaved.{Native, Options}

  @enforce_keys [:ref]
  defstruct [:ref]

  @typedoc "An open file: pass it to the other functions of this module."
  @opaque t :: %__MODULE__{ref: reference()}

  @type mode :: :read | :write | :append
  @type option ::
          :create
          | :exclusive
          | :truncate
          | :sync
          | :dsync
          | {:buffer_bytes, pos_integer()}
          | {:max_line_bytes, pos_integer() | :infinity}
  @typedoc "A POSIX error name (`:enoent`, `:eacces`, `:eisdir`...) or `:closed`."
  @type reason :: :closed | :line_too_long | :ebadf | atom()

  @default_buffer 64 * 1024
  @max_buffer 1024 * 1024 * 1024
  @default_max_line 1024 * 1024
  # no file this machine can hold has a line or a read larger than this
  @max_count Bitwise.bsl(1, 48)
  # passed to the NIF as these atoms, which file_nif.c decodes
  @flags [:create, :exclusive, :truncate, :sync, :dsync]
  @modes [:read, :write, :append]
  @open "WellBehaved.File.open/3"
  @stream "WellBehaved.File.stream!/2"
  @known @flags ++ [:buffer_bytes, :max_line_bytes]
  # lists up to this size are flattened here, so the write stays buffered
  @small_iolist 4096

  defmodule Error do
    @moduledoc "Raised by the bang functions of `WellBehaved.File`."
    defexception [:reason, :action, :path]

    @impl true
    def message(%{reason: reason, action: action, path: path}) do
      where = if path, do: " #{inspect(path)}", else: ""
      "could not #{action}#{where}: #{format(reason)}"
    end

    defp format(:closed), do: "the file is closed"
    defp format(:line_too_long), do: "a line is longer than max_line_bytes"
    defp format(reason), do: :file.format_error(reason) |> IO.chardata_to_string()
  end

  @doc """
  Opens the file at `path` (a UTF-8 string or a charlist).

  `mode` is `:read`, `:write` (from the start of the file, which is not
  truncated unless `:truncate` is given) or `:append`. Options:

    * `:create` - create the file when missing (`:write` and `:append`).
    * `:exclusive` - with `:create`: fail with `:eexist` when it exists.
    * `:truncate` - empty the file first (`:write` and `:append`).
    * `:sync`, `:dsync` - `O_SYNC`, `O_DSYNC`: each write reaches the disk.
    * `buffer_bytes:` - the read or write buffer, default 64 KiB, at most
      1 GiB. A line longer than the buffer makes a read buffer grow
      geometrically, up to `max_line_bytes`.
    * `max_line_bytes:` - the longest line (without `"\\n"`) that
      `read_line/1` and `read_lines/2` accept, default 1 MiB (at most
      2^48); a longer one gives `{:error, :line_too_long}` and the buffer
      stops growing. `:infinity` lifts the limit: the buffer then grows as
      long as the line does, until memory runs out (`{:error, :enomem}`).

  Returns `{:ok, handle}` or `{:error, posix}` (`:enoent`, `:eacces`,
  `:eisdir`, `:eexist`...). The calling process owns the handle: the file
  closes when it exits. Raises `ArgumentError` on an unknown mode or
  option, an invalid value, or options that do not apply to the mode.

  When the buffers cannot be allocated, calls answer `{:error, :enomem}`
  and the handle stays usable: nothing was read or written.
  """
  @spec open(Path.t(), mode(), [option()]) :: {:ok, t()} | {:error, reason()}
  def open(path, mode, opts \\ []) do
    path = check_path!(path, @open)
    {flags, buffer, max_line} = parse(opts, {[], @default_buffer, @default_max_line}, opts, @open)

    if mode not in @modes,
      do: Options.invalid!(@open, "mode", mode, ":read, :write or :append")

    check_flags!(mode, flags)

    case Native.file_open(path, mode, flags, buffer, max_line) do
      {:ok, ref} -> {:ok, %__MODULE__{ref: ref}}
      {:error, _} = error -> error
    end
  end

  @doc "Like `open/3`, but returns the handle or raises `WellBehaved.File.Error`."
  @spec open!(Path.t(), mode(), [option()]) :: t()
  def open!(path, mode, opts \\ []) do
    case open(path, mode, opts) do
      {:ok, file} -> file
      {:error, reason} -> raise Error, reason: reason, action: "open", path: path
    end
  end

  @doc """
  Reads `bytes` bytes: fewer only at the end of the file; `:eof` when
  nothing is left. Small reads are served from the buffer.
  """
  @spec read(t(), pos_integer()) :: {:ok, binary()} | :eof | {:error, reason()}
  def read(%__MODULE__{ref: ref}, bytes) when is_integer(bytes) and bytes in 1..@max_count do
    case Native.file_read(ref, bytes) do
      :refill -> Native.file_read_dirty(ref, bytes)
      answer -> answer
    end
  end

  def read(%__MODULE__{}, bytes),
    do: Options.invalid!("WellBehaved.File.read/2", "byte count", bytes, "an integer in 1..2^48")

  def read(file, _bytes), do: not_a_handle!(file, "read/2")

  @doc "Like `read/2`, but returns the binary or `:eof`, or raises."
  @spec read!(t(), pos_integer()) :: binary() | :eof
  def read!(file, bytes), do: bang(read(file, bytes), "read")

  @doc """
  The next line without its `"\\n"`, or `:eof`. A last line without `"\\n"`
  is a line; a final `"\\n"` gives no extra empty line. `"\\r"` is kept.
  """
  @spec read_line(t()) :: {:ok, binary()} | :eof | {:error, reason()}
  def read_line(%__MODULE__{ref: ref}) do
    case Native.file_read_line(ref) do
      :refill -> Native.file_read_line_dirty(ref)
      answer -> answer
    end
  end

  def read_line(file), do: not_a_handle!(file, "read_line/1")

  @doc "Like `read_line/1`, but returns the line or `:eof`, or raises."
  @spec read_line!(t()) :: binary() | :eof
  def read_line!(file), do: bang(read_line(file), "read a line")

  @doc """
  Several lines per call: at least one and at most `max` (also at most
  4096 per call), as `read_line/1` would give them; `:eof` when none is
  left. It returns the lines already buffered rather than wait for more.
  """
  @spec read_lines(t(), pos_integer()) :: {:ok, [binary(), ...]} | :eof | {:error, reason()}
  def read_lines(%__MODULE__{ref: ref}, max) when is_integer(max) and max > 0 do
    # the native side takes at most 4096 per call anyway
    max = min(max, @max_count)

    case Native.file_read_lines(ref, max) do
      :refill -> Native.file_read_lines_dirty(ref, max)
      answer -> answer
    end
  end

  def read_lines(%__MODULE__{}, max),
    do: Options.invalid!("WellBehaved.File.read_lines/2", "line count", max, "a positive integer")

  def read_lines(file, _max), do: not_a_handle!(file, "read_lines/2")

  @doc "Like `read_lines/2`, but returns the lines or `:eof`, or raises."
  @spec read_lines!(t(), pos_integer()) :: [binary(), ...] | :eof
  def read_lines!(file, max), do: bang(read_lines(file, max), "read lines")

  @doc """
  Writes `iodata`, through the write buffer: small writes are copied into
  it, a write that does not fit flushes it first (retrying short writes
  until every byte is written or an error occurs). Raises `ArgumentError`
  when `iodata` is not iodata.
  """
  @spec write(t(), iodata()) :: :ok | {:error, reason()}
  def write(%__MODULE__{ref: ref}, iodata) when is_binary(iodata) do
    case Native.file_write(ref, iodata) do
      :flush -> Native.file_write_dirty(ref, iodata)
      answer -> answer
    end
  end

  def write(%__MODULE__{} = file, iodata) when is_list(iodata) do
    # flattened here, by the VM: the native side takes binaries only
    binary =
      try do
        IO.iodata_to_binary(iodata)
      rescue
        ArgumentError -> not_iodata!(iodata)
      end

    if byte_size(binary) <= @small_iolist,
      do: write(file, binary),
      else: Native.file_write_dirty(file.ref, binary)
  end

  def write(%__MODULE__{}, iodata), do: not_iodata!(iodata)
  def write(file, _iodata), do: not_a_handle!(file, "write/2")

  defp not_iodata!(iodata),
    do: Options.invalid!("WellBehaved.File.write/2", "data", iodata, "iodata")

  @doc "Like `write/2`, but returns `:ok` or raises."
  @spec write!(t(), iodata()) :: :ok
  def write!(file, iodata), do: bang(write(file, iodata), "write")

  @doc "Writes out the write buffer (to the OS: see `sync/1` for the disk)."
  @spec flush(t()) :: :ok | {:error, reason()}
  def flush(%__MODULE__{ref: ref}), do: Native.file_flush(ref)
  def flush(file), do: not_a_handle!(file, "flush/1")

  @doc "Like `flush/1`, but returns `:ok` or raises."
  @spec flush!(t()) :: :ok
  def flush!(file), do: bang(flush(file), "flush")

  @doc "Writes out the write buffer, then `fsync`s the file."
  @spec sync(t()) :: :ok | {:error, reason()}
  def sync(%__MODULE__{ref: ref}), do: Native.file_sync(ref)
  def sync(file), do: not_a_handle!(file, "sync/1")

  @doc """
  Flushes the write buffer and closes the file now. Every later call,
  `close/1` included, gives `{:error, :closed}`. Lines already read stay
  valid.
  """
  @spec close(t()) :: :ok | {:error, reason()}
  def close(%__MODULE__{ref: ref}), do: Native.file_close(ref)
  def close(file), do: not_a_handle!(file, "close/1")

  @doc "Like `close/1`, but returns `:ok` or raises."
  @spec close!(t()) :: :ok
  def close!(file), do: bang(close(file), "close")

  @doc """
  A stream over the file at `path`: enumerating it gives its lines (as
  `read_line/1` does: without `"\\n"`), collecting into it writes each
  element (iodata, as given: no newline is added).

  Enumerating opens the file for reading each time; collecting opens it with
  `:create` and `:truncate`, or with `:append` appending instead. Options:
  `buffer_bytes:`, `max_line_bytes:`, `:sync`, `:dsync` (as in `open/3`)
  and `:append`. Errors raise `WellBehaved.File.Error`.

      WellBehaved.File.stream!("in.txt")
      |> Stream.map(&String.upcase/1)
      |> Stream.map(&[&1, "\\n"])
      |> Enum.into(WellBehaved.File.stream!("out.txt"))
  """
  @spec stream!(Path.t(), [option() | :append]) :: WellBehaved.File.Stream.t()
  def stream!(path, opts \\ []) do
    path = check_path!(path, @stream)
    {append, opts} = stream_opts(opts)
    # validate now, not at the first use
    {flags, _, _} = parse(opts, {[], @default_buffer, @default_max_line}, opts, @stream)

    if Enum.any?([:create, :exclusive, :truncate], &(&1 in flags)) do
      raise ArgumentError,
            "#{@stream}: takes no :create, :exclusive or :truncate (it creates and truncates " <>
              "for writing; use :append to append)"
    end

    %WellBehaved.File.Stream{path: path, opts: opts, append: append}
  end

  defp stream_opts(opts) when is_list(opts) do
    {Enum.member?(opts, :append), Enum.reject(opts, &(&1 == :append))}
  end

  defp stream_opts(opts), do: Options.not_keyword!(@stream, opts)

  # --- helpers -----------------------------------------------------------------

  defp parse([], acc, _all, _fun), do: acc

  defp parse([flag | rest], {flags, b, m}, all, fun) when flag in @flags,
    do: parse(rest, {if(flag in flags, do: flags, else: [flag | flags]), b, m}, all, fun)

  defp parse([{:buffer_bytes, b} | rest], {f, _, m}, all, fun),
    do: parse(rest, {f, Options.integer!(fun, :buffer_bytes, b, 1..@max_buffer), m}, all, fun)

  defp parse([{:max_line_bytes, :infinity} | rest], {f, b, _}, all, fun),
    do: parse(rest, {f, b, 0}, all, fun)

  defp parse([{:max_line_bytes, m} | rest], {f, b, _}, all, fun)
       when is_integer(m) and m in 1..@max_count,
       do: parse(rest, {f, b, m}, all, fun)

  defp parse([{:max_line_bytes, m} | _], _, _, fun),
    do: Options.invalid!(fun, :max_line_bytes, m, "an integer in 1..2^48 or :infinity")

  defp parse([{flag, value} | _], _, _, fun) when flag in @flags,
    do: Options.invalid!(fun, flag, value, "no value: #{inspect(flag)} is given alone")

  defp parse([other | _], _, all, fun), do: Options.bad_option!(fun, other, @known, all)
  defp parse(_, _, all, fun), do: Options.not_keyword!(fun, all)

  defp check_flags!(mode, flags) do
    cond do
      mode == :read and (:create in flags or :truncate in flags) ->
        raise ArgumentError,
              "#{@open}: :create and :truncate apply to :write and :append, not :read"

      :exclusive in flags and :create not in flags ->
        raise ArgumentError, "#{@open}: :exclusive requires :create"

      true ->
        :ok
    end
  end

  defp check_path!(path, fun) when is_binary(path) do
    if String.contains?(path, <<0>>),
      do: Options.invalid!(fun, "path", path, "a path without NUL bytes"),
      else: path
  end

  defp check_path!(path, fun) when is_list(path) do
    case :unicode.characters_to_binary(path) do
      binary when is_binary(binary) -> check_path!(binary, fun)
      _ -> Options.invalid!(fun, "path", path, "a string or a charlist of valid codepoints")
    end
  catch
    # not chardata at all
    :error, :badarg -> Options.invalid!(fun, "path", path, "a string or a charlist")
  end

  defp check_path!(path, fun),
    do: Options.invalid!(fun, "path", path, "a string or a charlist")

  defp not_a_handle!(file, function) do
    Options.invalid!("WellBehaved.File.#{function}", "handle", file, "a WellBehaved.File handle")
  end

  defp bang({:ok, value}, _action), do: value
  defp bang(:ok, _action), do: :ok
  defp bang(:eof, _action), do: :eof
  defp bang({:error, reason}, action), do: raise(Error, reason: reason, action: action)
end
