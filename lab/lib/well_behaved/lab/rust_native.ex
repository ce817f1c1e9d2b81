defmodule WellBehaved.Lab.RustNative do
  @moduledoc false
  # The stubs of the lab's Rust NIF library (native/lab_rs, built by the
  # :well_behaved_cargo compiler on the SDK's crate): the C Spin written
  # in Rust (rust_spin), with its own copy of the runtime, whose stats and
  # settings are WellBehaved.Runtime.stats(WellBehaved.Lab.RustNative).
  # Arguments are checked by WellBehaved.Lab.Spin.run_rust/2.

  use WellBehaved.NIF,
    otp_app: :well_behaved_lab,
    library: "well_behaved_lab_rs_nif",
    jobs: [rust_spin: 1]
end
