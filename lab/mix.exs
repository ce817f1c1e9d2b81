defmodule WellBehavedLab.MixProject do
  use Mix.Project

  # The lab: benchmarks and instruments of WellBehaved, a project of its own
  # that depends on the library as any user's project does, and builds its
  # NIF library on the runtime's SDK with the library's Mix compiler, and
  # its Rust jobs (native/lab_rs, on the SDK's crate) with the Rust one.
  def project do
    [
      app: :well_behaved_lab,
      version: "0.1.0",
      elixir: "~> 1.14",
      compilers: [:well_behaved_make, :well_behaved_cargo] ++ Mix.compilers(),
      make_targets: ["native"],
      well_behaved_crates: [lab_rs: [path: "native/lab_rs", library: "well_behaved_lab_rs_nif"]],
      start_permanent: false,
      deps: [{:well_behaved, path: ".."}]
    ]
  end

  def application do
    # inets: the HTTP suite's server and client
    [
      mod: {WellBehaved.Lab.Application, []},
      extra_applications: [:logger, :inets, :runtime_tools, :crypto]
    ]
  end
end
