defmodule WellBehaved.NIF do
  @moduledoc """
  The Elixir side of a NIF library built on the runtime's SDK, written for
  you: `use WellBehaved.NIF` in the module the library loads with defines
  its `@on_load` (loading `priv/<library>` of your application with
  `WellBehaved.SDK.load_info/0`), a stub for each job NIF (the job's
  arguments, then mode, tiny slices and reference, as
  `WellBehaved.Job.call/4` passes them), and the runtime's
  `runtime_stats/0` and `runtime_configure/4`.

      defmodule Checksum.Native do
        @moduledoc false
        use WellBehaved.NIF, otp_app: :checksum, library: "checksum_nif", jobs: [adler32: 1]
      end

  Options:

    * `otp_app:` (required) - the application whose `priv` holds the library;
    * `library:` (required) - its file name without extension;
    * `jobs:` - `name: argc` for each job NIF (`WB_JOB_NIF(name, type)`
      with `type.argc == argc`);
    * `nifs:` - `name: arity` for other NIFs of the library;
    * `external:` - the file name, in the same `priv`, of the server
      program built from the same job types (the library's source
      compiled with `WB_EXTERNAL_SERVER` defined, see the SDK guide), or
      a keyword list of `WellBehaved.External.start/1` options whose
      `executable:` is that file name: `WellBehaved.Job.call/4` with
      `schedule: :external` then runs the jobs in a pool of that program,
      named `<Module>.External` unless `name:` says otherwise, started
      on first use.

  The C side's callbacks are one line too: `WB_NIF_INIT(Elixir.Checksum.Native,
  nif_funcs, types)`, or `WB_NIF_INIT_WITH(Elixir.Checksum.Native, nif_funcs,
  types, load_hook, unload_hook)` for a library with more to load than the
  runtime (see `wb_runtime.h` and the SDK guide).
  """

  # What __load_nif__ passes to :erlang.load_nif/2 and makes of its answer:
  # WellBehaved.SDK's load_info/0 and load_result/1. While WellBehaved itself
  # compiles (its own stub module loads then), the modules they need may not
  # be built yet: then 0 (the runtime's default slice) and the answer as it is.
  @doc false
  @spec __load_info__() :: map() | 0
  def __load_info__ do
    # the calibration times WellBehaved.Probe's loop (in Probe.Turns)
    needs = [WellBehaved.Runtime.Calibration, WellBehaved.Probe, WellBehaved.Probe.Turns]

    if Enum.all?(needs, &Code.ensure_loaded?/1),
      do: WellBehaved.Runtime.Calibration.load_info(),
      else: 0
  end

  @doc false
  @spec __load_result__(term()) :: :ok | {:error, term()}
  def __load_result__(result) do
    if Code.ensure_loaded?(WellBehaved.SDK),
      do: WellBehaved.SDK.load_result(result),
      else: result
  end

  @doc false
  defmacro __using__(opts) do
    otp_app = Keyword.fetch!(opts, :otp_app)
    library = Keyword.fetch!(opts, :library)
    jobs = Keyword.get(opts, :jobs, [])
    nifs = Keyword.get(opts, :nifs, [])
    external = external_options(Keyword.get(opts, :external), otp_app, __CALLER__.module)

    if not is_atom(otp_app) or not is_binary(library) do
      raise ArgumentError,
            "use WellBehaved.NIF: expected otp_app: an atom and library: a string, got: " <>
              inspect(opts)
    end

    for pair <- jobs ++ nifs do
      if not match?({name, count} when is_atom(name) and is_integer(count) and count >= 0, pair) do
        raise ArgumentError,
              "use WellBehaved.NIF: expected name: count pairs in jobs: and nifs:, got: " <>
                inspect(pair)
      end
    end

    stubs =
      for {name, arity} <- Enum.map(jobs, fn {n, argc} -> {n, argc + 3} end) ++ nifs do
        args = for i <- 1..arity//1, do: Macro.var(:"_arg#{i}", __MODULE__)

        quote do
          @doc false
          def unquote(name)(unquote_splicing(args)), do: :erlang.nif_error(:nif_not_loaded)
        end
      end

    quote do
      @on_load :__load_nif__

      @doc false
      def __load_nif__ do
        path =
          :filename.join(:code.priv_dir(unquote(otp_app)), unquote(String.to_charlist(library)))

        # a job type wb_runtime_load refused: {:error, {:load_failed, reason}}
        WellBehaved.NIF.__load_result__(:erlang.load_nif(path, WellBehaved.NIF.__load_info__()))
      end

      unquote_splicing(stubs)

      unquote(
        if external do
          quote do
            @doc false
            def __wb_external__, do: unquote(external)
          end
        end
      )

      @doc false
      def runtime_stats, do: :erlang.nif_error(:nif_not_loaded)

      @doc false
      def runtime_configure(_normal, _yielding, _slice, _dirty_slice),
        do: :erlang.nif_error(:nif_not_loaded)
    end
  end

  defp external_options(nil, _otp_app, _module), do: nil

  defp external_options(file, otp_app, module) when is_binary(file),
    do: external_options([executable: file], otp_app, module)

  defp external_options(opts, otp_app, module) when is_list(opts) do
    case Keyword.fetch(opts, :executable) do
      {:ok, file} when is_binary(file) ->
        opts =
          [name: Module.concat(module, External)]
          |> Keyword.merge(opts)
          |> Keyword.put(:executable, {otp_app, file})

        # the pool's options, checked as WellBehaved.External.child_spec/1 does
        WellBehaved.External.Options.check!("WellBehaved.External.child_spec/1", opts)
        opts

      _ ->
        bad_external!(opts)
    end
  end

  defp external_options(other, _otp_app, _module), do: bad_external!(other)

  defp bad_external!(value) do
    raise ArgumentError,
          "use WellBehaved.NIF: expected external: a file name or options with " <>
            "executable: a file name, got: " <> inspect(value)
  end
end
