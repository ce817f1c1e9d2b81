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
      assert f.min_ns > 0 and f.min_ns <= f.p50_ns, inspect(f)
      assert f.p50_ns <= f.p90_ns and f.p90_ns <= f.p99_ns, inspect(f)
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
    tables = Map.new(Render.tables(result), &{&1.name, &1.rows})
    assert length(tables["floors"]) == 4
    assert tables["ratio_rounds"] == []
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

    defp floor_at(method, size, us),
      do: %{method: method, size: size, bytes: 16, status: "ok", p50_ns: round(us * 1000)}

    test "each method over its base, round by round: met, not met, not distinguishable" do
      round = fn threaded, external, port, job ->
        [
          %{method: :threaded, against: [:floor, :futex], small: threaded, default: threaded},
          %{method: :threaded, against: [:method, :dirty_cpu], small: 0.9, default: 0.9},
          %{method: :external, against: [:floor, :unix], small: external, default: 1.2},
          %{method: :port, against: [:floor, :pipe], small: port, default: 9.0},
          %{method: :cnode, against: [:floor, :tcp], small: 1.2, default: nil},
          %{method: :external_job, against: [:method, :external], small: job, default: job}
        ]
      end

      rounds = [
        round.(1.5, 1.4, 2.5, 1.1),
        round.(2.0, 1.6, 3.0, 1.15),
        round.(1.9, 1.5, 2.2, 1.2)
      ]

      targets = Analysis.floor_targets(rounds, "quiet")

      get = fn prefix ->
        Enum.find(targets, &String.starts_with?(&1.target, prefix)) || flunk(prefix)
      end

      # every round within 2x (the bound itself counts)
      assert %{met: true, measured: "small 1.90x (1.50x-2.00x); 64 KiB 1.90x (1.50x-2.00x)"} =
               get.("thread pool <= 2x the futex")

      assert %{met: true} = get.("thread pool no slower than a dirty")
      # 1.4-1.6 around the small bound 1.5: not distinguishable, not met
      assert %{met: false, measured: measured} = get.("external pool")
      assert measured =~ "small 1.50x (1.40x-1.60x, not distinguishable from 1.5x)"
      # every round above the bound; the 64 KiB size has none
      assert %{met: false, measured: "small 2.50x (2.20x-3.00x)"} = get.("port <= 2x")
      # a size never measured
      assert %{met: false, measured: "small 1.20x (1.20x-1.20x); 64 KiB not measured"} =
               get.("C node")

      assert %{met: true} = get.("a job in an SDK server")
      assert Enum.all?(targets, &(&1.target =~ "(medians, 3 rounds, quiet)"))
      assert {:threaded, [:floor, :futex]} in Analysis.ratio_pairs()
    end

    test "a loaded pass is shown, charted and tabled beside the quiet one" do
      d = %{p50_us: 9.0, p90_us: 10.0, p99_us: 11.0, p999_us: 12.0, max_us: 13.0, batch: 1}

      row = %{
        method: :threaded,
        status: "ok",
        default: d,
        small: %{p50_us: 6.0},
        throughput: [],
        switches: %{
          "wb_pool_worker" => %{slept: 0.06, preempted: 0.0},
          "scheduler" => %{slept: 0.5, preempted: 0.25},
          "aux" => %{slept: 0.001, preempted: 0.0}
        },
        answered_in_call: 0.968
      }

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
      # the mechanism: most switches first, those under 0.01 a call left out
      assert md =~ "| threaded | scheduler 0.50 + 0.25, wb_pool_worker 0.06 + 0.00 |"
      assert md =~ "`:threaded`: 96.8% of these calls were answered in the call"
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

  test "a ratio round times each method beside its base, either order" do
    alias WellBehaved.Lab.EchoLatency.Child

    for flip <- [false, true] do
      spec = %{
        pairs: [{:threaded, [:floor, :futex]}, {:nif, [:method, :yielding]}],
        iterations: 50,
        bytes: WellBehaved.Lab.EchoLatency.term_bytes(),
        flip: flip
      }

      assert [
               %{method: :threaded, against: [:floor, :futex], small: a, default: b},
               %{method: :nif, against: [:method, :yielding], small: c, default: d}
             ] = Child.ratio_round(spec)

      assert Enum.all?([a, b, c, d], &(is_float(&1) and &1 > 0)), inspect([a, b, c, d])
    end
  end

  test "context switches are counted by kind of thread, per call" do
    alias WellBehaved.Lab.EchoLatency.Child

    before = Child.switches()

    if File.dir?("/proc/self/task") do
      assert %{"scheduler" => {v, nv}} = before
      assert is_integer(v) and is_integer(nv)
      refute Enum.any?(Map.keys(before), &String.match?(&1, ~r/^\d/))
    end

    assert Child.per_call(
             %{"aux" => {1, 2}, "scheduler" => {5, 5}},
             %{"aux" => {11, 2}, "scheduler" => {5, 5}, "poller" => {4, 0}},
             4
           ) ==
             %{"aux" => %{slept: 2.5, preempted: 0.0}, "poller" => %{slept: 1.0, preempted: 0.0}}
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
