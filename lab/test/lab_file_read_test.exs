defmodule WellBehaved.LabFileReadTest do
  # WellBehaved.Lab.FileRead's handling of what its child VMs return, and its
  # rendering of shapes that were not measured. No benchmark runs; the
  # report test needs gnuplot (Debian package gnuplot-nox).
  use ExUnit.Case, async: true

  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.{FileRead, JSON, Plot, Report}

  doctest FileRead
  doctest FileRead.Plan
  doctest FileRead.Analysis

  @methods ~w(wb_read_line wb_read_lines erl_read_line erl_read_split c_memchr c_core)a
  @buffers [1024, 65_536, 1_048_576]

  @fixed %{name: "100-byte lines, 1 MB", kind: :fixed, bytes: 1_000_000}
  @small %{name: "growing lines, 1 KB", kind: :growing, bytes: 1_000}
  @large %{name: "growing lines, 1 MB", kind: :growing, bytes: 1_000_000}

  setup do
    dir = Path.join(System.tmp_dir!(), "wb_file_read_test_#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(dir) end)
    {:ok, dir: dir}
  end

  # what child_measure/1 returns for a shape, with made-up figures
  defp measured_rows do
    rows =
      for {method, i} <- Enum.with_index(@methods, 1), buffer <- @buffers do
        %{
          method: method,
          buffer: buffer,
          lines: 10_000,
          ns_per_line: 10.0 * i,
          mb_per_s: 100.0,
          rounds: 1
        }
      end

    rows ++
      [
        %{
          method: :file_stream,
          buffer: nil,
          lines: 10_000,
          ns_per_line: 90.0,
          mb_per_s: 9.0,
          rounds: 1
        }
      ]
  end

  defp result(shapes) do
    %{
      config: %{quick: true, rounds: 1, buffers: @buffers, rounds_scale: 0.01},
      shapes: shapes,
      targets: FileRead.targets(shapes)
    }
  end

  describe "shape_entry/2" do
    test "a crashed child is an entry with its status and no figures" do
      entry = FileRead.shape_entry(@small, {:crashed, 1, "boom"})

      assert entry.status == "crashed (exit 1)"
      assert entry.rows == []
      assert entry.error == "boom"
      assert entry.output == "boom"
      assert Map.take(entry, [:name, :kind, :bytes]) == @small
    end

    test "the exception's banner is the error, not the stacktrace after it" do
      output = """
      some log line
      ** (RuntimeError) the methods disagree on the line count
          (well_behaved 0.1.0) lib/well_behaved/lab/file_read.ex:200: child_measure/1
      """

      entry = FileRead.shape_entry(@small, {:crashed, 1, output})
      assert entry.error == "** (RuntimeError) the methods disagree on the line count"
    end

    test "a child that hit its bound is an entry with its status and no figures" do
      entry = FileRead.shape_entry(@large, {:timeout, 1000})

      assert entry.status == "bound hit (1000 ms)"
      assert entry.rows == []
      assert entry.bound_ms == 1000
      assert entry.name == @large.name
    end

    test "a measured child gives its rows" do
      entry = FileRead.shape_entry(@fixed, {:ok, %{rows: measured_rows()}})
      assert entry.status == "ok"
      assert entry.rows == measured_rows()
      assert entry.bytes == @fixed.bytes
    end

    test "a child that really crashes (no such file) becomes a crashed entry", %{dir: dir} do
      baseline = Path.join(:code.priv_dir(:well_behaved_lab), "wb_line_baseline")
      spec = %{path: Path.join(dir, "missing"), rounds: 1, baseline: baseline}

      assert {:crashed, code, _output} =
               child_result = ChildVM.run({FileRead, :child_measure, [spec]}, bound_ms: 60_000)

      entry = FileRead.shape_entry(@small, child_result)
      assert entry.status == "crashed (exit #{code})"
      assert entry.error =~ "** (RuntimeError)"
      assert entry.error =~ "wb_line_baseline exited with"
      assert FileRead.to_markdown(result([entry])) =~ entry.error
    end
  end

  describe "a result with shapes that were not measured" do
    setup do
      shapes = [
        FileRead.shape_entry(@fixed, {:ok, %{rows: measured_rows()}}),
        FileRead.shape_entry(@small, {:crashed, 1, "boom"}),
        FileRead.shape_entry(@large, {:timeout, 1000})
      ]

      {:ok, result: result(shapes)}
    end

    test "the Markdown shows their status and the measured shape's table", %{result: result} do
      md = FileRead.to_markdown(result)

      assert md =~ "### growing lines, 1 KB: 1000 bytes\n\n**crashed (exit 1)**: not measured."
      assert md =~ "```\nboom\n```"

      assert md =~
               "### growing lines, 1 MB: 1000000 bytes\n\n**bound hit (1000 ms)**: not measured."

      assert md =~ "### 100-byte lines, 1 MB: 10000 lines, 1000000 bytes"
      assert md =~ "| `wb_read_line` | 64 KiB |"
      # the targets come from the measured 100-byte shape
      # an absolute figure is information; a ratio to a baseline passes or fails
      assert md =~
               "| read_line <= 100 ns per 100-byte line (64 KiB buffers) | 10.0 ns | " <>
                 "within (information) |"

      assert md =~ ~r/\| read_line >= 3.5x :file.read_line [^|]+\| [^|]+ \| (yes|\*\*no\*\*) \|/
    end

    test "charts leave them out and render", %{result: result, dir: dir} do
      assert [chart] = FileRead.charts(result)
      assert chart.title =~ "100-byte lines"
      assert File.read!(Plot.render(chart, dir)) =~ "<svg"
    end

    test "tables have one row each with the status and no figures", %{result: result} do
      assert [%{columns: columns, rows: rows}] = FileRead.tables(result)
      assert List.last(columns) == "status"
      assert Enum.all?(rows, &(length(&1) == length(columns)))

      assert ["growing lines, 1 KB", nil, nil, nil, 1_000, nil, nil, nil, "crashed (exit 1)"] in rows

      assert [
               "growing lines, 1 MB",
               nil,
               nil,
               nil,
               1_000_000,
               nil,
               nil,
               nil,
               "bound hit (1000 ms)"
             ] in rows

      measured = Enum.filter(rows, &(hd(&1) == @fixed.name))
      assert length(measured) == length(measured_rows())
      assert Enum.all?(measured, &(List.last(&1) == "ok" and is_number(Enum.at(&1, 5))))
    end

    test "the report takes it without a problem", %{result: result, dir: dir} do
      info = %{
        started_at: ~U[2026-01-02 03:04:05Z],
        quick: true,
        rounds_scale: 0.01,
        elapsed_s: 1.0,
        machine: Report.machine()
      }

      written = Report.write(dir, info, [{%{name: "file_read", module: FileRead}, result}])
      assert written.problems == []
      assert written.markdown =~ "**crashed (exit 1)**"
      assert File.read!(Path.join(dir, "csv/file_read_lines.csv")) =~ "bound hit (1000 ms)"
      assert is_binary(JSON.encode(result))
    end
  end

  test "with the 100-byte shape not measured, the targets are unmet, not a crash" do
    result =
      result([
        FileRead.shape_entry(@fixed, {:crashed, 137, ""}),
        FileRead.shape_entry(@small, {:timeout, 600_000})
      ])

    assert Enum.all?(result.targets, &(&1.measured == "-" and &1.met == false))
    md = FileRead.to_markdown(result)
    assert md =~ "**crashed (exit 137)**: not measured."
    assert md =~ "**bound hit (600000 ms)**: not measured."
    assert FileRead.charts(result) == []
    assert [%{rows: [_, _]}] = FileRead.tables(result)
  end
end
