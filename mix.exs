defmodule Mix.Tasks.Compile.WellBehavedNative do
  @moduledoc "Builds the NIF library into priv/ by running `make native`."
  use Mix.Task.Compiler

  @impl true
  def run(_args) do
    case System.cmd("make", ["--no-print-directory", "native"], stderr_to_stdout: true) do
      {output, 0} ->
        if output =~ "-shared", do: Mix.shell().info(String.trim(output))
        # Mix links priv/ into the build tree only when it exists as the
        # tree is laid out, which on a first build is before make made it:
        # lay it out again, so that the NIF loads from the first compile on
        Mix.Project.build_structure()
        :ok

      {output, status} ->
        Mix.shell().error(output)
        Mix.raise("make native failed with exit status #{status}")
    end
  end
end

defmodule WellBehaved.MixProject do
  use Mix.Project

  def project do
    [
      app: :well_behaved,
      version: "0.1.0",
      elixir: "~> 1.14",
      compilers: [:well_behaved_native] ++ Mix.compilers(),
      start_permanent: Mix.env() == :prod,
      deps: [],
      docs: [main: "readme"]
    ]
  end

  def application do
    [
      mod: {WellBehaved.Application, []},
      extra_applications: [:logger, :crypto, :runtime_tools, :inets]
    ]
  end
end
