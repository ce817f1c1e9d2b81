defmodule WellBehaved.OSProcess do
  @moduledoc """
  The OS processes behind ports (port programs, C nodes, the external
  servers): whether one still runs, and stopping it for sure.
  """

  @poll_ms 5
  @after_kill_ms 1_000

  @doc """
  Whether `os_pid` still runs. A zombie (or a dead process not yet gone)
  has exited: the VM's child reaper is about to collect it.
  """
  @spec alive?(integer()) :: boolean()
  def alive?(os_pid) do
    case File.read("/proc/#{os_pid}/stat") do
      # "PID (COMMAND) STATE ...": the state follows the last ") ", and the
      # command itself may hold ") "
      {:ok, stat} ->
        case :binary.matches(stat, ") ") do
          [] -> true
          matches -> :binary.at(stat, elem(List.last(matches), 0) + 2) not in [?Z, ?X]
        end

      {:error, :enoent} ->
        false

      # no /proc: ask the kernel
      {:error, _} ->
        match?({_, 0}, System.cmd("kill", ["-0", to_string(os_pid)], stderr_to_stdout: true))
    end
  end

  @doc "Closes `port` (its program sees end of input); `:ok` if it is already closed."
  @spec close_port(port()) :: :ok
  def close_port(port) do
    Port.close(port)
    :ok
  rescue
    ArgumentError -> :ok
  end

  @doc "Sends SIGKILL to `os_pid`: a positive pid only, never a process group."
  @spec kill(integer() | nil) :: :ok
  def kill(os_pid) when is_integer(os_pid) and os_pid > 1 do
    System.cmd("kill", ["-s", "KILL", "--", Integer.to_string(os_pid)], stderr_to_stdout: true)
    :ok
  end

  def kill(_), do: :ok

  @doc """
  Sends SIGKILL to each of `os_pids` in one `kill` command (positive pids
  only, others skipped, never a process group).
  """
  @spec kill_all([integer() | nil]) :: :ok
  def kill_all(os_pids) do
    case for(pid <- os_pids, is_integer(pid) and pid > 1, do: Integer.to_string(pid)) do
      [] -> :ok
      pids -> System.cmd("kill", ["-s", "KILL", "--" | pids], stderr_to_stdout: true)
    end

    :ok
  end

  @doc """
  Waits up to `wait_ms` for `os_pid` to exit (`running?` says whether it
  still runs: `alive?/1` unless given), then kills it and waits up to one
  more second. Returns `:ok` or `:still_running`.
  """
  @spec stop(integer(), non_neg_integer(), (integer() -> boolean())) :: :ok | :still_running
  def stop(os_pid, wait_ms, running? \\ &alive?/1) do
    with :timeout <- await_exit(os_pid, wait_ms, running?),
         :ok <- kill(os_pid),
         :timeout <- await_exit(os_pid, @after_kill_ms, running?) do
      :still_running
    end
  end

  defp await_exit(os_pid, wait_ms, running?) do
    cond do
      not running?.(os_pid) ->
        :ok

      wait_ms <= 0 ->
        :timeout

      true ->
        Process.sleep(@poll_ms)
        await_exit(os_pid, wait_ms - @poll_ms, running?)
    end
  end
end
