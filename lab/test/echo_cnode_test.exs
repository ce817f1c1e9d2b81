defmodule WellBehaved.EchoCNodeTest do
  # Starts distribution and perhaps epmd: never alongside other tests, and
  # everything is stopped again when the module is done.
  use ExUnit.Case, async: false

  import Bitwise

  alias WellBehaved.Lab.Echo.CNode

  @moduletag timeout: 180_000
  @loopback {127, 0, 0, 1}

  setup_all do
    on_exit(fn -> CNode.stop() end)
    :ok
  end

  defp epmd_up?, do: match?({:ok, _}, :erl_epmd.names(@loopback))

  # OS pids of C node programs started by this VM (their node name holds its pid)
  defp our_cnode_processes do
    marker = "wb_cnode_#{System.pid()}_"

    for entry <- File.ls!("/proc"),
        entry =~ ~r/^\d+$/,
        {:ok, cmdline} <- [File.read("/proc/#{entry}/cmdline")],
        String.contains?(cmdline, marker),
        do: String.to_integer(entry)
  end

  defp cnode_name do
    Enum.find(Node.list(:hidden), &String.starts_with?(Atom.to_string(&1), "wb_cnode_"))
  end

  defp binaries do
    for size <- [0, 1, 7, 63, 64, 65, 255, 4096, 65_535, 65_536, 65_537, 1 <<< 20],
        do: :crypto.strong_rand_bytes(size)
  end

  test "small terms come back unchanged" do
    port = hd(Port.list())
    fun = fn x -> x + 1 end

    terms = [
      :atom,
      :"ünïcödé atom",
      nil,
      true,
      0,
      -1,
      255,
      256,
      -(1 <<< 31),
      1 <<< 31,
      1 <<< 64,
      -(1 <<< 64),
      1 <<< 1000,
      -(1 <<< 1000),
      0.0,
      3.14,
      -1.0e300,
      2.2250738585072014e-308,
      "",
      "héllo",
      <<1, 2, 3>>,
      <<1::3>>,
      <<255, 1::7>>,
      [],
      [1 | 2],
      ~c"chars",
      {},
      {1, 2},
      %{},
      %{:a => 1, "b" => [2], {3} => %{}},
      self(),
      make_ref(),
      port,
      &Enum.map/2,
      fun
    ]

    for term <- terms do
      assert CNode.echo(term) === term
    end

    assert CNode.echo(fun).(1) == 2
  end

  test "a 64 KiB binary comes back unchanged" do
    binary = :crypto.strong_rand_bytes(65_536)
    assert CNode.echo(binary) === binary
    assert CNode.echo({:data, binary}) === {:data, binary}
  end

  test "binaries of 0 B .. 1 MiB come back unchanged, alone and in sub-binaries" do
    for binary <- binaries() do
      assert CNode.echo(binary) === binary
      size = byte_size(binary)

      if size > 2 do
        sub = binary_part(binary, 1, size - 2)
        assert CNode.echo(sub) === sub
      end
    end
  end

  test "nested terms come back unchanged" do
    nested = %{
      binaries: binaries(),
      floats: [0.1, -2.5e-10, 1.0e308, 123_456.789],
      big: [1 <<< 100, -(1 <<< 200), (1 <<< 64) - 1],
      tuple: {:a, {1, {2.0, {"three", [4 | 5]}}}, %{"k" => {[], %{}}}},
      list: Enum.to_list(1..10_000),
      deep: Enum.reduce(1..500, :leaf, fn i, acc -> {i, [acc]} end),
      large_map: Map.new(1..100, fn i -> {"key#{i}", {i, i * 1.5, <<i>>}} end),
      mixed: [self(), make_ref(), :ok, "s", 1, 2.0, {}, []]
    }

    assert CNode.echo(nested) === nested
    assert CNode.echo([nested, nested]) === [nested, nested]
  end

  test "20 concurrent callers x 50 calls each get their own answers" do
    results =
      1..20
      |> Enum.map(fn caller ->
        Task.async(fn ->
          for call <- 1..50 do
            term = {caller, call, :crypto.strong_rand_bytes(rem(call * 997, 5000))}
            {term, CNode.echo(term)}
          end
        end)
      end)
      |> Task.await_many(60_000)

    for {term, reply} <- List.flatten(results) do
      assert reply === term
    end
  end

  test "messages that are not {from, ref, term} are ignored" do
    assert CNode.echo(:warm) == :warm
    node = cnode_name()
    assert node
    send({:wb_echo, node}, :garbage)
    send({:wb_echo, node}, {:not_a_pid, make_ref(), 1})
    send({:wb_echo, node}, {self(), make_ref()})
    assert CNode.echo(:still_here) == :still_here
    assert cnode_name() == node
  end

  test "a killed C node gives its callers an error, the VM keeps running, the next call works" do
    assert CNode.echo(:warm) == :warm
    os_pid = CNode.os_pid()
    assert is_integer(os_pid) and CNode.cnode_process?(os_pid)
    test_pid = self()
    payload = :crypto.strong_rand_bytes(256 * 1024)

    callers =
      for caller <- 1..4 do
        Task.async(fn -> call_until_stopped(test_pid, {caller, payload}, []) end)
      end

    # every caller is busy before the kill
    for _ <- callers, do: assert_receive({:calling, _}, 10_000)
    {_, 0} = System.cmd("kill", ["-KILL", Integer.to_string(os_pid)])
    assert_receive {:error_seen, _}, 30_000
    for %Task{pid: pid} <- callers, do: send(pid, :stop)
    outcomes = callers |> Task.await_many(30_000) |> List.flatten()

    for outcome <- outcomes do
      assert outcome in [:ok, {:error, :nodedown}, {:error, :timeout}]
    end

    assert {:error, :nodedown} in outcomes
    refute CNode.cnode_process?(os_pid)

    # the next call starts a new C node
    assert CNode.echo(:after) == :after
    new_os_pid = CNode.os_pid()
    assert is_integer(new_os_pid) and new_os_pid != os_pid
    assert CNode.echo({:again, payload}) === {:again, payload}
  end

  test "a C node killed while idle is replaced by the next call" do
    assert CNode.echo(:warm) == :warm
    os_pid = CNode.os_pid()
    {_, 0} = System.cmd("kill", ["-KILL", Integer.to_string(os_pid)])

    # at most the first call after the kill may fail, and it says so
    reply = CNode.echo(:first)
    assert reply in [:first, {:error, :nodedown}]
    assert CNode.echo(:second) == :second
    assert CNode.os_pid() != os_pid
  end

  test "stop/0 leaves no C node and no distribution or epmd that it started" do
    # a clean slate: nothing of this module running
    :ok = CNode.stop()
    assert our_cnode_processes() == []
    alive_before? = Node.alive?()
    epmd_before? = epmd_up?()

    assert CNode.echo(:hello) == :hello
    assert Node.alive?()
    assert epmd_up?()
    our_node = node()
    os_pid = CNode.os_pid()
    assert [^os_pid] = our_cnode_processes()

    assert CNode.stop() == :ok
    assert our_cnode_processes() == []
    refute CNode.cnode_process?(os_pid)
    assert CNode.os_pid() == nil

    unless alive_before? do
      refute Node.alive?()
    end

    unless epmd_before? do
      case :erl_epmd.names(@loopback) do
        {:error, _} ->
          :ok

        # another VM on this machine registered in the meantime: epmd must
        # then stay up, but without our node
        {:ok, names} ->
          assert names != []
          [alive | _] = our_node |> Atom.to_string() |> String.split("@")
          refute List.keymember?(names, String.to_charlist(alive), 0)
      end
    end

    # stopping twice is fine, and the method starts again afterwards
    assert CNode.stop() == :ok
    assert CNode.echo(:restarted) == :restarted
    assert CNode.stop() == :ok
    assert our_cnode_processes() == []
  end

  defp call_until_stopped(test_pid, term, outcomes) do
    receive do
      :stop -> outcomes
    after
      0 ->
        if outcomes == [], do: send(test_pid, {:calling, self()})

        outcome =
          case CNode.echo(term) do
            ^term ->
              :ok

            {:error, _} = error ->
              send(test_pid, {:error_seen, error})
              error

            other ->
              {:wrong_answer, other}
          end

        call_until_stopped(test_pid, term, [outcome | outcomes])
    end
  end
end
