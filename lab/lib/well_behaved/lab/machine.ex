defmodule WellBehaved.Lab.Machine do
  @moduledoc """
  The one description of the machine and VM a measurement ran on, printed
  with every suite's figures and at the top of the report.
  """

  alias WellBehaved.Runtime

  @doc """
  OTP release, ERTS and Elixir versions, schedulers (normal and dirty),
  CPU model and logical cores, OS, the library runtime's counters (thread
  pool, slice, `:auto` thresholds), the ways the Levenshtein cores compute
  on this CPU (`WellBehaved.Levenshtein.native_paths/0`), the OS monotonic clock the VM reads and
  its resolution (`clock:`), and the UTC time.
  """
  @spec describe() :: %{atom() => term()}
  def describe do
    %{
      otp_release: List.to_string(:erlang.system_info(:otp_release)),
      erts_version: List.to_string(:erlang.system_info(:version)),
      elixir_version: System.version(),
      schedulers: :erlang.system_info(:schedulers),
      schedulers_online: :erlang.system_info(:schedulers_online),
      dirty_cpu_schedulers: :erlang.system_info(:dirty_cpu_schedulers),
      dirty_cpu_schedulers_online: :erlang.system_info(:dirty_cpu_schedulers_online),
      dirty_io_schedulers: :erlang.system_info(:dirty_io_schedulers),
      cpu_model: cpu_model(),
      logical_cores: :erlang.system_info(:logical_processors),
      logical_cores_available: :erlang.system_info(:logical_processors_available),
      os: :os.type() |> Tuple.to_list() |> Enum.join("/"),
      runtime: Runtime.stats(),
      levenshtein_paths: WellBehaved.Levenshtein.native_paths(),
      clock: clock(),
      utc: DateTime.utc_now() |> DateTime.truncate(:second) |> DateTime.to_iso8601()
    }
  end

  defp cpu_model do
    with {:ok, text} <- File.read("/proc/cpuinfo"),
         [_, model] <- Regex.run(~r/^model name\s*:\s*(.+)$/m, text) do
      String.trim(model)
    else
      _ -> "unknown"
    end
  end

  defp clock do
    source = Map.new(:erlang.system_info(:os_monotonic_time_source))
    resolution = Map.get(source, :resolution)

    %{
      function: to_string(Map.get(source, :function, "unknown")),
      clock_id: to_string(Map.get(source, :clock_id, "")),
      resolution_per_s: resolution,
      resolution_ns: if(is_integer(resolution) and resolution > 0, do: 1.0e9 / resolution),
      native_units_per_s: :erlang.convert_time_unit(1, :second, :native)
    }
  end
end
