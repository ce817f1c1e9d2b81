defmodule WellBehaved.EchoPortProgramTest do
  use ExUnit.Case, async: false

  alias WellBehaved.Lab.Echo.PortProgram
  alias WellBehaved.OSProcess
  import WellBehaved.Test.RuntimeHelpers

  @sizes [0, 1, 63, 64, 65, 4095, 4096, 65_536, 1_048_576, 16 * 1_048_576]

  setup do
    on_exit(fn -> PortProgram.stop() end)
    :ok
  end

  defp os_pids, do: for(port <- PortProgram.ports(), do: os_pid(port))

  defp os_pid(port) do
    {:os_pid, pid} = Port.info(port, :os_pid)
    pid
  end

  defp signal(pid, sig) do
    {_, 0} = System.cmd("kill", ["-s", sig, "--", to_string(pid)], stderr_to_stdout: true)
    :ok
  end

  defp owners do
    for name <- 1..4 |> Enum.map(&Module.concat(PortProgram.Owner, "P#{&1}")),
        pid = Process.whereis(name),
        pid != nil,
        do: pid
  end

  test "round-trips small terms" do
    for term <- [:ok, 0, -1, 1.5, "", "hello", [], {}, %{}, {:hello, [1, 2.0, "three"]}] do
      assert PortProgram.echo(term) === term
    end
  end

  test "round-trips a 64 KiB binary" do
    bin = :crypto.strong_rand_bytes(65_536)
    assert PortProgram.echo(bin) === bin
    assert PortProgram.echo({bin}) === {bin}
  end

  test "round-trips nested terms" do
    terms = nested_terms()

    for term <- terms, do: assert(PortProgram.echo(term) === term)
  end

  test "round-trips binaries of many sizes" do
    for size <- @sizes do
      bin = :crypto.strong_rand_bytes(size)
      assert PortProgram.echo(bin) === bin, "size #{size}"
    end
  end

  test "50 concurrent callers doing 100 calls each get their own answers" do
    assert_concurrent_echo(&PortProgram.echo(&1), 50, 100)
  end

  test "a program killed mid-call gives its callers an error; the next call starts a new one" do
    # every program in the pool, stopped so that calls stay in flight
    assert PortProgram.start() == :ok
    old = os_pids()
    assert old != []
    Enum.each(old, &signal(&1, "STOP"))

    tasks = for i <- 1..8, do: Task.async(fn -> PortProgram.echo({i, self()}) end)

    # wait until every call is written and waiting on a stopped program
    eventually(fn ->
      owners() |> Enum.map(&:queue.len(:sys.get_state(&1).waiting)) |> Enum.sum() == 8
    end)

    Enum.each(old, &signal(&1, "KILL"))

    for result <- Task.await_many(tasks, 60_000) do
      assert {:error, {:exit_status, _}} = result
    end

    assert PortProgram.echo(:again) == :again
    new = os_pids()
    assert new != [] and Enum.all?(new, &(&1 not in old))
    Enum.each(old, &eventually(fn -> not OSProcess.alive?(&1) end))
  end

  test "a program killed while large frames are in flight: callers return, the next call works" do
    assert PortProgram.start() == :ok
    old = os_pids()
    Enum.each(old, &signal(&1, "STOP"))
    bin = :crypto.strong_rand_bytes(16 * 1_048_576)
    tasks = for i <- 1..8, do: Task.async(fn -> PortProgram.echo({i, bin}) end)
    # every caller is in its call (an owner may be suspended on its busy port)
    eventually(fn -> Enum.all?(tasks, &(Process.info(&1.pid, :status) == {:status, :waiting})) end)

    Enum.each(old, &signal(&1, "KILL"))

    for {result, i} <- Enum.with_index(Task.await_many(tasks, 60_000), 1) do
      assert match?({:error, _}, result) or result === {i, bin}
    end

    assert PortProgram.echo(:again) == :again
  end

  test "an owner killed mid-call gives its callers an error; its program exits" do
    assert PortProgram.start() == :ok
    old = os_pids()
    Enum.each(old, &signal(&1, "STOP"))
    tasks = for i <- 1..4, do: Task.async(fn -> PortProgram.echo(i) end)

    eventually(fn ->
      owners() |> Enum.map(&:queue.len(:sys.get_state(&1).waiting)) |> Enum.sum() == 4
    end)

    Enum.each(owners(), &Process.exit(&1, :kill))
    assert Enum.all?(Task.await_many(tasks, 60_000), &match?({:error, _}, &1))

    # the port closed with its owner: a continued program sees end of input
    Enum.each(old, &signal(&1, "CONT"))
    Enum.each(old, &eventually(fn -> not OSProcess.alive?(&1) end))
    assert PortProgram.echo(:again) == :again
  end

  test "stop/0 ends every program and owner" do
    assert PortProgram.start() == :ok
    assert PortProgram.echo(:x) == :x
    pids = os_pids()
    assert pids != []

    assert PortProgram.stop() == :ok
    assert owners() == []
    assert PortProgram.ports() == []
    Enum.each(pids, &eventually(fn -> not OSProcess.alive?(&1) end))

    assert PortProgram.echo(:after) == :after
  end

  test "the program exits 0 at end of input and reports a truncated frame" do
    path = Path.join(:code.priv_dir(:well_behaved_lab), "wb_echo_port")

    run = fn input ->
      System.cmd("sh", ["-c", "printf '#{input}' | #{path} 2>/dev/null; echo \" rc=$?\""])
    end

    assert {"\0\0\0\x03abc\0\0\0\0 rc=0\n", 0} =
             run.("\\000\\000\\000\\003abc\\000\\000\\000\\000")

    assert {" rc=0\n", 0} = run.("")
    assert {output, 0} = run.("\\000\\000\\000\\005ab")
    assert output =~ "rc=2"
  end

  test "a pool of two programs: concurrent callers, one program killed mid-call" do
    Application.put_env(:well_behaved, :port_program_pool, 2)
    on_exit(fn -> Application.delete_env(:well_behaved, :port_program_pool) end)

    assert PortProgram.start() == :ok
    [first, second] = PortProgram.ports()
    assert os_pid(first) != os_pid(second)

    assert_concurrent_echo(&PortProgram.echo/1, 20, 50)

    victim = os_pid(first)
    signal(victim, "STOP")
    tasks = for i <- 1..8, do: Task.async(fn -> PortProgram.echo(i) end)
    # callers on the other program's owner return; the others wait
    eventually(fn ->
      owners() |> Enum.map(&:queue.len(:sys.get_state(&1).waiting)) |> Enum.sum() ==
        Enum.count(tasks, &Process.alive?(&1.pid))
    end)

    signal(victim, "KILL")

    for {result, i} <- Enum.with_index(Task.await_many(tasks, 60_000), 1) do
      assert result == i or match?({:error, {:exit_status, _}}, result)
    end

    # a call may still reach the killed program's owner before it has taken
    # the exit in (it answers the exit status): later ones are served
    eventually(fn -> PortProgram.echo(:again) == :again end)
    eventually(fn -> not OSProcess.alive?(victim) end)
  end

  test "a call that takes longer than its timeout returns an error" do
    assert PortProgram.start() == :ok
    old = os_pids()
    Enum.each(old, &signal(&1, "STOP"))
    assert PortProgram.echo(:slow, timeout: 50) == {:error, :timeout}
    Enum.each(old, &signal(&1, "CONT"))
    assert PortProgram.echo(:later) == :later
  end
end
