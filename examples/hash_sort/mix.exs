defmodule HashSort.MixProject do
  use Mix.Project

  # A user's project with jobs written in Rust: it depends on WellBehaved
  # and builds its crate (native/hash_sort, on the SDK's crate
  # rust/well_behaved) with the :well_behaved_cargo compiler, which runs
  # `cargo build --offline --release` and puts the NIF library and the
  # server program in priv/.
  def project do
    [
      app: :hash_sort,
      version: "0.1.0",
      elixir: "~> 1.14",
      compilers: [:well_behaved_cargo] ++ Mix.compilers(),
      well_behaved_crates: [
        hash_sort: [
          path: "native/hash_sort",
          library: "hash_sort_nif",
          server: "hash_sort_server"
        ]
      ],
      start_permanent: Mix.env() == :prod,
      deps: [{:well_behaved, path: "../.."}],
      releases: [hash_sort: [include_executables_for: [:unix]]]
    ]
  end

  def application do
    [mod: {HashSort.Application, []}, extra_applications: [:logger, :crypto]]
  end
end
