defmodule Mix.Tasks.Compile.WellBehavedMake do
  @moduledoc """
  A Mix compiler that builds a project's NIF library on the WellBehaved SDK
  by running `make` in the project's directory.

  In the project's `mix.exs`:

      def project do
        [
          app: :my_app,
          compilers: [:well_behaved_make] ++ Mix.compilers(),
          deps: [{:well_behaved, path: "../well_behaved"}],
          # optional: the make targets to build (default: the Makefile's default)
          make_targets: ["all"]
        ]
      end

  `make` runs with these variables in its environment:

    * `MIX_APP_PATH` - the app's build directory: put the NIF library in
      `$(MIX_APP_PATH)/priv/`, where `:code.priv_dir/1` finds it on the
      first build, for dependencies and in releases.
    * `MIX_ENV` - the Mix environment.
    * `ERTS_INCLUDE_DIR` - the directory of `erl_nif.h`.
    * `WB_INCLUDE_DIR` - the directory of `wb_runtime.h`
      (`WellBehaved.SDK.include_dir/0`).
    * `WB_SOURCES` - the runtime's C files to compile into the library
      (`WellBehaved.SDK.sources/0`), separated by spaces.
    * `WB_EXTERNAL_SOURCES` - the C files of a server program of the same
      job types (`WellBehaved.SDK.external_sources/0`), and
      `EI_INCLUDE_DIR` and `EI_LIB_DIR`, where the ei library it links
      is (`WellBehaved.SDK.ei_dirs/0`).
    * `CC` and `CXX` - the C and C++ compilers: the environment's, or `cc`
      and `c++`.

  A missing `make`, C compiler or `erl_nif.h` stops the build with a
  message naming what to install; so does a build that fails without the
  C++ compiler (a library with C++ sources: see the SDK guide).
  """
  use Mix.Task.Compiler

  alias Mix.WellBehaved.BuildEnv

  # the messages' name for what is built
  @building "the NIF library"

  @impl true
  def run(_args) do
    config = Mix.Project.config()
    make = BuildEnv.find!(System.get_env("MAKE", "make"), "make", "make", @building)
    # the variables :well_behaved_cargo passes too
    env = BuildEnv.env!(@building)
    {"CXX", cxx} = List.keyfind(env, "CXX", 0)

    args = ["--no-print-directory" | Keyword.get(config, :make_targets, [])]

    case System.cmd(make, args, env: env, stderr_to_stdout: true) do
      {output, 0} ->
        # what make built, not that it had nothing to do
        output
        |> String.split("\n", trim: true)
        |> Enum.reject(&(&1 =~ ~r/^make(\[\d+\])?: (Nothing to be done|.* is up to date)/))
        |> Enum.each(&Mix.shell().info/1)

        :ok

      {output, status} ->
        Mix.shell().error(output)

        if output =~ cxx and !System.find_executable(cxx) do
          BuildEnv.find!(cxx, "a C++ compiler", "g++", @building)
        end

        Mix.raise("#{config[:app]}: make failed with exit status #{status}")
    end
  end
end
