defmodule WellBehaved.Lab.HttpLoad.Runner do
  @moduledoc """
  One case of the HTTP-under-load suite, parent side: starts the case's
  child VM (`WellBehaved.Lab.HttpLoad.Child`), loads its server with wrk
  once it is ready, ends its window, kills it if its workers keep it from
  ending, and puts wrk's and the child's figures into one entry.
  """

  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.HttpLoad.{Child, Plan, Wrk}

  @ready_limit_ms 20_000
  @stop_grace_ms 3_000
  # a mark on the child's command line, so that tests can look for leftovers
  @child_mark "-wb_http_load_child"

  @doc """
  Runs case `name` (`:idle` or a scheduling mode) with `plan` and returns
  its entry: wrk's figures, `case:`, `mode:`, `server:` (`"ready"` or why
  not) and `child:` (the child's figures and `status:`).
  """
  @spec run_case(atom(), Plan.t()) :: map()
  def run_case(name, plan) do
    # the child's own window is a fallback: the parent ends it with a file
    window_ms = (plan.duration_s + Wrk.timeout_s() + 5) * 1000
    bound_ms = @ready_limit_ms + Plan.warmup_ms() + window_ms + @stop_grace_ms

    handle =
      ChildVM.start({Child, :run, [name, plan.iterations, window_ms]},
        bound_ms: bound_ms,
        erl_flags: [@child_mark]
      )

    {wrk, ready} =
      case ChildVM.await_ready(handle, @ready_limit_ms) do
        :ready ->
          port = read_port(handle)
          Process.sleep(Plan.warmup_ms())
          {Wrk.run(plan, port), "ready"}

        other ->
          {Wrk.empty(), Atom.to_string(other)}
      end

    # ends the child's window; a child hogged by its workers may not notice
    # for long, so after a grace period its VM is killed
    _ = File.write(Path.join(handle.dir, "stop"), "")
    killed = stop_child(handle, @stop_grace_ms)
    child = child_entry(ChildVM.await(handle), killed)

    Map.merge(wrk, %{
      case: Atom.to_string(name),
      mode: if(name == :idle, do: nil, else: name),
      server: ready,
      child: child
    })
  end

  # true if the child had to be killed
  defp stop_child(handle, grace_ms) do
    deadline = System.monotonic_time(:millisecond) + grace_ms
    wait_exit(handle.port, deadline)
  end

  defp wait_exit(port, deadline) do
    cond do
      Port.info(port) == nil ->
        false

      System.monotonic_time(:millisecond) >= deadline ->
        kill_child_vm(port)

      true ->
        Process.sleep(20)
        wait_exit(port, deadline)
    end
  end

  # Kills the child's VM: the beam process(es) whose parent is the port's
  # `timeout` process, by positive pid only. `timeout` then exits (137) and
  # ChildVM sees the end of the child as usual.
  #
  # Never `kill -KILL -PGID`: procps-ng's kill (Debian 12) misparses a
  # negative pid after a signal option and may send the signal to pid -1,
  # that is to every process the user may signal.
  defp kill_child_vm(port) do
    with {:os_pid, timeout_pid} when is_integer(timeout_pid) and timeout_pid > 1 <-
           Port.info(port, :os_pid),
         {out, _} <- System.cmd("pgrep", ["-P", Integer.to_string(timeout_pid)]),
         pids when pids != [] <- positive_pids(out) do
      System.cmd("kill", ["-s", "KILL", "--" | pids], stderr_to_stdout: true)
      true
    else
      _ -> false
    end
  end

  defp positive_pids(text) do
    for line <- String.split(text, "\n", trim: true),
        {pid, ""} <- [Integer.parse(String.trim(line))],
        pid > 1,
        do: Integer.to_string(pid)
  end

  defp read_port(handle) do
    handle |> ChildVM.ready_file() |> File.read!() |> String.trim() |> String.to_integer()
  end

  defp child_entry({:ok, measurements}, _killed), do: Map.put(measurements, :status, "ok")

  defp child_entry({:timeout, _ms}, true),
    do: %{status: "hogged: killed #{div(@stop_grace_ms, 1000)} s after the load"}

  defp child_entry({:timeout, ms}, false), do: %{status: "killed at its #{ms} ms bound"}

  defp child_entry({:crashed, status, output}, _killed),
    do: %{status: "crashed (exit status #{status})", output: output}
end
