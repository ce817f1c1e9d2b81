defmodule WellBehaved.Testing.ChildVMTest do
  use ExUnit.Case, async: false

  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 120_000

  test "runs a function in another VM and returns its value" do
    # the child runs library code only: test modules live in this VM alone
    assert {:ok, pid_there} = ChildVM.run({System, :pid, []}, bound_ms: 30_000)
    assert pid_there =~ ~r/^\d+$/
    refute pid_there == System.pid()
  end

  test "a hung experiment is killed at its bound and reported" do
    # 20 processes looping :normal NIF calls of seconds each: a VM that
    # ignores SIGTERM
    hog = """
    {a, b} = {:binary.copy(<<1, 2>>, 150_000), :binary.copy(<<3, 4>>, 150_000)}
    for _ <- 1..20 do
      spawn(fn ->
        Stream.repeatedly(fn -> WellBehaved.Levenshtein.distance(a, b, schedule: :normal) end)
        |> Stream.run()
      end)
    end
    Process.sleep(:infinity)
    """

    handle = ChildVM.start({Code, :eval_string, [hog]}, bound_ms: 1500)
    {:os_pid, group} = Port.info(handle.port, :os_pid)
    assert {:timeout, 1500} = ChildVM.await(handle)
    # `timeout` leads the child's process group: nothing of it may remain
    # (members killed with the group may take a moment to be reaped)
    WellBehaved.Test.RuntimeHelpers.eventually(fn -> processes_in_group(group) == [] end, 10_000)
  end

  test "a crash is reported with the child's output" do
    assert {:crashed, 1, output} = ChildVM.run({Kernel, :raise, ["boom"]}, bound_ms: 30_000)
    assert output =~ "boom"
  end

  test "emulator flags reach the child" do
    assert {:ok, 1} =
             ChildVM.run({:erlang, :system_info, [:schedulers_online]},
               bound_ms: 30_000,
               erl_flags: ["+S", "1:1"]
             )
  end

  defp processes_in_group(group) do
    {out, _} = System.cmd("pgrep", ["-g", Integer.to_string(group)], stderr_to_stdout: true)
    String.split(out, "\n", trim: true)
  end
end
