defmodule WellBehaved.Lab.Report.Recommendation do
  @moduledoc """
  The run's recommendation, kept for the next run to compare with.

  A run with the lateness suite writes `recommendation.txt` into its output
  folder: its kind (`quick` or `full`) on the first line, then one line per
  work size, `"1 ms: yielding"` (or `"1 ms: yielding (closest, not
  confidently within)"`, or `"1 ms: none measured"`). The next run of the
  same kind in the same parent folder compares its own with it: the target
  is met when each size names the same mode.
  """

  @file_name "recommendation.txt"

  @typedoc "A recommendation's text, as `recommendation.txt` holds it."
  @type text :: String.t()

  @doc "The recommendation of the lateness suite's result in `results`, or `nil` without one."
  @spec text([{map(), term()}]) :: text() | nil
  def text(results) do
    Enum.find_value(results, fn
      {%{name: "lateness"}, %{recommendations: recs} = r} ->
        "#{if r.config.quick, do: "quick", else: "full"}\n" <>
          Enum.map_join(recs, "", fn rec -> "#{rec.work_ms} ms: #{word(rec)}\n" end)

      _ ->
        nil
    end)
  end

  defp word(%{mode: nil}), do: "none measured"
  defp word(%{mode: mode, verdict: :within}), do: "#{mode}"
  defp word(%{mode: mode}), do: "#{mode} (closest, not confidently within)"

  @doc "Writes `text` to `out/recommendation.txt`; nothing without one."
  @spec save(Path.t(), text() | nil) :: :ok
  def save(_out, nil), do: :ok
  def save(out, text), do: File.write!(Path.join(out, @file_name), text)

  @doc """
  The newest other run in `out`'s parent folder with a recommendation of
  the same kind (`quick` or not), as `{its folder, its text}`, or `nil`.
  """
  @spec previous(Path.t(), boolean()) :: {Path.t(), text()} | nil
  def previous(out, quick) do
    kind = if quick, do: "quick", else: "full"
    here = Path.expand(out)

    out
    |> Path.expand()
    |> Path.dirname()
    |> Path.join("*/" <> @file_name)
    |> Path.wildcard()
    |> Enum.reject(&(Path.dirname(&1) == here))
    |> Enum.map(&{Path.dirname(&1), File.read!(&1), File.stat!(&1).mtime})
    |> Enum.filter(fn {_, text, _} -> String.starts_with?(text, kind <> "\n") end)
    |> Enum.max_by(fn {_, _, mtime} -> mtime end, fn -> nil end)
    |> case do
      nil -> nil
      {dir, text, _} -> {dir, text}
    end
  end

  @doc """
  The run's target of the same recommendation as the previous run, and a
  line saying how they compare: no target (and no line) without a
  recommendation, no target without a previous run. The recommendation is
  the mode named for each size; how confident the evidence was is reported
  beside it.
  """
  @spec compare(text() | nil, {Path.t(), text()} | nil) :: {[map()], String.t() | nil}
  def compare(nil, _previous), do: {[], nil}

  def compare(_text, nil),
    do: {[], "recommendation: no earlier run of this kind to compare with"}

  def compare(text, {dir, earlier}) do
    same = modes(text) == modes(earlier)

    measured =
      cond do
        text == earlier -> "the same"
        same -> "the same modes; its confidence was: " <> one_line(earlier)
        true -> "was: " <> one_line(earlier)
      end

    target = %{
      target: "the same recommendation as the previous run (#{Path.basename(dir)})",
      measured: measured,
      met: same
    }

    {[target], "recommendation #{if same, do: "the same as", else: "DIFFERENT from"} #{dir}"}
  end

  @doc """
  The mode named for each size: `"1 ms: yielding (closest, ...)"` lines
  give `[{"1 ms", "yielding"}]`.
  """
  @spec modes(text()) :: [{String.t(), String.t()}]
  def modes(text) do
    for line <- String.split(text, "\n", trim: true),
        [size, rest] <- [String.split(line, ": ", parts: 2)],
        do: {size, rest |> String.split(" ", parts: 2) |> hd()}
  end

  defp one_line(text), do: text |> String.trim() |> String.replace("\n", "; ")
end
