defmodule Checksum.MixProject do
  use Mix.Project

  # A user's project: it depends on WellBehaved and builds its own NIF
  # library (c_src/checksum_nif.c) on the library's C SDK, with the
  # :well_behaved_make compiler, which runs the Makefile.
  def project do
    [
      app: :checksum,
      version: "0.1.0",
      elixir: "~> 1.14",
      compilers: [:well_behaved_make] ++ Mix.compilers(),
      start_permanent: Mix.env() == :prod,
      deps: [{:well_behaved, path: "../.."}],
      releases: [checksum: [include_executables_for: [:unix]]]
    ]
  end

  def application do
    [mod: {Checksum.Application, []}, extra_applications: [:logger]]
  end
end
