defmodule WellBehaved.Lab.Plot.Chart do
  @moduledoc false
  # A chart map as a suite gives it (see WellBehaved.Lab.Suite), checked
  # and made regular: strings for names and labels, and nil for every value
  # that cannot be drawn.

  alias WellBehaved.Lab.Plot.Script

  @doc """
  The chart, checked and normalized: every key the scripts need is there,
  missing values are `nil`, a heatmap has a label (or `nil`) per cell.
  Raises `ArgumentError` naming what is wrong.
  """
  @spec normalize!(term()) :: map()
  def normalize!(chart) when is_map(chart) do
    name = fetch!(chart, :name)

    case fetch!(chart, :kind) do
      kind when kind in [:bars, :lines] ->
        normalize_xy!(chart, name, kind)

      :heatmap ->
        normalize_heatmap!(chart, name)

      kind ->
        raise ArgumentError,
              "chart #{inspect(name)}: kind must be :bars, :lines or :heatmap, " <>
                "got #{inspect(kind)}"
    end
  end

  def normalize!(chart), do: raise(ArgumentError, "a chart is a map, got #{inspect(chart)}")

  defp normalize_xy!(chart, name, kind) do
    categories = fetch!(chart, :categories)
    series = fetch!(chart, :series)

    unless is_list(categories) and is_list(series) do
      raise ArgumentError, "chart #{inspect(name)}: categories and series must be lists"
    end

    n = length(categories)

    series =
      for s <- series do
        values = Map.get(s, :values) || []

        unless is_list(values) and length(values) == n do
          raise ArgumentError,
                "chart #{inspect(name)}: series #{inspect(Map.get(s, :label))} has " <>
                  "#{if is_list(values), do: length(values), else: "no list of"} values " <>
                  "for #{n} categories"
        end

        %{label: to_string(Map.get(s, :label) || ""), values: values}
      end

    log_y = Map.get(chart, :log_y, false) == true

    %{
      name: to_string(name),
      title: to_string(Map.get(chart, :title) || name),
      kind: kind,
      x_label: to_string(Map.get(chart, :x_label) || ""),
      y_label: to_string(Map.get(chart, :y_label) || ""),
      log_y: log_y,
      categories: Enum.map(categories, &to_string/1),
      series: Enum.map(series, fn s -> %{s | values: Enum.map(s.values, &clean(&1, log_y))} end)
    }
  end

  defp normalize_heatmap!(chart, name) do
    categories = fetch!(chart, :categories)
    rows = fetch!(chart, :rows)
    values = fetch!(chart, :values)
    labels = Map.get(chart, :labels)

    unless is_list(categories) and is_list(rows) and is_list(values) do
      raise ArgumentError, "chart #{inspect(name)}: categories, rows and values must be lists"
    end

    grid!(name, "values", values, rows, categories)
    if labels != nil, do: grid!(name, "labels", labels, rows, categories)

    log_scale = Map.get(chart, :log_scale, false) == true
    values = Enum.map(values, fn row -> Enum.map(row, &clean(&1, log_scale)) end)

    labels =
      if labels == nil do
        Enum.map(values, fn row -> Enum.map(row, &default_label/1) end)
      else
        Enum.map(labels, fn row -> Enum.map(row, &label!(name, &1)) end)
      end

    %{
      name: to_string(name),
      title: to_string(Map.get(chart, :title) || name),
      kind: :heatmap,
      x_label: to_string(Map.get(chart, :x_label) || ""),
      y_label: to_string(Map.get(chart, :y_label) || ""),
      color_label: to_string(Map.get(chart, :color_label) || ""),
      log_scale: log_scale,
      categories: Enum.map(categories, &to_string/1),
      rows: Enum.map(rows, &to_string/1),
      values: values,
      labels: labels
    }
  end

  # one list per row, each with one entry per category
  defp grid!(name, what, grid, rows, categories) do
    unless is_list(grid) and length(grid) == length(rows) do
      raise ArgumentError,
            "chart #{inspect(name)}: #{what} must be a list with one list per row: " <>
              "#{length(rows)} rows, got #{if is_list(grid), do: length(grid), else: inspect(grid)}"
    end

    n = length(categories)

    for {row, list} <- Enum.zip(rows, grid), not (is_list(list) and length(list) == n) do
      raise ArgumentError,
            "chart #{inspect(name)}: row #{inspect(row)} has " <>
              "#{if is_list(list), do: length(list), else: "no list of"} #{what} " <>
              "for #{n} categories"
    end

    :ok
  end

  defp label!(_name, label) when label in [nil, ""], do: nil
  defp label!(_name, label) when is_binary(label) or is_number(label), do: Script.one_line(label)

  defp label!(name, label) do
    raise ArgumentError,
          "chart #{inspect(name)}: a label must be a string, a number or nil, " <>
            "got #{inspect(label)}"
  end

  defp default_label(nil), do: "-"
  defp default_label(v), do: Script.short(v)

  defp fetch!(chart, key) do
    case Map.fetch(chart, key) do
      {:ok, value} -> value
      :error -> raise ArgumentError, "chart #{inspect(Map.get(chart, :name))} has no #{key}:"
    end
  end

  # a value gnuplot can draw, or nil (missing)
  defp clean(v, true) when is_number(v) and v > 0, do: v
  defp clean(v, false) when is_number(v), do: v
  defp clean(_, _), do: nil
end
