defmodule Mix.Tasks.Compile.WellBehavedNative do
  @moduledoc false
  # Builds the library's own native code with `make native`, into the priv/
  # of the app being built (MIX_APP_PATH): the first compile, a path or git
  # dependency and a release all find it there. Projects using the SDK use
  # the `:well_behaved_make` compiler instead (lib/mix/tasks/), which is not
  # compiled yet when the library itself builds.
  use Mix.Task.Compiler

  @impl true
  def run(_args) do
    make =
      System.find_executable("make") ||
        Mix.raise("well_behaved needs make to build its native code: install it (Debian: make)")

    env = [{"MIX_APP_PATH", Mix.Project.app_path()}, {"MIX_ENV", to_string(Mix.env())}]

    case System.cmd(make, ["--no-print-directory", "native"], env: env, stderr_to_stdout: true) do
      {output, 0} ->
        if output =~ "-shared", do: Mix.shell().info(String.trim(output))
        :ok

      {output, status} ->
        Mix.shell().error(output)
        Mix.raise("well_behaved: make native failed with exit status #{status}")
    end
  end
end

defmodule WellBehaved.MixProject do
  use Mix.Project

  def project do
    [
      app: :well_behaved,
      version: "0.2.0",
      elixir: "~> 1.14",
      compilers: [:well_behaved_native] ++ Mix.compilers(),
      start_permanent: Mix.env() == :prod,
      deps: [],
      # EEx: only the generator's templates (mix well_behaved.new) use it,
      # and a Mix task always runs where Elixir's own :eex is
      xref: [exclude: [EEx, EEx.Engine]],
      docs: [main: "readme"]
    ]
  end

  def application do
    [
      mod: {WellBehaved.Application, []},
      # runtime_tools: WellBehaved.Probe's scheduler utilization; crypto:
      # the external servers' socket names
      extra_applications: [:logger, :crypto, :runtime_tools]
    ]
  end
end
