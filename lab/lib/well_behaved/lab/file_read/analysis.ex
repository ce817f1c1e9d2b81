defmodule WellBehaved.Lab.FileRead.Analysis do
  @moduledoc """
  The file suite's figures: a row per method and buffer from the timed
  passes, the rows looked up by method and buffer, the targets and the
  one-line summary of a shape.
  """

  alias WellBehaved.Lab.{Markdown, Stats}

  @doc """
  One row per `{method, buffer}` of `combos` from its samples (a map of
  `{method, buffer}` to `%{ns_per_pass:, lines:}`, one per round): the
  `lines` counted, the median `ns_per_line` and `mb_per_s` over the rounds
  (a file of `file_bytes`) and the number of `rounds`.

      iex> samples = %{{:c_memchr, 1024} => [%{ns_per_pass: 2.0e6, lines: 1000}]}
      iex> [row] = WellBehaved.Lab.FileRead.Analysis.rows(samples, [{:c_memchr, 1024}], 1_000_000)
      iex> {row.ns_per_line, row.mb_per_s, row.rounds}
      {2.0e3, 500.0, 1}
  """
  @spec rows(
          %{{atom(), pos_integer() | nil} => [map()]},
          [{atom(), pos_integer() | nil}],
          non_neg_integer()
        ) ::
          [map()]
  def rows(samples, combos, file_bytes) do
    for {method, buffer} <- combos do
      taken = samples[{method, buffer}]
      ns = Stats.median(Enum.map(taken, & &1.ns_per_pass))
      lines = hd(taken).lines

      %{
        method: method,
        buffer: buffer,
        lines: lines,
        ns_per_line: ns / max(lines, 1),
        mb_per_s: file_bytes / ns * 1000,
        rounds: length(taken)
      }
    end
  end

  @doc "The row of `method` at `buffer` in a shape's entry, or `nil`."
  @spec row(map(), atom(), pos_integer() | nil) :: map() | nil
  def row(shape, method, buffer) do
    Enum.find(Map.get(shape, :rows, []), &(&1.method == method and &1.buffer == buffer))
  end

  @doc """
  The targets, from the first measured shape of 100-byte lines at 64 KiB
  buffers: each `%{target:, measured:, met:}`, unmet with `"-"` measured
  when no such shape was measured.
  """
  @spec targets([map()]) :: [%{target: String.t(), measured: String.t(), met: boolean()}]
  def targets(shapes) do
    lines = Enum.find(shapes, &(&1.kind == :fixed and &1.status == "ok"))
    at = fn method -> lines && row(lines, method, 65_536) end
    ns = fn method -> (r = at.(method)) && r.ns_per_line end

    ratio = fn a, b -> ns.(a) && ns.(b) && ns.(b) / ns.(a) end
    read_line_x = ratio.(:wb_read_line, :erl_read_line)
    lines_vs_c = ns.(:wb_read_lines) && ns.(:c_memchr) && ns.(:wb_read_lines) / ns.(:c_memchr)

    [
      absolute(
        target("read_line <= 100 ns per 100-byte line", ns.(:wb_read_line), "ns", &(&1 <= 100))
      ),
      target(
        "read_line >= 3.5x :file.read_line (raw, read_ahead)",
        read_line_x,
        "x",
        &(&1 >= 3.5)
      ),
      absolute(target("read_lines <= 25 ns per line", ns.(:wb_read_lines), "ns", &(&1 <= 25))),
      target(
        "read_lines within 25/15 of C read + memchr (the ratio behind 25 ns)",
        lines_vs_c,
        "x C",
        &(&1 <= 25 / 15)
      )
    ]
  end

  # a figure in ns: information, not pass or fail (WellBehaved.Lab.Markdown)
  defp absolute(target), do: Map.put(target, :absolute, true)

  defp target(label, nil, _unit, _ok?), do: %{target: label, measured: "-", met: false}

  defp target(label, value, unit, ok?),
    do: %{
      target: label <> " (64 KiB buffers)",
      measured: "#{fmt(value)} #{unit}",
      met: ok?.(value)
    }

  @doc """
  A shape's entry in one line, for the progress output: ns per line of the
  main methods at 64 KiB buffers, or the status of a shape not measured.
  """
  @spec summary(map()) :: String.t()
  def summary(%{status: "ok", rows: rows}) do
    at = fn method -> Enum.find(rows, &(&1.method == method and &1.buffer in [65_536, nil])) end

    "read_line #{fmt(at.(:wb_read_line).ns_per_line)} ns/line, " <>
      "read_lines #{fmt(at.(:wb_read_lines).ns_per_line)}, " <>
      ":file.read_line #{fmt(at.(:erl_read_line).ns_per_line)}, " <>
      "C #{fmt(at.(:c_memchr).ns_per_line)} (64 KiB buffers)"
  end

  def summary(%{status: status, error: error}), do: "#{status}: #{error}"
  def summary(%{status: status}), do: status

  defp fmt(x), do: Markdown.fmt_auto(x)
end
