defmodule WellBehaved.RustJobsTest do
  # Jobs written in Rust on the SDK's crate (rust/well_behaved), built as a
  # user's crate is (rust/test_jobs): results equal to an Elixir reference
  # in every mode and in a server program, the crate's refusals and raises
  # as the C runtime gives them, a panic in any callback an exception for
  # the caller (the VM lives, nothing is left live), terms through the
  # crate's wrappers, killed callers.
  use ExUnit.Case, async: false

  import Bitwise
  import WellBehaved.Testing
  alias WellBehaved.{External, Job, Runtime}
  alias WellBehaved.Test.RustJobs
  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 300_000
  @mask 0xFFFF_FFFF_FFFF_FFFF
  @modes Runtime.modes() ++ [:external]

  setup_all do
    RustJobs.ensure_loaded!()
    on_exit(fn -> External.stop(RustJobs.External) end)
  end

  # the job's fold, in Elixir
  defp fold(n),
    do: Enum.reduce(0..(n - 1)//1, 0, &(&2 * 6_364_136_223_846_793_005 + &1 &&& @mask))

  test "the results of an Elixir reference in every mode and in a server" do
    assert Runtime.modes(RustJobs) == @modes

    for n <- [0, 1, 2, 1000, 100_000] do
      modes_agree(fn opts -> Job.call(&RustJobs.fold/4, [n], opts) end, fold(n), RustJobs)
    end

    for list <- [[], [7], Enum.to_list(1..5000), [@mask, 1]] do
      want = Enum.reduce(list, 0, &(&1 + &2 &&& @mask))
      modes_agree(fn opts -> Job.call(&RustJobs.sum_list/4, [list], opts) end, want, RustJobs)
    end

    assert_no_live_jobs(RustJobs)
  end

  test "refusals and raises as the runtime gives them, in a server too" do
    for mode <- @modes do
      call = fn at -> Job.call(&RustJobs.refusing/4, [at], schedule: mode) end
      assert call.(:none) == :ok
      assert call.(:decode_badarg) == {:error, :badarg}
      assert call.(:decode_reason) == {:error, {:bad, 2}}
      assert call.(:init_reason) == {:error, :not_now}
      assert call.(:no_such_thing) == {:error, :badarg}
      assert_raise ArgumentError, fn -> call.(:result_badarg) end
      error = assert_raise ErlangError, fn -> call.(:result_raise) end
      assert error.original == {:raised, "why"}
      assert Job.call(&RustJobs.fold/4, [-1], schedule: mode) == {:error, :badarg}
      assert Job.call(&RustJobs.sum_list/4, [[1, :two]], schedule: mode) == {:error, :badarg}
    end

    assert_no_live_jobs(RustJobs)
  end

  test "a panic in any callback is the caller's exception, in every mode; the VM lives" do
    # in a child VM with one normal scheduler: an abort would end it, not
    # the test run
    scenario = """
    modes = WellBehaved.Runtime.modes()
    call = fn at, mode, tiny ->
      try do
        {:ok, Job.call(&RustJobs.panicky/5, [at, 100], schedule: mode, tiny_slices: tiny)}
      rescue
        e in ErlangError -> {:raised, e.original}
      end
    end
    answers =
      for at <- [:decode, :predict, :setup, :init, :step, :result, :payload, :drop, :memory, :none],
          mode <- modes, tiny <- [false, true], do: {at, mode, tiny, call.(at, mode, tiny)}
    # a view kept past its call in a thread-local (one scheduler: the
    # same thread)
    raised = fn f -> try do {:ok, f.()} rescue e in ErlangError -> {:raised, e.original} end end
    stashed = [raised.(fn -> RustJobs.stash_bytes("one") end), raised.(fn -> RustJobs.stash_bytes("two") end)]
    :ok = WellBehaved.Testing.assert_no_live_jobs(RustJobs, 10_000)
    {answers, stashed, Map.take(RustJobs.runtime_stats(), [:live_jobs, :live_bytes, :counters])}
    """

    assert {:ok, {{answers, stashed, stats}, _}} =
             ChildVM.run({Code, :eval_string, [RustJobs.child_prelude() <> scenario]},
               bound_ms: 150_000,
               erl_flags: ["+S", "1:1"]
             )

    for {at, mode, tiny, answer} <- answers do
      where = "#{at} #{mode} #{tiny}: #{inspect(answer)}"

      cond do
        at in [:drop, :memory, :none] ->
          assert answer == {:ok, 100}, where

        # the runtime asks predict and setup of :auto (and of some modes
        # on their way): a panic there raises where they run
        at in [:predict, :setup] and mode != :auto and answer == {:ok, 100} ->
          :ok

        at == :payload ->
          assert {:raised, {:wb_panic, "panicky", message}} = answer, where
          assert message =~ ~r/^a panic whose payload is not a string \(at src\/lib.rs:\d+:\d+\)$/

        true ->
          assert {:raised, {:wb_panic, "panicky", message}} = answer, where
          assert message =~ ~r/^#{at} panicked.* \(at src\/lib.rs:\d+:\d+\)$/
      end
    end

    assert [{:ok, :stashed}, {:raised, {:wb_panic, "stash_bytes", message}}] = stashed
    assert message =~ "a Bytes was kept past the call that made it"

    assert stats.live_jobs == 0 and stats.live_bytes == 0
    # every panicking job call failed, in the mode that ran it
    raised = Enum.count(answers, &match?({_, _, _, {:raised, _}}, &1))
    assert raised >= 7 * 6 * 2 - 2 * 5 * 2
    failed = stats.counters.failed |> Map.values() |> Enum.sum()
    assert failed == raised
  end

  test "a panic in the server program is the caller's exception too" do
    for at <- [:decode, :init, :step, :result, :payload] do
      error =
        assert_raise ErlangError, fn ->
          Job.call(&RustJobs.panicky/5, [at, 100], schedule: :external)
        end

      assert {:wb_panic, "panicky", message} = error.original
      assert message =~ if(at == :payload, do: "payload is not a string", else: "#{at} panicked")
    end

    assert Job.call(&RustJobs.panicky/5, [:drop, 100], schedule: :external) == 100
    assert_no_live_jobs(RustJobs)
  end

  test "terms through the crate's wrappers, as they came" do
    values = [
      u64: [0, 1, @mask, 1 <<< 32],
      i64: [-(1 <<< 63), -1, 0, (1 <<< 63) - 1],
      u32: [0, 0xFFFF_FFFF],
      i32: [-(1 <<< 31), (1 <<< 31) - 1],
      f64: [0.0, -1.5, 1.0e300],
      bool: [true, false],
      atom: [:a, :"with space", :"Elixir.Mod", :""],
      bytes: ["", "abc", :crypto.strong_rand_bytes(1000), binary_part("xabcdefgh", 1, 5)],
      list: [[], [1, :a, "b", {1}], Enum.to_list(1..1000)],
      tuple: [{}, {1}, {1, :a, "b", [2]}]
    ]

    for {kind, vs} <- values, v <- vs, do: assert(RustJobs.roundtrip(kind, v) === v)

    refused = [
      u64: [-1, 1 <<< 64, 1.0, :a],
      i64: [1 <<< 63, "1"],
      u32: [1 <<< 32, -1],
      i32: [1 <<< 31],
      f64: [1, :a],
      bool: [nil, 1],
      atom: ["a", 1],
      bytes: [[], :a, <<1::3>>],
      list: [{}, [1 | 2]],
      tuple: [[], 1]
    ]

    for {kind, vs} <- refused, v <- vs do
      assert_raise ArgumentError, fn -> RustJobs.roundtrip(kind, v) end
    end

    assert RustJobs.roundtrip(:iodata, [?a, ["bc", [?d]], "e"]) == "abcde"
    assert_raise ArgumentError, fn -> RustJobs.roundtrip(:iodata, [256]) end
    assert RustJobs.map_of([{:a, 1}, {"b", [2]}, {:a, 3}]) == %{:a => 3, "b" => [2]}
    assert RustJobs.map_get(%{a: 1, b: 2}, :b) == 2
    assert_raise ArgumentError, fn -> RustJobs.map_get(%{a: 1}, :b) end
    assert_raise ArgumentError, fn -> RustJobs.map_get([], :b) end

    assert RustJobs.roundtrip(:atom_of, String.duplicate("a", 255)) ==
             String.to_atom(String.duplicate("a", 255))

    # no atom has a longer name: a panic, not a bad term
    error =
      assert_raise ErlangError, fn -> RustJobs.roundtrip(:atom_of, String.duplicate("a", 256)) end

    assert {:wb_panic, "roundtrip", "an atom's name is at most 255 bytes" <> _} = error.original

    # a plain NIF declared [dirty_cpu] runs on a dirty CPU scheduler
    # (erl_nif's thread types: 1 normal, 2 dirty CPU)
    assert RustJobs.thread_type() == 2
    assert RustJobs.normal_thread_type() == 1

    error = assert_raise ErlangError, fn -> RustJobs.boom() end
    assert {:wb_panic, "boom", "boom (at src/lib.rs:" <> _} = error.original
  end

  test "the runtime's calls outside a job, from Rust" do
    stats = Runtime.stats(RustJobs)
    assert RustJobs.runtime_call(:slice_ns, nil) == stats.slice_ns

    assert RustJobs.runtime_call(:hold, 12_345) == :ok
    assert Runtime.stats(RustJobs).resident_bytes == stats.resident_bytes + 12_345
    assert RustJobs.runtime_call(:hold, -12_345) == :ok
    assert Runtime.stats(RustJobs).resident_bytes == stats.resident_bytes

    # a MiB freed on the runtime's own thread, counted once done
    assert RustJobs.runtime_call(:drop_later, 1 <<< 20) == :ok
    eventually(fn -> Runtime.stats(RustJobs).released_later > stats.released_later end)
  end

  test "200 killed callers leave no live job or byte" do
    for mode <- [:yielding, :yielding_dirty, :dirty_cpu, :threaded] do
      kill_mid_job(
        fn -> Job.call(&RustJobs.fold/4, [100_000_000], schedule: mode, tiny_slices: true) end,
        RustJobs
      )
    end

    list = Enum.to_list(1..100_000)
    modes = [:yielding, :yielding_dirty, :dirty_cpu, :threaded, :auto, :normal, :external]

    pids =
      for i <- 1..200 do
        mode = Enum.at(modes, rem(i, length(modes)))

        spawn(fn ->
          Job.call(&RustJobs.sum_list/4, [list], schedule: mode, tiny_slices: rem(i, 2) == 0)
        end)
      end

    for {pid, i} <- Enum.with_index(pids) do
      if rem(i, 10) == 0, do: Process.sleep(1)
      ref = Process.monitor(pid)
      Process.exit(pid, :kill)
      assert_receive {:DOWN, ^ref, :process, ^pid, _}, 60_000
    end

    assert_no_live_jobs(RustJobs)
  end

  test "an upgrade, an unload and a load again of the Rust library" do
    # in a child VM: a crash at unload (the library unmapped under a thread
    # of its own) ends it, not the test run
    scenario = ~S"""
    parent = self()
    spawn(fn -> send(parent, {:done, Job.call(&RustJobs.fold/4, [300_000_000], schedule: :threaded)}) end)
    Process.sleep(50)
    # version 2 of the stub module loads the library as it loads: the
    # upgrade callback, while version 1 still has it
    Code.require_file("test/support/sdk_jobs.exs")
    source = WellBehaved.Test.SDKStubs.upgrade_source(RustJobs, "c_src/build/rust/rust_jobs_nif")
    Code.compile_string(source)
    upgraded = RustJobs.fold(1000, :yielding, false, nil)
    long = receive do {:done, d} -> d end
    # the old version purged, then the module deleted and purged: the
    # library unloads; loading it again starts a fresh runtime
    :code.purge(RustJobs)
    true = :code.delete(RustJobs)
    :code.purge(RustJobs)
    Code.compile_string(source)
    again = Job.call(&RustJobs.fold/4, [1000], schedule: :threaded)
    long_again = Job.call(&RustJobs.fold/4, [300_000_000], schedule: :dirty_cpu)
    {upgraded, long == long_again, again, RustJobs.runtime_stats().live_jobs}
    """

    assert {:ok, {{upgraded, long, again, 0}, _}} =
             ChildVM.run({Code, :eval_string, [RustJobs.child_prelude() <> scenario]},
               bound_ms: 150_000
             )

    assert upgraded == fold(1000)
    assert again == fold(1000)
    assert long
  end
end
