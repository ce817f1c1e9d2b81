defmodule WellBehaved.Lab.FileRead.Child do
  @moduledoc """
  The file suite's child VMs: one per shape, which times every method on
  the shape's file in interleaved rounds (`measure/1`), and the result
  entry of a shape from what its child returned (`entry/2`), a crash or a
  bound hit included.
  """

  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.FileRead.{Analysis, Plan, Readers}

  @min_sample_ns 20_000_000

  @typedoc """
  What a child measures: the file's `path`, the `rounds` and the C
  program's path (`baseline`).
  """
  @type spec :: %{path: Path.t(), rounds: pos_integer(), baseline: Path.t()}

  @doc """
  Measures `spec` in a child VM, bounded by `WellBehaved.Lab.FileRead.Plan.bound_ms/1`
  of `shape`, and returns what the child returned.
  """
  @spec run(spec(), Plan.shape()) :: ChildVM.result()
  def run(spec, shape) do
    ChildVM.run({__MODULE__, :measure, [spec]}, bound_ms: Plan.bound_ms(shape))
  end

  @doc "See `WellBehaved.Lab.FileRead.shape_entry/2`."
  @spec entry(map(), ChildVM.result()) :: map()
  def entry(shape, child_result) do
    base = Map.take(shape, [:name, :kind, :bytes])

    case child_result do
      {:ok, %{rows: rows}} ->
        Map.merge(base, %{status: "ok", rows: rows})

      {:timeout, ms} ->
        Map.merge(base, %{status: "bound hit (#{ms} ms)", rows: [], bound_ms: ms})

      {:crashed, code, output} ->
        Map.merge(base, %{
          status: "crashed (exit #{code})",
          rows: [],
          error: error_line(output),
          output: String.slice(output, -500, 500)
        })
    end
  end

  # the line of a child's output that says why it failed: the exception's
  # banner if there is one, else the last line
  defp error_line(output) do
    lines = output |> String.split("\n", trim: true) |> Enum.map(&String.trim/1)
    Enum.find(lines, &String.starts_with?(&1, "** (")) || List.last(lines) || ""
  end

  @doc """
  In the child VM: warms the page cache, times every method and buffer
  size (`WellBehaved.Lab.FileRead.Plan.combos/0`) in `spec.rounds`
  interleaved rounds and returns `%{rows: rows}`, one row per method and
  buffer (`WellBehaved.Lab.FileRead.Analysis.rows/3`). Raises if the
  methods disagree on the number of lines.
  """
  @spec measure(spec()) :: %{rows: [map()]}
  def measure(%{path: path, rounds: rounds} = spec) do
    # warm the page cache
    _ = sample(:c_memchr, path, 1_048_576, spec.baseline)
    combos = Plan.combos()

    samples =
      for _round <- 1..rounds, {method, buffer} <- combos, reduce: %{} do
        acc ->
          sample = sample(method, path, buffer, spec.baseline)
          Map.update(acc, {method, buffer}, [sample], &[sample | &1])
      end

    rows = Analysis.rows(samples, combos, File.stat!(path).size)

    case rows |> Enum.map(& &1.lines) |> Enum.uniq() do
      [_] ->
        :ok

      counts ->
        raise "the methods disagree on the line count: " <>
                inspect(Enum.map(rows, &{&1.method, &1.buffer, &1.lines}), limit: :infinity) <>
                " (#{inspect(counts)})"
    end

    %{rows: rows}
  end

  # reads the whole file, as many times as fit in @min_sample_ns (at least once)
  defp sample(method, path, buffer, baseline)
       when method in [:c_memchr, :c_core] do
    mode = if method == :c_memchr, do: "memchr", else: "core"
    repeat(fn -> c_pass(baseline, [path, Integer.to_string(buffer), mode]) end, 0, 0, 0)
  end

  defp sample(method, path, buffer, _baseline) do
    :erlang.garbage_collect()

    repeat(
      fn ->
        t0 = :erlang.monotonic_time(:nanosecond)
        lines = Readers.count_lines(method, path, buffer)
        {:erlang.monotonic_time(:nanosecond) - t0, lines}
      end,
      0,
      0,
      0
    )
  end

  # `pass` reads the file once and returns {nanoseconds, lines}
  defp repeat(_pass, passes, ns, lines) when ns >= @min_sample_ns and passes > 0,
    do: %{ns_per_pass: ns / passes, lines: lines}

  defp repeat(pass, passes, ns, _lines) do
    {took, lines} = pass.()
    repeat(pass, passes + 1, ns + took, lines)
  end

  # one run of the C program, timed by itself (no process start-up)
  defp c_pass(program, args) do
    case System.cmd(program, args) do
      {out, 0} ->
        %{"lines" => lines, "ns" => took} =
          Regex.named_captures(~r/lines=(?<lines>\d+) .*ns=(?<ns>\d+)/, out)

        {String.to_integer(took), String.to_integer(lines)}

      {out, code} ->
        raise "#{program} exited with #{code}: #{out}"
    end
  end
end
