defmodule WellBehaved.BadArgumentsTest do
  use ExUnit.Case, async: true

  alias WellBehaved.{Levenshtein, Runtime}
  alias WellBehaved.File, as: WFile

  test "Levenshtein rejects non-binaries" do
    assert_raise ArgumentError,
                 ~r/distance\/3: invalid first argument :a, expected a binary/,
                 fn ->
                   Levenshtein.distance(:a, "b")
                 end

    assert_raise ArgumentError, ~r/invalid second argument (~c"b"|'b'), expected a binary/, fn ->
      Levenshtein.distance("a", ~c"b")
    end

    assert_raise ArgumentError, ~r/invalid first argument/, fn ->
      Levenshtein.distance(<<1::3>>, "b", schedule: :normal)
    end
  end

  test "Levenshtein rejects invalid UTF-8 in codepoint mode, in every mode" do
    for mode <- Runtime.modes() do
      assert_raise ArgumentError, ~r/first argument is not valid UTF-8/, fn ->
        Levenshtein.distance(<<0xC3>>, "x", unit: :codepoint, schedule: mode)
      end

      assert_raise ArgumentError, ~r/second argument is not valid UTF-8/, fn ->
        Levenshtein.distance("x", <<0xED, 0xA0, 0x80>>, unit: :codepoint, schedule: mode)
      end
    end

    # bytes mode takes any bytes
    assert Levenshtein.distance(<<0xC3>>, "x") == 1
  end

  test "Levenshtein rejects unknown options and values" do
    assert_raise ArgumentError, ~r/unknown option :foo/, fn ->
      Levenshtein.distance("a", "b", foo: 1)
    end

    assert_raise ArgumentError, ~r/invalid :unit :cluster/, fn ->
      Levenshtein.distance("a", "b", unit: :cluster)
    end

    for k <- [-1, 1.5, :infinity] do
      assert_raise ArgumentError, ~r/invalid :max_distance/, fn ->
        Levenshtein.distance("a", "b", max_distance: k)
      end
    end

    # :external is accepted, so the message lists it
    assert_raise ArgumentError,
                 ~r/invalid :schedule :fast, expected one of :auto, .* or :external/,
                 fn ->
                   Levenshtein.distance("a", "b", schedule: :fast)
                 end

    assert_raise ArgumentError, ~r/invalid :tiny_slices 1/, fn ->
      Levenshtein.distance("a", "b", tiny_slices: 1)
    end

    assert_raise ArgumentError, ~r/keyword list/, fn ->
      Levenshtein.distance("a", "b", %{schedule: :normal})
    end

    assert_raise ArgumentError, ~r/distance\/3: unknown option :normal/, fn ->
      Levenshtein.distance("a", "b", [:normal])
    end
  end

  test "Runtime.configure rejects bad settings" do
    assert_raise ArgumentError,
                 ~r/configure\/2: invalid :normal_max_us -5, expected an integer/,
                 fn ->
                   Runtime.configure(normal_max_us: -5)
                 end

    assert_raise ArgumentError, ~r/unknown option :speed/, fn -> Runtime.configure(speed: 1) end

    # the cases an adversarial pass found: each names the problem
    assert_raise ArgumentError, ~r/invalid :yielding_max_us 9223372036854775808/, fn ->
      Runtime.configure(yielding_max_us: 2 ** 63)
    end

    assert_raise ArgumentError,
                 ~r/configure\/2: expected a keyword list of options, got: %\{\}/,
                 fn ->
                   Runtime.configure(%{})
                 end

    assert_raise ArgumentError, ~r/must not exceed/, fn ->
      Runtime.configure(normal_max_us: 10, yielding_max_us: 5)
    end
  end

  describe "every mode agrees on a huge cutoff" do
    test "max_distance beyond 64 bits is no cutoff, in every mode and the external server" do
      for k <- [2 ** 64, 2 ** 64 + 1, 2 ** 100], mode <- Runtime.modes() ++ [:external] do
        assert Levenshtein.distance("kitten", "sitting", max_distance: k, schedule: mode) == 3
      end

      # at and just below the longer input's length it still cuts exactly
      assert Levenshtein.distance("abc", "xyz", max_distance: 3) == 3
      assert Levenshtein.distance("abc", "xyz", max_distance: 2) == 3
      assert Levenshtein.distance("abc", "xyz", max_distance: 1) == 2
    end
  end

  describe "WellBehaved.File" do
    setup do
      path = Path.join(System.tmp_dir!(), "wb_bad_args_#{System.unique_integer([:positive])}")
      File.write!(path, "one\ntwo\n")
      on_exit(fn -> File.rm(path) end)
      {:ok, file} = WFile.open(path, :read)
      {:ok, path: path, handle: file}
    end

    test "open/3 names the option, the value and what it takes", %{path: path} do
      for {opts, pattern} <- [
            {[buffer_bytes: 0],
             ~r/open\/3: invalid :buffer_bytes 0, expected an integer in 1..1073741824/},
            {[buffer_bytes: 2 ** 64], ~r/invalid :buffer_bytes 18446744073709551616, expected/},
            {[buffer_bytes: 64 * 1024 * 1024 * 1024], ~r/invalid :buffer_bytes 68719476736/},
            {[max_line_bytes: 2 ** 64 - 1],
             ~r/invalid :max_line_bytes \d+, expected an integer in 1..2\^48 or :infinity/},
            {[max_line_bytes: 0], ~r/invalid :max_line_bytes 0/},
            {[max_line_bytes: "1"], ~r/invalid :max_line_bytes "1"/},
            {[create: true],
             ~r/open\/3: invalid :create true, expected no value: :create is given alone/},
            {[bogus: 1], ~r/open\/3: unknown option :bogus, expected one of :create, :exclusive/},
            {[:binary], ~r/open\/3: unknown option :binary/},
            {[{"create", true}], ~r/open\/3: expected a keyword list of options/},
            {:create, ~r/open\/3: expected a keyword list of options, got: :create/}
          ] do
        assert_raise ArgumentError, pattern, fn -> WFile.open(path, :read, opts) end
      end

      assert_raise ArgumentError,
                   ~r/open\/3: invalid mode :readwrite, expected :read, :write or :append/,
                   fn ->
                     WFile.open(path, :readwrite)
                   end

      # a charlist with a codepoint that is not one: ArgumentError, not UnicodeConversionError
      assert_raise ArgumentError,
                   ~r/open\/3: invalid path \[.*\], expected a string or a charlist of valid codepoints/,
                   fn ->
                     WFile.open([?a, 0xD800], :read)
                   end

      assert_raise ArgumentError,
                   ~r/open\/3: invalid path \[:x\], expected a string or a charlist/,
                   fn ->
                     WFile.open([:x], :read)
                   end

      assert_raise ArgumentError, ~r/open\/3: invalid path 42/, fn -> WFile.open(42, :read) end

      assert_raise ArgumentError, ~r/stream!\/2: invalid :buffer_bytes -1/, fn ->
        WFile.stream!(path, buffer_bytes: -1)
      end
    end

    test "reads take counts in range and say which function was called", %{handle: file} do
      for bad <- [0, -1, 2 ** 48 + 1, 2 ** 64, 1.0, :all] do
        assert_raise ArgumentError,
                     ~r/File.read\/2: invalid byte count .*, expected an integer in 1..2\^48/,
                     fn ->
                       WFile.read(file, bad)
                     end
      end

      for bad <- [0, -1, 1.5, :all] do
        assert_raise ArgumentError,
                     ~r/File.read_lines\/2: invalid line count .*, expected a positive integer/,
                     fn ->
                       WFile.read_lines(file, bad)
                     end
      end

      # any positive count is fine, however large: at most 4096 lines come back per call
      assert WFile.read_lines(file, 2 ** 64) == {:ok, ["one", "two"]}
    end

    test "a read larger than the file allocates the file, not the count", %{handle: file} do
      assert WFile.read(file, 2 ** 40) == {:ok, "one\ntwo\n"}
      assert WFile.read(file, 2 ** 40) == :eof
    end

    test "every function names itself when given something else than a handle" do
      for {name, call} <- [
            {"read/2", &WFile.read(&1, 1)},
            {"read_line/1", &WFile.read_line/1},
            {"read_lines/2", &WFile.read_lines(&1, 1)},
            {"write/2", &WFile.write(&1, "x")},
            {"flush/1", &WFile.flush/1},
            {"sync/1", &WFile.sync/1},
            {"close/1", &WFile.close/1}
          ] do
        assert_raise ArgumentError,
                     ~r/File.#{Regex.escape(name)}: invalid handle :nope, expected a WellBehaved.File handle/,
                     fn ->
                       call.(:nope)
                     end
      end
    end

    test "write/2 takes iodata only", %{path: path} do
      {:ok, out} = WFile.open(path, :write)

      for bad <- [:atom, [:atom], ["ok", 256], %{}] do
        assert_raise ArgumentError, ~r/File.write\/2: invalid data .*, expected iodata/, fn ->
          WFile.write(out, bad)
        end
      end

      # a large iolist is written whole
      big = List.duplicate("0123456789", 10_000)
      assert WFile.write(out, big) == :ok
      assert WFile.close(out) == :ok
      assert File.read!(path) == IO.iodata_to_binary(big)
    end
  end

  describe "External" do
    test "External.start/1 checks its options before starting anything" do
      for {opts, pattern} <- [
            {[servers: 0], ~r/External.start\/1: invalid :servers 0, expected an integer in 1../},
            {[timeout_ms: 2 ** 32], ~r/invalid :timeout_ms 4294967296/},
            {[cancel_timeout_ms: 0],
             ~r/invalid :cancel_timeout_ms 0, expected an integer in 1../},
            {[connections: :many], ~r/invalid :connections :many/},
            {[call_timeout: 5],
             ~r/unknown option :call_timeout, expected one of :name, :executable, :servers, :connections, :timeout_ms/},
            {[name: "pool"], ~r/invalid :name "pool", expected an atom/},
            {[name: nil], ~r/invalid :name nil, expected an atom/},
            {[executable: ~c"server"],
             ~r/invalid :executable .server., expected a path or \{app, file\}/},
            {:fast, ~r/External.start\/1: expected a keyword list/}
          ] do
        assert_raise ArgumentError, pattern, fn -> WellBehaved.External.start(opts) end
      end
    end

    test "External.child_spec/1 checks them too, naming itself" do
      assert_raise ArgumentError,
                   ~r/^WellBehaved.External.child_spec\/1: invalid :servers -1/,
                   fn ->
                     WellBehaved.External.child_spec(servers: -1)
                   end
    end
  end

  # (the pool a module declares is tested where one loads:
  # examples/checksum, whose application starts Checksum.Native's)
  describe "use WellBehaved.NIF, external:" do
    defp compile_stub(name, external) do
      Code.compile_string("""
      defmodule WellBehaved.Test.#{name} do
        use WellBehaved.NIF, otp_app: :well_behaved, library: "none", external: #{inspect(external)}
      end
      """)
    end

    test "refuses a value that names no program, or bad pool options, at compile time" do
      for {external, message} <- [
            {5,
             ~r/expected external: a file name or options with executable: a file name, got: 5/},
            {[servers: 2], ~r/got: \[servers: 2\]/},
            {[executable: "s", servers: 0], ~r/child_spec\/1: invalid :servers 0/}
          ] do
        assert_raise ArgumentError, message, fn -> compile_stub("Refused", external) end
      end
    end
  end
end
