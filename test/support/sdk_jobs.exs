defmodule WellBehaved.Test.SDKJobs do
  @moduledoc false
  # The stub of c_src/test/sdk_jobs_nif.c, a NIF library built on the SDK
  # as a user's is (mk/sdk.mk), built and loaded by ensure_loaded!/0.
  import ExUnit.Assertions

  def fold(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def phases(_cheap, _dear, _spent, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def dear(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def lumpy(_stall_us, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def liar(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def raising(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def fickle(_n, _k, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def huge(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def owned(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  # a job of the server program only (sdk_jobs_server): no NIF in the VM
  def crash(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def runtime_stats, do: :erlang.nif_error(:nif_not_loaded)
  def runtime_configure(_, _, _, _), do: :erlang.nif_error(:nif_not_loaded)

  @server "c_src/build/sdk/sdk_jobs_server"

  # the pool schedule: :external uses for these jobs, as
  # `use WellBehaved.NIF, external: ...` declares it
  def __wb_external__,
    do: [name: WellBehaved.Test.SDKJobs.External, executable: Path.expand(@server), servers: 1]

  @doc "Builds the library (make sdk-test-nifs) and loads it, once per VM."
  def ensure_loaded! do
    try do
      runtime_stats()
      :ok
    rescue
      ErlangError ->
        {out, status} =
          System.cmd("make", ["--no-print-directory", "sdk-test-nifs"], stderr_to_stdout: true)

        assert status == 0, out
        path = String.to_charlist("c_src/build/sdk/sdk_jobs_nif")
        :ok = :erlang.load_nif(path, WellBehaved.SDK.load_info())
    end
  end
end
