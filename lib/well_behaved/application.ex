defmodule WellBehaved.Application do
  @moduledoc false
  # The external server pool (WellBehaved.External) starts on first use
  # under this supervisor; the library's runtime gets this VM's slice, and
  # every runtime a shorter one if a later measure finds it.
  use Application

  @impl true
  def start(_type, _args) do
    # the library's NIF may have loaded while the library compiled, before
    # the calibration could be made (in `mix test`, say)
    :ok = WellBehaved.Runtime.calibrate()

    children = [
      # chooses where events go, and turns them on while something listens
      WellBehaved.Telemetry,
      {DynamicSupervisor, name: WellBehaved.Supervisor, strategy: :one_for_one},
      # measures the Erlang turn again over the first seconds (a machine
      # slowed down when the VM started gave too long a slice)
      WellBehaved.Runtime.Calibration
    ]

    Supervisor.start_link(children, strategy: :one_for_one, name: WellBehaved.RootSupervisor)
  end
end
