defmodule WellBehaved.SliceSettingsKeepResultsTest do
  # The slice settings change when a job gives its scheduler back, never
  # what it computes: every mode agrees with :normal at the shortest and a
  # long slice, on a normal and a dirty scheduler.
  use ExUnit.Case, async: false

  alias WellBehaved.{Levenshtein, Runtime}
  import WellBehaved.Test.RuntimeHelpers

  setup do
    on_exit(fn -> Runtime.configure(slice_us: :calibrated, dirty_slice_us: 5000) end)
  end

  test "every mode gives :normal's result with 1 us and 1 ms slices" do
    a = random_bytes(20_000)
    b = random_bytes(19_000)
    text_a = Base.encode64(random_bytes(3000))
    text_b = "é" <> Base.encode64(random_bytes(2900))
    want = Levenshtein.distance(a, b, schedule: :normal)
    want_cp = Levenshtein.distance(text_a, text_b, schedule: :normal, unit: :codepoint)
    want_k = Levenshtein.distance(a, b, schedule: :normal, max_distance: 500)

    for slice <- [1, 1000], dirty_slice <- [1, 1000] do
      :ok = Runtime.configure(slice_us: slice, dirty_slice_us: dirty_slice)

      for mode <- Runtime.modes() do
        label = "#{mode}, slice #{slice} us, dirty slice #{dirty_slice} us"
        assert Levenshtein.distance(a, b, schedule: mode) == want, label

        assert Levenshtein.distance(text_a, text_b, schedule: mode, unit: :codepoint) ==
                 want_cp,
               label

        assert Levenshtein.distance(a, b, schedule: mode, max_distance: 500) == want_k, label
      end
    end

    assert_no_live_jobs()
  end

  test "a caller killed mid-job with 1 us slices leaves no job behind" do
    :ok = Runtime.configure(slice_us: 1, dirty_slice_us: 1)

    {a, b} = long_pair()

    for mode <- [:yielding, :yielding_dirty, :auto] do
      pid = spawn(fn -> Levenshtein.distance(a, b, schedule: mode) end)
      eventually(fn -> Runtime.stats().live_jobs >= 1 end)
      Process.exit(pid, :kill)
      assert_no_live_jobs()
    end
  end
end
