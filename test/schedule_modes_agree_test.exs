defmodule WellBehaved.ScheduleModesAgreeTest do
  # Every scheduling mode, and the forced one-unit slices that exercise
  # every resume path, give the result of :normal.
  use ExUnit.Case, async: true

  alias WellBehaved.{Levenshtein, Runtime}
  import WellBehaved.Test.RuntimeHelpers

  doctest WellBehaved.Runtime

  @modes Runtime.modes()

  defp pairs do
    [
      {"", ""},
      {"kitten", "sitting"},
      {random_bytes(64), random_bytes(65)},
      {random_bytes(300, 4), random_bytes(280, 4)},
      {random_bytes(3000), random_bytes(2500)},
      {:binary.copy(<<0>>, 10_000), :binary.copy(<<1>>, 10_000)}
    ]
  end

  test "Levenshtein: every mode, with and without tiny slices, equals :normal" do
    for {a, b} <- pairs(), unit <- [:byte, :codepoint], max <- [nil, 3, 100] do
      {a, b} =
        if unit == :codepoint, do: {Base.encode64(a), "é" <> Base.encode64(b)}, else: {a, b}

      want = Levenshtein.distance(a, b, schedule: :normal, unit: unit, max_distance: max)

      for mode <- @modes, tiny <- [false, true], tiny == false or byte_size(a) <= 4000 do
        got =
          Levenshtein.distance(a, b,
            schedule: mode,
            tiny_slices: tiny,
            unit: unit,
            max_distance: max
          )

        assert got == want, "#{mode} tiny=#{tiny} unit=#{unit} max=#{inspect(max)}"
      end
    end

    assert_no_live_jobs()
  end
end
