defmodule WellBehaved.Spin do
  @moduledoc """
  The lab's benchmark instrument: native CPU work of a fixed size, in every
  scheduling mode of `WellBehaved.Runtime`.

  `run/2` does a fixed number of iterations (xorshift rounds, about 2.7 ns
  each on a 2.25 GHz core), so every mode does the same work and modes can
  be compared by how long the work takes and how much it delays the rest of
  the VM.

  `until/2` busy-waits to a wall-clock deadline instead. It is the
  "spinsleep" workload of the 2017 "Well-Behaved NIFs" measurements, kept
  for comparison only: its work depends on when it runs, so calls that wait
  in a queue do almost none, which flatters yielding modes.
  """

  alias WellBehaved.{Native, Options, Runtime}

  @max_uint64 0xFFFF_FFFF_FFFF_FFFF
  @count "a non-negative integer below 2^64"

  @doc """
  Runs `iterations` rounds of fixed work and returns their checksum, which
  is the same in every mode.

  Options: `schedule:` (a `t:WellBehaved.Runtime.mode/0`, default `:auto`)
  and `tiny_slices:` (for tests).

      iex> WellBehaved.Spin.run(1000) == WellBehaved.Spin.run(1000, schedule: :yielding)
      true
  """
  @spec run(non_neg_integer(), keyword()) :: non_neg_integer()
  def run(iterations, opts \\ [])

  def run(iterations, opts) when is_integer(iterations) and iterations in 0..@max_uint64 do
    call(&Native.spin(iterations, &1, &2, &3), opts, "WellBehaved.Spin.run/2")
  end

  def run(iterations, _opts),
    do: Options.invalid!("WellBehaved.Spin.run/2", "iterations", iterations, @count)

  @doc """
  Busy-waits until `microseconds` have passed since the call started and
  returns how many times it read the clock. Same options as `run/2`.
  """
  @spec until(non_neg_integer(), keyword()) :: non_neg_integer()
  def until(microseconds, opts \\ [])

  def until(microseconds, opts)
      when is_integer(microseconds) and microseconds in 0..@max_uint64 do
    call(&Native.spin_until(microseconds, &1, &2, &3), opts, "WellBehaved.Spin.until/2")
  end

  def until(microseconds, _opts),
    do: Options.invalid!("WellBehaved.Spin.until/2", "microseconds", microseconds, @count)

  # the job NIF with its options parsed; a threaded job replies by message
  defp call(nif, opts, name) do
    {mode, tiny} = parse(opts, {:auto, false}, opts, name)

    result =
      case mode do
        :threaded ->
          ref = make_ref()
          Runtime.await(nif.(mode, tiny, ref), ref)

        _ ->
          nif.(mode, tiny, nil)
      end

    case result do
      result when is_integer(result) -> result
      {:error, reason} -> raise ArgumentError, "#{name}: spin failed: #{inspect(reason)}"
    end
  end

  defp parse([], acc, _all, _name), do: acc

  defp parse([{:schedule, mode} | rest], {_, tiny}, all, name),
    do: parse(rest, {Runtime.check_mode!(mode, name, []), tiny}, all, name)

  defp parse([{:tiny_slices, tiny} | rest], {mode, _}, all, name),
    do: parse(rest, {mode, Runtime.check_tiny!(tiny, name)}, all, name)

  defp parse([other | _], _, all, name),
    do: Options.bad_option!(name, other, [:schedule, :tiny_slices], all)

  defp parse(_, _, all, name), do: Options.not_keyword!(name, all)
end
