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
    assert [_, _, %{name: "floors", rows: rows} | _] = Render.tables(result)
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

  describe "targets on ratios" do
    alias WellBehaved.Lab.EchoLatency.{Analysis, Render}

    defp ok_row(method, small, default),
      do: %{method: method, status: "ok", small: %{p50_us: small}, default: %{p50_us: default}}

    defp floor_at(method, size, us),
      do: %{method: method, size: size, bytes: 16, status: "ok", p50_ns: round(us * 1000)}

    test "each method over its floor's median, or another method's, at its bound" do
      rows = [
        ok_row(:threaded, 6.0, 6.2),
        ok_row(:dirty_cpu, 6.0, 7.0),
        ok_row(:external, 15.0, 26.0),
        ok_row(:external_job, 18.0, 31.3),
        ok_row(:port, 8.0, 40.0),
        ok_row(:cnode, 10.0, 20.0)
      ]

      floors = [
        floor_at(:futex, :small, 3.0),
        floor_at(:futex, :default, 3.0),
        floor_at(:unix, :small, 10.0),
        floor_at(:unix, :default, 20.0),
        floor_at(:pipe, :small, 4.0),
        floor_at(:tcp, :small, 8.0),
        %{method: :tcp, size: :default, status: "{:exit_status, 1, \"x\"}"}
      ]

      targets = Map.new(Analysis.floor_targets(rows, floors, "quiet"), &{&1.target, &1})

      get = fn prefix ->
        {_, t} = Enum.find(targets, fn {label, _} -> String.starts_with?(label, prefix) end)
        t
      end

      # 6.0 / 3.0 and 6.2 / 3.0: within 2x at both sizes (the bound itself counts)
      assert %{met: false, measured: "small 2.00x, 64 KiB 2.07x"} =
               get.("thread pool <= 2x the futex")

      # 6.2 over dirty's 7.0 at 64 KiB, 6.0 over 6.0 small
      assert %{met: true} = get.("thread pool no slower than a dirty")
      # 15 / 10 = 1.5 (at the bound), 26 / 20 = 1.3
      assert %{met: true, measured: "small 1.50x, 64 KiB 1.30x"} = get.("external pool")
      # only the small size has a bound
      assert %{met: true, measured: "small 2.00x"} = get.("port <= 2x")
      # a failed floor: not measured, not met
      assert %{met: false, measured: "small 1.25x, 64 KiB not measured"} = get.("C node")
      # 18 / 15 = 1.2, 31.3 / 26 = 1.204
      assert %{met: false} = get.("a job in an SDK server")
      assert Enum.all?(Map.keys(targets), &String.ends_with?(&1, "(medians, quiet)"))
    end

    test "a loaded pass is shown, charted and tabled beside the quiet one" do
      d = %{p50_us: 9.0, p90_us: 10.0, p99_us: 11.0, p999_us: 12.0, max_us: 13.0, batch: 1}
      row = %{method: :threaded, status: "ok", default: d, small: %{p50_us: 6.0}, throughput: []}
      floors = [floor_at(:futex, :small, 3.0), floor_at(:futex, :default, 4.5)]

      result = %{
        config: %{iterations: 10, window_ms: 100, schedulers: 2},
        rows: [row],
        floors: floors,
        loaded: %{
          burners: 2,
          rows: [%{row | default: %{d | p50_us: 18.0}}, %{method: :port, status: "crashed"}],
          floors: floors
        },
        targets: []
      }

      md = Render.to_markdown(result)
      assert md =~ "### On a loaded machine"
      assert md =~ "while 2 CPU-bound"
      assert md =~ "| threaded | 6.00 | 18.0 |"
      assert md =~ "| port | **crashed** |"
      assert md =~ "| threaded | `futex` | 2.0x | 4.0x |"
      names = Enum.map(Render.charts(result), & &1.name)
      assert "latency_over_floor" in names and "latency_over_floor_loaded" in names
      tables = Map.new(Render.tables(result), &{&1.name, &1.rows})
      assert length(tables["echo_latency_loaded"]) == 2
      assert length(tables["floors_loaded"]) == 2
    end
  end

  describe "a loaded machine" do
    alias WellBehaved.Lab.Load

    test "burners run until stopped, or until their bound" do
      load = Load.start(2, 60)
      pids = Load.os_pids(load)
      assert length(pids) == 2
      assert Enum.all?(pids, &WellBehaved.OSProcess.alive?/1)
      assert Load.stop(load) == :ok
      refute Enum.any?(pids, &WellBehaved.OSProcess.alive?/1)

      bounded = Load.start(1, 1)
      [pid] = Load.os_pids(bounded)
      WellBehaved.Testing.eventually(fn -> not WellBehaved.OSProcess.alive?(pid) end, 30_000)
      Load.stop(bounded)
    end

    test "bad arguments raise" do
      assert_raise ArgumentError, ~r/Load.start\/2/, fn -> Load.start(0, 10) end
      assert_raise ArgumentError, ~r/Load.start\/2/, fn -> Load.start(1, 3601) end
    end
  end
end
