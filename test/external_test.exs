defmodule WellBehaved.ExternalTest do
  # The external server pool: echo, Levenshtein via schedule: :external,
  # concurrent callers, servers killed mid-call, callers killed mid-call, stop.
  use ExUnit.Case, async: false

  alias WellBehaved.Test.RuntimeHelpers
  alias WellBehaved.{External, Levenshtein, OSProcess}

  doctest WellBehaved.External

  # each test starts from no pool: other modules' calls with
  # schedule: :external leave the default one running
  setup do
    External.stop()
    on_exit(fn -> External.stop() end)
  end

  defp random_text(n) do
    alphabet = ~c"abcé中😀"
    for _ <- 1..n//1, into: "", do: <<Enum.random(alphabet)::utf8>>
  end

  describe "echo" do
    test "round-trips small terms" do
      terms = [
        nil,
        true,
        :atom,
        :"ünïcödé atom",
        0,
        -1,
        255,
        2 ** 31,
        -(2 ** 70),
        1.5,
        -0.0,
        "",
        "binary",
        <<1::3>>,
        [],
        [1 | 2],
        ~c"charlist",
        {},
        {:a, 1},
        %{},
        %{a: 1, b: [2, 3]},
        self(),
        make_ref(),
        &Enum.map/2,
        List.to_tuple(Enum.to_list(1..300))
      ]

      for term <- terms, do: assert(External.echo(term) === term)
    end

    test "round-trips a 64 KiB binary" do
      bin = :crypto.strong_rand_bytes(64 * 1024)
      assert External.echo(bin) == bin
      assert External.echo({:wrapped, bin}) == {:wrapped, bin}
    end

    test "round-trips nested terms" do
      deep = Enum.reduce(1..1_000, :leaf, fn i, acc -> [i, {acc, "#{i}"}] end)

      nested = %{
        list: Enum.to_list(1..10_000),
        map: Map.new(1..1_000, &{&1, to_string(&1)}),
        tuple: {1, {2, {3, [4, %{5 => "six"}]}}},
        binaries: for(n <- 0..100, do: :binary.copy("x", n)),
        deep: deep
      }

      assert External.echo(nested) == nested
    end

    test "round-trips binaries of many sizes, 0 .. 16 MiB" do
      sizes =
        [0, 1, 2, 3, 4, 5, 7, 63, 64, 65, 255, 256, 4095, 4096, 65_531, 65_535, 65_536, 65_537] ++
          [1_048_575, 1_048_576, 4 * 1_048_576 + 3, 16 * 1_048_576]

      for size <- sizes do
        bin =
          if size <= 1_048_576,
            do: :crypto.strong_rand_bytes(size),
            else: :binary.copy(:crypto.strong_rand_bytes(4096), div(size, 4096)) <> "tail"

        assert External.echo(bin) == bin, "size #{byte_size(bin)}"
      end
    end
  end

  describe "Levenshtein, schedule: :external" do
    test "equals schedule: :normal on random pairs" do
      for round <- 1..300 do
        {a, b, unit} =
          if rem(round, 2) == 0 do
            alphabet = 2 + rem(round, 5)

            {RuntimeHelpers.random_bytes(:rand.uniform(301) - 1, alphabet),
             RuntimeHelpers.random_bytes(:rand.uniform(301) - 1, alphabet), :byte}
          else
            {random_text(:rand.uniform(201) - 1), random_text(:rand.uniform(201) - 1), :codepoint}
          end

        for max <- [nil, :rand.uniform(50) - 1, 1_000_000] do
          opts = [unit: unit, max_distance: max]
          expected = Levenshtein.distance(a, b, [schedule: :normal] ++ opts)
          got = Levenshtein.distance(a, b, [schedule: :external] ++ opts)
          assert got == expected, "#{inspect(a)} #{inspect(b)} #{inspect(opts)}"
        end

        # a bignum cutoff cannot cut
        assert Levenshtein.distance(a, b, unit: unit, max_distance: 2 ** 80, schedule: :external) ==
                 Levenshtein.distance(a, b, unit: unit, schedule: :normal)
      end
    end

    test "equals schedule: :normal on long inputs" do
      for {n, m} <- [{5_000, 5_000}, {10_000, 64}, {1, 20_000}] do
        a = :crypto.strong_rand_bytes(n)
        b = :crypto.strong_rand_bytes(m)

        for opts <- [[], [max_distance: 10]] do
          assert Levenshtein.distance(a, b, [schedule: :external] ++ opts) ==
                   Levenshtein.distance(a, b, [schedule: :normal] ++ opts)
        end
      end
    end

    test "invalid UTF-8 raises ArgumentError naming the argument" do
      assert_raise ArgumentError, ~r/first argument is not valid UTF-8/, fn ->
        Levenshtein.distance(<<0xFF>>, "a", unit: :codepoint, schedule: :external)
      end

      assert_raise ArgumentError, ~r/second argument is not valid UTF-8/, fn ->
        Levenshtein.distance("a", "b\xC3", unit: :codepoint, schedule: :external)
      end

      assert Levenshtein.distance(<<0xFF>>, "a", schedule: :external) == 1
    end

    test "the direct API answers invalid UTF-8 with an error" do
      assert External.levenshtein("kitten", "sitting", :byte, nil) == {:ok, 3}
      assert External.levenshtein("héllo", "hello", :codepoint, nil) == {:ok, 1}
      assert External.levenshtein(<<0xFF>>, "a", :codepoint, nil) == {:error, {:invalid_utf8, 1}}
      assert External.levenshtein("a", <<0xFF>>, :codepoint, 3) == {:error, {:invalid_utf8, 2}}
    end

    test "the direct API equals Levenshtein.distance in the VM, invalid UTF-8 included" do
      for round <- 1..200 do
        # text, with a stray byte (invalid UTF-8) in one side or the other now and then
        a = random_text(:rand.uniform(120) - 1)
        b = random_text(:rand.uniform(120) - 1)

        {a, b} =
          case rem(round, 5) do
            0 -> {a <> <<0xFF>>, b}
            1 -> {a, <<0xC3>> <> b}
            _ -> {a, b}
          end

        for unit <- [:byte, :codepoint], max <- [nil, :rand.uniform(30) - 1] do
          opts = [unit: unit, max_distance: max, schedule: :normal]

          expected =
            try do
              {:ok, Levenshtein.distance(a, b, opts)}
            rescue
              e in ArgumentError ->
                if e.message =~ "first argument is not valid UTF-8",
                  do: {:error, {:invalid_utf8, 1}},
                  else: {:error, {:invalid_utf8, 2}}
            end

          got = External.levenshtein(a, b, unit, max)

          assert got == expected,
                 "#{inspect(a)} #{inspect(b)} #{unit} #{inspect(max)}: " <>
                   "got #{inspect(got)}, expected #{inspect(expected)}"
        end
      end
    end

    test "runs as the library's Levenshtein job, the path of Job.call/4" do
      assert External.levenshtein("kitten", "sitting", :byte, nil) == {:ok, 3}
      # the built-in server is a server of job types: it counts its jobs
      jobs = fn ->
        stats = External.server_stats(External.Pool)
        assert [_ | _] = stats
        for {_, answer} <- stats, do: assert({:ok, %{jobs: _}} = answer)
        Enum.sum(for {_, {:ok, %{jobs: n}}} <- stats, do: n)
      end

      before = jobs.()
      assert External.levenshtein("flaw", "lawn", :byte, nil) == {:ok, 2}
      after_call = jobs.()
      assert after_call == before + 1, "jobs #{after_call} after #{before}"

      # Job.call/4 reaches the same job by the library's NIF
      args = ["kitten", "sitting", :codepoint, nil]

      assert WellBehaved.Job.call(&WellBehaved.Native.levenshtein/7, args,
               schedule: :external,
               pool: External.Pool
             ) == 3

      assert WellBehaved.Job.call(
               &WellBehaved.Native.levenshtein/7,
               ["a", <<0xFF>>, :codepoint, 1],
               schedule: :external,
               pool: External.Pool
             ) == {:error, {:invalid_utf8, 2}}
    end

    test "the direct API raises on arguments of the wrong type" do
      for {args, pattern} <- [
            {[1, "a", :byte, nil],
             ~r/levenshtein\/4: invalid first argument 1, expected a binary/},
            {["a", :b, :byte, nil], ~r/invalid second argument :b, expected a binary/},
            {["a", "a", :word, nil],
             ~r/invalid unit :word, expected :byte, :codepoint or :grapheme/},
            {["a", "a", :byte, -1], ~r/invalid max_distance -1, expected a non-negative integer/}
          ] do
        assert_raise ArgumentError, pattern, fn -> apply(External, :levenshtein, args) end
      end
    end
  end

  test "50 concurrent callers x 50 calls each get their own answers" do
    tasks =
      for caller <- 1..50 do
        Task.async(fn ->
          for call <- 1..50 do
            term = {caller, call, :crypto.strong_rand_bytes(rem(caller * call, 2_000))}
            assert External.echo(term) == term

            a = String.duplicate("a", caller)
            b = String.duplicate("a", caller) <> String.duplicate("b", call)
            assert External.levenshtein(a, b, :byte, nil) == {:ok, call}
          end

          caller
        end)
      end

    assert Task.await_many(tasks, 120_000) == Enum.to_list(1..50)
    assert %{busy: [], waiting: 0} = External.info()
  end

  test "callers queue for a one-connection pool" do
    {:ok, _} = External.start(servers: 1, connections: 1)
    assert %{slots: 1} = External.info()

    tasks =
      for i <- 1..20 do
        Task.async(fn -> for j <- 1..20, do: assert(External.echo({i, j}) == {i, j}) end)
      end

    Task.await_many(tasks, 60_000)
    assert %{busy: [], waiting: 0} = External.info()
  end

  # a call that keeps a server busy for about a second or more (`bytes`
  # x `bytes` / 40e9 s here)
  defp long_pair(bytes \\ 250_000) do
    {:crypto.strong_rand_bytes(bytes), :crypto.strong_rand_bytes(bytes)}
  end

  # the server serving `pid`'s call, once the call is in flight
  defp server_serving(pid) do
    RuntimeHelpers.eventually(fn ->
      info = External.info()

      Enum.find_value(info.busy, fn busy ->
        busy.pid == pid && Enum.find(info.servers, &(&1.index == busy.server))
      end)
    end)
  end

  defp kill_server(server) do
    # give the request time to reach the server: the kill must land mid-call
    Process.sleep(200)
    {_, 0} = System.cmd("kill", ["-s", "KILL", "--", to_string(server.os_pid)])
  end

  defp await_restart(killed) do
    RuntimeHelpers.eventually(fn ->
      Enum.find(External.info().servers, fn s ->
        s.index == killed.index and s.status == :up and s.os_pid != killed.os_pid
      end)
    end)
  end

  @tag :capture_log
  test "a server killed mid-call: the caller gets an error, the pool recovers" do
    # about 6 s of work here, killed 200 ms in: a machine 30x faster would
    # still be mid-call (1.5 s, the default pair, is not that far from
    # 200 ms), and no run waits for it
    {a, b} = long_pair(500_000)
    assert {:ok, _} = External.levenshtein("warm", "up", :byte, nil)

    task = Task.async(fn -> External.levenshtein(a, b, :byte, nil) end)
    killed = server_serving(task.pid)
    kill_server(killed)
    assert {:error, _reason} = Task.await(task, 60_000)

    await_restart(killed)
    RuntimeHelpers.eventually(fn -> not OSProcess.alive?(killed.os_pid) end)
    assert File.exists?(killed.socket)

    for i <- 1..40, do: assert(External.echo({:after, i}) == {:after, i})
    assert External.levenshtein("kitten", "sitting", :byte, nil) == {:ok, 3}

    # the same through WellBehaved.Levenshtein: an exception, not a hang
    task =
      Task.async(fn ->
        try do
          Levenshtein.distance(a, b, schedule: :external)
        rescue
          e in External.Error -> e
        end
      end)

    killed = server_serving(task.pid)
    kill_server(killed)
    assert %External.Error{message: message} = Task.await(task, 60_000)
    assert message =~ "external server call failed"

    await_restart(killed)
    assert Levenshtein.distance("kitten", "sitting", schedule: :external) == 3
    assert %{busy: []} = External.info()
  end

  test "callers killed mid-call give their connections back" do
    {:ok, _} = External.start(servers: 1, connections: 2)
    {a, b} = long_pair()

    tasks =
      for _ <- 1..2 do
        spawn(fn -> External.levenshtein(a, b, :byte, nil) end)
      end

    RuntimeHelpers.eventually(fn -> length(External.info().busy) == 2 end)
    Enum.each(tasks, &Process.exit(&1, :kill))
    RuntimeHelpers.eventually(fn -> External.info().busy == [] end)

    for i <- 1..10, do: assert(External.echo(i) == i)
  end

  test "stop/0 leaves no server process and no socket file" do
    assert External.echo(:up) == :up
    %{dir: dir, servers: servers} = External.info()
    assert File.ls!(dir) != []

    assert External.stop() == :ok
    assert External.info() == nil
    refute File.exists?(dir)
    for server <- servers, do: refute(OSProcess.alive?(server.os_pid))

    # the next call starts a new pool
    assert External.echo(:again) == :again
    %{dir: dir2, servers: servers2} = External.info()
    assert dir2 != dir
    assert External.stop() == :ok
    refute File.exists?(dir2)
    for server <- servers2, do: refute(OSProcess.alive?(server.os_pid))
  end
end
