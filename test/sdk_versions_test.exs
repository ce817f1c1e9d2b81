defmodule WellBehaved.SDKVersionsTest do
  # The SDK's version in wb_runtime.h is the library's (mix.exs); a NIF
  # library written against the 0.1 header (c_src/test/sdk_v0_job.c, its
  # load callback calling wb_runtime_load with two arguments) still builds
  # with -Werror, loads through `use WellBehaved.NIF` and runs in every
  # mode; a job type the runtime refuses fails the load with
  # {:error, {:load_failed, reason}} naming the type and what is wrong.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog
  alias WellBehaved.{Job, Runtime, SDK}

  @moduletag timeout: 180_000
  @header "c_src/include/wb_runtime.h"
  @v0 WellBehaved.Test.SDKv0
  @refused WellBehaved.Test.SDKv0Refused

  defp library(name), do: Path.expand(Path.join("c_src/build/sdk", name))

  # a stub module made the way a user's is; its @on_load runs as it is defined
  defp define_stub(module, library) do
    Code.compile_string("""
    defmodule #{inspect(module)} do
      use WellBehaved.NIF, otp_app: :well_behaved, library: #{inspect(library)}, jobs: [adler: 1]
    end
    """)
  end

  setup_all do
    WellBehaved.Test.SDKStubs.build!()
    if not Code.ensure_loaded?(@v0), do: define_stub(@v0, library("sdk_v0_nif"))
    :ok
  end

  test "the header's version is the library's" do
    header = File.read!(@header)

    [major, minor, patch] =
      for part <- ~w(MAJOR MINOR PATCH) do
        [_, value] = Regex.run(~r/^#define WB_SDK_VERSION_#{part}\s+(\d+)\s*$/m, header)
        String.to_integer(value)
      end

    [_, string] = Regex.run(~r/^#define WB_SDK_VERSION_STRING\s+"([^"]*)"\s*$/m, header)
    mix = Mix.Project.config()[:version]
    app = to_string(Application.spec(:well_behaved, :vsn))

    assert string == mix, "header #{string}, mix.exs #{mix}"
    assert app == mix, "application #{app}, mix.exs #{mix}"
    parts = "#{major}.#{minor}.#{patch}"
    assert parts == mix, "header's parts #{parts}, mix.exs #{mix}"

    # the integer, as the C preprocessor reads it
    assert preprocessed("WB_SDK_VERSION") == major * 1_000_000 + minor * 1000 + patch
  end

  defp preprocessed(macro) do
    erts = Path.join([:code.root_dir(), "erts-#{:erlang.system_info(:version)}", "include"])

    source =
      Path.join(System.tmp_dir!(), "wb_sdk_version_#{System.unique_integer([:positive])}.c")

    File.write!(source, "#include <wb_runtime.h>\nwb_value_ = #{macro};\n")

    try do
      {out, 0} =
        System.cmd(
          System.get_env("CC", "cc"),
          ["-E", "-P", "-Ic_src/include", "-I#{erts}", source],
          stderr_to_stdout: true
        )

      [_, expression] = Regex.run(~r/^wb_value_ = (.*);$/m, out)
      {value, _} = Code.eval_string(expression)
      value
    after
      File.rm(source)
    end
  end

  test "a job written against the 0.1 header loads and runs in every mode" do
    adler = Function.capture(@v0, :adler, 4)

    for size <- [0, 1, 5552, 100_000, 1_000_000],
        mode <- Runtime.modes(@v0),
        tiny <- [false, true],
        not tiny or size <= 5552 do
      data = :crypto.strong_rand_bytes(size)
      got = Job.call(adler, [data], schedule: mode, tiny_slices: tiny)
      want = :erlang.adler32(data)
      assert got == want, "#{inspect(got)} != #{inspect(want)}: #{size} bytes, #{mode} #{tiny}"
    end

    assert Job.call(adler, [:not_a_binary]) == {:error, :badarg}
    # two arguments to wb_runtime_load: no load_info, the default slice
    assert %{slice_source: :default, live_jobs: 0} = Runtime.stats(@v0)
  end

  test "a refused job type fails the load with {:error, {:load_failed, reason}}" do
    # through `use WellBehaved.NIF`: the module's @on_load fails with the reason
    log = capture_log(fn -> define_stub(@refused, library("sdk_v0_refused_nif")) end)
    reason = {:error, {:load_failed, {:job_type, 0, {:callback_missing, :step}}}}

    assert String.replace(log, ~r/\s+/, "") =~ String.replace(inspect(reason), " ", ""),
           "#{inspect(reason)} not in the log: #{log}"

    refute :code.is_loaded(@refused)

    # every refusal, through a stub module written by hand (the build's
    # load callback breaks its type as the load_info integer says)
    Code.compile_string("""
    defmodule #{inspect(@refused)} do
      def load(flaw) do
        WellBehaved.SDK.load_result(:erlang.load_nif(#{inspect(library("sdk_v0_refused_nif"))}, flaw))
      end

      def adler(_data, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
      def runtime_stats, do: :erlang.nif_error(:nif_not_loaded)
      def runtime_configure(_, _, _, _), do: :erlang.nif_error(:nif_not_loaded)
    end
    """)

    expected = [
      {1, {:job_type, 0, :no_name}},
      {2, {:job_type, 0, :argc_out_of_range}},
      {3, {:job_type, 0, :args_size_too_large}},
      {4, {:job_type, 0, {:callback_missing, :decode}}},
      {5, {:job_type, 0, {:callback_missing, :predict}}},
      {6, {:job_type, 0, {:callback_missing, :init}}},
      {7, {:job_type, 0, {:callback_missing, :step}}},
      {8, {:job_type, 0, {:callback_missing, :result_or_take_result}}},
      {9, {:job_type, 0, :both_result_and_take_result}},
      {10, {:too_many_job_types, 32}},
      {11, :no_job_types},
      {12, {:job_type, 1, {:callback_missing, :step}}}
    ]

    # (a variable: the module is defined by this test)
    refused = @refused

    for {flaw, reason} <- expected do
      got = refused.load(flaw)
      want = {:error, {:load_failed, reason}}
      assert got == want, "flaw #{flaw}: #{inspect(got)} != #{inspect(want)}"
    end

    # none of those loads left the library in place
    assert_raise ErlangError, ~r/nif_not_loaded/, fn -> refused.runtime_stats() end
  end

  test "load_result/1 passes other answers through and checks its argument" do
    other = {:error, {:load, ~c"Library load-call unsuccessful (1)."}}
    assert SDK.load_result(other) == other
    # "WB" codes with no problem of the runtime's
    for code <- [0x5742_0000, 0x5742_00FF, 0x5742_0100 + 11] do
      error = {:error, {:load, ~c"Library load-call unsuccessful (#{code})."}}
      assert SDK.load_result(error) == error, "#{code}: #{inspect(SDK.load_result(error))}"
    end

    assert SDK.load_result(:ok) == :ok
    assert SDK.load_result({:error, {:reload, ~c"x"}}) == {:error, {:reload, ~c"x"}}

    assert_raise ArgumentError,
                 ~r/load_result\/1: invalid answer :error, expected what :erlang.load_nif/,
                 fn -> SDK.load_result(:error) end
  end
end
