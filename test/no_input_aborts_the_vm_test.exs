defmodule WellBehaved.NoInputAbortsTheVMTest do
  # Inputs that used to abort the whole VM (an allocation sized by the caller
  # that could not fail) and paths that held a normal scheduler, each run in
  # a child VM bounded by SIGKILL: an abort or a hang there fails the test
  # instead of the test run.
  use ExUnit.Case, async: false

  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 180_000

  # The child limits its own address space to what it uses now plus 512 MiB
  # (prlimit on its own pid), then asks for more than that.
  @memory_scenario """
  alias WellBehaved.File, as: WFile
  pid = List.to_string(:os.getpid())
  [size_kb] = Regex.run(~r/VmSize:\\s+(\\d+) kB/, File.read!("/proc/\#{pid}/status"), capture: :all_but_first)
  limit = String.to_integer(size_kb) * 1024 + 512 * 1024 * 1024
  {_, 0} = System.cmd("prlimit", ["--pid", pid, "--as=\#{limit}"])

  path = Path.join(System.tmp_dir!(), "wb_enomem_\#{pid}.txt")
  File.write!(path, "one\\n")

  # a 1 GiB buffer does not fit: {:error, :enomem}, and the handle still works
  {:ok, f} = WFile.open(path, :read, buffer_bytes: 1024 * 1024 * 1024)
  big_buffer = WFile.read_line(f)
  big_buffer_again = WFile.read_line(f)
  closed = WFile.close(f)

  # an endless line with the default limit: line_too_long, long before memory runs out
  {:ok, z} = WFile.open("/dev/zero", :read)
  default_limit = WFile.read_line(z)
  :ok = WFile.close(z)

  # an endless line without a limit: the buffer grows until memory runs out
  {:ok, z} = WFile.open("/dev/zero", :read, max_line_bytes: :infinity)
  no_limit = WFile.read_line(z)
  :ok = WFile.close(z)

  # a read larger than memory from a file that cannot say its size
  {:ok, z} = WFile.open("/dev/zero", :read)
  huge_read = WFile.read(z, 2 ** 40)
  small_read = WFile.read(z, 3)
  :ok = WFile.close(z)

  File.rm!(path)
  still_alive = WellBehaved.Levenshtein.distance("kitten", "sitting")
  {big_buffer, big_buffer_again, closed, default_limit, no_limit, huge_read, small_read, still_alive}
  """

  test "allocations sized by the caller or the input fail with :enomem, and the VM lives" do
    assert {:ok, {result, _binding}} =
             ChildVM.run({Code, :eval_string, [@memory_scenario]}, bound_ms: 120_000)

    assert result ==
             {{:error, :enomem}, {:error, :enomem}, :ok, {:error, :line_too_long},
              {:error, :enomem}, {:error, :enomem}, {:ok, <<0, 0, 0>>}, 3}
  end

  # Candidates that do not fit in what is left (the limit is set once the
  # 150 MB binary is made; four of it are to be copied): the search and the
  # index answer {:error, :enomem} (the README's Errors section), and the
  # VM lives.
  @search_memory_scenario """
  big = :binary.copy(<<7>>, 150 * 1024 * 1024)
  pid = List.to_string(:os.getpid())
  [size_kb] = Regex.run(~r/VmSize:\\s+(\\d+) kB/, File.read!("/proc/\#{pid}/status"), capture: :all_but_first)
  limit = String.to_integer(size_kb) * 1024 + 512 * 1024 * 1024
  {_, 0} = System.cmd("prlimit", ["--pid", pid, "--as=\#{limit}"])
  alias WellBehaved.Levenshtein
  released = fn -> WellBehaved.Runtime.stats().released_later end
  before = released.()
  result =
    {Levenshtein.distances("a", [big, big, big, big]), Levenshtein.nearest("a", ["b", big, big, big, big]),
     Levenshtein.Index.new([big, big, big, big]), Levenshtein.nearest("ab", ["b", "ab"], limit: 1),
     WellBehaved.Runtime.stats().live_jobs}
  # the copies made before memory ran out are released by the runtime's
  # thread as soon as the packing fails (unmapping them takes a while)
  wait = fn wait, n -> if released.() > before or n == 0, do: released.() > before, else: (Process.sleep(10); wait.(wait, n - 1)) end
  released_some = wait.(wait, 1000)
  # the child returns its bindings too: not the 150 MB binary, which would
  # need as much again, before all the copies are unmapped, to be sent back
  big = nil
  {result, released_some}
  """

  test "candidates beyond the memory left answer {:error, :enomem}, and the VM lives" do
    assert {:ok, {result, _binding}} =
             ChildVM.run({Code, :eval_string, [@search_memory_scenario]}, bound_ms: 120_000)

    assert result ==
             {{{:error, :enomem}, {:error, :enomem}, {:error, :enomem}, [{"ab", 0}], 0}, true}
  end

  # One normal scheduler. The owner of a handle exits while another process
  # waits in a read of a FIFO (on a dirty I/O scheduler, holding the handle's
  # mutex). The exit must not wait for that mutex on the only normal
  # scheduler: if it did, the writer below could never run, and the read
  # never end.
  @owner_exit_scenario """
  alias WellBehaved.File, as: WFile
  fifo = Path.join(System.tmp_dir!(), "wb_fifo_\#{:os.getpid()}")
  {_, 0} = System.cmd("mkfifo", [fifo])
  parent = self()

  writer = spawn(fn ->
    {:ok, out} = File.open(fifo, [:write, :raw])
    receive do :write -> :ok = :file.write(out, "late line\\n") end
    receive do :close -> File.close(out) end
  end)

  owner = spawn(fn ->
    {:ok, f} = WFile.open(fifo, :read)
    send(parent, {:handle, f})
    receive do :never -> :ok end
  end)

  f = receive do {:handle, f} -> f end
  # the VM's threads blocked reading a pipe (the kernel names the wait
  # pipe_read, anon_pipe_read, or before 5.10 pipe_wait): the reader's dirty scheduler adds one
  # once it is inside read(2), holding the handle; its process being in
  # the dirty NIF is not enough (it can still wait for a dirty scheduler)
  os_pid = List.to_string(:os.getpid())
  in_pipe = fn ->
    Enum.count(File.ls!("/proc/\#{os_pid}/task"), fn t ->
      case File.read("/proc/\#{os_pid}/task/\#{t}/wchan") do
        {:ok, w} -> String.contains?(w, "pipe_read") or String.contains?(w, "pipe_wait")
        _ -> false
      end
    end)
  end
  base = in_pipe.()
  reader = Task.async(fn -> WFile.read_line(f) end)
  # the owner goes once the reader waits inside the read, holding the
  # handle; a kernel that names no wait (wchan "0" in some sandboxes, or
  # another name) gets 10 s in the NIF instead
  in_read = fn in_read, tries ->
    case {Process.info(reader.pid, :current_function), in_pipe.() > base or tries == 0} do
      {{:current_function, {WellBehaved.Native, :file_read_line_dirty, 1}}, true} -> :ok
      _ -> Process.sleep(10); in_read.(in_read, max(tries - 1, 0))
    end
  end
  in_read.(in_read, 1000)
  owner_ref = Process.monitor(owner)
  Process.exit(owner, :kill)
  receive do {:DOWN, ^owner_ref, :process, _, _} -> :ok end
  send(writer, :write)
  line = Task.await(reader, 20_000)
  after_owner = WFile.read_line(f)
  send(writer, :close)
  File.rm!(fifo)
  {line, after_owner}
  """

  test "a handle's owner exiting while a call holds the handle never blocks a scheduler" do
    assert {:ok, {result, _binding}} =
             ChildVM.run({Code, :eval_string, [@owner_exit_scenario]},
               bound_ms: 60_000,
               erl_flags: ["+S", "1:1"]
             )

    assert result == {{:ok, "late line"}, {:error, :closed}}
  end
end
