defmodule WellBehaved.LabPlotTest do
  # WellBehaved.Lab.Plot draws what it is given, however odd: zeros and
  # negatives on a log scale, charts without any value, heatmaps. Needs
  # gnuplot (Debian package gnuplot-nox).
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.Plot

  setup do
    dir = Path.join(System.tmp_dir!(), "wb_plot_test_#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(dir) end)
    {:ok, dir: dir}
  end

  test "log_y with zeros, negatives and nils draws what is left", %{dir: dir} do
    chart = %{
      name: "log zeros",
      title: "Zeros",
      kind: :bars,
      x_label: "x",
      y_label: "y",
      log_y: true,
      categories: ["a", "b", "c"],
      series: [%{label: "s", values: [0, nil, 5]}, %{label: "t", values: [-1, 0, nil]}]
    }

    svg = Plot.render(chart, dir)
    assert svg == Path.join(dir, "log_zeros.svg")
    assert File.read!(svg) =~ "<svg"
    assert File.read!(Path.join(dir, "log_zeros.dat")) =~ "0\tNaN\tNaN"
    assert File.regular?(Path.join(dir, "log_zeros.gp"))

    lines = Plot.render(%{chart | kind: :lines, name: "log_zeros_lines"}, dir)
    assert File.read!(lines) =~ "<svg"
  end

  test "a chart with no value at all still renders", %{dir: dir} do
    for kind <- [:bars, :lines], log_y <- [true, false] do
      chart = %{
        name: "empty_#{kind}_#{log_y}",
        title: "Nothing",
        kind: kind,
        x_label: "x",
        y_label: "y",
        log_y: log_y,
        categories: ["a", "b"],
        # zero is a value on a linear axis, none on a log one
        series: [%{label: "s", values: if(log_y, do: [nil, 0], else: [nil, nil])}]
      }

      assert File.read!(Plot.render(chart, dir)) =~ "no data"
    end

    chart = %{name: "void", title: "Void", kind: :lines, categories: [], series: []}
    assert File.read!(Plot.render(chart, dir)) =~ "<svg"
  end

  test "malformed charts raise ArgumentError", %{dir: dir} do
    base = %{name: "m", title: "M", kind: :bars, categories: ["a"], series: []}

    assert_raise ArgumentError, ~r/kind/, fn -> Plot.render(%{base | kind: :pie}, dir) end

    assert_raise ArgumentError, ~r/2 values for 1 categories/, fn ->
      Plot.render(%{base | series: [%{label: "s", values: [1, 2]}]}, dir)
    end
  end

  test "a heatmap with missing cells and custom labels renders to SVG and PNG", %{dir: dir} do
    chart = %{
      name: "lateness_heatmap",
      title: "Ticker lateness p99 / baseline",
      kind: :heatmap,
      x_label: "work per call / workers",
      y_label: "mode",
      categories: ["1 ms x1", "1 ms x10", "10 ms x1"],
      rows: ["erlang", "normal"],
      # 0 is no value on a log scale
      values: [[1.0, 0.29, 2.0], [100.0, nil, 0]],
      labels: [["1.00", "0.29 ?", ""], ["100 (max)", "bound hit", nil]],
      log_scale: true,
      color_label: "ticker p99 / baseline"
    }

    svg = Plot.render(chart, dir)
    assert svg == Path.join(dir, "lateness_heatmap.svg")
    text = File.read!(svg)
    assert text =~ "<svg"

    for label <- ["1.00", "0.29 ?", "100 (max)", "bound hit", "1 ms x10", "erlang", "normal"] do
      assert text =~ "<text>#{label}</text>", label
    end

    assert text =~ "ticker p99 / baseline"
    # the cells labelled nil or "" (column 2) have no text, not even "-"
    refute text =~ "<text>-</text>"

    # the first row at the top: the highest y
    gp = File.read!(Path.join(dir, "lateness_heatmap.gp"))
    assert gp =~ "set ytics ('normal' 0, 'erlang' 1)"
    assert gp =~ "set logscale cb 10"
    assert gp =~ "set cbrange [0.29:100.0]"
    # dark text on the lightest cell, white on the darkest
    assert gp =~ "set label '0.29 ?' at 1, 1 center front font ',10' tc rgb '#000000'"
    assert gp =~ "set label '100 (max)' at 0, 0 center front font ',10' tc rgb '#ffffff'"
    refute gp =~ ~r/set label .* at 2, /

    # the missing cells: NaN, flagged
    dat = File.read!(Path.join(dir, "lateness_heatmap.dat"))
    assert dat =~ "0\t1\t1.0\t0\t# 1 ms x1 / erlang\n"
    assert dat =~ "1\t0\tNaN\t1\t# 1 ms x10 / normal\n"
    assert dat =~ "2\t0\tNaN\t1\t# 10 ms x1 / normal\n"

    png = Plot.render(chart, dir, format: :png)
    assert png == Path.join(dir, "lateness_heatmap.png")
    assert <<0x89, "PNG", _::binary>> = File.read!(png)
  end

  test "a heatmap's default labels are its values, and - where there is none", %{dir: dir} do
    chart = %{
      name: "defaults",
      title: "Defaults",
      kind: :heatmap,
      categories: ["a", "b", "c"],
      rows: ["r"],
      values: [[0.3123, 12.5, nil]]
    }

    text = File.read!(Plot.render(chart, dir))
    for label <- ["0.312", "12.5", "-"], do: assert(text =~ "<text>#{label}</text>", label)
    refute File.read!(Path.join(dir, "defaults.gp")) =~ "logscale"
  end

  test "heatmaps of one cell, of 12 x 8 cells, of missing cells only, of none", %{dir: dir} do
    one = %{name: "one", title: "One", kind: :heatmap, categories: ["a"], rows: ["r"]}
    assert File.read!(Plot.render(Map.put(one, :values, [[0.5]]), dir)) =~ "<text>0.5</text>"

    missing = %{one | name: "missing"} |> Map.merge(%{values: [[nil]], log_scale: true})
    assert File.read!(Plot.render(missing, dir)) =~ "<text>-</text>"

    categories = for w <- ["1 ms", "10 ms", "100 ms", "1 s"], f <- [1, 10, 100], do: "#{w} x#{f}"

    rows = for i <- 1..8, do: "mode #{i}"

    big = %{
      name: "big",
      title: "Big",
      kind: :heatmap,
      categories: categories,
      rows: rows,
      values: for(i <- 1..8, do: for(j <- 1..12, do: if(i == j, do: nil, else: i * j / 10))),
      log_scale: true,
      color_label: "x"
    }

    text = File.read!(Plot.render(big, dir))
    assert text =~ "<text>1 s x100</text>"
    assert text =~ "<text>mode 8</text>"
    assert text =~ "<text>9.6</text>"
    assert File.regular?(Plot.render(big, dir, format: :png))

    none = %{name: "none", title: "None", kind: :heatmap, categories: [], rows: [], values: []}
    assert File.read!(Plot.render(none, dir)) =~ "no data"
  end

  test "malformed heatmaps raise ArgumentError naming the problem", %{dir: dir} do
    base = %{
      name: "h",
      title: "H",
      kind: :heatmap,
      categories: ["a", "b"],
      rows: ["r1", "r2"],
      values: [[1, 2], [3, 4]]
    }

    assert_raise ArgumentError,
                 ~r/values must be a list with one list per row: 2 rows, got 1/,
                 fn ->
                   Plot.render(%{base | values: [[1, 2]]}, dir)
                 end

    assert_raise ArgumentError, ~r/row "r2" has 3 values for 2 categories/, fn ->
      Plot.render(%{base | values: [[1, 2], [3, 4, 5]]}, dir)
    end

    assert_raise ArgumentError,
                 ~r/labels must be a list with one list per row: 2 rows, got 3/,
                 fn ->
                   Plot.render(
                     Map.put(base, :labels, [["a", "b"], ["c", "d"], ["e", "f"]]),
                     dir
                   )
                 end

    assert_raise ArgumentError, ~r/row "r1" has no list of labels for 2 categories/, fn ->
      Plot.render(Map.put(base, :labels, ["a", ["c", "d"]]), dir)
    end

    assert_raise ArgumentError, ~r/a label must be a string, a number or nil, got :x/, fn ->
      Plot.render(Map.put(base, :labels, [[:x, "b"], ["c", "d"]]), dir)
    end

    assert_raise ArgumentError, ~r/chart "h" has no rows:/, fn ->
      Plot.render(Map.delete(base, :rows), dir)
    end

    assert_raise ArgumentError, ~r/kind must be :bars, :lines or :heatmap, got :heat/, fn ->
      Plot.render(%{base | kind: :heat}, dir)
    end
  end

  test "file_stem/1 keeps names file-safe" do
    assert Plot.file_stem("lateness_spin") == "lateness_spin"
    assert Plot.file_stem("a/b c") == "a_b_c"
    assert Plot.file_stem("../x") == "_.._x"
  end
end
