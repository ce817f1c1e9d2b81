defmodule WellBehaved.SDKOutputsAreBuiltInStepsTest do
  # A job whose output size is known only at the end (run-length encoding,
  # c_src/test/rle_job.h) writes it in its steps into a wb_output
  # (c_src/include/wb_output.h) and hands it over without a copy: as
  # iodata, or flattened into one binary in its last steps. Its answers
  # against an Elixir reference in every mode, across chunk boundaries;
  # killed callers free it; and with one normal scheduler, no turn of a
  # call that makes 100 MB holds the scheduler past max(5 ms, 2x pure
  # Erlang's), where a result that copies the output in one go held it
  # 72-105 ms once per call.
  use ExUnit.Case, async: false

  import WellBehaved.Testing

  alias WellBehaved.Job
  alias WellBehaved.Test.SDKJobs
  alias WellBehaved.Test.Holds
  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 300_000

  setup_all do
    SDKJobs.ensure_loaded!()
  end

  # the reference: (count 1..255, byte) pairs
  defp rle(bin), do: bin |> rle_runs([]) |> Enum.reverse() |> IO.iodata_to_binary()

  defp rle_runs(<<>>, acc), do: acc

  defp rle_runs(<<byte, _::binary>> = bin, acc) do
    run = run_length(bin, byte, 0)
    <<_::binary-size(run), rest::binary>> = bin
    rle_runs(rest, [<<run, byte>> | acc])
  end

  defp run_length(<<byte, rest::binary>>, byte, n) when n < 255, do: run_length(rest, byte, n + 1)
  defp run_length(_, _, n), do: n

  # runs of a few byte values, mostly of 1-3 bytes, one in 64 of up to 600
  # (longer than a pair holds): about a third of the input's size out
  defp runs(bytes, seed) do
    :rand.seed(:exsss, {seed, 7, 11})
    length = fn -> if :rand.uniform(64) == 1, do: :rand.uniform(600), else: :rand.uniform(3) end

    Stream.repeatedly(fn -> :binary.copy(<<:rand.uniform(4)>>, length.()) end)
    |> Enum.reduce_while({[], 0}, fn run, {acc, n} ->
      if n >= bytes, do: {:halt, {acc, n}}, else: {:cont, {[run | acc], n + byte_size(run)}}
    end)
    |> elem(0)
    |> IO.iodata_to_binary()
    |> binary_part(0, bytes)
  end

  defp call(bin, flat, opts), do: Job.call(&SDKJobs.rle/5, [bin, flat], opts)

  test "answers as the reference does in every mode, as iodata or one binary" do
    # empty, one byte, one pair's most, across the first chunk (64 KiB of
    # output) and into the fourth (64 + 128 + 256 KiB)
    for bytes <- [0, 1, 255, 256, 40_000, 300_000, 1_500_000] do
      input = runs(bytes, bytes)
      want = rle(input)
      # only small inputs one unit per slice
      modes = if bytes <= 300_000, do: [false, true], else: [false]

      for mode <- WellBehaved.Runtime.modes(), tiny <- modes do
        opts = [schedule: mode, tiny_slices: tiny]
        flat = call(input, true, opts)
        iodata = call(input, false, opts)
        assert is_binary(flat), "#{bytes} bytes #{inspect(opts)}: #{inspect(flat, limit: 5)}"
        assert flat == want, "#{bytes} bytes, flat, #{inspect(opts)}"
        assert IO.iodata_to_binary(iodata) == want, "#{bytes} bytes, iodata, #{inspect(opts)}"
      end
    end
  end

  test "large outputs come as several chunks of iodata, or one binary" do
    input = runs(2_000_000, 3)
    iodata = call(input, false, schedule: :auto)
    assert is_list(iodata) and length(iodata) > 1, inspect(iodata, limit: 3)
    assert IO.iodata_to_binary(iodata) == rle(input)
    assert call(input, true, schedule: :auto) == rle(input)
  end

  test "a server program (schedule: :external) answers the same" do
    on_exit(fn -> WellBehaved.External.stop(SDKJobs.External) end)

    for bytes <- [0, 1, 300_000, 1_500_000] do
      input = runs(bytes, bytes + 1)
      want = rle(input)
      assert call(input, true, schedule: :external) == want, "#{bytes} bytes, flat"
      iodata = call(input, false, schedule: :external)
      assert IO.iodata_to_binary(iodata) == want, "#{bytes} bytes, iodata"
    end
  end

  test "bad arguments answer {:error, :badarg}" do
    assert {:error, :badarg} = call("abc", :maybe, schedule: :auto)
    assert {:error, :badarg} = call(:not_binary, true, schedule: :auto)
  end

  test "a caller killed mid-job frees its output" do
    # 200,000 units, one a slice: long enough to be seen at work
    input = :binary.copy(<<1, 2>>, 100_000)

    for flat <- [false, true] do
      kill_mid_job(
        fn -> call(input, flat, schedule: :yielding, tiny_slices: true) end,
        SDKJobs
      )
    end
  end

  test "no turn of a call that makes 100 MB holds the scheduler past 5 ms or 2x pure Erlang's" do
    scenario = """
    Code.require_file("test/support/sdk_jobs.exs")
    alias WellBehaved.Test.SDKJobs
    SDKJobs.ensure_loaded!()
    # 50 MB without runs of two: 100 MB out
    input = :binary.copy(<<1, 2>>, 25_000_000)
    for flat <- [true, false] do
      call = fn -> WellBehaved.Job.call(&SDKJobs.rle/5, [input, flat], schedule: :yielding) end
      # whole calls: the window is longer than a call here
      {flat, WellBehaved.Probe.turns(call, workers: 1, duration_ms: 3000)}
    end
    """

    run = fn ->
      assert {:ok, {reports, _}} =
               ChildVM.run({Code, :eval_string, [scenario]},
                 bound_ms: 240_000,
                 erl_flags: ["+S", "1:1"]
               )

      reports
    end

    # over its bound, a call fails when it is over in every run of the
    # scenario (WellBehaved.Test.Holds)
    over = &Holds.over_erlang(for {flat, r} <- &1, do: {"flat #{flat}", r.function, r.control})
    {reports, held} = Holds.recurring(run, over)
    assert length(reports) == 2
    assert held == [], Holds.message(held)
  end
end
