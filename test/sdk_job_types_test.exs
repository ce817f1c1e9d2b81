defmodule WellBehaved.SDKJobTypesTest do
  # A job type of another NIF library, built on the SDK: one that leaves
  # every optional callback NULL runs in every mode with exact results, in a
  # runtime of its own, and frees the jobs of killed callers; one that lacks
  # a required callback is refused at load, with the reason.
  use ExUnit.Case, async: false

  alias WellBehaved.{Job, Runtime}
  alias WellBehaved.Test.SDKJobs
  import Bitwise
  import WellBehaved.Test.RuntimeHelpers

  @moduletag timeout: 180_000
  @build "c_src/build/sdk"
  @mask 0xFFFF_FFFF_FFFF_FFFF

  setup_all do
    SDKJobs.ensure_loaded!()
  end

  # the job's fold, in Elixir
  defp fold(n),
    do: Enum.reduce(0..(n - 1)//1, 0, &(&2 * 6_364_136_223_846_793_005 + &1 &&& @mask))

  defp call(n, opts \\ []), do: Job.call(&SDKJobs.fold/4, [n], opts)

  test "NULL optional callbacks: every mode and tiny slices give the exact result" do
    for n <- [0, 1, 2, 1000, 200_000],
        mode <- Runtime.modes(),
        tiny <- [false, true],
        not tiny or n <= 1000 do
      assert call(n, schedule: mode, tiny_slices: tiny) == fold(n), "#{n} #{mode} #{tiny}"
    end

    assert call(12_345) == fold(12_345)
  end

  test "the library has a runtime of its own" do
    assert %{fold: ps} = Runtime.stats(SDKJobs).ps_per_unit
    assert is_integer(ps) and ps > 0, inspect(ps)
    refute Map.has_key?(Runtime.stats().ps_per_unit, :fold)
    refute Map.has_key?(Runtime.stats(SDKJobs).ps_per_unit, :levenshtein)

    :ok = Runtime.configure(SDKJobs, slice_us: 77)
    assert Runtime.stats(SDKJobs).slice_us == 77
    assert Runtime.stats().slice_us != 77
    :ok = Runtime.configure(SDKJobs, slice_us: :calibrated)
    assert Runtime.stats(SDKJobs).slice_source == :erlang_turn
  end

  test "callers killed mid-job in every mode leave no live job" do
    # a few seconds of work: every kill lands during the job
    for mode <- Runtime.modes() -- [:normal], round <- 1..10 do
      kill_during(
        fn -> call(2_000_000_000, schedule: mode) end,
        if(rem(round, 2) == 0, do: rem(round, 5), else: 0)
      )
    end

    eventually(fn ->
      stats = Runtime.stats(SDKJobs)
      stats.live_jobs == 0 and stats.live_bytes == 0 and stats.queued == 0
    end)
  end

  test "arguments the job's decode refuses answer {:error, :badarg}" do
    assert call(-1) == {:error, :badarg}
    assert call("10", schedule: :threaded) == {:error, :badarg}
  end

  # the bytes the job "owned" makes
  defp owned(n), do: for(i <- 0..(n - 1)//1, into: <<>>, do: <<rem(i, 251)>>)

  test "take_result hands the state's binary over: every mode, tiny slices, no leak" do
    for n <- [0, 1, 250, 251, 100_000],
        mode <- Runtime.modes(),
        tiny <- [false, true],
        not tiny or n <= 251 do
      answer = Job.call(&SDKJobs.owned/4, [n], schedule: mode, tiny_slices: tiny)
      assert answer == owned(n), "#{n} #{mode} #{tiny}"
    end

    # a binary over 64 bytes is a refc binary: the job's own, not a copy
    big = Job.call(&SDKJobs.owned/4, [10_000_000], schedule: :threaded)
    assert byte_size(big) == 10_000_000 and :binary.referenced_byte_size(big) == 10_000_000
    # released before the answer came back: no wait needed
    assert %{live_jobs: 0, live_bytes: 0} = Runtime.stats(SDKJobs)
    assert binary_part(big, 9_999_990, 10) == binary_part(owned(10_000_000), 9_999_990, 10)

    # killed callers: destroy frees the binary nobody took
    for mode <- [:yielding, :yielding_dirty, :threaded] do
      WellBehaved.Testing.kill_mid_job(
        # seconds of work even on a pool thread, which runs its steps back to back
        fn -> Job.call(&SDKJobs.owned/4, [200_000_000], schedule: mode, tiny_slices: true) end,
        SDKJobs
      )
    end

    # more than the system can give: init fails with the reason
    assert Job.call(&SDKJobs.owned/4, [1 <<< 62], schedule: :yielding) == {:error, :enomem}
    assert Job.call(&SDKJobs.owned/4, [1 <<< 62], schedule: :threaded) == {:error, :enomem}
    assert_no_live_jobs(SDKJobs)
  end

  test "Job.call rejects bad options and a NIF of the wrong arity" do
    assert_raise ArgumentError, ~r/Job.call\/4: invalid :schedule :fast, expected one of/, fn ->
      call(1, schedule: :fast)
    end

    assert_raise ArgumentError,
                 ~r/Job.call\/4: invalid :tiny_slices 1, expected true or false/,
                 fn ->
                   call(1, tiny_slices: 1)
                 end

    assert_raise ArgumentError, ~r/Job.call\/4: unknown option :unit/, fn ->
      call(1, unit: :byte)
    end

    assert_raise ArgumentError, ~r/Job.call\/4: expected a keyword list/, fn -> call(1, %{}) end

    assert_raise ArgumentError, ~r/MyApp.fold\/2: invalid :schedule nil/, fn ->
      Job.call(&SDKJobs.fold/4, [1], [schedule: nil], "MyApp.fold/2")
    end

    assert_raise ArgumentError,
                 ~r/invalid job NIF .* a function of 5 arguments \(the job.s 2, then mode/,
                 fn ->
                   Job.call(&SDKJobs.fold/4, [1, 2])
                 end

    assert_raise ArgumentError, ~r/invalid args 1, expected a list/, fn ->
      Job.call(&SDKJobs.fold/4, 1)
    end
  end

  test "Runtime.stats and configure name a module without a runtime" do
    assert_raise ArgumentError,
                 ~r/stats\/1: invalid native String, expected a module whose/,
                 fn ->
                   Runtime.stats(String)
                 end

    assert_raise ArgumentError, ~r/configure\/2: invalid native "x", expected a module/, fn ->
      Runtime.configure("x", slice_us: 5)
    end
  end

  test "a job type without a required callback is refused at load, with the reason" do
    # in another OS process: the reason is in the load's answer, and
    # nothing is written to standard error in its place
    script = """
    Code.require_file("test/support/sdk_jobs.exs")

    defmodule WellBehaved.Test.SDKRefused do
      use WellBehaved.Test.SDKStubs
      def load(path), do: WellBehaved.SDK.load_result(:erlang.load_nif(String.to_charlist(path), 0))
    end
    IO.inspect(WellBehaved.Test.SDKRefused.load(#{inspect(Path.join(@build, "sdk_refused_nif"))}))
    """

    ebin = Path.dirname(:code.which(WellBehaved.SDK))
    {out, 0} = System.cmd("elixir", ["-pa", ebin, "-e", script], stderr_to_stdout: true)
    want = "{:error, {:load_failed, {:job_type, 0, {:callback_missing, :step}}}}\n"
    assert out == want, "#{inspect(out)} != #{inspect(want)}"
  end
end
