defmodule WellBehaved.LabReportTopTest do
  # The top of the lab's report, with fake suites and synthetic noise
  # checks: no benchmark runs. Needs gnuplot (Debian package gnuplot-nox).
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.{Noise, Report}

  defmodule AdvisingSuite do
    def run(_opts) do
      %{
        value: 1,
        targets: [
          %{target: "fast enough", measured: "0.9x", met: true},
          %{target: "small enough", measured: "2 MB", met: false}
        ]
      }
    end

    def summary(_result), do: "| work | use |\n| --- | --- |\n| 1 ms | `:yielding` |\n"
    def to_markdown(_result), do: "## Advising suite\n\nDetails.\n"

    def charts(_result) do
      [
        %{
          name: "glance",
          title: "At a glance",
          kind: :bars,
          top: true,
          x_label: "mode",
          y_label: "ms",
          log_y: false,
          categories: ["a", "b"],
          series: [%{label: "p99", values: [1.0, 2.0]}]
        },
        %{
          name: "detail",
          title: "A detail",
          kind: :bars,
          x_label: "mode",
          y_label: "ms",
          log_y: false,
          categories: ["a"],
          series: [%{label: "p99", values: [1.0]}]
        }
      ]
    end
  end

  # a summary/1 that raises is a problem of the report, not a crash
  defmodule BrokenSummarySuite do
    def run(_opts), do: %{}
    def summary(_result), do: raise("no summary today")
    def to_markdown(_result), do: "## Broken summary\n"
  end

  setup do
    dir = Path.join(System.tmp_dir!(), "wb_report_top_#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(dir) end)
    {:ok, dir: dir}
  end

  defp usage(foreign) do
    %{
      seconds: 1.0,
      busy_cores: 2.0,
      own_cores: 2.0 - foreign,
      foreign_cores: foreign,
      steal_share: 0.0
    }
  end

  defp info(checks, targets \\ []) do
    %{
      started_at: ~U[2026-01-02 03:04:05Z],
      quick: true,
      elapsed_s: 1.5,
      noise: checks,
      targets: targets,
      machine: %{otp_release: "25", schedulers_online: 2, logical_cores: 2, cpu_model: "Fake"}
    }
  end

  test "what to do, every suite's targets and the top charts open the report", %{dir: dir} do
    quiet = Noise.judge("before advising", [0.1, 0.1, 0.1], usage(0.0), List.duplicate(900.0, 50))

    run_target = %{
      target: "the quick lab in 6 minutes or less",
      measured: "300 s",
      met: true,
      absolute: true
    }

    suite = %{name: "advising", module: AdvisingSuite}
    written = Report.write(dir, info([quiet], [run_target]), [{suite, AdvisingSuite.run([])}])

    assert written.problems == []
    md = written.markdown
    {top, rest} = md |> String.split("## Machine", parts: 2) |> List.to_tuple()

    assert top =~ "## What to do"
    assert top =~ "| 1 ms | `:yielding` |"
    # the ratios pass or fail; an absolute figure is information, after them
    assert top =~ "## Targets\n\n1 of 2 met (ratios to a baseline measured in the same run)."
    assert top =~ "| advising | small enough | 2 MB | **no** |"
    [ratios, absolute] = String.split(top, "Absolute figures, for information", parts: 2)
    refute ratios =~ "the quick lab"

    assert absolute =~
             "| run | the quick lab in 6 minutes or less | 300 s | within (information) |"

    assert top =~ "![At a glance](charts/glance.svg)"
    refute top =~ "A detail"
    refute top =~ "machine was busy"
    assert rest =~ "## Noise checks"
    assert rest =~ "| before advising |"
    assert rest =~ "## Advising suite"

    # the standalone page inlines the top chart where the Markdown links it
    html = File.read!(written.report_html)
    [html_top, _] = String.split(html, "id=\"machine\"", parts: 2)
    assert html_top =~ ~s(<figure class="top">)
    assert html_top =~ "<svg"
  end

  test "a busy check is flagged at the top of the report", %{dir: dir} do
    quiet = Noise.judge("before advising", [0.1, 0.1, 0.1], usage(0.0), List.duplicate(900.0, 50))
    busy = Noise.judge("after advising", [2.0, 1.0, 0.5], usage(0.7), List.duplicate(900.0, 50))
    suite = %{name: "advising", module: AdvisingSuite}
    written = Report.write(dir, info([quiet, busy]), [{suite, AdvisingSuite.run([])}])
    [top, _] = String.split(written.markdown, "## What to do", parts: 2)
    assert top =~ "**The machine was busy** during this run"
    assert top =~ "after advising: other processes used 0.70 cores"
  end

  test "a summary that raises is noted, and the rest is written", %{dir: dir} do
    suite = %{name: "broken", module: BrokenSummarySuite}
    written = Report.write(dir, info([]), [{suite, BrokenSummarySuite.run([])}])
    assert [problem] = written.problems
    assert problem =~ "suite broken: summary/1 raised: no summary today"
    assert written.markdown =~ "## Broken summary"
    refute written.markdown =~ "## What to do"
  end
end
