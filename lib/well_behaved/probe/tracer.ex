defmodule WellBehaved.Probe.Tracer do
  @moduledoc false
  # The NIF stubs of priv/wb_turn_tracer.so (c_src/probe/turn_tracer_nif.c):
  # an erl_tracer module that logs when each traced process is scheduled
  # in and out, with the wall and CPU clocks of the thread that runs it.
  # Used by WellBehaved.Probe.turns/2:
  #
  #     {:ok, tracer} = new(capacity)
  #     :erlang.trace(pid, true, [:running, {:tracer, __MODULE__, tracer}])
  #     ... running(tracer) -> turns begun and not ended yet (0 once every
  #     traced process is scheduled out)
  #     ... close(tracer), then turns(tracer) -> {[{pid, wall_ns, cpu_ns, thread}], lost}
  #
  # and other_threads_cpu_ns() -> the CPU time of the VM's threads other
  # than its normal schedulers, or :undefined without /proc.

  @on_load :load_nif

  def load_nif do
    path = :filename.join(:code.priv_dir(:well_behaved), ~c"wb_turn_tracer")
    :erlang.load_nif(path, 0)
  end

  def new(_capacity), do: stub()
  def enabled(_tag, _tracer, _tracee), do: stub()
  def trace(_tag, _tracer, _tracee, _term, _opts), do: stub()
  def close(_tracer), do: stub()
  def running(_tracer), do: stub()
  def turns(_tracer), do: stub()
  def other_threads_cpu_ns, do: stub()

  defp stub, do: :erlang.nif_error(:nif_not_loaded)
end
