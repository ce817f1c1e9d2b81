defmodule Checksum.Application do
  @moduledoc false
  # The pool of checksum_server programs that `schedule: :external` uses,
  # under this application's supervisor: started with the application (and
  # in a release), with the options Checksum.Native declares.
  use Application

  @impl true
  def start(_type, _args) do
    children = [{WellBehaved.External, Checksum.Native.__wb_external__()}]
    Supervisor.start_link(children, strategy: :one_for_one, name: Checksum.Supervisor)
  end
end
