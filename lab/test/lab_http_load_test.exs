defmodule WellBehaved.LabHttpLoadTest do
  # Runs the HTTP-under-load suite once, shortened (1 s of wrk per case), and
  # checks the shape of what it returns and that it leaves nothing running.
  # No timing assertions: the machine is noisy, and a VM hogged by :normal
  # workers may serve nothing at all, which is a result.
  use ExUnit.Case, async: false

  alias WellBehaved.Lab.HttpLoad

  @moduletag timeout: 120_000

  doctest HttpLoad

  @cases ["idle", "normal", "dirty_cpu", "yielding", "yielding_dirty", "threaded", "auto"]

  setup_all do
    unless System.find_executable("wrk") do
      raise "these tests need `wrk`: install the Debian package `wrk` (apt-get install -y wrk)"
    end

    tmp_before = child_dirs()
    result = HttpLoad.run(quick: true, rounds_scale: 0.3)
    {:ok, result: result, tmp_before: tmp_before}
  end

  test "every case has a result with numeric req/s", %{result: result} do
    assert Enum.map(result.cases, & &1.case) == @cases

    for c <- result.cases do
      assert is_number(c.req_s) and c.req_s >= 0, c.case
      assert is_integer(c.requests), c.case
      assert is_integer(c.errors_total), c.case
      assert Map.keys(c.latency_ms) |> Enum.sort() == [:p50, :p75, :p90, :p99]

      for {_, v} <- c.latency_ms,
          do: assert(is_nil(v) or (is_number(v) and v >= 0), "#{c.case}: #{inspect(v)}")

      assert is_binary(c.child.status), c.case
    end

    assert result.config.duration_s == 1
    assert result.config.iterations > 0
  end

  test "the idle case served requests", %{result: result} do
    idle = Enum.find(result.cases, &(&1.case == "idle"))
    assert idle.server == "ready"
    assert idle.requests > 0
    assert idle.req_s > 0
    assert is_number(idle.latency_ms.p99)
    assert idle.ratio_to_idle == 1.0
    assert idle.child.status == "ok"
    assert idle.child.workers == 0
  end

  test "the Markdown has the section and the table header", %{result: result} do
    md = HttpLoad.to_markdown(result)
    assert md =~ "## HTTP under load"
    assert md =~ "| case | req/s | vs idle | p50 ms | p75 ms | p90 ms | p99 ms |"
    assert md =~ "wrk -t2 -c32 -d1s --latency"

    for name <- @cases -- ["idle"], do: assert(md =~ "| :#{name} |")
  end

  test "charts have the documented shapes", %{result: result} do
    charts = HttpLoad.charts(result)
    assert [lines, bars] = charts

    for chart <- charts do
      assert %{
               name: name,
               title: title,
               kind: kind,
               x_label: x,
               y_label: y,
               log_y: log_y,
               categories: categories,
               series: series
             } = chart

      assert is_binary(name) and is_binary(title) and is_binary(x) and is_binary(y)
      assert kind in [:bars, :lines]
      assert is_boolean(log_y)
      assert Enum.all?(categories, &is_binary/1)

      for s <- series do
        assert is_binary(s.label)
        assert length(s.values) == length(categories)
        assert Enum.all?(s.values, &(is_nil(&1) or is_number(&1)))
      end
    end

    assert lines.kind == :lines
    assert lines.log_y
    assert lines.categories == ["p50", "p75", "p90", "p99"]
    assert length(lines.series) == length(@cases)
    # a log axis gets no zeros
    assert Enum.all?(lines.series, fn s -> Enum.all?(s.values, &(is_nil(&1) or &1 > 0)) end),
           inspect(lines.series)

    assert bars.kind == :bars
    assert length(bars.categories) == length(@cases)
    assert [%{values: values}] = bars.series
    assert Enum.all?(values, &is_number/1)
    assert length(Enum.uniq([lines.name, bars.name])) == 2
  end

  test "tables hold one raw row per case", %{result: result} do
    assert [%{name: name, columns: columns, rows: rows}] = HttpLoad.tables(result)
    assert is_binary(name)
    assert Enum.all?(columns, &is_binary/1)
    assert length(rows) == length(@cases)
    assert Enum.all?(rows, &(length(&1) == length(columns)))
    assert Enum.map(rows, &hd/1) == @cases
  end

  test "the result encodes as JSON", %{result: result} do
    assert is_binary(WellBehaved.Lab.JSON.encode(result))
  end

  test "nothing is left running", %{tmp_before: tmp_before} do
    assert pgrep(["-x", "wrk"]) == []
    # the suite marks its child VMs' command lines
    assert pgrep(["-f", "wb_http_load_child"]) == []
    assert child_dirs() -- tmp_before == []
  end

  test "a missing wrk is named with its package" do
    path = System.get_env("PATH")

    try do
      System.put_env("PATH", "/nonexistent")
      error = assert_raise RuntimeError, fn -> HttpLoad.run(rounds_scale: 0.01) end
      assert error.message =~ "Debian package `wrk`"
    after
      System.put_env("PATH", path)
    end
  end

  # the matching processes that descend from this VM: another test file,
  # in a VM of its own beside this one, may run the suite at the same time
  defp pgrep(args) do
    {out, _status} = System.cmd("pgrep", args)
    me = System.pid()
    out |> String.split("\n", trim: true) |> Enum.filter(&descends_from?(&1, me))
  end

  defp descends_from?(pid, ancestor) do
    case File.read("/proc/#{pid}/status") do
      {:ok, status} ->
        case Regex.run(~r/^PPid:\s+(\d+)$/m, status) do
          [_, ^ancestor] -> true
          [_, parent] when parent not in ["0", "1"] -> descends_from?(parent, ancestor)
          _ -> false
        end

      # gone since pgrep saw it
      {:error, _} ->
        false
    end
  end

  # ChildVM folders of this suite's children (other suites may run at the
  # same time and have folders of their own)
  defp child_dirs do
    System.tmp_dir!()
    |> Path.join("wb_child_*")
    |> Path.wildcard()
    |> Enum.filter(fn dir ->
      case File.read(Path.join(dir, "spec")) do
        {:ok, bin} -> match?({HttpLoad.Child, _, _}, :erlang.binary_to_term(bin))
        _ -> false
      end
    end)
  end
end
