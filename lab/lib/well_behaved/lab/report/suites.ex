defmodule WellBehaved.Lab.Report.Suites do
  @moduledoc false
  # What each suite gives the report, its callbacks guarded: a section (its
  # Markdown, its charts drawn, its tables written as CSV, the problems met
  # on the way), and for the top of the report its summary and targets.

  alias WellBehaved.Lab.Plot
  alias WellBehaved.Lab.Report.CSV

  @typedoc "One suite's part of the report; chart and CSV paths are relative to the folder."
  @type section :: %{
          suite: map(),
          failed: boolean(),
          markdown: String.t(),
          charts: [%{title: String.t(), path: String.t(), top: boolean()}],
          csv: [%{path: String.t(), rows: non_neg_integer()}],
          problems: [String.t()]
        }

  @typedoc "The chart and CSV file stems used so far, kept apart across suites."
  @type taken :: %{charts: MapSet.t(), csv: MapSet.t()}

  @doc "Whether a suite's result is a failure (not a map, or with an `:error` key)."
  @spec failed?(term()) :: boolean()
  def failed?(result), do: not is_map(result) or Map.has_key?(result, :error)

  @doc """
  The section of `suite` with its `result`: draws its charts into
  `dir/charts` and writes its tables into `dir/csv`, under stems not yet
  `taken` (returned with its own added).
  """
  @spec section(Path.t(), map(), term(), taken()) :: {section(), taken()}
  def section(dir, suite, result, taken) do
    if failed?(result) do
      {%{
         suite: suite,
         failed: true,
         markdown: error_md(suite, result),
         charts: [],
         csv: [],
         problems: []
       }, taken}
    else
      mod = suite.module
      Code.ensure_loaded(mod)

      {markdown, md_problems} =
        case guarded(fn -> mod.to_markdown(result) end) do
          {:ok, md} when is_binary(md) ->
            {md, []}

          {:ok, other} ->
            {"## #{suite.name}\n", ["to_markdown/1 returned #{inspect(other, limit: 5)}"]}

          {:error, message} ->
            {"## #{suite.name}\n", ["to_markdown/1 raised: #{message}"]}
        end

      {charts, chart_problems, taken} = charts(dir, suite, result, taken)
      {csv, csv_problems, taken} = tables(dir, suite, result, taken)
      problems = md_problems ++ chart_problems ++ csv_problems

      {%{
         suite: suite,
         failed: false,
         markdown: markdown,
         charts: charts,
         csv: csv,
         problems: Enum.map(problems, &"suite #{suite.name}: #{&1}")
       }, taken}
    end
  end

  defp error_md(suite, result) do
    {message, details} =
      if is_map(result) do
        {format_term(Map.get(result, :error)), Map.get(result, :stacktrace)}
      else
        {"run/1 returned #{inspect(result, limit: 10)}, not a map", nil}
      end

    [
      "## #{suite.name}\n\n",
      "**This suite failed**; it has no results in this report.\n\n",
      fence(message),
      if(is_binary(details) and details != "", do: ["\n", fence(details)], else: [])
    ]
    |> IO.iodata_to_binary()
  end

  defp format_term(text) when is_binary(text), do: text
  defp format_term(other), do: inspect(other, limit: 50, printable_limit: 4096)

  defp fence(text) do
    body = text |> String.trim_trailing() |> String.replace("```", "'''")
    "```\n#{body}\n```\n"
  end

  defp charts(dir, suite, result, taken) do
    case optional(suite.module, :charts, result) do
      {:ok, charts} ->
        Enum.reduce(charts, {[], [], taken}, fn chart, {done, problems, taken} ->
          name = Plot.file_stem(map_get(chart, :name, "#{suite.name}_chart"))
          stem = unique(name, taken.charts)
          taken = %{taken | charts: MapSet.put(taken.charts, stem)}
          title = to_string(map_get(chart, :title, stem))

          case guarded(fn ->
                 Plot.render(Map.put(chart, :name, stem), Path.join(dir, "charts"))
               end) do
            {:ok, _path} ->
              chart_entry = %{
                title: title,
                path: "charts/#{stem}.svg",
                top: map_get(chart, :top, false) == true
              }

              {done ++ [chart_entry], problems, taken}

            {:error, message} ->
              {done, problems ++ ["chart #{inspect(name)} was not drawn: #{message}"], taken}
          end
        end)

      :none ->
        {[], [], taken}

      {:error, message} ->
        {[], ["charts/1 failed: #{message}"], taken}
    end
  end

  defp tables(dir, suite, result, taken) do
    case optional(suite.module, :tables, result) do
      {:ok, tables} ->
        Enum.reduce(tables, {[], [], taken}, fn table, {done, problems, taken} ->
          name = map_get(table, :name, "table")
          stem = unique(Plot.file_stem("#{suite.name}_#{name}"), taken.csv)
          taken = %{taken | csv: MapSet.put(taken.csv, stem)}
          path = "csv/#{stem}.csv"

          case guarded(fn -> CSV.write!(Path.join(dir, path), table) end) do
            {:ok, rows} -> {done ++ [%{path: path, rows: rows}], problems, taken}
            {:error, message} -> {done, problems ++ ["table #{inspect(name)}: #{message}"], taken}
          end
        end)

      :none ->
        {[], [], taken}

      {:error, message} ->
        {[], ["tables/1 failed: #{message}"], taken}
    end
  end

  @doc """
  The top of the report as the suites give it: `summaries` (each
  `summary/1` of a suite that did not fail) and `targets` (every suite's
  `:targets`, then the run's own as `{"run", target}`), with the problems
  met (a summary that raised or is not a string).
  """
  @spec top(map(), [{map(), term()}]) ::
          {%{summaries: [String.t()], targets: list()}, [String.t()]}
  def top(info, results) do
    ok = for {suite, result} <- results, not failed?(result), do: {suite, result}

    {summaries, problems} =
      Enum.reduce(ok, {[], []}, fn {suite, result}, {mds, problems} ->
        case optional_text(suite.module, :summary, result) do
          :none -> {mds, problems}
          {:ok, md} -> {mds ++ [md], problems}
          {:error, message} -> {mds, problems ++ ["suite #{suite.name}: summary/1 #{message}"]}
        end
      end)

    targets =
      for({suite, result} <- ok, t <- List.wrap(Map.get(result, :targets)), do: {suite.name, t}) ++
        for(t <- Map.get(info, :targets, []), do: {"run", t})

    {%{summaries: summaries, targets: targets}, problems}
  end

  # ---- optional callbacks, guarded ------------------------------------------------------

  defp optional(mod, fun, result) do
    if function_exported?(mod, fun, 1) do
      case guarded(fn -> apply(mod, fun, [result]) end) do
        {:ok, list} when is_list(list) -> {:ok, list}
        {:ok, other} -> {:error, "returned #{inspect(other, limit: 5)}, not a list"}
        error -> error
      end
    else
      :none
    end
  end

  defp optional_text(mod, fun, result) do
    Code.ensure_loaded(mod)

    if function_exported?(mod, fun, 1) do
      case guarded(fn -> apply(mod, fun, [result]) end) do
        {:ok, text} when is_binary(text) -> {:ok, text}
        {:ok, other} -> {:error, "returned #{inspect(other, limit: 5)}"}
        {:error, message} -> {:error, "raised: #{message}"}
      end
    else
      :none
    end
  end

  defp guarded(fun) do
    {:ok, fun.()}
  rescue
    e -> {:error, Exception.message(e)}
  catch
    kind, reason -> {:error, Exception.format_banner(kind, reason)}
  end

  defp map_get(map, key, default) when is_map(map), do: Map.get(map, key) || default
  defp map_get(_, _, default), do: default

  defp unique(stem, taken, n \\ 1) do
    candidate = if n == 1, do: stem, else: "#{stem}_#{n}"
    if MapSet.member?(taken, candidate), do: unique(stem, taken, n + 1), else: candidate
  end
end
