defmodule Checksum do
  @moduledoc """
  Adler-32 checksums computed by a native job built on WellBehaved's C SDK
  (`c_src/checksum_nif.c`): however large the binary, the call keeps the
  VM's schedulers responsive, in whichever `WellBehaved.Runtime` mode the
  caller picks.

  The NIF library has a runtime of its own, read and tuned with
  `WellBehaved.Runtime.stats(Checksum.Native)` and
  `WellBehaved.Runtime.configure(Checksum.Native, opts)`.
  """

  alias WellBehaved.{Job, Options}

  @adler32 "Checksum.adler32/2"

  @type option :: {:schedule, WellBehaved.Runtime.mode()} | {:tiny_slices, boolean()}

  @doc """
  The Adler-32 checksum of `data` (RFC 1950), the value
  `:erlang.adler32/1` gives.

  Options, passed to `WellBehaved.Job.call/4`:

    * `schedule:` - a `t:WellBehaved.Runtime.mode/0` (default `:auto`:
      short inputs run directly, long ones yield).
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
end
