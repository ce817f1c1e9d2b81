defmodule WellBehaved.Lab.Native do
  @moduledoc false
  # The stubs of the lab's NIF library (c_src/nif/), built on the runtime's
  # SDK like any user's: Spin's jobs, the echo NIFs, and the runtime's stats
  # and settings (WellBehaved.Runtime.stats(WellBehaved.Lab.Native)).
  # Arguments are checked by WellBehaved.Lab.Spin and WellBehaved.Lab.Echo.

  @on_load :load_nif

  def load_nif do
    path = :filename.join(:code.priv_dir(:well_behaved_lab), ~c"well_behaved_lab_nif")
    :erlang.load_nif(path, WellBehaved.SDK.load_info())
  end

  def spin(_iterations, _mode, _tiny, _ref), do: stub()
  def spin_until(_microseconds, _mode, _tiny, _ref), do: stub()
  def echo_nif(_term), do: stub()
  def echo_dirty_cpu(_term), do: stub()
  def echo_dirty_io(_term), do: stub()
  def echo_yield(_term), do: stub()
  def echo_thread_new(_term, _ref), do: stub()
  def echo_job(_term, _mode, _tiny, _ref), do: stub()

  # the server program of the same job types (priv/wb_lab_server), for
  # schedule: :external: a pool with the built-in pool's defaults, as
  # `use WellBehaved.NIF, external: ...` would declare it
  def __wb_external__,
    do: [name: WellBehaved.Lab.Native.External, executable: {:well_behaved_lab, "wb_lab_server"}]

  def runtime_stats, do: stub()

  def runtime_configure(_normal_max_us, _yielding_max_us, _slice_us, _dirty_slice_us),
    do: stub()

  defp stub, do: :erlang.nif_error(:nif_not_loaded)
end
