defmodule WellBehaved.ModuleReloadTest do
  # Reloading the NIF module (purge, load again, as IEx's `r` does) while a
  # threaded job runs must leave one worker pool and a working VM. It runs
  # in a child VM: a crash there fails this test instead of the test run.
  use ExUnit.Case, async: false

  alias WellBehaved.ChildVM

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

  test "reloading the NIF module during a threaded job keeps one pool and the VM" do
    assert {:ok, {{threads, true, true, false}, _binding}} =
             ChildVM.run({Code, :eval_string, [@scenario]}, bound_ms: 60_000)

    assert threads == :erlang.system_info(:schedulers_online) or threads == 2
  end
end
