defmodule HashSort.Application do
  @moduledoc false
  # The pool of hash_sort_server programs that `schedule: :external` uses,
  # under this application's supervisor, with the options HashSort.Native
  # declares.
  use Application

  @impl true
  def start(_type, _args) do
    children = [{WellBehaved.External, HashSort.Native.__wb_external__()}]
    Supervisor.start_link(children, strategy: :one_for_one, name: HashSort.Supervisor)
  end
end
