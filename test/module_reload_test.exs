defmodule WellBehaved.ModuleReloadTest do
  # Reloading the NIF module (purge, load again, as IEx's `r` does) while a
  # threaded job runs must leave one worker pool and a working VM. It runs
  # in a child VM: a crash there fails this test instead of the test run.
  use ExUnit.Case, async: false

  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 120_000

  @scenario """
  parent = self()
  # about a second of work: 300 kB pairs with nothing in common
  {a, b} = {:binary.copy(<<1, 2>>, 150_000), :binary.copy(<<3, 4>>, 150_000)}
  job = spawn(fn -> send(parent, {:done, WellBehaved.Levenshtein.distance(a, b, schedule: :threaded)}) end)
  Process.sleep(100)
  true = :code.delete(WellBehaved.Native)
  :code.purge(WellBehaved.Native)
  {:module, _} = :code.load_file(WellBehaved.Native)
  threads_after_reload = WellBehaved.Runtime.stats().pool_threads
  distance = receive do {:done, d} -> d end
  again = WellBehaved.Levenshtein.distance("kitten", "sitting", schedule: :threaded)
  {threads_after_reload, distance == 300_000, again == 3, Process.alive?(job)}
  """

  # A new version of an SDK library's stub module loads the library while
  # the old version still has it: the upgrade callback (wb_runtime_upgrade).
  @upgrade ~S"""
  Code.require_file("test/support/sdk_jobs.exs")
  alias WellBehaved.Test.SDKJobs
  SDKJobs.ensure_loaded!()
  parent = self()
  spawn(fn -> send(parent, {:done, WellBehaved.Job.call(&SDKJobs.fold/4, [200_000_000], schedule: :threaded)}) end)
  Process.sleep(50)
  # version 2 of the stub module, which loads the library as it loads
  # (@on_load), as a hot code upgrade of a user's module does
  Code.compile_string(WellBehaved.Test.SDKStubs.upgrade_source(SDKJobs, "c_src/build/sdk/sdk_jobs_nif"))
  threads = SDKJobs.runtime_stats().pool_threads
  long = receive do {:done, d} -> d end
  again = WellBehaved.Job.call(&SDKJobs.fold/4, [10], schedule: :threaded)
  {threads, long == SDKJobs.fold(200_000_000, :normal, false, nil),
   again == SDKJobs.fold(10, :yielding, false, nil)}
  """

  test "a new version of an SDK library's module loads it again while a threaded job runs" do
    assert {:ok, {{threads, true, true}, _binding}} =
             ChildVM.run({Code, :eval_string, [@upgrade]}, bound_ms: 60_000)

    assert threads == :erlang.system_info(:schedulers_online) or threads == 2
  end

  test "reloading the NIF module during a threaded job keeps one pool and the VM" do
    assert {:ok, {{threads, true, true, false}, _binding}} =
             ChildVM.run({Code, :eval_string, [@scenario]}, bound_ms: 60_000)

    assert threads == :erlang.system_info(:schedulers_online) or threads == 2
  end
end
