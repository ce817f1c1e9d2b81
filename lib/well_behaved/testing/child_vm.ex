defmodule WellBehaved.Testing.ChildVM do
  @moduledoc """
  Runs a function in a VM of its own (a separate OS process) with a hard
  time bound: for tests and benchmarks of native code that may hold a
  scheduler, abort the VM or exhaust its memory. The lab runs every
  experiment this way.

  A VM whose schedulers are hogged by long normal NIFs does not act on
  SIGTERM, so the bound is enforced by SIGKILL from outside the VM: the
  child is started under coreutils `timeout --signal=KILL`, which also puts
  it in a process group of its own and kills the whole group, so the bound
  holds even if the lab's own VM dies first. An experiment that hits its
  bound is a result (`{:timeout, ms}`), not an error of the caller.

  The child runs `apply(module, function, args)` and writes the return
  value to a file, which the parent reads back.
  """

  @type result ::
          {:ok, term()}
          | {:timeout, pos_integer()}
          | {:crashed, integer(), String.t()}

  @type handle :: %{
          port: port(),
          dir: Path.t(),
          bound_ms: pos_integer(),
          output: [binary()]
        }

  @doc """
  Runs `{module, function, args}` in a child VM and waits for its result.

  Options:

    * `bound_ms:` (required) - the child is SIGKILLed after this long.
    * `erl_flags:` - emulator flags for the child, e.g. `["+S", "2:2"]`.
    * `env:` - extra environment variables, `[{"NAME", "value"}]`.
    * `start:` - the applications the child starts before the call
      (default `[:well_behaved]`); the child has the parent's code paths.
  """
  @spec run({module(), atom(), list()}, keyword()) :: result()
  def run(mfa, opts) do
    mfa |> start(opts) |> await()
  end

  @doc """
  Starts the experiment and returns at once; see `await/1`. `ready_file/1`
  names a file the child may create to tell the parent it is ready (used by
  experiments that need load from outside, such as HTTP).
  """
  @spec start({module(), atom(), list()}, keyword()) :: handle()
  def start({module, function, args}, opts) do
    bound_ms = Keyword.fetch!(opts, :bound_ms)
    dir = Path.join(System.tmp_dir!(), "wb_child_#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)
    apps = Keyword.get(opts, :start, [:well_behaved])
    File.write!(Path.join(dir, "spec"), :erlang.term_to_binary({apps, {module, function, args}}))

    timeout = System.find_executable("timeout") || raise "coreutils `timeout` is required"
    erl = System.find_executable("erl") || raise "`erl` is not on PATH"
    bound_s = :erlang.float_to_binary(bound_ms / 1000, decimals: 3)

    args =
      ["--signal=KILL", bound_s, erl, "-noshell", "-noinput"] ++
        Keyword.get(opts, :erl_flags, []) ++
        Enum.flat_map(code_paths(), &["-pa", &1]) ++
        ["-eval", "'Elixir.WellBehaved.Testing.ChildVM':child_main()."]

    # a crashed child reports through its output; no erl_crash.dump files
    env =
      [{~c"WB_CHILD_DIR", String.to_charlist(dir)}, {~c"ERL_CRASH_DUMP_SECONDS", ~c"0"}] ++
        charlist_env(opts[:env] || [])

    port =
      Port.open({:spawn_executable, timeout}, [
        :binary,
        :exit_status,
        :stderr_to_stdout,
        args: args,
        env: env
      ])

    %{port: port, dir: dir, bound_ms: bound_ms, output: []}
  end

  @doc "The file whose existence tells the parent that the child is ready."
  @spec ready_file(handle() | Path.t()) :: Path.t()
  def ready_file(%{dir: dir}), do: Path.join(dir, "ready")
  def ready_file(dir) when is_binary(dir), do: Path.join(dir, "ready")

  @doc """
  Waits until `ready_file/1` exists, the child exits, or `limit_ms` passes.
  Returns `:ready`, `:exited` or `:timeout`.
  """
  @spec await_ready(handle(), non_neg_integer()) :: :ready | :exited | :timeout
  def await_ready(handle, limit_ms) do
    deadline = System.monotonic_time(:millisecond) + limit_ms
    poll_ready(handle, deadline)
  end

  defp poll_ready(handle, deadline) do
    cond do
      File.exists?(ready_file(handle)) ->
        :ready

      not port_alive?(handle.port) ->
        :exited

      System.monotonic_time(:millisecond) > deadline ->
        :timeout

      true ->
        Process.sleep(20)
        poll_ready(handle, deadline)
    end
  end

  defp port_alive?(port), do: Port.info(port) != nil

  @doc "Waits for the child started by `start/2` and returns its result."
  @spec await(handle()) :: result()
  def await(%{port: port, dir: dir, bound_ms: bound_ms} = handle) do
    # the child is killed at bound_ms; waiting a little longer only covers
    # VM start-up and the kill itself
    status = collect(port, handle.output, bound_ms + 10_000)
    result = read_result(dir, status, bound_ms)
    File.rm_rf(dir)
    result
  end

  defp collect(port, output, limit_ms) do
    receive do
      {^port, {:data, data}} -> collect(port, keep_tail([data | output]), limit_ms)
      {^port, {:exit_status, status}} -> {status, output}
    after
      limit_ms ->
        # `timeout` did not end the child in time: this should not happen,
        # but the lab must never hang
        {:os_pid, os_pid} = Port.info(port, :os_pid) || {:os_pid, nil}
        # `--` before the negative pid (the group): procps kill reads
        # `-KILL -PID` as pid -1, which as root signals every process
        if os_pid,
          do: System.cmd("kill", ["-s", "KILL", "--", "-#{os_pid}"], stderr_to_stdout: true)

        {137, output}
    end
  end

  defp keep_tail(chunks) do
    if IO.iodata_length(chunks) > 16_384, do: Enum.take(chunks, 8), else: chunks
  end

  defp read_result(dir, {status, output}, bound_ms) do
    text = output |> Enum.reverse() |> IO.iodata_to_binary()

    case {status, File.read(Path.join(dir, "result"))} do
      {0, {:ok, bin}} -> {:ok, :erlang.binary_to_term(bin)}
      # `timeout` exits 137 when its KILL ended the child
      {137, _} -> {:timeout, bound_ms}
      {other, _} -> {:crashed, other, String.slice(text, -4000, 4000)}
    end
  end

  # Code paths of this VM that the child would not find by itself: the
  # project's and Elixir's, not OTP's own.
  defp code_paths do
    root = List.to_string(:code.root_dir())

    :code.get_path()
    |> Enum.map(&List.to_string/1)
    |> Enum.reject(&(String.starts_with?(&1, root) or &1 == "."))
  end

  defp charlist_env(env) do
    Enum.map(env, fn {k, v} -> {String.to_charlist(k), String.to_charlist(v)} end)
  end

  @doc false
  # Entry point in the child VM.
  def child_main do
    dir = System.fetch_env!("WB_CHILD_DIR")

    {apps, {module, function, args}} =
      dir |> Path.join("spec") |> File.read!() |> :erlang.binary_to_term()

    for app <- apps, do: {:ok, _} = Application.ensure_all_started(app)

    try do
      result = apply(module, function, args)
      tmp = Path.join(dir, "result.tmp")
      File.write!(tmp, :erlang.term_to_binary(result))
      File.rename!(tmp, Path.join(dir, "result"))
      :erlang.halt(0, flush: false)
    catch
      kind, reason ->
        IO.puts(:stderr, Exception.format(kind, reason, __STACKTRACE__))
        :erlang.halt(1, flush: true)
    end
  end
end
