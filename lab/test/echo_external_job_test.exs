defmodule WellBehaved.EchoExternalJobTest do
  # :external_job: the lab's echo job in its server program
  # (priv/wb_lab_server, the lab's job types built as a user's are for
  # schedule: :external): terms come back as they went, a term the server
  # refuses (a pid, a reference) answers {:error, :badarg}, and Spin's job
  # gives the same answer in a server as in the VM.
  use ExUnit.Case, async: false

  alias WellBehaved.{External, Job}
  alias WellBehaved.Lab.{Echo, Native}

  setup_all do
    on_exit(fn -> Echo.ExternalJob.stop() end)
  end

  test "every term without pids or references comes back unchanged" do
    terms = [
      :atom,
      42,
      -(2 ** 200),
      3.25,
      "",
      {:ok, :binary.copy(<<7>>, 65_536)},
      %{a: [1, {2, "three"}], b: %{nested: [4.5]}},
      [1, [2, [3, [4]]]],
      ~c"chars",
      <<1::3>>,
      {}
      | for(size <- [0, 1, 4096, 1_048_576], do: :crypto.strong_rand_bytes(size))
    ]

    for term <- terms,
        do: assert(Echo.echo(term, :external_job) === term, inspect(term, limit: 5))
  end

  test "a pid or a reference is refused, not sent" do
    assert Echo.echo({self()}, :external_job) == {:error, :badarg}
    assert Echo.echo([make_ref()], :external_job) == {:error, :badarg}
  end

  test "Spin's job answers in a server as in the VM" do
    for n <- [0, 1, 1000] do
      assert Job.call(&Native.spin/4, [n], schedule: :external) ==
               Job.call(&Native.spin/4, [n], schedule: :normal)
    end

    assert [{0, {:ok, %{live_jobs: 0}}} | _] = External.server_stats(Native.External)
  end
end
