defmodule WellBehaved.Lab.FloorsTest do
  # The floors' program answers every method, its figures read back in
  # order; nothing here depends on how fast the machine is (the program's
  # own test checks each round trip byte for byte).
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.Floors

  test "every floor is measured, small and 64 KiB, its percentiles in order" do
    for method <- Floors.methods(), bytes <- [16, 65_536] do
      assert {:ok, f} = Floors.measure(method, bytes, 200)
      # all 200, unless they took over 3 s (a loaded machine, threads spinning)
      assert %{method: ^method, bytes: ^bytes, iterations: n} = f
      assert n in 1..200
      assert f.min_ns > 0 and f.min_ns <= f.p50_ns
      assert f.p50_ns <= f.p90_ns and f.p90_ns <= f.p99_ns
    end
  end

  test "what the program prints is read, or refused" do
    assert {:ok, %{method: :pipe, bytes: 16, iterations: 3, p50_ns: 5, min_ns: 1}} =
             Floors.parse("pipe 16 3 5 6 7 1\n")

    assert {:error, {:unreadable, _}} = Floors.parse("pipe 16 3 5 6 7\n")
    assert {:error, {:unreadable, _}} = Floors.parse("owl 16 3 5 6 7 1\n")
    assert {:error, {:unreadable, _}} = Floors.parse("pipe 16 3 5 6 x 1\n")
  end

  test "a run the program refuses is an error, with its message" do
    assert {:error, {:exit_status, 2, message}} = Floors.measure(:pipe, 128 * 1024 * 1024, 1)
    assert message =~ "usage"
  end

  test "the latency suite reads each method against its mechanism's floor" do
    alias WellBehaved.Lab.EchoLatency.Render

    d = %{p50_us: 9.0, p90_us: 10.0, p99_us: 11.0, p999_us: 12.0, max_us: 13.0, batch: 1}

    row = fn method, small ->
      %{method: method, status: "ok", default: d, small: %{p50_us: small}, throughput: []}
    end

    floor = fn method, size, ns ->
      %{
        method: method,
        size: size,
        bytes: 16,
        status: "ok",
        p50_ns: ns,
        p90_ns: ns,
        p99_ns: ns,
        min_ns: ns
      }
    end

    result = %{
      config: %{iterations: 10, window_ms: 100, schedulers: 2},
      rows: [row.(:threaded, 6.0), row.(:port, 8.0), row.(:nif, 0.1)],
      floors: [
        floor.(:futex, :small, 3000),
        floor.(:futex, :default, 4500),
        %{method: :pipe, size: :small, bytes: 16, status: "{:exit_status, 1, \"x\"}"},
        floor.(:pipe, :default, 3000)
      ],
      targets: []
    }

    md = Render.to_markdown(result)
    assert md =~ "### Against the machine's floors"
    assert md =~ "| threaded | `futex` | 2.0x | 2.0x |"
    # a floor that failed leaves its ratio out
    assert md =~ "| port | `pipe` | - | 3.0x |"
    refute md =~ "| nif |" <> " `"
    assert [_, _, %{name: "floors", rows: rows}] = Render.tables(result)
    assert length(rows) == 4
    # and charted: each method over its floor, nil where the floor failed
    assert %{categories: ["threaded (futex)", "port (pipe)"], series: [small, large]} =
             Enum.find(Render.charts(result), &(&1.name == "latency_over_floor"))

    assert small.values == [2.0, nil] and large.values == [2.0, 3.0]

    # a result from before the floors: no section, no chart
    old = Map.delete(result, :floors)
    refute Render.to_markdown(old) =~ "machine's floors"
    refute Enum.any?(Render.charts(old), &(&1.name == "latency_over_floor"))
  end

  test "bad arguments name the function" do
    assert_raise ArgumentError, ~r/Floors.measure\/3/, fn -> Floors.measure(:smoke, 16, 10) end
    assert_raise ArgumentError, ~r/Floors.measure\/3/, fn -> Floors.measure(:pipe, 0, 10) end
  end
end
