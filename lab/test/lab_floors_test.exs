defmodule WellBehaved.Lab.FloorsTest do
  # The floors' program answers every method, its figures read back in
  # order; nothing here depends on how fast the machine is (the program's
  # own test checks each round trip byte for byte).
  use ExUnit.Case, async: true

  alias WellBehaved.Lab.Floors

  test "every floor is measured, small and 64 KiB, its percentiles in order" do
    for method <- Floors.methods(), bytes <- [16, 65_536] do
      assert {:ok, f} = Floors.measure(method, bytes, 200)
      assert %{method: ^method, bytes: ^bytes, iterations: 200} = f
      assert f.min_ns > 0 and f.min_ns <= f.p50_ns
      assert f.p50_ns <= f.p90_ns and f.p90_ns <= f.p99_ns
    end
  end

  test "what the program prints is read, or refused" do
    assert {:ok, %{method: :pipe, bytes: 16, iterations: 3, p50_ns: 5, min_ns: 1}} =
             Floors.parse("pipe 16 3 5 6 7 1\n")

    assert {:error, {:unreadable, _}} = Floors.parse("pipe 16 3 5 6 7\n")
    assert {:error, {:unreadable, _}} = Floors.parse("owl 16 3 5 6 7 1\n")
    assert {:error, {:unreadable, _}} = Floors.parse("pipe 16 3 5 6 x 1\n")
  end

  test "a run the program refuses is an error, with its message" do
    assert {:error, {:exit_status, 2, message}} = Floors.measure(:pipe, 128 * 1024 * 1024, 1)
    assert message =~ "usage"
  end

  test "bad arguments name the function" do
    assert_raise ArgumentError, ~r/Floors.measure\/3/, fn -> Floors.measure(:smoke, 16, 10) end
    assert_raise ArgumentError, ~r/Floors.measure\/3/, fn -> Floors.measure(:pipe, 0, 10) end
  end
end
