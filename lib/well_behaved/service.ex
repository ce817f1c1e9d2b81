defmodule WellBehaved.Service do
  @moduledoc """
  Lazily started, named services under a `DynamicSupervisor`: the first
  caller starts one, concurrent callers get the same one. The external
  server pool starts this way under `WellBehaved.Supervisor`; the lab's
  out-of-process echo methods under its own supervisor.
  """

  @doc """
  The pid of the service registered as `name` under `supervisor`, starting
  `child_spec` if needed.
  """
  @spec ensure_started(
          Supervisor.supervisor(),
          atom(),
          Supervisor.child_spec() | {module(), term()} | module()
        ) :: {:ok, pid()} | {:error, term()}
  def ensure_started(supervisor, name, child_spec) do
    case Process.whereis(name) do
      nil ->
        case DynamicSupervisor.start_child(supervisor, child_spec) do
          {:ok, pid} -> {:ok, pid}
          {:error, {:already_started, pid}} -> {:ok, pid}
          {:error, _} = error -> error
        end

      pid ->
        {:ok, pid}
    end
  end

  @doc "Stops the service registered as `name` under `supervisor`, if running."
  @spec stop(Supervisor.supervisor(), atom()) :: :ok
  def stop(supervisor, name) do
    case Process.whereis(name) do
      nil ->
        :ok

      pid ->
        _ = DynamicSupervisor.terminate_child(supervisor, pid)
        :ok
    end
  end
end
