defmodule WellBehaved.Lab.Echo do
  @moduledoc """
  Every way of calling native code from the VM, as an echo: `echo/2` sends
  a term through a method and returns it unchanged, so a round trip costs
  the mechanism alone. The lab's latency suite times them.

  | method | mechanism |
  | --- | --- |
  | `:nif` | a NIF call |
  | `:dirty_cpu`, `:dirty_io` | a NIF on a dirty CPU / dirty IO scheduler |
  | `:yielding` | a NIF that returns through one `enif_schedule_nif` hop |
  | `:thread_new` | a native thread per call; the reply comes by `enif_send` |
  | `:threaded` | the runtime's thread pool (`schedule: :threaded`) |
  | `:driver_call`, `:driver_control`, `:driver_outputv` | a port driver, by `:erlang.port_call/3`, `:erlang.port_control/3` and `Port.command/2` |
  | `:port` | an external program over stdio with `{:packet, 4}` |
  | `:cnode` | a C node written with `ei`, over Erlang distribution |
  | `:external` | a pool of external servers on Unix sockets (`WellBehaved.External`) |
  | `:external_job` | the `:threaded` echo job in a server of the lab's job types (`schedule: :external`) |

  The out-of-process methods start what they need on first use and stop it
  with `stop/0`. When their program crashes, the caller gets
  `{:error, reason}` and the VM keeps running.

      iex> WellBehaved.Lab.Echo.echo({:hello, [1, 2.0, "three"]}, :nif)
      {:hello, [1, 2.0, "three"]}
  """

  alias WellBehaved.{Job, Options}
  alias WellBehaved.Lab.Native

  @in_vm [:nif, :dirty_cpu, :dirty_io, :yielding, :thread_new, :threaded]
  # out-of-process methods: the module that implements each
  @remote %{
    driver_call: WellBehaved.Lab.Echo.Driver,
    driver_control: WellBehaved.Lab.Echo.Driver,
    driver_outputv: WellBehaved.Lab.Echo.Driver,
    port: WellBehaved.Lab.Echo.PortProgram,
    cnode: WellBehaved.Lab.Echo.CNode,
    external: WellBehaved.External,
    external_job: WellBehaved.Lab.Echo.ExternalJob
  }
  @methods @in_vm ++
             [
               :driver_call,
               :driver_control,
               :driver_outputv,
               :port,
               :cnode,
               :external,
               :external_job
             ]

  @type method ::
          :nif
          | :dirty_cpu
          | :dirty_io
          | :yielding
          | :thread_new
          | :threaded
          | :driver_call
          | :driver_control
          | :driver_outputv
          | :port
          | :cnode
          | :external
          | :external_job

  @doc "Every echo method, fastest mechanisms first."
  @spec methods() :: [method()]
  def methods, do: @methods

  @doc "Whether `method` can run in this build."
  @spec available?(method()) :: boolean()
  def available?(method) when method in @in_vm, do: true

  def available?(method) when is_map_key(@remote, method),
    do: Code.ensure_loaded?(Map.fetch!(@remote, method))

  def available?(_method), do: false

  @doc """
  Returns `term` after a round trip through `method`, or `{:error, reason}`
  when an out-of-process method's program failed. Raises `ArgumentError`
  for an unknown method.
  """
  @spec echo(term(), method()) :: term() | {:error, term()}
  def echo(term, :nif), do: Native.echo_nif(term)
  def echo(term, :dirty_cpu), do: Native.echo_dirty_cpu(term)
  def echo(term, :dirty_io), do: Native.echo_dirty_io(term)
  def echo(term, :yielding), do: Native.echo_yield(term)

  def echo(term, :thread_new) do
    ref = make_ref()
    Job.await(Native.echo_thread_new(term, ref), ref)
  end

  def echo(term, :threaded), do: Job.call(&Native.echo_job/4, [term], schedule: :threaded)

  def echo(term, method)
      when method in [:driver_call, :driver_control, :driver_outputv],
      do: Map.fetch!(@remote, method).echo(term, method)

  def echo(term, method) when is_map_key(@remote, method),
    do: Map.fetch!(@remote, method).echo(term)

  def echo(_term, method),
    do:
      Options.invalid!("WellBehaved.Lab.Echo.echo/2", "method", method, Options.listing(@methods))

  @doc "Stops every out-of-process method's programs and servers."
  @spec stop() :: :ok
  def stop do
    for module <- @remote |> Map.values() |> Enum.uniq(), Code.ensure_loaded?(module) do
      module.stop()
    end

    :ok
  end
end
