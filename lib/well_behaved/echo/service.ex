defmodule WellBehaved.Echo.Service do
  @moduledoc false
  # Lazily started, named services under WellBehaved.Supervisor: the first
  # caller starts one, concurrent callers get the same one.

  @doc "The pid of the service registered as `name`, starting `child_spec` if needed."
  @spec ensure_started(atom(), Supervisor.child_spec() | {module(), term()} | module()) ::
          {:ok, pid()} | {:error, term()}
  def ensure_started(name, child_spec) do
    case Process.whereis(name) do
      nil ->
        case DynamicSupervisor.start_child(WellBehaved.Supervisor, child_spec) do
          {:ok, pid} -> {:ok, pid}
          {:error, {:already_started, pid}} -> {:ok, pid}
          {:error, _} = error -> error
        end

      pid ->
        {:ok, pid}
    end
  end

  @doc "Stops the service registered as `name`, if running."
  @spec stop(atom()) :: :ok
  def stop(name) do
    case Process.whereis(name) do
      nil ->
        :ok

      pid ->
        DynamicSupervisor.terminate_child(WellBehaved.Supervisor, pid) |> then(fn _ -> :ok end)
    end
  end
end
