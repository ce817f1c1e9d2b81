defmodule HashSort.BadArgumentsTest do
  # The public functions raise ArgumentError naming the function and the
  # argument; the job itself refuses a binary that is not whole 32-bit
  # integers with a reason, the same in a server.
  use ExUnit.Case, async: false

  alias WellBehaved.{Job, Runtime}

  test "ArgumentError naming function and argument" do
    assert_raise ArgumentError, ~r/HashSort.sha256\/2: invalid data :x, expected a binary/, fn ->
      HashSort.sha256(:x)
    end

    assert_raise ArgumentError,
                 ~r/HashSort.sort_u32\/2: invalid data "abc", expected a binary of 32-bit/,
                 fn ->
                   HashSort.sort_u32("abc")
                 end

    assert_raise ArgumentError, ~r/schedule/, fn -> HashSort.sha256("", schedule: :nope) end
  end

  test "the job's refusal, in every mode and in a server" do
    for mode <- Runtime.modes() ++ [:external] do
      assert Job.call(&HashSort.Native.sort_u32/4, ["abcde"], schedule: mode) ==
               {:error, :not_32_bit_integers}

      assert Job.call(&HashSort.Native.sha256/4, [:not_a_binary], schedule: mode) ==
               {:error, :badarg}
    end
  end
end
