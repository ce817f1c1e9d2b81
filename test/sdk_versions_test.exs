defmodule WellBehaved.SDKVersionsTest do
  # The SDK's version in wb_runtime.h is the library's (mix.exs); a NIF
  # library written against the 0.1 header (c_src/test/sdk_v0_job.c, its
  # load callback calling wb_runtime_load with two arguments) still builds
  # with -Werror, loads through `use WellBehaved.NIF` and runs in every
  # mode.
  use ExUnit.Case, async: false

  alias WellBehaved.{Job, Runtime}

  @moduletag timeout: 180_000
  @header "c_src/include/wb_runtime.h"
  @v0 WellBehaved.Test.SDKv0

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
end
