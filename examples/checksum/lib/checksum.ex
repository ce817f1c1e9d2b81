defmodule Checksum do
  @moduledoc """
  Checksums computed by native jobs built on WellBehaved's SDK: Adler-32
  in C (`c_src/checksum_nif.c`) and the CRC-32 of each piece of a binary
  in C++ (`c_src/crc32_chunks.cpp`). However large the binary, the call
  keeps the VM's schedulers responsive, in whichever `WellBehaved.Runtime`
  mode the caller picks; with `schedule: :external` the same job types run
  in a pool of server programs (`priv/checksum_server`, built from the same
  sources), where a native crash cannot take the VM down.

  The NIF library has a runtime of its own, read and tuned with
  `WellBehaved.Runtime.stats(Checksum.Native)` and
  `WellBehaved.Runtime.configure(Checksum.Native, opts)`.
  """

  import Bitwise, only: [<<<: 2]
  alias WellBehaved.{Job, Options}

  @adler32 "Checksum.adler32/2"
  @crc32_chunks "Checksum.crc32_chunks/3"

  @type option ::
          {:schedule, WellBehaved.Runtime.mode() | :external} | {:tiny_slices, boolean()}

  @doc """
  The Adler-32 checksum of `data` (RFC 1950), the value
  `:erlang.adler32/1` gives.

  Options, passed to `WellBehaved.Job.call/4`:

    * `schedule:` - a `t:WellBehaved.Runtime.mode/0` (default `:auto`:
      short inputs run directly, long ones yield), or `:external`: a
      `checksum_server` program of the application's pool computes it.
    * `tiny_slices:` - for tests: one byte per slice, so that every resume
      path of the job runs. Slow.

  Raises `ArgumentError` when `data` is not a binary, and on an unknown
  option or value.

  ## Examples

      iex> Checksum.adler32("Wikipedia")
      300286872
      iex> Checksum.adler32("")
      1
      iex> Checksum.adler32(:binary.copy("x", 1_000_000), schedule: :threaded)
      1_293_056_330
  """
  @spec adler32(binary(), [option()]) :: non_neg_integer()
  def adler32(data, opts \\ [])

  def adler32(data, opts) when is_binary(data) do
    case Job.call(&Checksum.Native.adler32/4, [data], opts, @adler32) do
      checksum when is_integer(checksum) -> checksum
      {:error, reason} -> raise "#{@adler32}: the native job failed: #{inspect(reason)}"
    end
  end

  def adler32(data, _opts), do: Options.invalid!(@adler32, "data", data, "a binary")

  @doc """
  The CRC-32 (the value `:erlang.crc32/1` gives) of each `chunk_bytes`-long
  piece of `data`, the last one shorter, as a binary of 32-bit big-endian
  values: 4 bytes per piece, `<<>>` for empty data.

  Takes the options of `adler32/2`. Raises `ArgumentError` when `data` is
  not a binary or `chunk_bytes` not a positive integer, and on an unknown
  option or value.

  ## Examples

      iex> Checksum.crc32_chunks("Wikipedia", 9)
      <<0xADAAC02E::32>>
      iex> Checksum.crc32_chunks("abcdef", 4) == <<:erlang.crc32("abcd")::32, :erlang.crc32("ef")::32>>
      true
  """
  @spec crc32_chunks(binary(), pos_integer(), [option()]) :: binary()
  def crc32_chunks(data, chunk_bytes, opts \\ [])

  def crc32_chunks(data, chunk_bytes, opts)
      when is_binary(data) and is_integer(chunk_bytes) and chunk_bytes > 0 and
             chunk_bytes < 1 <<< 64 do
    case Job.call(&Checksum.Native.crc32_chunks/5, [data, chunk_bytes], opts, @crc32_chunks) do
      crcs when is_binary(crcs) -> crcs
      {:error, reason} -> raise "#{@crc32_chunks}: the native job failed: #{inspect(reason)}"
    end
  end

  def crc32_chunks(data, _chunk_bytes, _opts) when not is_binary(data),
    do: Options.invalid!(@crc32_chunks, "data", data, "a binary")

  def crc32_chunks(_data, chunk_bytes, _opts),
    do:
      Options.invalid!(@crc32_chunks, "chunk_bytes", chunk_bytes, "a positive integer below 2^64")
end
