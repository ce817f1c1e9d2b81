defmodule WellBehaved.LabRunRestTest do
  # The lab's plumbing end to end, on tiny sizes: the suites
  # test/lab_run_test.exs leaves (overhead, HTTP, file reading, search)
  # and the report's sections on them.
  use ExUnit.Case, async: false

  alias WellBehaved.Test.LabRun

  @moduletag timeout: 600_000

  @tag :tmp_dir
  test "a quick run of the other suites writes their report", %{tmp_dir: dir} do
    LabRun.run!(dir, ~w(overhead http_load file_read search), [
      "## Overhead: each mode's throughput",
      "## HTTP under load",
      "## Reading lines from a file",
      "## Fuzzy search"
    ])
  end
end
