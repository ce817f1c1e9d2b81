defmodule HashSort.Native do
  @moduledoc false
  # The NIF stubs of priv/hash_sort_nif.so (the crate native/hash_sort,
  # whose nif_init! names this module), its @on_load and the runtime's two
  # NIFs, written by WellBehaved.NIF: each job NIF takes the data, then
  # mode, tiny slices and reference (added by WellBehaved.Job.call/4).
  # priv/hash_sort_server is the same jobs' server program:
  # schedule: :external runs them in its pool, HashSort.Native.External,
  # which HashSort.Application starts.
  use WellBehaved.NIF,
    otp_app: :hash_sort,
    library: "hash_sort_nif",
    jobs: [sha256: 1, sort_u32: 1],
    external: [executable: "hash_sort_server", servers: 2]
end
