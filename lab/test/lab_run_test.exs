defmodule WellBehaved.LabRunTest do
  # The lab's plumbing end to end, on tiny sizes: the lateness and latency
  # suites (in the child VMs they need) and the report's sections on them,
  # the recommendation first; test/lab_run_rest_test.exs runs the others.
  use ExUnit.Case, async: false

  alias WellBehaved.Test.LabRun

  @moduletag timeout: 600_000

  @tag :tmp_dir
  test "a quick run of lateness and latency writes their report", %{tmp_dir: dir} do
    LabRun.run!(dir, ~w(lateness echo_latency), [
      "## What to do",
      "## At a glance",
      "## Lateness under native work",
      "### Recommendation (measured)",
      "### Off-scheduler work and busy-waiting",
      "### `:yielding` slice length",
      "## Latency of native calls"
    ])

    # the run's recommendation, for the next run to compare with
    assert File.read!(Path.join(dir, "recommendation.txt")) =~ ~r/^quick\n1 ms: /

    # the pure-Erlang baseline and every mode were measured
    [lateness_csv] = Path.wildcard(Path.join(dir, "csv/lateness*.csv"))
    csv = File.read!(lateness_csv)

    for mode <- ~w(erlang normal dirty_cpu yielding yielding_dirty threaded auto),
        do: assert(csv =~ mode)
  end
end
