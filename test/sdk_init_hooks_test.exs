defmodule WellBehaved.SDKInitHooksTest do
  # WB_NIF_INIT_WITH (wb_runtime.h), through c_src/test/sdk_hooks_nif.c,
  # whose hooks write what they do to a file: the load hook runs before the
  # runtime's load and may refuse it; the unload hook runs after the
  # runtime's unload (so after the releases the runtime was handed) and
  # when the runtime refuses the load after the hook; a library with a load
  # hook refuses an upgrade.
  use ExUnit.Case, async: false

  alias WellBehaved.{Job, SDK}

  @module WellBehaved.Test.SDKHooks
  @library "c_src/build/sdk/sdk_hooks_nif"

  setup_all do
    WellBehaved.Test.SDKStubs.build!()
    :ok
  end

  setup do
    unload()
    log = Path.join(System.tmp_dir!(), "wb_sdk_hooks_#{System.unique_integer([:positive])}")

    on_exit(fn ->
      unload()
      File.rm(log)
    end)

    %{log: log}
  end

  # the stub module, written by hand so that each test picks the load_info
  defp define_stub(version) do
    library = String.to_charlist(Path.expand(@library))
    ignore = Code.get_compiler_option(:ignore_module_conflict)
    Code.put_compiler_option(:ignore_module_conflict, true)

    try do
      Code.compile_string("""
      defmodule #{inspect(@module)} do
        def version, do: #{version}
        def load(info), do: :erlang.load_nif(#{inspect(library)}, info)
        def count(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
        def release_slowly, do: :erlang.nif_error(:nif_not_loaded)
        def runtime_stats, do: :erlang.nif_error(:nif_not_loaded)
        def runtime_configure(_, _, _, _), do: :erlang.nif_error(:nif_not_loaded)
      end
      """)
    after
      Code.put_compiler_option(:ignore_module_conflict, ignore)
    end

    @module
  end

  defp unload do
    :code.purge(@module)
    :code.delete(@module)
    :code.purge(@module)
  end

  defp lines(log) do
    case File.read(log) do
      {:ok, text} -> String.split(text, "\n", trim: true)
      {:error, :enoent} -> []
    end
  end

  test "the load hook runs before the runtime, the unload hook after it", %{log: log} do
    module = define_stub(1)
    assert module.load({log, :ok}) == :ok
    assert lines(log) == ["load_hook"]

    # the runtime loaded after the hook: its jobs run (in a process of
    # their own, whose end frees the job resources that would keep the
    # library loaded after the purge)
    for mode <- [:normal, :yielding, :threaded] do
      got =
        Task.await(
          Task.async(fn -> Job.call(&module.count/4, [100_000], schedule: mode) end),
          :infinity
        )

      assert got == 100_000, "#{mode}: #{inspect(got)} != 100000"
    end

    # a release the runtime's unload waits for, then the hook
    assert module.release_slowly() == :ok
    unload()
    assert lines(log) == ["load_hook", "released", "unload_hook"]
  end

  test "a load hook that refuses fails the load with its code", %{log: log} do
    module = define_stub(1)
    refused = {:error, {:load, ~c"Library load-call unsuccessful (7)."}}
    got = module.load({log, :refuse_hook})
    assert got == refused, "#{inspect(got)} != #{inspect(refused)}"
    # not a refusal of the runtime's: passed through
    assert SDK.load_result(got) == refused
    assert_raise ErlangError, ~r/nif_not_loaded/, fn -> module.runtime_stats() end
    # the runtime never loaded, the unload hook does not run
    assert lines(log) == ["load_hook refused"]
  end

  test "a load the runtime refuses runs the unload hook", %{log: log} do
    module = define_stub(1)
    got = SDK.load_result(module.load({log, :refuse_runtime}))
    want = {:error, {:load_failed, {:job_type, 1, {:callback_missing, :step}}}}
    assert got == want, "#{inspect(got)} != #{inspect(want)}"
    assert_raise ErlangError, ~r/nif_not_loaded/, fn -> module.runtime_stats() end
    assert lines(log) == ["load_hook", "unload_hook"]
  end

  test "a library with a load hook refuses an upgrade", %{log: log} do
    module = define_stub(1)
    assert module.load({log, :ok}) == :ok

    # version 2 loads the library while version 1 (now old code) has it
    module = define_stub(2)
    assert module.version() == 2
    assert {:error, {:upgrade, _}} = got = module.load({log, :ok})
    assert lines(log) == ["load_hook"], inspect(got)

    # the old version's unload; then the library loads again
    :code.purge(module)
    assert lines(log) == ["load_hook", "unload_hook"]
    assert module.load({log, :ok}) == :ok

    assert Task.await(
             Task.async(fn -> Job.call(&module.count/4, [10], schedule: :yielding) end),
             :infinity
           ) ==
             10

    assert lines(log) == ["load_hook", "unload_hook", "load_hook"]
  end
end
