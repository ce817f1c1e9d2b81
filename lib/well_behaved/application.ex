defmodule WellBehaved.Application do
  @moduledoc false
  # Out-of-process components (port programs, the C node, the external
  # server pool) start on first use under this supervisor.
  use Application

  @impl true
  def start(_type, _args) do
    children = [
      {DynamicSupervisor, name: WellBehaved.Supervisor, strategy: :one_for_one}
    ]

    Supervisor.start_link(children, strategy: :one_for_one, name: WellBehaved.RootSupervisor)
  end
end
