defmodule WellBehaved.Lab.EchoThreadsJoinAtUnloadTest do
  # The :thread_new echo's threads are joined when the lab's NIF library is
  # unloaded. Runs in a child VM bounded by SIGKILL: a crash or a hang there
  # fails this test instead of the test run.
  use ExUnit.Case, async: false

  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 120_000

  # Echo threads still returning through the lab's NIF library when it is unloaded.
  @reload_scenario """
  # loaded first: the child loads modules on first use
  :w = WellBehaved.Lab.Echo.echo(:w, :thread_new)
  parent = self()
  for _ <- 1..50 do
    spawn(fn -> send(parent, {:echoed, WellBehaved.Lab.Echo.echo(:x, :thread_new)}) end)
  end
  true = :code.delete(WellBehaved.Lab.Native)
  :code.purge(WellBehaved.Lab.Native)
  {:module, _} = :code.load_file(WellBehaved.Lab.Native)
  # a caller running the old module's code when it is purged is killed
  echoed = for _ <- 1..50, do: receive(do: ({:echoed, x} -> x), after: (5000 -> :lost))
  again = for _ <- 1..200, do: WellBehaved.Lab.Echo.echo(:y, :thread_new)
  true = :code.delete(WellBehaved.Lab.Native)
  :code.purge(WellBehaved.Lab.Native)
  {:module, _} = :code.load_file(WellBehaved.Lab.Native)
  {Enum.uniq(echoed), Enum.uniq(again), WellBehaved.Lab.Echo.echo(:z, :thread_new)}
  """

  test "unloading the library joins every echo thread first" do
    assert {:ok, {{echoed, [:y], :z}, _binding}} =
             ChildVM.run({Code, :eval_string, [@reload_scenario]}, bound_ms: 60_000)

    # a caller in flight when the module went away may have been killed by
    # the purge; none may crash the VM
    assert Enum.all?(echoed, &(&1 in [:x, :lost]))
  end
end
