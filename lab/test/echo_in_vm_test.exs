defmodule WellBehaved.EchoInVmTest do
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.Echo

  doctest WellBehaved.Lab.Echo

  @in_vm [:nif, :dirty_cpu, :dirty_io, :yielding, :thread_new, :threaded]

  defp terms do
    [
      :atom,
      42,
      -(2 ** 200),
      3.25,
      "",
      {:ok, :binary.copy(<<7>>, 65_536)},
      %{a: [1, {2, "three"}], b: %{nested: [self(), make_ref()]}},
      [1, [2, [3, [4]]]],
      {}
      | for(
          size <- [0, 1, 63, 64, 65, 4095, 4096, 65_536, 1_048_576],
          do: :crypto.strong_rand_bytes(size)
        )
    ]
  end

  test "every in-VM method returns every term unchanged" do
    for method <- @in_vm, term <- terms() do
      assert Echo.echo(term, method) === term, "#{method}: #{inspect(term, limit: 5)}"
    end
  end

  test "concurrent callers get their own terms back" do
    for method <- @in_vm do
      WellBehaved.Test.RuntimeHelpers.assert_concurrent_echo(&Echo.echo(&1, method), 50, 100)
    end
  end

  test "the method list and unknown methods" do
    assert length(Echo.methods()) == 13
    assert Enum.all?(@in_vm, &Echo.available?/1)
    refute Echo.available?(:carrier_pigeon)

    assert_raise ArgumentError,
                 ~r/WellBehaved.Lab.Echo.echo\/2: invalid method :carrier_pigeon, expected one of :nif/,
                 fn ->
                   Echo.echo(1, :carrier_pigeon)
                 end
  end

  test "threaded echoes leave no live job behind" do
    for _ <- 1..200, do: Echo.echo(:binary.copy("x", 1000), :threaded)
    WellBehaved.Test.RuntimeHelpers.assert_no_live_jobs(WellBehaved.Lab.Native)
  end

  test "Echo.echo/2 lists the methods, with the runtime's names" do
    error = assert_raise ArgumentError, fn -> WellBehaved.Lab.Echo.echo(:x, :yield) end
    assert error.message =~ "WellBehaved.Lab.Echo.echo/2: invalid method :yield"
    assert error.message =~ ":yielding"
    assert error.message =~ ":threaded"
    assert WellBehaved.Lab.Echo.echo(:x, :yielding) == :x
    assert WellBehaved.Lab.Echo.echo(:x, :threaded) == :x
  end
end
