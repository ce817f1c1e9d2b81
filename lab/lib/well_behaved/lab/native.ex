defmodule WellBehaved.Lab.Native do
  @moduledoc false
  # The stubs of the lab's NIF library (c_src/nif/), built on the runtime's
  # SDK like any user's: Spin's jobs, the echo NIFs, the runtime's stats
  # and settings (WellBehaved.Runtime.stats(WellBehaved.Lab.Native)), and
  # the server program of the same job types (priv/wb_lab_server) for
  # schedule: :external, a pool with the built-in pool's defaults.
  # Arguments are checked by WellBehaved.Lab.Spin and WellBehaved.Lab.Echo.

  use WellBehaved.NIF,
    otp_app: :well_behaved_lab,
    library: "well_behaved_lab_nif",
    jobs: [spin: 1, spin_until: 1, echo_job: 1],
    nifs: [echo_nif: 1, echo_dirty_cpu: 1, echo_dirty_io: 1, echo_yield: 1, echo_thread_new: 2],
    external: "wb_lab_server"
end
