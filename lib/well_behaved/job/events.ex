defmodule WellBehaved.Job.Events do
  @moduledoc false
  # What a job span's stop event carries, and the rerun event, from the
  # job's answer and the runtime's report of how it ran (nil when there is
  # none: an error answered before a mode ran, :external, or a library on
  # a runtime older than the report). guides/observability.md lists them.

  alias WellBehaved.Telemetry

  @doc false
  # the span's `{answer, measurements, metadata}` for a job asked to run
  # in `mode`
  @spec stop(term(), atom(), map() | nil) :: {term(), map(), map()}
  def stop({:error, reason} = answer, mode, info),
    do: {answer, measurements(info), Map.merge(how(mode, info), %{result: :error, error: reason})}

  def stop(answer, mode, info),
    do: {answer, measurements(info), Map.put(how(mode, info), :result, :ok)}

  @doc false
  # a :normal run that outran its prediction and went on :yielding
  @spec rerun(map(), map()) :: :ok
  def rerun(start, info) do
    Telemetry.execute(
      [:well_behaved, :job, :rerun],
      %{count: 1, predicted_units: info.predicted_units},
      %{
        job: start.job,
        module: start.module,
        function: start.function,
        ps_per_unit: info.ps_per_unit
      }
    )
  end

  defp measurements(nil), do: %{}
  defp measurements(info), do: %{slices: info.slices, bytes: info.bytes}

  defp how(mode, nil),
    do: %{
      mode_run: if(mode == :external, do: :external),
      auto: nil,
      rerun: false,
      answered_in_call: false
    }

  defp how(_mode, info),
    do: %{
      mode_run: info.mode_run,
      auto: auto(info),
      rerun: info.rerun,
      answered_in_call: info.answered_in_call
    }

  # :auto's choice, when the runtime made one
  defp auto(%{reason: nil}), do: nil

  defp auto(info),
    do:
      Map.take(info, [:reason, :predicted_units, :ps_per_unit, :normal_max_ns, :yielding_max_ns])
end
