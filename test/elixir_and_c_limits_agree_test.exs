defmodule WellBehaved.ElixirAndCLimitsAgreeTest do
  # The Elixir side checks the modes, the job arity and the slice range
  # before the C runtime sees them; the C runtime reports what it accepts
  # (runtime_stats' limits). Both must say the same, or one side refuses
  # what the other lets through.
  use ExUnit.Case, async: false

  alias WellBehaved.{Job, Runtime}

  setup do
    on_exit(fn -> Runtime.configure(slice_us: :calibrated, dirty_slice_us: 5000) end)
    %{limits: Runtime.stats().limits}
  end

  test "the scheduling modes", %{limits: limits} do
    assert Runtime.modes() == limits.modes
  end

  test "the most job arguments", %{limits: %{max_job_args: most}} do
    args = List.duplicate(:x, most)
    # a job NIF takes its arguments, then mode, tiny slices and reference
    nif = fn_of_arity(most + 3)
    assert Job.call(nif, args) == :called

    assert_raise ArgumentError, ~r/at most #{most} job arguments/, fn ->
      Job.call(fn_of_arity(most + 4), [:x | args])
    end
  end

  test "the slice settings", %{limits: limits} do
    for us <- [limits.slice_us_min, limits.slice_us_max],
        do: assert(Runtime.configure(slice_us: us, dirty_slice_us: us) == :ok)

    for us <- [limits.slice_us_min - 1, limits.slice_us_max + 1] do
      assert_raise ArgumentError, fn -> Runtime.configure(slice_us: us) end
      assert_raise ArgumentError, fn -> Runtime.configure(dirty_slice_us: us) end
    end
  end

  # a function of `n` arguments answering :called
  defp fn_of_arity(n) do
    args = Macro.generate_arguments(n, __MODULE__)
    {f, _} = Code.eval_quoted(quote(do: fn unquote_splicing(args) -> :called end))
    f
  end
end
