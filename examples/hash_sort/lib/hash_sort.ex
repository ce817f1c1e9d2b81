defmodule HashSort do
  @moduledoc """
  A SHA-256 digest and a sort of 32-bit integers, computed by jobs
  written in Rust on WellBehaved's runtime (the crate `native/hash_sort`).
  However large the binary, the call keeps the VM's schedulers
  responsive, in whichever `WellBehaved.Runtime` mode the caller picks;
  with `schedule: :external` the same jobs run in a pool of server
  programs (`priv/hash_sort_server`, built from the same crate), where a
  native crash cannot take the VM down.
  """

  alias WellBehaved.{Job, Options}

  @sha256 "HashSort.sha256/2"
  @sort_u32 "HashSort.sort_u32/2"

  @type option ::
          {:schedule, WellBehaved.Runtime.mode() | :external} | {:tiny_slices, boolean()}

  @doc """
  The SHA-256 digest of `data`: what `:crypto.hash(:sha256, data)` gives.

  Options, passed to `WellBehaved.Job.call/4`:

    * `schedule:` - a `t:WellBehaved.Runtime.mode/0` (default `:auto`:
      short inputs run directly, long ones yield), or `:external`: a
      `hash_sort_server` program of the application's pool computes it.
    * `tiny_slices:` - for tests: one 64-byte block per slice, so that
      every resume path of the job runs. Slow.

  Raises `ArgumentError` when `data` is not a binary, and on an unknown
  option or value.

  ## Examples

      iex> HashSort.sha256("abc") |> Base.encode16(case: :lower)
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
      iex> HashSort.sha256(:binary.copy("x", 1_000_000), schedule: :yielding) ==
      ...>   :crypto.hash(:sha256, :binary.copy("x", 1_000_000))
      true
  """
  @spec sha256(binary(), [option()]) :: <<_::256>>
  def sha256(data, opts \\ [])

  def sha256(data, opts) when is_binary(data) do
    case Job.call(&HashSort.Native.sha256/4, [data], opts, @sha256) do
      digest when is_binary(digest) -> digest
      {:error, reason} -> raise "#{@sha256}: the native job failed: #{inspect(reason)}"
    end
  end

  def sha256(data, _opts), do: Options.invalid!(@sha256, "data", data, "a binary")

  @doc """
  The 32-bit big-endian unsigned integers of `data`, sorted, as a binary
  of the same form (a merge sort done in steps).

  Takes the options of `sha256/2`. Raises `ArgumentError` when `data` is
  not a binary whose size is a multiple of 4 bytes, and on an unknown
  option or value.

  ## Examples

      iex> HashSort.sort_u32(<<3::32, 1::32, 2::32>>)
      <<1::32, 2::32, 3::32>>
      iex> HashSort.sort_u32(<<>>)
      <<>>
  """
  @spec sort_u32(binary(), [option()]) :: binary()
  def sort_u32(data, opts \\ [])

  def sort_u32(data, opts) when is_binary(data) and rem(byte_size(data), 4) == 0 do
    case Job.call(&HashSort.Native.sort_u32/4, [data], opts, @sort_u32) do
      sorted when is_binary(sorted) -> sorted
      {:error, reason} -> raise "#{@sort_u32}: the native job failed: #{inspect(reason)}"
    end
  end

  def sort_u32(data, _opts),
    do: Options.invalid!(@sort_u32, "data", data, "a binary of 32-bit integers (4n bytes)")
end
