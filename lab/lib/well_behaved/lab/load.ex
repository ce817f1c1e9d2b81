defmodule WellBehaved.Lab.Load do
  @moduledoc """
  A loaded machine on demand: `start/2` runs CPU-bound OS processes
  (`priv/wb_burn`, one busy CPU each) beside the VM, `stop/1` ends them.
  Each is a port program, so it ends when its port closes or the VM dies,
  and after `max_seconds` whatever happens: a run that loads the machine
  cannot leave it loaded.
  """

  @typedoc "The burners of `start/2`."
  @opaque t :: [port()]

  @doc """
  Starts `count` burners, each ending after `max_seconds` at the latest.

      iex> load = WellBehaved.Lab.Load.start(1, 5)
      iex> WellBehaved.Lab.Load.stop(load)
      :ok
  """
  @spec start(pos_integer(), pos_integer()) :: t()
  def start(count, max_seconds)
      when is_integer(count) and count > 0 and is_integer(max_seconds) and max_seconds > 0 and
             max_seconds <= 3600 do
    exe = Path.join(:code.priv_dir(:well_behaved_lab), "wb_burn")

    for _ <- 1..count do
      Port.open({:spawn_executable, exe}, [:binary, :exit_status, args: [to_string(max_seconds)]])
    end
  end

  def start(count, max_seconds) do
    raise ArgumentError,
          "WellBehaved.Lab.Load.start/2: expected a count above 0 and 1..3600 seconds, got: " <>
            inspect({count, max_seconds})
  end

  @doc "The burners' OS pids (those still running)."
  @spec os_pids(t()) :: [pos_integer()]
  def os_pids(load) do
    for port <- load, {:os_pid, pid} <- [Port.info(port, :os_pid)], do: pid
  end

  @doc "Ends the burners (each sees its stdin close within about a millisecond)."
  @spec stop(t()) :: :ok
  def stop(load) do
    pids = os_pids(load)
    for port <- load, do: WellBehaved.OSProcess.close_port(port)
    for pid <- pids, do: WellBehaved.OSProcess.stop(pid, 2_000)
    :ok
  end
end
