defmodule WellBehaved.Lab.Spin do
  @moduledoc """
  The lab's benchmark instrument: native CPU work of a fixed size, in every
  scheduling mode of `WellBehaved.Runtime`.

  `run/2` does a fixed number of iterations (xorshift rounds, about 2.7 ns
  each on a 2.25 GHz core), so every mode does the same work and modes can
  be compared by how long the work takes and how much it delays the rest of
  the VM.

  `run_rust/2` is the same work as a job written in Rust (the crate
  `native/lab_rs`, in a NIF library of its own with its own runtime): the
  lab holds a Rust job to the C one with it.

  `until/2` busy-waits to a wall-clock deadline instead. It is the
  "spinsleep" workload of the 2017 "Well-Behaved NIFs" measurements, kept
  for comparison only: its work depends on when it runs, so calls that wait
  in a queue do almost none, which flatters yielding modes.
  """

  alias WellBehaved.{Job, Options}
  alias WellBehaved.Lab.{Native, RustNative}

  @max_uint64 0xFFFF_FFFF_FFFF_FFFF
  @count "a non-negative integer below 2^64"

  @doc """
  Runs `iterations` rounds of fixed work and returns their checksum, which
  is the same in every mode.

  Options: `schedule:` (a `t:WellBehaved.Runtime.mode/0`, default `:auto`)
  and `tiny_slices:` (for tests), as `WellBehaved.Job.call/4` takes them.
  Spin runs in the lab's own NIF library, whose runtime is
  `WellBehaved.Runtime.stats(WellBehaved.Lab.Native)`.

      iex> WellBehaved.Lab.Spin.run(1000) == WellBehaved.Lab.Spin.run(1000, schedule: :yielding)
      true
  """
  @spec run(non_neg_integer(), [Job.option()]) :: non_neg_integer()
  def run(iterations, opts \\ [])

  def run(iterations, opts) when is_integer(iterations) and iterations in 0..@max_uint64,
    do: call(&Native.spin/4, iterations, opts, "WellBehaved.Lab.Spin.run/2")

  def run(iterations, _opts),
    do: Options.invalid!("WellBehaved.Lab.Spin.run/2", "iterations", iterations, @count)

  @doc """
  `run/2` as a job written in Rust: the same rounds from the same seed,
  sliced the same way, so it returns the same checksum. Same options as
  `run/2`; it runs in the lab's Rust NIF library, whose runtime is
  `WellBehaved.Runtime.stats(WellBehaved.Lab.RustNative)`.

      iex> WellBehaved.Lab.Spin.run_rust(1000, schedule: :yielding) == WellBehaved.Lab.Spin.run(1000)
      true
  """
  @spec run_rust(non_neg_integer(), [Job.option()]) :: non_neg_integer()
  def run_rust(iterations, opts \\ [])

  def run_rust(iterations, opts) when is_integer(iterations) and iterations in 0..@max_uint64,
    do: call(&RustNative.rust_spin/4, iterations, opts, "WellBehaved.Lab.Spin.run_rust/2")

  def run_rust(iterations, _opts),
    do: Options.invalid!("WellBehaved.Lab.Spin.run_rust/2", "iterations", iterations, @count)

  @doc """
  Busy-waits until `microseconds` have passed since the call started and
  returns how many times it read the clock. Same options as `run/2`.
  """
  @spec until(non_neg_integer(), [Job.option()]) :: non_neg_integer()
  def until(microseconds, opts \\ [])

  def until(microseconds, opts)
      when is_integer(microseconds) and microseconds in 0..@max_uint64,
      do: call(&Native.spin_until/4, microseconds, opts, "WellBehaved.Lab.Spin.until/2")

  def until(microseconds, _opts),
    do: Options.invalid!("WellBehaved.Lab.Spin.until/2", "microseconds", microseconds, @count)

  defp call(nif, count, opts, name), do: checksum(Job.call(nif, [count], opts, name), name)

  defp checksum(result, _name) when is_integer(result), do: result

  defp checksum({:error, reason}, name),
    do: raise(ArgumentError, "#{name}: spin failed: #{inspect(reason)}")
end
