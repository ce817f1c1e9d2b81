defmodule WellBehaved.RuntimeTest do
  use ExUnit.Case, async: false

  alias WellBehaved.{Levenshtein, Runtime}
  import WellBehaved.Test.RuntimeHelpers

  test "stats report the pool and the live jobs while a job runs" do
    stats = Runtime.stats()
    assert stats.pool_threads >= 2
    assert stats.normal_max_us < stats.yielding_max_us
    # every job type reports its learned cost per unit of work
    assert %{levenshtein: lev} = stats.ps_per_unit
    assert is_integer(lev) and lev > 0, inspect(lev)

    # a 60k pattern against 600k bytes, so that the job still runs when
    # the stats are read on a machine many times faster (60k against 60k
    # is ~90 ms of work; this test took 3.1 s at a load of 10 here)
    a = random_bytes(60_000)

    task =
      Task.async(fn -> Levenshtein.distance(a, random_bytes(600_000), schedule: :yielding) end)

    eventually(fn -> Runtime.stats().live_jobs >= 1 end)
    running = Runtime.stats()
    # a 60k pattern's match table alone is 60_000 / 64 blocks x 256 words
    assert running.live_bytes >= div(60_000, 64) * 256 * 8
    assert is_integer(Task.await(task, 60_000))
    assert_no_live_jobs()
  end

  test "large blocks of finished jobs and dropped indexes are released by the runtime's thread" do
    before = Runtime.stats().released_later
    # an index of a 2 MB binary: its packed copy and batches, once dropped
    # (made and searched in a function of its own: nothing here refers to
    # it once that returns)
    search_an_index = fn ->
      index = Levenshtein.Index.new([random_bytes(2_000_000)])
      Levenshtein.distances("a", index, schedule: :yielding)
    end

    assert [_] = search_an_index.()
    # the 500k-candidate search: its distances (a list's packed copy is
    # kept for the next list searched instead)
    assert length(Levenshtein.distances("a", List.duplicate("ab", 500_000))) == 500_000
    # a 200k pattern's match table (3,125 blocks x 2 KiB), freed as the job ends
    assert Levenshtein.distance(random_bytes(200_000), random_bytes(200_000), max_distance: 3) ==
             4

    # the index goes when the VM collects its resource
    :erlang.garbage_collect()
    eventually(fn -> Runtime.stats().released_later >= before + 3 end)
    assert_no_live_jobs()
  end

  test "a cdist matrix is released by the runtime's idle-priority thread" do
    # 40,000 candidates: a matrix of two rows of 32-bit cells is 320 KB,
    # past WB_RELEASE_LATER_FROM (the rows' values are freed as each ends)
    words = for i <- 1..40_000, do: "word#{i}"
    index = WellBehaved.Fuzzy.Index.new(words)
    before = Runtime.stats().released_later
    run = fn -> byte_size(WellBehaved.Fuzzy.cdist(["word1", "word2"], index, as: :binary)) end
    assert run.() == 2 * 40_000 * 4
    # the matrix goes when the VM collects its binary
    :erlang.garbage_collect()
    eventually(fn -> Runtime.stats().released_later >= before + 1 end)
    eventually(fn -> Runtime.stats().release_pending == 0 end)

    # on Linux the thread runs as SCHED_IDLE (policy 5 in /proc's stat):
    # woken by a scheduler, it never takes that scheduler's CPU
    if File.dir?("/proc/self/task") do
      policies =
        for task <- File.ls!("/proc/self/task"),
            comm = File.read!("/proc/self/task/#{task}/comm") |> String.trim(),
            comm in ["wb_idle_release", "wb_releaser"],
            into: %{} do
          [_, after_name] =
            String.split(File.read!("/proc/self/task/#{task}/stat"), ") ", parts: 2)

          {comm, after_name |> String.split() |> Enum.at(38)}
        end

      assert policies["wb_idle_release"] == "5"
      assert policies["wb_releaser"] == "0"
    end
  end

  test "a :threaded job NIF called without a reference to tag its reply raises, and starts nothing" do
    for ref <- [nil, :ref, "ref"] do
      assert_raise ArgumentError, fn ->
        WellBehaved.Native.levenshtein("kitten", "sitting", :byte, nil, :threaded, false, ref)
      end
    end

    refute_receive {_, _}, 100
    assert_no_live_jobs()
  end

  @defaults [
    normal_max_us: :slice,
    yielding_max_us: :infinity,
    slice_us: :calibrated,
    dirty_slice_us: 5000
  ]

  test "the defaults: a slice derived from this VM's Erlang turn, :auto never picks :yielding_dirty" do
    on_exit(fn -> Runtime.configure(@defaults) end)
    Runtime.configure(slice_us: 50, normal_max_us: 7, dirty_slice_us: 100)
    Runtime.configure(@defaults)
    stats = Runtime.stats()
    calibration = WellBehaved.Runtime.Calibration.erlang_turn()
    assert stats.slice_source == :erlang_turn
    assert stats.erlang_turn_ns == calibration.turn_ns
    assert stats.slice_ns == calibration.slice_ns
    assert stats.calibrated_slice_ns == calibration.slice_ns
    assert stats.slice_us == round(calibration.slice_ns / 1000)
    # :normal under one slice of predicted work
    assert stats.normal_max_us == div(calibration.slice_ns, 1000)
    assert %{yielding_max_us: :infinity, dirty_slice_us: 5000} = stats
  end

  test "calibrate gives a runtime this VM's slice, unless its slice was configured" do
    on_exit(fn -> Runtime.configure(@defaults) end)
    want = WellBehaved.Runtime.Calibration.erlang_turn().slice_ns
    :ok = Runtime.configure(slice_us: 40)
    assert Runtime.calibrate() == :ok
    assert %{slice_source: :configured, slice_ns: 40_000} = Runtime.stats()
    :ok = Runtime.configure(slice_us: :calibrated)
    assert Runtime.calibrate() == :ok
    assert %{slice_source: :erlang_turn, slice_ns: ^want} = Runtime.stats()

    assert_raise ArgumentError, ~r/calibrate\/1: invalid native/, fn ->
      Runtime.calibrate(String)
    end
  end

  test "normal_max_us follows the slice until it is set, and again with :slice" do
    on_exit(fn -> Runtime.configure(@defaults) end)
    :ok = Runtime.configure(slice_us: 40)
    assert %{slice_source: :configured, slice_ns: 40_000, normal_max_us: 40} = Runtime.stats()
    :ok = Runtime.configure(normal_max_us: 25)
    :ok = Runtime.configure(slice_us: 60)
    assert %{normal_max_us: 25, slice_us: 60} = Runtime.stats()
    :ok = Runtime.configure(normal_max_us: :slice)
    assert Runtime.stats().normal_max_us == 60
    # a slice that would put a following normal_max_us above yielding_max_us
    :ok = Runtime.configure(yielding_max_us: 100)

    assert_raise ArgumentError,
                 ~r/normal_max_us \(one slice\) must not exceed yielding_max_us/,
                 fn ->
                   Runtime.configure(slice_us: 200)
                 end

    assert Runtime.stats().slice_us == 60
  end

  test "configure changes the auto thresholds, and auto still computes correctly" do
    on_exit(fn -> Runtime.configure(@defaults) end)
    assert Runtime.configure(normal_max_us: 0, yielding_max_us: 0) == :ok
    assert %{normal_max_us: 0, yielding_max_us: 0} = Runtime.stats()
    # everything is now yielding_dirty under :auto
    assert Levenshtein.distance("kitten", "sitting") == 3
    assert Runtime.configure(yielding_max_us: 1_000_000) == :ok
    assert Runtime.stats().yielding_max_us == 1_000_000
    assert Runtime.configure(yielding_max_us: :infinity) == :ok
    assert Runtime.stats().yielding_max_us == :infinity
    # settings not given keep their value
    assert Runtime.stats().normal_max_us == 0
  end

  test "configure sets the slices, shown by stats" do
    on_exit(fn -> Runtime.configure(@defaults) end)
    assert Runtime.configure(slice_us: 1, dirty_slice_us: 100_000) == :ok
    assert %{slice_us: 1, dirty_slice_us: 100_000} = Runtime.stats()
    assert Runtime.configure(slice_us: 100_000) == :ok
    assert Runtime.stats().slice_us == 100_000
  end

  test "configure rejects bad settings, naming the setting and what it accepts" do
    on_exit(fn -> Runtime.configure(@defaults) end)
    before = Runtime.stats()

    for {opts, pattern} <- [
          {[slice_us: 0],
           ~r/configure\/2: invalid :slice_us 0, expected an integer in 1..100000$/},
          {[slice_us: 100_001], ~r/invalid :slice_us 100001, expected an integer in 1..100000/},
          {[slice_us: 20.0],
           ~r/invalid :slice_us 20.0, expected an integer in 1..100000 or :calibrated/},
          {[dirty_slice_us: :fast], ~r/invalid :dirty_slice_us :fast, expected/},
          {[normal_max_us: -5],
           ~r/invalid :normal_max_us -5, expected an integer of microseconds in 0\.\./},
          {[normal_max_us: :infinity], ~r/invalid :normal_max_us :infinity/},
          {[yielding_max_us: 2 ** 64],
           ~r/invalid :yielding_max_us \d+, expected .* or :infinity/},
          {[speed: 1],
           ~r/WellBehaved.Runtime.configure\/2: unknown option :speed, expected one of :normal_max_us/},
          {[:slice_us], ~r/configure\/2: invalid option :slice_us, expected :slice_us: value/},
          {[normal_max_us: 10, yielding_max_us: 5], ~r/normal_max_us \(10\) must not exceed/},
          {%{slice_us: 5}, ~r/expected a keyword list/}
        ] do
      assert_raise ArgumentError, pattern, fn -> Runtime.configure(opts) end
    end

    # nothing changed
    settings = [:slice_ns, :slice_source, :normal_max_us, :yielding_max_us, :dirty_slice_us]
    assert Map.take(Runtime.stats(), settings) == Map.take(before, settings)
  end

  test "tiny-slice runs do not move the learned cost per unit" do
    before = Runtime.stats().ps_per_unit.levenshtein
    a = random_bytes(3000)
    b = random_bytes(2800)

    for mode <- [:threaded, :yielding, :dirty_cpu] do
      Levenshtein.distance(a, b, schedule: mode, tiny_slices: true)
    end

    assert Runtime.stats().ps_per_unit.levenshtein == before
  end

  test "small calls in every mode do not move the learned cost per unit" do
    # a small job is timed well only when something held it up: learning
    # from those alone would push the estimate up call after call. The
    # cost is measured first (a type not measured yet takes its first
    # measure from small :auto calls added up, whatever the machine)
    {a, b} = long_pair(40_000)
    Levenshtein.distance(a, b, schedule: :yielding)

    assert Runtime.stats().cost_measured.levenshtein,
           "a 40,000-byte pair left the cost unmeasured: #{inspect(Runtime.stats().cost_measured)}"

    before = Runtime.stats().ps_per_unit.levenshtein
    a = random_bytes(100)
    b = random_bytes(100)

    for mode <- Runtime.modes(), _ <- 1..2000 do
      Levenshtein.distance(a, b, schedule: mode)
    end

    assert Runtime.stats().ps_per_unit.levenshtein == before
  end

  test "a long :normal call is charged its time in reductions" do
    # the VM charges a NIF call a few reductions (about 50) however long it
    # runs; the runtime reports the estimated time, a full timeslice (4000)
    # for this ~50 ms call, of which Process.info may not show the last few
    {a, b} = long_pair(40_000)
    {:reductions, before} = Process.info(self(), :reductions)
    Levenshtein.distance(a, b, schedule: :normal)
    {:reductions, later} = Process.info(self(), :reductions)
    assert later - before >= 2000
  end
end
