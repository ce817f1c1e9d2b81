defmodule WellBehaved.Application do
  @moduledoc false
  # The external server pool (WellBehaved.External) starts on first use
  # under this supervisor.
  use Application

  @impl true
  def start(_type, _args) do
    children = [
      {DynamicSupervisor, name: WellBehaved.Supervisor, strategy: :one_for_one}
    ]

    Supervisor.start_link(children, strategy: :one_for_one, name: WellBehaved.RootSupervisor)
  end
end
