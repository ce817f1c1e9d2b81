defmodule WellBehaved.LabReportTest do
  # WellBehaved.Lab.Report with fake suites: no
  # benchmark runs. Needs gnuplot (Debian package gnuplot-nox).
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.Report

  defmodule FakeSuite do
    @behaviour WellBehaved.Lab.Suite

    @impl true
    def run(_opts), do: %{rows: [%{mode: :normal, ms: 12.5}, %{mode: :yielding, ms: 1.25}]}

    @impl true
    def to_markdown(result) do
      """
      ## Fake suite

      Figures are **medians**; see `Fake.run/1`.

      | mode | ms |
      |---|---|
      #{Enum.map_join(result.rows, "", &"| :#{&1.mode} | #{&1.ms} |\n")}
      - first point
      - second point with <angle> & ampersand
      """
    end

    @impl true
    def charts(result) do
      modes = Enum.map(result.rows, &":#{&1.mode}")

      [
        %{
          name: "fake_bars",
          title: "Fake lateness, it's \"quoted\"",
          kind: :bars,
          x_label: "mode",
          y_label: "ms",
          log_y: true,
          categories: modes,
          series: [
            %{label: "1x", values: Enum.map(result.rows, & &1.ms)},
            %{label: "zeros and nils", values: [0, nil]}
          ]
        },
        %{
          name: "fake_lines",
          title: "Fake lines",
          kind: :lines,
          x_label: "load",
          y_label: "ms",
          log_y: false,
          categories: ["1", "2", "4"],
          series: [%{label: "p99", values: [1, nil, 3.5]}, %{label: "p50", values: [0.5, 1, 2]}]
        }
      ]
    end

    @impl true
    def tables(_result) do
      [
        %{
          name: "raw",
          columns: ["mode", "note", "ms"],
          rows: [
            [:normal, "plain", 12.5],
            [:yielding, "a, comma", 1],
            ["quote \"q\"", "two\nlines", nil],
            [true, " padded ", -3]
          ]
        }
      ]
    end
  end

  # only the two required callbacks
  defmodule PlainSuite do
    def run(_opts), do: %{value: 1}
    def to_markdown(%{value: v}), do: "## Plain suite\n\nValue #{v}.\n"
  end

  # its result is the error a crashed run/1 leaves
  defmodule CrashingSuite do
    def run(_opts), do: raise("boom")
    def to_markdown(_), do: raise("to_markdown must not be called on an error")
    def charts(_), do: raise("charts must not be called on an error")
  end

  # callbacks that raise, and a chart gnuplot cannot take
  defmodule BrokenSuite do
    def run(_opts), do: %{}
    def to_markdown(_), do: "## Broken suite\n"
    def charts(_), do: [%{name: "bad", kind: :pie, categories: [], series: []}]
    def tables(_), do: raise(ArgumentError, "no tables today")
  end

  # one heatmap, with a missing cell
  defmodule HeatmapSuite do
    def run(_opts), do: %{}
    def to_markdown(_), do: "## Heatmap suite\n"

    def charts(_) do
      [
        %{
          name: "heat",
          title: "Heat",
          kind: :heatmap,
          x_label: "load",
          y_label: "mode",
          categories: ["x1", "x10"],
          rows: [":normal", ":yielding"],
          values: [[3.5, nil], [1.1, 1.2]],
          log_scale: true,
          color_label: "p99 / baseline"
        }
      ]
    end
  end

  @machine %{
    otp_release: "25",
    erts_version: "13.0",
    elixir_version: "1.14.0",
    schedulers: 2,
    schedulers_online: 2,
    dirty_cpu_schedulers: 2,
    dirty_cpu_schedulers_online: 2,
    dirty_io_schedulers: 10,
    cpu_model: "Fake CPU | 3 GHz",
    logical_cores: 2,
    logical_cores_available: 2,
    os: "unix/linux",
    clock: %{
      function: "clock_gettime",
      clock_id: "CLOCK_MONOTONIC",
      resolution_per_s: 1_000_000_000,
      resolution_ns: 1.0,
      native_units_per_s: 1_000_000_000
    }
  }

  setup do
    dir = Path.join(System.tmp_dir!(), "wb_report_test_#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(dir) end)
    {:ok, dir: dir}
  end

  defp info do
    %{
      started_at: ~U[2026-01-02 03:04:05Z],
      quick: true,
      rounds_scale: 0.5,
      elapsed_s: 1.5,
      machine: @machine
    }
  end

  defp suite(name, module), do: %{name: name, module: module}

  defp run_suite(module) do
    module.run([])
  rescue
    e -> %{error: Exception.message(e), stacktrace: Exception.format_stacktrace(__STACKTRACE__)}
  end

  test "writes report.md, a standalone report.html, results.json, SVG charts and CSV files",
       %{dir: dir} do
    fake = suite("fake", FakeSuite)
    plain = suite("plain", PlainSuite)
    written = Report.write(dir, info(), [{fake, FakeSuite.run([])}, {plain, PlainSuite.run([])}])

    assert written.problems == []

    for file <- ~w(report.md report.html results.json charts/fake_bars.svg
                   charts/fake_lines.svg csv/fake_raw.csv) do
      assert File.regular?(Path.join(dir, file)), file
    end

    # the plain suite has neither charts nor tables
    assert Path.wildcard(Path.join(dir, "charts/*.svg"))
           |> Enum.map(&Path.basename/1)
           |> Enum.sort() ==
             ["fake_bars.svg", "fake_lines.svg"]

    assert Path.wildcard(Path.join(dir, "csv/*.csv")) |> Enum.map(&Path.basename/1) == [
             "fake_raw.csv"
           ]

    md = File.read!(Path.join(dir, "report.md"))
    assert md == written.markdown
    assert md =~ "# WellBehaved lab report"
    assert md =~ "OTP / ERTS / Elixir | 25 / 13.0 / 1.14.0"
    assert md =~ "2 of 2 online / 2 of 2 online / 10"
    assert md =~ "Fake CPU \\| 3 GHz"
    assert md =~ "resolution 1 ns"
    assert md =~ "2026-01-02T03:04:05Z"
    assert md =~ "## Fake suite"
    assert md =~ "## Plain suite"
    assert md =~ "(charts/fake_bars.svg)"
    assert md =~ "(csv/fake_raw.csv)"

    html = File.read!(Path.join(dir, "report.html"))
    assert html =~ ~r/\A<!DOCTYPE html>/
    assert html =~ "<style>"
    # the charts are inlined, each with ids of its own
    assert length(Regex.scan(~r/<svg[\s>]/, html)) == 2
    refute html =~ "<?xml"
    assert html =~ ~s(id="c1_1-gnuplot_canvas")
    assert html =~ ~s(id="c1_2-gnuplot_canvas")
    assert html =~ ~s(<h2 id="suite-fake-fake-suite">Fake suite</h2>)
    assert html =~ "<strong>medians</strong>"
    assert html =~ "<code>Fake.run/1</code>"
    assert html =~ "<th>mode</th><th>ms</th>"
    assert html =~ ~s(<td>:normal</td><td class="num">12.5</td>)
    assert html =~ "<li>second point with &lt;angle&gt; &amp; ampersand</li>"
    assert html =~ "<td>Fake CPU | 3 GHz</td>"
    refute html =~ "<angle>"

    json = File.read!(Path.join(dir, "results.json"))
    assert json =~ ~s("started_at": "2026-01-02T03:04:05Z")
    assert json =~ ~s("fake": {)
    assert json =~ ~s("value": 1)
    assert json =~ ~s("cpu_model": "Fake CPU | 3 GHz")

    assert File.read!(Path.join(dir, "csv/fake_raw.csv")) ==
             Enum.join([
               ~s(mode,note,ms\n),
               ~s(normal,plain,12.5\n),
               ~s(yielding,"a, comma",1\n),
               ~s("quote ""q""","two\nlines",\n),
               ~s(true," padded ",-3\n)
             ])
  end

  test "a suite that crashed gets an error section and the others are still reported",
       %{dir: dir} do
    results = [
      {suite("crash", CrashingSuite), run_suite(CrashingSuite)},
      {suite("fake", FakeSuite), run_suite(FakeSuite)},
      {suite("odd", PlainSuite), :not_a_map}
    ]

    written = Report.write(dir, info(), results)
    md = written.markdown

    assert md =~ "suites: crash (**failed**), fake, odd (**failed**)."
    assert md =~ "## crash\n\n**This suite failed**"
    assert md =~ "```\nboom\n```"
    assert md =~ "## odd\n\n**This suite failed**"
    assert md =~ "## Fake suite"
    assert File.regular?(Path.join(dir, "charts/fake_bars.svg"))

    html = File.read!(Path.join(dir, "report.html"))
    assert html =~ ~s(<section class="suite failed" id="suite-crash">)
    assert html =~ "<pre><code>boom</code></pre>"

    json = File.read!(Path.join(dir, "results.json"))
    assert json =~ ~s("error": "boom")
  end

  test "a heatmap is drawn and inlined into report.html", %{dir: dir} do
    written = Report.write(dir, info(), [{suite("heat", HeatmapSuite), %{}}])

    assert written.problems == []
    assert File.regular?(Path.join(dir, "charts/heat.svg"))
    assert written.markdown =~ "(charts/heat.svg)"

    html = File.read!(Path.join(dir, "report.html"))
    assert [_] = Regex.scan(~r/<svg[\s>]/, html)
    assert html =~ ~s(id="c1_1-gnuplot_canvas")
    # its cells' labels: the values, and "-" for the missing one
    for text <- ["3.5", "1.1", "1.2", "-", "p99 / baseline"],
        do: assert(html =~ "<text>#{text}</text>")
  end

  test "a raising callback or a bad chart is noted, not fatal", %{dir: dir} do
    written = Report.write(dir, info(), [{suite("broken", BrokenSuite), %{}}])

    assert [chart_problem, table_problem] = written.problems
    assert chart_problem =~ ~s(suite broken: chart "bad" was not drawn)
    assert table_problem =~ "suite broken: tables/1 failed: no tables today"
    assert written.markdown =~ "### Problems"
    assert File.regular?(Path.join(dir, "report.html"))
  end

  test "a result JSON cannot hold is an error in results.json, not a lost file", %{dir: dir} do
    written =
      Report.write(dir, info(), [
        {suite("tuple", PlainSuite), %{value: 1, extra: {1, 2}}},
        {suite("plain", PlainSuite), %{value: 3}}
      ])

    assert [problem] = written.problems
    assert problem =~ "suite tuple: its result cannot be written as JSON"
    json = File.read!(Path.join(dir, "results.json"))
    assert json =~ ~s("error": "its result cannot be written as JSON)
    assert json =~ ~s("value": 3)
    # the report itself still shows it
    assert written.markdown =~ "Value 1."
  end

  test "machine/0 describes this VM, clock included" do
    m = Report.machine()
    assert m.otp_release == List.to_string(:erlang.system_info(:otp_release))
    assert is_integer(m.dirty_io_schedulers)
    assert m.clock.function != ""
    assert is_integer(m.clock.native_units_per_s)
  end

  test "markdown_to_html/1 handles the subset the lab writes" do
    html =
      Report.markdown_to_html("""
      # Title

      A paragraph
      on two lines with `a < b` and [a link](x/y.svg).

      | a | b |
      |---|--:|
      | 1 | `x\\|y` |

      1. one
      2. two
         continued

      ```
      <raw>
      ```
      """)

    assert html =~ ~s(<h1 id="title">Title</h1>)

    assert html =~
             "<p>A paragraph\non two lines with <code>a &lt; b</code> and " <>
               ~s(<a href="x/y.svg">a link</a>.</p>)

    assert html =~ ~s(<td class="num">1</td><td style="text-align: right"><code>x|y</code></td>)
    assert html =~ "<ol>\n<li>one</li>\n<li>two continued</li>\n</ol>"
    assert html =~ "<pre><code>&lt;raw&gt;</code></pre>"
  end
end
