defmodule WellBehaved.EchoDriverTest do
  use ExUnit.Case, async: false

  alias WellBehaved.Lab.Echo.Driver
  import WellBehaved.Test.RuntimeHelpers

  @methods [:driver_call, :driver_control, :driver_outputv]
  @sizes [0, 1, 63, 64, 65, 4095, 4096, 65_536, 1_048_576, 16 * 1_048_576]

  setup do
    on_exit(fn -> Driver.stop() end)
    :ok
  end

  defp driver_ports do
    for port <- Port.list(), Port.info(port, :name) == {:name, ~c"wb_echo_drv"}, do: port
  end

  defp driver_loaded? do
    {:ok, drivers} = :erl_ddll.loaded_drivers()
    ~c"wb_echo_drv" in drivers
  end

  for method <- @methods do
    describe "#{method}" do
      @method method

      test "round-trips small terms" do
        for term <- [:ok, 0, -1, 1.5, "", "hello", [], {}, %{}, {:hello, [1, 2.0, "three"]}] do
          assert Driver.echo(term, @method) === term
        end
      end

      test "round-trips a 64 KiB binary" do
        bin = :crypto.strong_rand_bytes(65_536)
        assert Driver.echo(bin, @method) === bin
        assert Driver.echo({bin}, @method) === {bin}
      end

      test "round-trips nested terms" do
        for term <- nested_terms() do
          assert Driver.echo(term, @method) === term
        end
      end

      test "round-trips binaries of many sizes" do
        for size <- @sizes do
          bin = :crypto.strong_rand_bytes(size)
          assert Driver.echo(bin, @method) === bin, "size #{size}"
        end
      end

      test "50 concurrent callers doing 100 calls each get their own answers" do
        assert_concurrent_echo(&Driver.echo(&1, @method), 50, 100)
      end

      test "leaves nothing in the caller's mailbox" do
        for _ <- 1..100, do: Driver.echo({:x, self()}, @method)
        assert Process.info(self(), :message_queue_len) == {:message_queue_len, 0}
      end

      test "stop/0 closes every port and unloads the driver; the next call starts again" do
        assert Driver.echo(:before, @method) == :before
        assert driver_loaded?()
        assert driver_ports() != []

        assert Driver.stop() == :ok
        assert driver_ports() == []
        refute driver_loaded?()
        assert Process.whereis(Driver.Server) == nil

        assert Driver.echo(:after, @method) == :after
        assert Process.info(self(), :message_queue_len) == {:message_queue_len, 0}
      end
    end
  end

  test "port_call and port_control work from processes that do not own the port" do
    assert Driver.echo(:warm, :driver_call) == :warm
    shared = for port <- driver_ports(), do: {port, Port.info(port, :connected)}
    server = Process.whereis(Driver.Server)

    assert shared != [] and Enum.all?(shared, fn {_, {:connected, pid}} -> pid == server end),
           "server #{inspect(server)}: #{inspect(shared)}"

    assert Driver.echo(:mine, :driver_control) == :mine
  end

  test "outputv: each caller has its own port, closed when the caller exits" do
    assert Driver.echo(:warm, :driver_call) == :warm
    before = length(driver_ports())
    parent = self()

    callers =
      for i <- 1..5 do
        spawn(fn ->
          send(parent, {:echoed, Driver.echo({:caller, i}, :driver_outputv)})
          receive do: (:exit -> :ok)
        end)
      end

    for i <- 1..5, do: assert_receive({:echoed, {:caller, ^i}}, 30_000)
    assert length(driver_ports()) == before + 5
    Enum.each(callers, &send(&1, :exit))
    eventually(fn -> length(driver_ports()) == before end)
  end

  test "a caller with an open port is not disturbed by stop/0" do
    parent = self()

    caller =
      spawn(fn ->
        Process.flag(:trap_exit, true)
        first = Driver.echo(:one, :driver_outputv)
        send(parent, :first_done)
        receive do: (:go -> :ok)
        second = Driver.echo(:two, :driver_outputv)
        {:messages, messages} = Process.info(self(), :messages)
        send(parent, {:results, first, second, messages})
      end)

    assert_receive :first_done, 30_000
    Driver.stop()
    assert Process.alive?(caller)
    send(caller, :go)
    assert_receive {:results, :one, :two, []}, 30_000
  end

  test "an unknown method raises" do
    assert_raise ArgumentError, fn -> Driver.echo(:x, :driver_nope) end
  end
end
