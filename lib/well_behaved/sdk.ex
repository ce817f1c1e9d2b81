defmodule WellBehaved.SDK do
  @moduledoc """
  Where the runtime's C SDK is, for a NIF library of your own: the header
  directory to add to the include path, and the C sources to compile into
  the library. Each library built this way carries its own runtime (its
  settings, thread pool and counters).

  The `:well_behaved_make` Mix compiler (`Mix.Tasks.Compile.WellBehavedMake`)
  runs your Makefile with both in the environment, so the Makefile needs
  one line for each:

      CFLAGS += -I$(WB_INCLUDE_DIR) -I$(ERTS_INCLUDE_DIR)
      $(MIX_APP_PATH)/priv/my_nif.so: c_src/my_nif.c $(WB_SOURCES)

  The same job types also build a server program for
  `schedule: :external` (`WellBehaved.External`): the library's source
  compiled with `WB_EXTERNAL_SERVER` defined and linked with
  `external_sources/0` and libei instead of `sources/0`; the compiler
  passes both, and the ei library's directories:

      $(MIX_APP_PATH)/priv/my_server: c_src/my_nif.c $(WB_EXTERNAL_SOURCES)
      	$(CC) $(CFLAGS) -DWB_EXTERNAL_SERVER -I$(EI_INCLUDE_DIR) -o $@ $^ -L$(EI_LIB_DIR) -lei -lpthread

  The guide `guides/sdk.md` ("Writing your own well-behaved NIF") describes the job
  type's callbacks and a complete example.
  """

  @doc """
  The term to pass to `:erlang.load_nif/2` when loading a NIF library
  built on the runtime: it carries the slice derived from how long this
  VM's Erlang code runs per turn (`WellBehaved.Runtime.Calibration`),
  measured once per VM (about 17 ms, 1.5 ms of it CPU) the first time a
  library loads. WellBehaved's application measures again over the first
  seconds and gives a shorter turn to every runtime loaded that follows
  the calibration.

      def load_nif do
        path = :filename.join(:code.priv_dir(:my_app), ~c"my_nif")
        :erlang.load_nif(path, WellBehaved.SDK.load_info())
      end

  A library loaded with another term keeps the runtime's compiled default
  slice (30 µs); `WellBehaved.Runtime.stats/1` then says
  `slice_source: :default`.
  """
  @spec load_info() :: %{slice_ns: pos_integer(), erlang_turn_ns: pos_integer()}
  defdelegate load_info, to: WellBehaved.Runtime.Calibration

  # the library's source tree, found from this file: a path or git
  # dependency keeps it under deps/, and the SDK is used when building
  @root Path.expand("../..", __DIR__)

  @doc """
  The directory holding `wb_runtime.h`, the header a job NIF includes.

      iex> File.exists?(Path.join(WellBehaved.SDK.include_dir(), "wb_runtime.h"))
      true
  """
  @spec include_dir() :: Path.t()
  def include_dir, do: existing!(Path.join(@root, "c_src/include"))

  # the runtime's files, one job each (the library's Makefile: SDK_SRC)
  @runtime_files ~w(wb_runtime.c wb_run.c wb_cost.c wb_pool.c wb_release.c wb_config.c)

  @doc """
  The C files to compile into a NIF library that uses the runtime (they
  include a private header that sits beside them).

      iex> WellBehaved.SDK.sources() |> Enum.map(&Path.basename/1)
      ["wb_runtime.c", "wb_run.c", "wb_cost.c", "wb_pool.c", "wb_release.c", "wb_config.c"]
  """
  @spec sources() :: [Path.t()]
  def sources,
    do: for(file <- @runtime_files, do: existing!(Path.join([@root, "c_src/runtime", file])))

  @doc """
  The C files to link into a server program of your job types, instead of
  `sources/0` (see the module's documentation).

      iex> WellBehaved.SDK.external_sources() |> Enum.map(&Path.basename/1)
      ["wb_external.c", "wb_ext_server.c", "wb_ext_jobs.c"]
  """
  @spec external_sources() :: [Path.t()]
  def external_sources,
    do:
      for(
        file <- ["wb_external.c", "wb_ext_server.c", "wb_ext_jobs.c"],
        do: existing!(Path.join([@root, "c_src/external", file]))
      )

  @doc """
  The directories of the ei library's header (`ei.h`) and of the library
  itself (`libei.a`), which a server program links: `{include, lib}`.
  """
  @spec ei_dirs() :: {Path.t(), Path.t()}
  def ei_dirs do
    dir = :code.lib_dir(:erl_interface)

    if is_list(dir) and File.exists?(Path.join([dir, "include", "ei.h"])) do
      {Path.join(dir, "include"), Path.join(dir, "lib")}
    else
      raise "WellBehaved.SDK: the ei library (erl_interface) was not found: install the " <>
              "Erlang development files (Debian: apt-get install erlang-dev)"
    end
  end

  defp existing!(path) do
    if File.exists?(path) do
      path
    else
      raise "WellBehaved.SDK: #{path} is missing: the SDK is read from the well_behaved " <>
              "source tree it was compiled from (#{@root}); fetch the dependency again"
    end
  end
end
