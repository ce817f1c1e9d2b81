defmodule WellBehaved.Telemetry.GateWriter do
  @moduledoc false
  # Loads the version of WellBehaved.Telemetry.Gate that answers `on`.

  alias WellBehaved.Telemetry.Gate

  # the two versions, compiled once with the library (no compiler needed
  # where it runs)
  for value <- [true, false] do
    forms = [
      {:attribute, 1, :module, Gate},
      {:attribute, 1, :export, [on?: 0]},
      {:function, 1, :on?, 0, [{:clause, 1, [], [], [{:atom, 1, value}]}]}
    ]

    {:ok, Gate, binary} = :compile.forms(forms, [:binary, :deterministic])
    Module.put_attribute(__MODULE__, :"gate_#{value}", binary)
  end

  @doc """
  Makes `WellBehaved.Telemetry.Gate.on?/0` answer `on`: `:ok`, at once
  when it already does.
  """
  @spec set(boolean()) :: :ok
  def set(on) when is_boolean(on) do
    if Gate.on?() == on do
      :ok
    else
      :global.trans({__MODULE__, self()}, fn -> load(on) end, [node()])
    end
  end

  defp load(on) do
    # a caller that lost the race finds the work done
    if Gate.on?() != on do
      binary = if on, do: @gate_true, else: @gate_false
      purge_old()
      {:module, Gate} = :code.load_binary(Gate, ~c"#{Gate}.beam", binary)
    end

    :ok
  end

  # the version before the current one is dropped first; a process still
  # inside its on?/0 (a literal return) leaves it within microseconds
  defp purge_old do
    unless :code.soft_purge(Gate) do
      Process.sleep(1)
      purge_old()
    end
  end
end
