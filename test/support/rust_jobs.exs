defmodule WellBehaved.Test.RustJobs do
  @moduledoc false
  # The stub of the crate rust/test_jobs (a NIF library of jobs written in
  # Rust on the SDK's crate, built as a user's is: mk/rust.mk), built and
  # loaded by ensure_loaded!/0, with its server program for :external.
  import ExUnit.Assertions

  def fold(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def panicky(_at, _n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def refusing(_at, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def sum_list(_list, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def roundtrip(_kind, _term), do: :erlang.nif_error(:nif_not_loaded)
  def map_of(_pairs), do: :erlang.nif_error(:nif_not_loaded)
  def map_get(_map, _key), do: :erlang.nif_error(:nif_not_loaded)
  def boom, do: :erlang.nif_error(:nif_not_loaded)
  def stash_bytes(_data), do: :erlang.nif_error(:nif_not_loaded)
  def runtime_call(_what, _arg), do: :erlang.nif_error(:nif_not_loaded)
  def thread_type, do: :erlang.nif_error(:nif_not_loaded)
  def normal_thread_type, do: :erlang.nif_error(:nif_not_loaded)
  def runtime_stats, do: :erlang.nif_error(:nif_not_loaded)
  def runtime_configure(_, _, _, _), do: :erlang.nif_error(:nif_not_loaded)

  @dir "c_src/build/rust"

  # the pool schedule: :external uses, as `use WellBehaved.NIF, external:`
  # declares it
  def __wb_external__,
    do: [
      name: WellBehaved.Test.RustJobs.External,
      executable: Path.expand(Path.join(@dir, "rust_jobs_server")),
      servers: 1
    ]

  @doc "Builds the crate (make rust-test-nifs) and loads it, once per VM."
  def ensure_loaded! do
    runtime_stats()
    :ok
  rescue
    ErlangError ->
      {out, status} =
        System.cmd("make", ["--no-print-directory", "rust-test-nifs"], stderr_to_stdout: true)

      assert status == 0, out
      path = String.to_charlist(Path.join(@dir, "rust_jobs_nif"))
      :ok = :erlang.load_nif(path, WellBehaved.SDK.load_info())
  end

  @doc "The code a child VM's scenario starts with to call these jobs."
  def child_prelude do
    """
    Code.require_file("test/support/rust_jobs.exs")
    alias WellBehaved.Test.RustJobs
    alias WellBehaved.Job
    RustJobs.ensure_loaded!()
    """
  end
end
