defmodule WellBehaved.Lab.Echo.ExternalJob do
  @moduledoc """
  Echo through a job of the lab's own NIF library (the echo job of
  `:threaded`) run with `schedule: :external`: in a server program built
  from the same job types (`priv/wb_lab_server`), as any user's library
  builds one with the SDK, in a pool with the built-in pool's defaults.
  Against `:external` (the built-in server's own echo request) it shows
  what the SDK's server adds: decoding the job's arguments into terms and
  encoding its result, where the built-in echo sends the request's bytes
  back.
  """

  alias WellBehaved.{External, Job}
  alias WellBehaved.Lab.Native

  @doc "The term after a round trip, or `{:error, reason}`."
  @spec echo(term()) :: term()
  def echo(term), do: Job.call(&Native.echo_job/4, [term], schedule: :external)

  @doc "Stops the pool."
  @spec stop() :: :ok
  def stop, do: External.stop(Keyword.fetch!(Native.__wb_external__(), :name))
end
