defmodule WellBehaved.FileTest do
  use ExUnit.Case, async: true

  alias WellBehaved.File, as: WFile
  import WellBehaved.Test.RuntimeHelpers, only: [eventually: 1]

  doctest WellBehaved.File

  @moduletag :tmp_dir

  # --- references: Elixir's File and OTP's :file ---------------------------

  # the lines :file.read_line gives (raw, read_ahead), without their "\n"
  defp reference_lines(path) do
    {:ok, io} = :file.open(path, [:read, :raw, :binary, {:read_ahead, 65_536}])

    lines =
      Stream.repeatedly(fn -> :file.read_line(io) end)
      |> Enum.take_while(&match?({:ok, _}, &1))
      |> Enum.map(fn {:ok, line} -> String.replace_suffix(line, "\n", "") end)

    :ok = :file.close(io)
    lines
  end

  # the lines by splitting the whole file: unlike :file.read_line (and
  # File.stream!), which turn "\r\n" into "\n", WellBehaved.File keeps "\r"
  defp split_lines(content) do
    case :binary.split(content, "\n", [:global]) do
      [""] -> []
      parts -> if List.last(parts) == "", do: Enum.drop(parts, -1), else: parts
    end
  end

  defp want_lines(path) do
    content = File.read!(path)
    want = split_lines(content)
    unless String.contains?(content, "\r\n"), do: assert(want == reference_lines(path))
    want
  end

  defp all_lines(file), do: all_chunks(file, &WFile.read_line/1)

  defp all_chunks(file, fun, acc \\ []) do
    case fun.(file) do
      {:ok, chunk} -> all_chunks(file, fun, [chunk | acc])
      :eof -> Enum.reverse(acc)
    end
  end

  defp write_file(dir, name, content) do
    path = Path.join(dir, name)
    File.write!(path, content)
    path
  end

  # the VM's fds open on `path`: other tests open files meanwhile, so only
  # the ones pointing at this test's file count
  defp open_fds(path) do
    target = Path.expand(path)

    "/proc/self/fd"
    |> File.ls!()
    |> Enum.count(fn fd -> File.read_link("/proc/self/fd/" <> fd) == {:ok, target} end)
  end

  @samples [
    {"empty", ""},
    {"one line with newline", "one\n"},
    {"one line without newline", "one"},
    {"two lines, the last without newline", "one\ntwo"},
    {"empty lines", "\n\na\n\n\nb\n\n"},
    {"only newlines", "\n\n\n"},
    {"CRLF", "dos\r\nlines\r\n\r\nend\r\n"},
    {"binary bytes", <<0, 1, 2, 10, 255, 254, 10, 0>>}
  ]

  describe "read_line/1" do
    for {name, content} <- @samples do
      @content content
      test "#{name}: same lines as :file.read_line, at every buffer size", %{tmp_dir: dir} do
        path = write_file(dir, "sample", @content)
        want = want_lines(path)

        # up to 256 KiB a fill of cached bytes runs on the normal scheduler;
        # 1 MiB buffers are filled by the dirty variant
        for buffer <- [1, 2, 3, 5, 64, 65_536, 1_048_576] do
          file = WFile.open!(path, :read, buffer_bytes: buffer)
          assert all_lines(file) == want, "buffer_bytes: #{buffer}"
          # :eof again, not a phantom line
          assert WFile.read_line(file) == :eof
          assert WFile.close(file) == :ok
        end
      end
    end

    test "no phantom empty line, last line without newline kept", %{tmp_dir: dir} do
      assert all_lines(WFile.open!(write_file(dir, "a", "x\ny\n"), :read)) == ["x", "y"]
      assert all_lines(WFile.open!(write_file(dir, "b", "x\ny"), :read)) == ["x", "y"]
      assert all_lines(WFile.open!(write_file(dir, "c", ""), :read)) == []
    end

    test "CRLF: only \\n is stripped", %{tmp_dir: dir} do
      file = WFile.open!(write_file(dir, "crlf", "a\r\nb\r\n"), :read)
      assert WFile.read_line(file) == {:ok, "a\r"}
      assert WFile.read_line!(file) == "b\r"
      assert WFile.read_line!(file) == :eof
    end

    test "random lines at random buffer sizes", %{tmp_dir: dir} do
      for round <- 1..20 do
        content =
          for _ <- 1..:rand.uniform(300), into: "" do
            :binary.copy("z", :rand.uniform(200) - 1) <> "\n"
          end

        content = if rem(round, 2) == 0, do: content <> "tail", else: content
        path = write_file(dir, "random", content)
        file = WFile.open!(path, :read, buffer_bytes: :rand.uniform(300))
        assert all_lines(file) == want_lines(path)
      end
    end
  end

  describe "read_lines/2" do
    test "many lines per call, the same lines as read_line", %{tmp_dir: dir} do
      content = Enum.map_join(1..10_000, fn i -> "line #{i}\n" end) <> "last"
      path = write_file(dir, "many", content)
      want = want_lines(path)

      for buffer <- [1, 7, 4096, 65_536, 1_048_576], max <- [1, 3, 1000, 100_000] do
        file = WFile.open!(path, :read, buffer_bytes: buffer)
        chunks = all_chunks(file, &WFile.read_lines(&1, max))
        assert Enum.all?(chunks, &(length(&1) in 1..max))
        assert List.flatten(chunks) == want
        assert WFile.read_lines(file, max) == :eof
      end
    end

    test "lines stay valid after the buffer moves on, the handle closes and is collected",
         %{tmp_dir: dir} do
      # lines over 64 bytes point into the read buffer; a 128-byte buffer is
      # replaced every line or two
      want = for i <- 1..2000, do: String.duplicate(<<?a + rem(i, 26)>>, 65 + rem(i, 200))
      path = write_file(dir, "long", Enum.map(want, &[&1, "\n"]))
      test = self()

      spawn(fn ->
        file = WFile.open!(path, :read, buffer_bytes: 128)
        lines = all_chunks(file, &WFile.read_lines(&1, 7)) |> List.flatten()
        :ok = WFile.close(file)
        send(test, {:lines, lines})
      end)

      assert_receive {:lines, lines}, 10_000
      :erlang.garbage_collect()
      assert lines == want

      file = WFile.open!(path, :read, buffer_bytes: 128)
      kept = for _ <- 1..500, do: WFile.read_line!(file)
      :ok = WFile.close(file)
      :erlang.garbage_collect()
      assert kept == Enum.take(want, 500)
    end

    test "a file without non-blocking reads (procfs) reads through the dirty variant" do
      # preadv2(RWF_NOWAIT) is not supported on procfs: every fill is dirty
      want = File.read!("/proc/version")

      for buffer <- [1, 16, 65_536] do
        file = WFile.open!("/proc/version", :read, buffer_bytes: buffer)
        assert Enum.join(all_lines(file), "\n") == String.trim_trailing(want, "\n")
        :ok = WFile.close(file)
        file = WFile.open!("/proc/version", :read, buffer_bytes: buffer)
        assert IO.iodata_to_binary(all_chunks(file, &WFile.read(&1, 5))) == want
      end
    end

    test "an empty file and a file of empty lines", %{tmp_dir: dir} do
      assert WFile.read_lines(WFile.open!(write_file(dir, "e", ""), :read), 10) == :eof
      file = WFile.open!(write_file(dir, "n", "\n\n\n"), :read)
      assert WFile.read_lines!(file, 10) == ["", "", ""]
      assert WFile.read_lines!(file, 10) == :eof
    end

    test "a non-positive count raises", %{tmp_dir: dir} do
      file = WFile.open!(write_file(dir, "x", "x"), :read)
      assert_raise ArgumentError, ~r/positive integer/, fn -> WFile.read_lines(file, 0) end
    end
  end

  describe "read/2" do
    # with a 1-byte buffer every byte is a refill on a dirty I/O scheduler:
    # the small buffers read a file of 5,003 bytes (a million refills of a
    # 200 kB file passed 300 s on a machine running two CPU-bound processes
    # and another build beside the tests), the large ones 200 kB
    @tag timeout: 300_000
    test "the same bytes as File.read, in chunks of every size", %{tmp_dir: dir} do
      content = :crypto.strong_rand_bytes(200_000)
      large = write_file(dir, "bytes", content)
      small = write_file(dir, "few_bytes", binary_part(content, 0, 5_003))

      for buffer <- [1, 100, 65_536, 1_048_576], size <- [1, 7, 4096, 65_536, 1_000_000] do
        path = if buffer < 4096, do: small, else: large
        file = WFile.open!(path, :read, buffer_bytes: buffer)
        chunks = all_chunks(file, &WFile.read(&1, size))
        assert IO.iodata_to_binary(chunks) == File.read!(path)
        assert Enum.all?(Enum.drop(chunks, -1), &(byte_size(&1) == size))
        assert WFile.read(file, size) == :eof
      end
    end

    test "a 1-byte buffer", %{tmp_dir: dir} do
      path = write_file(dir, "small", "hello\nworld")
      file = WFile.open!(path, :read, buffer_bytes: 1)
      assert WFile.read(file, 3) == {:ok, "hel"}
      assert WFile.read_line(file) == {:ok, "lo"}
      assert WFile.read!(file, 100) == "world"
      assert WFile.read!(file, 1) == :eof
    end

    test "an empty file", %{tmp_dir: dir} do
      assert WFile.read(WFile.open!(write_file(dir, "e", ""), :read), 10) == :eof
    end
  end

  describe "write/2, flush/1, close/1" do
    test "writes reach the file on flush and on close", %{tmp_dir: dir} do
      path = Path.join(dir, "out")
      file = WFile.open!(path, :write, [:create, :truncate])
      assert WFile.write(file, "hello ") == :ok
      assert WFile.write(file, ["wor", ?l, ["d" | "\n"]]) == :ok
      assert File.read!(path) == ""
      assert WFile.flush(file) == :ok
      assert File.read!(path) == "hello world\n"
      assert WFile.write!(file, "more") == :ok
      assert WFile.close(file) == :ok
      assert File.read!(path) == "hello world\nmore"
    end

    test "a 3-byte buffer, writes of every size", %{tmp_dir: dir} do
      path = Path.join(dir, "out3")
      file = WFile.open!(path, :write, [:create, :truncate, buffer_bytes: 3])

      pieces =
        for i <- 1..500 do
          case rem(i, 4) do
            0 -> :crypto.strong_rand_bytes(rem(i, 7))
            1 -> [Integer.to_string(i), ?\n]
            2 -> :crypto.strong_rand_bytes(10_000)
            3 -> ""
          end
        end

      Enum.each(pieces, fn p -> :ok = WFile.write(file, p) end)
      assert WFile.close(file) == :ok
      assert File.read!(path) == IO.iodata_to_binary(pieces)
    end

    test "large iodata and sync", %{tmp_dir: dir} do
      path = Path.join(dir, "large")
      file = WFile.open!(path, :write, [:create, :exclusive, :dsync])
      data = List.duplicate(:crypto.strong_rand_bytes(1000), 5000)
      assert WFile.write(file, data) == :ok
      assert WFile.sync(file) == :ok
      assert File.read!(path) == IO.iodata_to_binary(data)
      assert WFile.close(file) == :ok
    end

    test "every mode and flag open/3 takes, each as the native side decodes it", %{tmp_dir: dir} do
      # the modes and flags travel as atoms that file_nif.c decodes: each one
      # must open, and do what it names
      path = Path.join(dir, "flags")
      assert {:error, :enoent} = WFile.open(path, :write, [:sync])

      for flag <- [:sync, :dsync],
          do: :ok = WFile.close(WFile.open!(path, :write, [:create, flag]))

      assert {:error, :eexist} = WFile.open(path, :write, [:create, :exclusive])
      File.write!(path, "0123456789")
      file = WFile.open!(path, :write, [:truncate, :create, :truncate])
      :ok = WFile.close(file)
      assert File.read!(path) == ""
      :ok = WFile.close(WFile.open!(path, :append, [:dsync]))
      assert {:ok, _} = WFile.open(path, :read, [:sync, :dsync])
    end

    test ":append appends, :write without :truncate overwrites in place", %{tmp_dir: dir} do
      path = write_file(dir, "app", "0123456789")
      file = WFile.open!(path, :append)
      :ok = WFile.write(file, "abc")
      :ok = WFile.close(file)
      assert File.read!(path) == "0123456789abc"
      file = WFile.open!(path, :write)
      :ok = WFile.write(file, "XY")
      :ok = WFile.close(file)
      assert File.read!(path) == "XY23456789abc"
    end

    test "invalid iodata raises", %{tmp_dir: dir} do
      file = WFile.open!(Path.join(dir, "bad"), :write, [:create])
      assert_raise ArgumentError, fn -> WFile.write(file, :not_iodata) end
      assert_raise ArgumentError, fn -> WFile.write(file, [:not_iodata]) end
    end
  end

  describe "stream!/2" do
    test "enumerates lines like File.stream!", %{tmp_dir: dir} do
      content = Enum.map_join(1..5000, fn i -> "#{i}\n" end) <> "\r\nend"
      path = write_file(dir, "stream", content)

      want = want_lines(path)
      assert path |> WFile.stream!() |> Enum.to_list() == want
      assert path |> WFile.stream!(buffer_bytes: 3) |> Enum.take(3) == ["1", "2", "3"]
      # enumerating twice opens the file twice
      assert path |> WFile.stream!() |> Enum.count() == length(want)
    end

    test "collects writes, truncating or appending", %{tmp_dir: dir} do
      path = Path.join(dir, "into")
      stream = WFile.stream!(path, buffer_bytes: 5)
      assert ["a\n", ["b", ?\n], "c"] |> Enum.into(stream) == stream
      assert File.read!(path) == "a\nb\nc"
      assert ["x"] |> Enum.into(WFile.stream!(path)) |> is_struct()
      assert File.read!(path) == "x"
      Enum.into(["y", "z"], WFile.stream!(path, [:append]))
      assert File.read!(path) == "xyz"
    end

    test "a round trip through both directions", %{tmp_dir: dir} do
      src = write_file(dir, "src", Enum.map_join(1..1000, &"#{&1}\n"))
      dst = Path.join(dir, "dst")

      src
      |> WFile.stream!()
      |> Stream.map(&[&1, "!\n"])
      |> Enum.into(WFile.stream!(dst))

      assert File.read!(dst) == Enum.map_join(1..1000, &"#{&1}!\n")
    end

    test "errors raise WellBehaved.File.Error", %{tmp_dir: dir} do
      assert_raise WFile.Error, ~r/could not open .*missing.*no such file/, fn ->
        dir |> Path.join("missing") |> WFile.stream!() |> Enum.to_list()
      end

      assert_raise ArgumentError, fn -> WFile.stream!(Path.join(dir, "x"), [:truncate]) end
    end
  end

  describe "options" do
    test "unknown options and bad values raise ArgumentError", %{tmp_dir: dir} do
      path = write_file(dir, "o", "")

      assert_raise ArgumentError, ~r/unknown option :bogus/, fn ->
        WFile.open(path, :read, [:bogus])
      end

      assert_raise ArgumentError, ~r/unknown option :binary/, fn ->
        WFile.open(path, :read, binary: true)
      end

      assert_raise ArgumentError, ~r/buffer_bytes/, fn ->
        WFile.open(path, :read, buffer_bytes: 0)
      end

      assert_raise ArgumentError, ~r/max_line_bytes/, fn ->
        WFile.open(path, :read, max_line_bytes: -1)
      end

      assert_raise ArgumentError, ~r/invalid mode/, fn -> WFile.open(path, :readwrite) end
      assert_raise ArgumentError, ~r/keyword list/, fn -> WFile.open(path, :read, :create) end
      assert_raise ArgumentError, ~r/not :read/, fn -> WFile.open(path, :read, [:truncate]) end

      assert_raise ArgumentError, ~r/requires :create/, fn ->
        WFile.open(path, :write, [:exclusive])
      end

      assert_raise ArgumentError,
                   ~r/open\/3: invalid path :path, expected a string or a charlist/,
                   fn -> WFile.open(:path, :read) end

      assert_raise ArgumentError, ~r/NUL/, fn -> WFile.open("a\0b", :read) end
      assert_raise ArgumentError, ~r/handle/, fn -> WFile.read_line(:not_a_handle) end
      assert_raise ArgumentError, fn -> WFile.stream!(path, [:bogus]) end
    end
  end

  describe "errors" do
    test "a missing file", %{tmp_dir: dir} do
      path = Path.join(dir, "missing")
      assert WFile.open(path, :read) == {:error, :enoent}
      assert WFile.open(path, :write) == {:error, :enoent}
      assert {:error, :enoent} = :file.open(path, [:read, :raw])

      assert_raise WFile.Error, ~r/could not open .*missing/, fn -> WFile.open!(path, :read) end
    end

    test "an existing file with :exclusive", %{tmp_dir: dir} do
      path = write_file(dir, "exists", "")
      assert WFile.open(path, :write, [:create, :exclusive]) == {:error, :eexist}
    end

    test "a directory", %{tmp_dir: dir} do
      assert WFile.open(dir, :read) == {:error, :eisdir}
      assert WFile.open(dir, :write) == {:error, :eisdir}
      assert WFile.open(dir, :append) == {:error, :eisdir}
      assert {:error, :eisdir} = :file.open(dir, [:write, :raw])
    end

    test "permission denied" do
      # Tests run as root, and root bypasses file permission bits, so a
      # chmod 000 file opens. sysfs refuses to open a read-only attribute
      # for writing even to root: compare with :file as the reference.
      path = "/sys/kernel/uevent_seqnum"

      case :file.open(path, [:write, :raw]) do
        {:error, :eacces} ->
          assert WFile.open(path, :write) == {:error, :eacces}

        other ->
          # no such sysfs here (or not root): an unreadable file instead
          if match?({:ok, _}, other), do: :file.close(elem(other, 1))
          tmp = Path.join(System.tmp_dir!(), "wb_file_eacces_#{System.unique_integer()}")
          File.write!(tmp, "")
          File.chmod!(tmp, 0)

          try do
            assert normalize(WFile.open(tmp, :read)) ==
                     normalize(:file.open(tmp, [:read, :raw]))
          after
            File.rm(tmp)
          end
      end
    end

    test "use after close", %{tmp_dir: dir} do
      path = write_file(dir, "c", "a\nb\n")
      file = WFile.open!(path, :read)
      assert WFile.read_line(file) == {:ok, "a"}
      assert WFile.close(file) == :ok
      assert WFile.read_line(file) == {:error, :closed}
      assert WFile.read_lines(file, 2) == {:error, :closed}
      assert WFile.read(file, 2) == {:error, :closed}
      assert WFile.close(file) == {:error, :closed}
      assert_raise WFile.Error, ~r/closed/, fn -> WFile.read_line!(file) end
      assert_raise WFile.Error, ~r/closed/, fn -> WFile.close!(file) end

      out = WFile.open!(Path.join(dir, "w"), :write, [:create])
      assert WFile.close!(out) == :ok
      assert WFile.write(out, "x") == {:error, :closed}
      assert WFile.flush(out) == {:error, :closed}
      assert WFile.sync(out) == {:error, :closed}
    end

    test "reading a file opened for writing, and the reverse", %{tmp_dir: dir} do
      path = write_file(dir, "rw", "data\n")
      out = WFile.open!(path, :append)
      assert WFile.read_line(out) == {:error, :ebadf}
      assert WFile.read(out, 1) == {:error, :ebadf}
      file = WFile.open!(path, :read)
      assert WFile.write(file, "x") == {:error, :ebadf}
      assert WFile.flush(file) == {:error, :ebadf}
    end
  end

  # an open's outcome, comparable between WellBehaved.File and :file
  defp normalize({:ok, %WFile{} = file}), do: WFile.close(file)

  defp normalize({:ok, io}) do
    :file.close(io)
    :ok
  end

  defp normalize(error), do: error

  describe "concurrency and ownership" do
    test "concurrent readers of one handle get every line exactly once", %{tmp_dir: dir} do
      n = 200_000
      path = write_file(dir, "shared", Enum.map_join(1..n, &"#{&1}\n"))

      for buffer <- [64, 65_536] do
        file = WFile.open!(path, :read, buffer_bytes: buffer)

        lines =
          1..4
          |> Enum.map(fn reader ->
            Task.async(fn ->
              read =
                if rem(reader, 2) == 0, do: &WFile.read_line/1, else: &WFile.read_lines(&1, 7)

              file
              |> all_chunks(read)
              |> List.flatten()
            end)
          end)
          |> Task.await_many(60_000)
          |> List.flatten()

        assert length(lines) == n
        assert lines |> Enum.map(&String.to_integer/1) |> Enum.sort() == Enum.to_list(1..n)
      end
    end

    test "the fd is closed when the owner is killed, on close, and on GC", %{tmp_dir: dir} do
      path = write_file(dir, "owned", "x\n")
      before = open_fds(path)
      test = self()

      owner =
        spawn(fn ->
          {:ok, file} = WFile.open(path, :read)
          send(test, {:opened, file})
          Process.sleep(:infinity)
        end)

      assert_receive {:opened, file}, 10_000
      assert open_fds(path) == before + 1
      Process.exit(owner, :kill)
      # we still hold the handle: the owner's exit alone closes the fd
      eventually(fn -> open_fds(path) == before end)
      assert WFile.read_line(file) == {:error, :closed}

      # close/1 closes now
      file = WFile.open!(path, :read)
      assert open_fds(path) == before + 1
      :ok = WFile.close(file)
      assert open_fds(path) == before

      # dropped by a process that stays alive: the destructor closes it
      holder =
        spawn(fn ->
          {:ok, _file} = WFile.open(path, :read)
          send(test, :opened)

          receive do
            :drop -> :erlang.garbage_collect()
          end

          Process.sleep(:infinity)
        end)

      assert_receive :opened, 10_000
      assert open_fds(path) == before + 1
      send(holder, :drop)
      eventually(fn -> open_fds(path) == before end)
      Process.exit(holder, :kill)
    end

    test "written data is flushed when the owner dies", %{tmp_dir: dir} do
      path = Path.join(dir, "dying")
      test = self()

      owner =
        spawn(fn ->
          file = WFile.open!(path, :write, [:create])
          :ok = WFile.write(file, "buffered")
          send(test, :written)
          Process.sleep(:infinity)
        end)

      assert_receive :written, 10_000
      Process.exit(owner, :kill)
      eventually(fn -> File.read!(path) == "buffered" end)
    end
  end

  describe "long lines" do
    @tag timeout: 300_000
    test "a 64 MB line without newline, then lines after one", %{tmp_dir: dir} do
      big = :binary.copy("L", 64 * 1024 * 1024)
      path = write_file(dir, "long", [big, "\nshort\n", big])
      # past the default limit of 1 MiB: line_too_long, until lifted
      assert WFile.read_line(WFile.open!(path, :read)) == {:error, :line_too_long}
      file = WFile.open!(path, :read, buffer_bytes: 4096, max_line_bytes: :infinity)
      assert {:ok, line} = WFile.read_line(file)
      assert line == big
      assert WFile.read_lines(file, 10) == {:ok, ["short"]}
      assert {:ok, [^big]} = WFile.read_lines(file, 10)
      assert WFile.read_line(file) == :eof
    end

    test "max_line_bytes", %{tmp_dir: dir} do
      path = write_file(dir, "limit", ["ok\n", :binary.copy("x", 100_000), "\nafter\n"])
      file = WFile.open!(path, :read, buffer_bytes: 16, max_line_bytes: 1000)
      assert WFile.read_line(file) == {:ok, "ok"}
      assert WFile.read_line(file) == {:error, :line_too_long}
      assert WFile.read_lines(file, 3) == {:error, :line_too_long}
      assert_raise WFile.Error, ~r/longer than max_line_bytes/, fn -> WFile.read_line!(file) end

      exact = write_file(dir, "exact", [:binary.copy("y", 1000), "\n", :binary.copy("z", 1001)])
      file = WFile.open!(exact, :read, buffer_bytes: 16, max_line_bytes: 1000)
      assert {:ok, line} = WFile.read_line(file)
      assert byte_size(line) == 1000
      assert WFile.read_line(file) == {:error, :line_too_long}
    end
  end

  test "a non-ASCII path", %{tmp_dir: dir} do
    path = Path.join(dir, "héllo wörld ✓ 日本.txt")
    :ok = WFile.write!(out = WFile.open!(path, :write, [:create]), "ünïcode\n")
    :ok = WFile.close(out)
    assert File.read!(path) == "ünïcode\n"
    assert File.ls!(dir) |> Enum.member?("héllo wörld ✓ 日本.txt")
    assert path |> WFile.open!(:read) |> WFile.read_line() == {:ok, "ünïcode"}
    assert path |> String.to_charlist() |> WFile.open!(:read) |> WFile.read_line!() == "ünïcode"
  end
end
