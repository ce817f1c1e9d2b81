defmodule WellBehaved.Lab.Application do
  @moduledoc false
  # The lab's out-of-process echo methods (port program owners, the C
  # node's server, the driver's server) start on first use under this
  # supervisor.
  use Application

  @impl true
  def start(_type, _args) do
    # Spin's runtimes (C and Rust) get this VM's slice if their NIFs
    # loaded while the lab compiled, in this VM (as in `mix test`)
    :ok = WellBehaved.Runtime.calibrate(WellBehaved.Lab.Native)
    :ok = WellBehaved.Runtime.calibrate(WellBehaved.Lab.RustNative)
    children = [{DynamicSupervisor, name: WellBehaved.Lab.Supervisor, strategy: :one_for_one}]
    Supervisor.start_link(children, strategy: :one_for_one, name: WellBehaved.Lab.RootSupervisor)
  end
end
