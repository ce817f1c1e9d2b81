defmodule WellBehaved.Test.LabRun do
  @moduledoc false
  # A quick lab run of some suites on tiny sizes (rounds_scale 0.05) into
  # a directory, and the checks every such run's outputs must pass: each
  # of its suites in results.json (none failed, none unwritable), the
  # report's sections, an HTML report with charts, charts and CSV files.
  # The lab's run tests share the suites out between them, so that they
  # can run side by side.
  import ExUnit.Assertions

  @spec run!(Path.t(), [String.t()], [String.t()]) :: String.t()
  def run!(dir, suites, sections) do
    ExUnit.CaptureIO.capture_io(fn ->
      Mix.Tasks.WellBehaved.Lab.run([
        "--quick",
        "--rounds-scale",
        "0.05",
        "--suites",
        Enum.join(suites, ","),
        "--out",
        dir
      ])
    end)

    report = File.read!(Path.join(dir, "report.md"))

    for section <- ["## Targets", "## Noise checks" | sections],
        do: assert(report =~ section, "no #{inspect(section)} in the report")

    refute report =~ "This suite failed"
    assert File.read!(Path.join(dir, "report.html")) =~ "<svg"

    json = File.read!(Path.join(dir, "results.json"))
    for suite <- suites, do: assert(json =~ ~s("#{suite}"))
    # every suite's result is in it (a result JSON cannot hold is replaced by an error)
    refute json =~ "cannot be written as JSON"

    assert Path.wildcard(Path.join(dir, "charts/*.svg")) != []
    assert Path.wildcard(Path.join(dir, "csv/*.csv")) != []
    report
  end
end
