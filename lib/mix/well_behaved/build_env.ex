defmodule Mix.WellBehaved.BuildEnv do
  @moduledoc false
  # The environment the SDK's Mix compilers build in (:well_behaved_make
  # runs make in it, :well_behaved_cargo runs cargo), so that a Makefile and
  # a crate's build script read the same variables, and the checks of what
  # a build needs, with the messages naming what to install.

  @typedoc "Variables for `System.cmd/3`'s `:env`."
  @type env :: [{String.t(), String.t()}]

  @doc """
  The variables for building `building` (for the messages, e.g. "the NIF
  library"): `CC`, `CXX`, `MIX_APP_PATH`, `MIX_ENV`, `ERTS_INCLUDE_DIR`,
  `WB_INCLUDE_DIR`, `WB_SOURCES`, `WB_EXTERNAL_SOURCES`, and `EI_INCLUDE_DIR`
  and `EI_LIB_DIR` when the ei library is there. Raises `Mix.Error` when
  the C compiler or `erl_nif.h` is missing.
  """
  @spec env!(String.t()) :: env()
  def env!(building) do
    cc = System.get_env("CC", "cc")
    cxx = System.get_env("CXX", "c++")
    find!(cc, "a C compiler", "gcc", building)
    erts_include = erts_include_dir!(building)

    [
      {"CC", cc},
      {"CXX", cxx},
      {"MIX_APP_PATH", Mix.Project.app_path()},
      {"MIX_ENV", to_string(Mix.env())},
      {"ERTS_INCLUDE_DIR", erts_include},
      {"WB_INCLUDE_DIR", WellBehaved.SDK.include_dir()},
      {"WB_SOURCES", Enum.join(WellBehaved.SDK.sources(), " ")},
      {"WB_EXTERNAL_SOURCES", Enum.join(WellBehaved.SDK.external_sources(), " ")}
      | ei_dirs()
    ]
  end

  @doc """
  The path of the executable `command`, or a `Mix.Error` saying that
  building `building` needs `what` and which Debian package has it.
  """
  @spec find!(String.t(), String.t(), String.t(), String.t()) :: Path.t()
  def find!(command, what, package, building) do
    System.find_executable(command) ||
      Mix.raise(
        "building #{building} needs #{what} (#{command}), which is not installed: " <>
          "install it (Debian: apt-get install #{package})"
      )
  end

  defp erts_include_dir!(building) do
    dir = Path.join([:code.root_dir(), "erts-#{:erlang.system_info(:version)}", "include"])

    if File.exists?(Path.join(dir, "erl_nif.h")) do
      dir
    else
      Mix.raise(
        "building #{building} needs erl_nif.h, which is not in #{dir}: " <>
          "install the Erlang headers (Debian: apt-get install erlang-dev)"
      )
    end
  end

  defp ei_dirs do
    {include, lib} = WellBehaved.SDK.ei_dirs()
    [{"EI_INCLUDE_DIR", include}, {"EI_LIB_DIR", lib}]
  rescue
    # a library without a server program builds without ei
    RuntimeError -> []
  end
end
