defmodule Checksum.Native do
  @moduledoc false
  # The NIF stubs of priv/checksum_nif.so (c_src/checksum_nif.c, and the
  # C++ job of c_src/crc32_chunks.cpp), its @on_load and the runtime's two
  # NIFs, written by WellBehaved.NIF: the job NIF adler32 takes the data,
  # crc32_chunks the data and the chunk size, then mode, tiny slices and
  # reference (added by WellBehaved.Job.call/4). Call Checksum, which
  # checks the arguments. priv/checksum_server is the same job types'
  # server program: schedule: :external runs them in its pool, named
  # Checksum.Native.External, which Checksum.Application starts.
  use WellBehaved.NIF,
    otp_app: :checksum,
    library: "checksum_nif",
    jobs: [adler32: 1, crc32_chunks: 2],
    external: [executable: "checksum_server", servers: 2]
end
