defmodule Checksum.Native do
  @moduledoc false
  # The NIF stubs, replaced when priv/checksum_nif.so (c_src/checksum_nif.c)
  # loads with this module. Call Checksum, which checks the arguments.

  @on_load :load_nif

  def load_nif do
    path = :filename.join(:code.priv_dir(:checksum), ~c"checksum_nif")
    :erlang.load_nif(path, WellBehaved.SDK.load_info())
  end

  # the job NIF: the job's argument, then mode, tiny slices and reference
  # (added by WellBehaved.Job.call/4)
  def adler32(_data, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)

  # the SDK's NIFs, read and set by WellBehaved.Runtime.stats/1 and configure/2
  def runtime_stats, do: :erlang.nif_error(:nif_not_loaded)

  def runtime_configure(_normal, _yielding, _slice, _dirty_slice),
    do: :erlang.nif_error(:nif_not_loaded)
end
