defmodule WellBehaved.TheKitCoversServerBuildsTest do
  # WellBehaved.Testing's modes_agree/3 and assert_no_live_jobs/2 cover
  # schedule: :external for a library whose module declares a server build
  # (the test library's SDKJobs does: test/support/sdk_jobs.exs), through
  # WellBehaved.Runtime.modes/1: every in-VM mode, then :external.
  use ExUnit.Case, async: false

  import Bitwise
  alias WellBehaved.{External, Job, Runtime, Testing}
  alias WellBehaved.Test.SDKJobs

  @pool SDKJobs.External
  @mask 0xFFFF_FFFF_FFFF_FFFF

  setup_all do
    SDKJobs.ensure_loaded!()
    on_exit(fn -> External.stop(@pool) end)
  end

  # the job's fold, in Elixir
  defp fold(n),
    do: Enum.reduce(0..(n - 1)//1, 0, &(&2 * 6_364_136_223_846_793_005 + &1 &&& @mask))

  defp jobs_started do
    case External.server_stats(@pool) do
      [{0, {:ok, stats}}] -> stats.jobs
      nil -> 0
    end
  end

  test "modes/1: the in-VM modes, and :external for a library with a server build" do
    assert Runtime.modes(SDKJobs) == Runtime.modes() ++ [:external]
    assert Runtime.modes(WellBehaved.Native) == Runtime.modes()
    refute :external in Runtime.modes()

    assert_raise ArgumentError,
                 ~s(WellBehaved.Runtime.modes/1: invalid native "SDKJobs", expected a module),
                 fn -> Runtime.modes("SDKJobs") end
  end

  test "modes_agree/3 given the library's module runs every mode, :external included" do
    seen = :ets.new(:seen, [:bag, :public])

    fun = fn opts ->
      :ets.insert(seen, {opts[:schedule], opts[:tiny_slices]})
      Job.call(&SDKJobs.fold/4, [1000], opts)
    end

    before = jobs_started()
    assert Testing.modes_agree(fun, fold(1000), SDKJobs) == :ok
    want = for mode <- Runtime.modes() ++ [:external], tiny <- [false, true], do: {mode, tiny}
    assert Enum.sort(:ets.tab2list(seen)) == Enum.sort(want)
    # the two :external calls ran in the server
    assert jobs_started() - before == 2

    # the default: the in-VM modes
    :ets.delete_all_objects(seen)
    assert Testing.modes_agree(fun, fold(1000)) == :ok
    refute :ets.member(seen, :external)
  end

  test "modes_agree/3 fails on an answer that differs in :external only" do
    fun = fn opts ->
      answer = Job.call(&SDKJobs.fold/4, [1000], opts)
      if opts[:schedule] == :external, do: answer + 1, else: answer
    end

    error =
      assert_raise ExUnit.AssertionError, fn -> Testing.modes_agree(fun, fold(1000), SDKJobs) end

    assert error.message =~ "[schedule: :external, tiny_slices: false]: got #{fold(1000) + 1}"

    assert_raise ArgumentError, ~r/modes_agree\/3: invalid modes "all", expected a list/, fn ->
      Testing.modes_agree(fun, 0, "all")
    end
  end

  test "assert_no_live_jobs/2 waits for the servers' live jobs too, and names them" do
    # "liar" with 0 never finishes: its server holds the job until its
    # caller goes; the VM's runtime holds nothing meanwhile
    task = Task.async(fn -> Job.call(&SDKJobs.liar/4, [0], schedule: :external) end)

    Testing.eventually(fn ->
      match?([{0, {:ok, %{live_jobs: 1}}}], External.server_stats(@pool))
    end)

    assert Runtime.stats(SDKJobs).live_jobs == 0

    error = assert_raise ExUnit.AssertionError, fn -> Testing.assert_no_live_jobs(SDKJobs, 50) end

    assert error.message =~ "WellBehaved.Test.SDKJobs: still live after 50 ms: [{:server, 0,"
    assert error.message =~ "live_jobs: 1"

    Task.shutdown(task, :brutal_kill)
    assert Testing.assert_no_live_jobs(SDKJobs) == :ok
    assert [{0, {:ok, %{live_jobs: 0, live_bytes: 0}}}] = External.server_stats(@pool)
  end
end
