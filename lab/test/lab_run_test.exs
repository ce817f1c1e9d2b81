defmodule WellBehaved.LabRunTest do
  # The lab's plumbing end to end, on tiny sizes: every suite runs (in child
  # VMs where the suite needs them) and the report has every section.
  use ExUnit.Case, async: false

  @moduletag timeout: 600_000

  @tag :tmp_dir
  test "a quick lab run writes a report with every section", %{tmp_dir: dir} do
    ExUnit.CaptureIO.capture_io(fn ->
      Mix.Tasks.WellBehaved.Lab.run(["--quick", "--rounds-scale", "0.05", "--out", dir])
    end)

    report = File.read!(Path.join(dir, "report.md"))

    for section <- [
          "## What to do",
          "## Targets",
          "## At a glance",
          "## Noise checks",
          "## Lateness under native work",
          "### Recommendation (measured)",
          "### Off-scheduler work and busy-waiting",
          "### `:yielding` slice length",
          "## Overhead: each mode's throughput",
          "## HTTP under load",
          "## Latency of native calls",
          "## Reading lines from a file",
          "## Fuzzy search"
        ] do
      assert report =~ section
    end

    refute report =~ "This suite failed"
    # the run's recommendation, for the next run to compare with
    assert File.read!(Path.join(dir, "recommendation.txt")) =~ ~r/^quick\n1 ms: /
    html = File.read!(Path.join(dir, "report.html"))
    assert html =~ "<svg"

    json = File.read!(Path.join(dir, "results.json"))

    for suite <- ~w(lateness overhead http_load echo_latency file_read search),
        do: assert(json =~ ~s("#{suite}"))

    # every suite's result is in it (a result JSON cannot hold is replaced by an error)
    refute json =~ "cannot be written as JSON"

    assert Path.wildcard(Path.join(dir, "charts/*.svg")) != []
    assert Path.wildcard(Path.join(dir, "csv/*.csv")) != []

    # the pure-Erlang baseline and every mode were measured
    [lateness_csv] = Path.wildcard(Path.join(dir, "csv/lateness*.csv"))
    csv = File.read!(lateness_csv)

    for mode <- ~w(erlang normal dirty_cpu yielding yielding_dirty threaded auto),
        do: assert(csv =~ mode)
  end
end
