defmodule WellBehaved.ThreadedShortJobsAnswerInTheCallTest do
  # A :threaded call whose short job a free pool thread takes at once waits
  # for the answer in the call that queued it: no message, no trip through
  # receive. A build of the SDK test library whose calls all wait that way
  # (SDKAwaiting) gives what the usual build gives, raises the same
  # exceptions, returns the same errors, and leaves no live job; one whose
  # calls all give up waiting at once (SDKImpatient) answers the same by
  # message, and a caller killed after it gave up cancels its job; in the
  # usual build a long job answers by message, and short calls from many
  # processes at once, answered either way, are all right.
  use ExUnit.Case, async: false

  alias WellBehaved.{Job, Runtime}
  alias WellBehaved.Test.{SDKAwaiting, SDKImpatient, SDKJobs}
  import Bitwise
  import WellBehaved.Test.RuntimeHelpers

  @moduletag timeout: 180_000

  setup_all do
    SDKJobs.ensure_loaded!()
    SDKAwaiting.ensure_loaded!()
    SDKImpatient.ensure_loaded!()
  end

  defp answered(native), do: Runtime.stats(native).answered_in_call

  defp threaded(nif, args, opts \\ []),
    do: Job.call(nif, args, Keyword.put(opts, :schedule, :threaded))

  test "results, tiny slices and a result taken from the state, each answered in the call" do
    before = answered(SDKAwaiting)

    for n <- [0, 1, 1000, 200_000], tiny <- [false, true] do
      assert threaded(&SDKAwaiting.fold/4, [n], tiny_slices: tiny) ==
               Job.call(&SDKJobs.fold/4, [n], schedule: :normal),
             "#{n} #{tiny}"
    end

    big = threaded(&SDKAwaiting.owned/4, [10_000_000])
    assert big == Job.call(&SDKJobs.owned/4, [10_000_000], schedule: :normal)
    # the state's own binary, not a copy
    assert :binary.referenced_byte_size(big) == 10_000_000
    assert answered(SDKAwaiting) - before == 9
    assert %{live_jobs: 0, live_bytes: 0, queued: 0} = Runtime.stats(SDKAwaiting)
  end

  test "an error of the pool thread's init, and an exception of result, in the call" do
    before = answered(SDKAwaiting)
    assert threaded(&SDKAwaiting.owned/4, [1 <<< 62]) == {:error, :enomem}
    assert_raise ArgumentError, fn -> threaded(&SDKAwaiting.raising/4, [1000]) end
    assert answered(SDKAwaiting) - before == 2
    # refused before the job is queued: no answer to wait for
    assert threaded(&SDKAwaiting.fold/4, ["10"]) == {:error, :badarg}
    assert answered(SDKAwaiting) - before == 2
    assert_no_live_jobs(SDKAwaiting)
  end

  test "concurrent callers, more than pool threads, all answered in their calls" do
    before = answered(SDKAwaiting)

    results =
      1..16
      |> Task.async_stream(fn i -> threaded(&SDKAwaiting.fold/4, [i * 100]) end,
        max_concurrency: 16,
        timeout: 60_000
      )
      |> Enum.map(fn {:ok, answer} -> answer end)

    assert results == for(i <- 1..16, do: Job.call(&SDKJobs.fold/4, [i * 100]))
    assert answered(SDKAwaiting) - before == 16
    assert_no_live_jobs(SDKAwaiting)
  end

  test "calls that give up waiting at once: the same answers, by message" do
    for n <- [0, 1, 1000, 200_000], tiny <- [false, true] do
      assert threaded(&SDKImpatient.fold/4, [n], tiny_slices: tiny) ==
               Job.call(&SDKJobs.fold/4, [n], schedule: :normal),
             "#{n} #{tiny}"
    end

    assert threaded(&SDKImpatient.owned/4, [100_000]) ==
             Job.call(&SDKJobs.owned/4, [100_000], schedule: :normal)

    assert threaded(&SDKImpatient.owned/4, [1 <<< 62]) == {:error, :enomem}
    assert_raise ArgumentError, fn -> threaded(&SDKImpatient.raising/4, [1000]) end

    # killed once it waits for the message: the job is cancelled and freed
    WellBehaved.Testing.kill_mid_job(
      fn -> threaded(&SDKImpatient.fold/4, [2_000_000_000]) end,
      SDKImpatient
    )

    assert_no_live_jobs(SDKImpatient)
  end

  test "a long job answers by message" do
    before = answered(SDKJobs)
    n = 20_000_000
    assert threaded(&SDKJobs.fold/4, [n]) == Job.call(&SDKJobs.fold/4, [n], schedule: :dirty_cpu)
    assert answered(SDKJobs) == before
  end

  test "short calls from many processes, answered in the call or by message, all right" do
    expected = for n <- 0..49, into: %{}, do: {n, Job.call(&SDKJobs.fold/4, [n * 37])}

    1..8
    |> Task.async_stream(
      fn _ ->
        for round <- 1..300 do
          n = rem(round * 7, 50)
          assert threaded(&SDKJobs.fold/4, [n * 37]) == expected[n]
        end
      end,
      max_concurrency: 8,
      timeout: 120_000
    )
    |> Stream.run()

    assert_no_live_jobs(SDKJobs)
  end
end
