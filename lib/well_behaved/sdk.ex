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
  type's callbacks and a complete example. A library written in Rust
  depends on the crate of `rust_crate_dir/0` and builds with the
  `:well_behaved_cargo` compiler (`Mix.Tasks.Compile.WellBehavedCargo`),
  which passes the same variables to cargo.
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

  @typedoc """
  Why `wb_runtime_load` refused a library's job types: `{:job_type, index,
  problem}`, the type's index in the list it was given and what is wrong
  with it (`argc` outside 0..8, `args_size` over 256 bytes, a required
  callback NULL, or both `result` and `take_result` set);
  `{:too_many_job_types, index}`, the type at `index` is past the 32 a
  library may have; `:no_job_types`, the list is NULL.
  """
  @type load_refusal ::
          {:job_type, non_neg_integer(),
           :no_name
           | :argc_out_of_range
           | :args_size_too_large
           | {:callback_missing, :decode | :predict | :init | :step | :result_or_take_result}
           | :both_result_and_take_result}
          | {:too_many_job_types, non_neg_integer()}
          | :no_job_types

  # the problems of c_src/runtime/wb_job_check.h, by number
  @refusals %{
    1 => :no_name,
    2 => :argc_out_of_range,
    3 => :args_size_too_large,
    4 => {:callback_missing, :decode},
    5 => {:callback_missing, :predict},
    6 => {:callback_missing, :init},
    7 => {:callback_missing, :step},
    8 => {:callback_missing, :result_or_take_result},
    9 => :both_result_and_take_result
  }
  @too_many_types 10
  @no_list 11
  # "WB" in the high half of the code (WB_LOAD_REFUSED)
  @refused 0x5742_0000

  @doc """
  The answer of `:erlang.load_nif/2` for a library built on the runtime,
  with a job type that `wb_runtime_load` refused read back from the load
  callback's return value: `{:error, {:load_failed, reason}}`, `reason`
  naming the type by its index in the list and the callback at fault
  (`t:load_refusal/0`). Any other answer is returned as it is. A stub
  module written by hand (`use WellBehaved.NIF` does this for you)
  returns it from its `@on_load` function, so the failed load reports it:

      def load_nif do
        path = :filename.join(:code.priv_dir(:my_app), ~c"my_nif")
        WellBehaved.SDK.load_result(:erlang.load_nif(path, WellBehaved.SDK.load_info()))
      end

      iex> WellBehaved.SDK.load_result(
      ...>   {:error, {:load, ~c"Library load-call unsuccessful (1463943175)."}}
      ...> )
      {:error, {:load_failed, {:job_type, 0, {:callback_missing, :step}}}}
      iex> WellBehaved.SDK.load_result({:error, {:load, ~c"Library load-call unsuccessful (1)."}})
      {:error, {:load, ~c"Library load-call unsuccessful (1)."}}
  """
  @spec load_result(:ok | {:error, term()}) ::
          :ok | {:error, {:load_failed, load_refusal()}} | {:error, term()}
  def load_result({:error, {:load, text}} = error) when is_list(text) do
    with [_, code] <- Regex.run(~r/^Library load-call unsuccessful \((-?\d+)\)/, to_string(text)),
         {:ok, reason} <- refusal(String.to_integer(code) - @refused) do
      {:error, {:load_failed, reason}}
    else
      _ -> error
    end
  end

  def load_result(:ok), do: :ok
  def load_result({:error, _} = error), do: error

  def load_result(other) do
    raise ArgumentError,
          "WellBehaved.SDK.load_result/1: invalid answer #{inspect(other)}, expected what " <>
            ":erlang.load_nif/2 returns (:ok or {:error, reason})"
  end

  defp refusal(code) when code >= 0 and code < 0x1_0000 do
    index = div(code, 256)

    case rem(code, 256) do
      @too_many_types -> {:ok, {:too_many_job_types, index}}
      @no_list when index == 0 -> {:ok, :no_job_types}
      problem when is_map_key(@refusals, problem) -> {:ok, {:job_type, index, @refusals[problem]}}
      _ -> :error
    end
  end

  defp refusal(_code), do: :error

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
      ["wb_external.c", "wb_ext_server.c", "wb_ext_jobs.c", "wb_ext_nif.c", "wb_ext_terms.c"]
  """
  @spec external_sources() :: [Path.t()]
  def external_sources,
    do:
      for(
        file <- [
          "wb_external.c",
          "wb_ext_server.c",
          "wb_ext_jobs.c",
          "wb_ext_nif.c",
          "wb_ext_terms.c"
        ],
        do: existing!(Path.join([@root, "c_src/external", file]))
      )

  @doc """
  The directory of the Rust crate `well_behaved`, the runtime for a NIF
  library written in Rust. A crate built with the `:well_behaved_cargo`
  Mix compiler (`Mix.Tasks.Compile.WellBehavedCargo`) names it by path in
  its `Cargo.toml`, and the compiler checks that the path leads here.

      iex> WellBehaved.SDK.rust_crate_dir() |> Path.split() |> Enum.take(-2)
      ["rust", "well_behaved"]
      iex> File.dir?(WellBehaved.SDK.rust_crate_dir())
      true
  """
  @spec rust_crate_dir() :: Path.t()
  def rust_crate_dir, do: existing!(Path.join(@root, "rust/well_behaved"))

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
