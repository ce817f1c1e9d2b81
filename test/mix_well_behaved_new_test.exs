defmodule Mix.Tasks.WellBehaved.NewTest do
  # `mix well_behaved.new` writes a project whose files follow the SDK's
  # conventions, with the dependency and names it was given, and refuses
  # bad names, options and a non-empty directory without writing anything.
  # The generated NIF library builds with its Makefile (the variables the
  # :well_behaved_make compiler passes), its generated tests pass in a VM
  # of their own, and its function loaded here agrees with a reference in
  # every mode. With --rust, the same Elixir files and a crate in place of
  # the C ones, whose path to the SDK's crate follows the dependency; the
  # project's own `mix test` builds it with cargo and passes.
  use ExUnit.Case, async: false

  alias Mix.Tasks.WellBehaved.New
  alias WellBehaved.{Job, Runtime, SDK, Testing}

  @moduletag timeout: 600_000
  @root Path.expand("../", __DIR__)

  setup do
    dir = Path.join(System.tmp_dir!(), "wb_new_test_#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)
    shell = Mix.shell()
    Mix.shell(Mix.Shell.Process)

    on_exit(fn ->
      Mix.shell(shell)
      File.rm_rf!(dir)
    end)

    {:ok, dir: dir}
  end

  defp files(project) do
    Path.wildcard(Path.join(project, "**/*"), match_dot: true)
    |> Enum.filter(&File.regular?/1)
    |> Enum.map(&Path.relative_to(&1, project))
    |> Enum.sort()
  end

  defp dep(project) do
    [_, dep] =
      Regex.run(~r/^\s*(\{:well_behaved, .*\})$/m, File.read!(Path.join(project, "mix.exs")))

    {value, _} = Code.eval_string(dep)
    value
  end

  # the path of the well_behaved crate in the project's Cargo.toml
  defp crate_dep(project, app) do
    toml = File.read!(Path.join([project, "native", app, "Cargo.toml"]))
    [_, path] = Regex.run(~r/^well_behaved = \{ path = "([^"]*)" \}$/m, toml)
    path
  end

  test "the project's files, named after the path", %{dir: dir} do
    project = Path.join(dir, "my_job")
    New.run([project])

    assert files(project) ==
             Enum.sort(~w(.clang-format .formatter.exs .gitignore Makefile README.md mix.exs
                 c_src/my_job_nif.c lib/my_job.ex lib/my_job/native.ex test/my_job_test.exs
                 test/test_helper.exs))

    assert_received {:mix_shell, :info, ["* creating " <> _]}

    # the dependency: this checkout, by a path that leads to it from the project
    assert {:well_behaved, path: path} = dep(project)
    assert Path.expand(path, project) == @root

    mix = File.read!(Path.join(project, "mix.exs"))
    assert mix =~ "defmodule MyJob.MixProject do"
    assert mix =~ "app: :my_job,"
    assert mix =~ "compilers: [:well_behaved_make] ++ Mix.compilers()"

    make = File.read!(Path.join(project, "Makefile"))
    assert make =~ "NIF := $(MIX_APP_PATH)/priv/my_job_nif.so"
    assert make =~ "OBJ := $(MIX_APP_PATH)/obj"
    assert make =~ "-std=c11 -Wall -Wextra -Werror -O2 -fPIC"
    assert make =~ "$(WB_SOURCES)"
    # every recipe line starts with a tab, as make needs
    assert make =~ ~r/^\t\$\(CC\) -shared -o \$@ \$\^$/m
    refute make =~ ~r/^ +\$\(CC\)/m

    c = File.read!(Path.join(project, "c_src/my_job_nif.c"))
    assert c =~ "#include <wb_runtime.h>"
    assert c =~ "WB_JOB_NIF(count_byte, count_byte_job)"
    assert c =~ ~s({"count_byte", 5, count_byte, 0},)
    assert c =~ "WB_NIF_INIT(Elixir.MyJob.Native, nif_funcs, types)"

    for callback <- ~w(decode predict init bind step result),
        do: assert(c =~ ".#{callback} = count_#{callback},")

    native = File.read!(Path.join(project, "lib/my_job/native.ex"))
    assert native =~ "defmodule MyJob.Native do"

    assert native =~
             ~s(use WellBehaved.NIF, otp_app: :my_job, library: "my_job_nif", jobs: [count_byte: 2])

    lib = File.read!(Path.join(project, "lib/my_job.ex"))

    for part <- ["@moduledoc", "@doc", "@spec count_byte(", "Job.call(&MyJob.Native.count_byte/5"],
        do: assert(lib =~ part)

    test = File.read!(Path.join(project, "test/my_job_test.exs"))
    assert test =~ "doctest MyJob"
    assert test =~ "for mode <- Runtime.modes() do"
    assert test =~ "Testing.modes_agree("

    # the Elixir files as `mix format` leaves them
    for file <- files(project), Path.extname(file) in [".ex", ".exs"] do
      source = File.read!(Path.join(project, file))
      assert IO.iodata_to_binary([Code.format_string!(source), "\n"]) == source, file
    end
  end

  test "--app and --module; an empty directory is taken", %{dir: dir} do
    project = Path.join(dir, "Not-An-App")
    File.mkdir_p!(project)
    New.run([project, "--app", "count_it", "--module", "Count.It"])

    assert "lib/count_it.ex" in files(project)
    assert "lib/count_it/native.ex" in files(project)
    assert "c_src/count_it_nif.c" in files(project)
    assert File.read!(Path.join(project, "lib/count_it.ex")) =~ "defmodule Count.It do"
    assert File.read!(Path.join(project, "mix.exs")) =~ "app: :count_it,"

    assert File.read!(Path.join(project, "c_src/count_it_nif.c")) =~
             "WB_NIF_INIT(Elixir.Count.It.Native, nif_funcs, types)"
  end

  test "--path is written relative to the project, --git as given", %{dir: dir} do
    checkout = Path.join(dir, "checkout")
    File.mkdir_p!(checkout)
    File.write!(Path.join(checkout, "mix.exs"), "")

    project = Path.join([dir, "projects", "by_path"])
    New.run([project, "--path", checkout])
    assert dep(project) == {:well_behaved, path: "../../checkout"}

    project = Path.join(dir, "by_git")
    New.run([project, "--git", "https://example.com/well_behaved.git"])
    assert dep(project) == {:well_behaved, git: "https://example.com/well_behaved.git"}
  end

  test "--rust: a crate in place of the C files, the same Elixir files and tests", %{dir: dir} do
    project = Path.join(dir, "my_job")
    New.run([project, "--rust"])

    assert files(project) ==
             Enum.sort(~w(.formatter.exs .gitignore README.md mix.exs native/my_job/Cargo.toml
                 native/my_job/build.rs native/my_job/src/lib.rs lib/my_job.ex
                 lib/my_job/native.ex test/my_job_test.exs test/test_helper.exs))

    assert_received {:mix_shell, :info, ["* creating " <> _]}
    assert_received {:mix_shell, :info, ["\nYour project is ready" <> _ = ready]}
    assert ready =~ "the job count_byte in native/my_job/src/lib.rs"
    assert ready =~ "Rust 1.63"

    # the Mix dependency as without --rust; the crate's, this checkout's crate
    assert {:well_behaved, path: path} = dep(project)
    assert Path.expand(path, project) == @root
    crate = Path.join(project, "native/my_job")
    assert Path.expand(crate_dep(project, "my_job"), crate) == SDK.rust_crate_dir()

    mix = File.read!(Path.join(project, "mix.exs"))
    assert mix =~ "defmodule MyJob.MixProject do"
    assert mix =~ "compilers: [:well_behaved_cargo] ++ Mix.compilers()"
    [_, crates] = Regex.run(~r/^\s*well_behaved_crates: (.*),$/m, mix)

    assert Code.eval_string(crates) ==
             {[my_job: [path: "native/my_job", library: "my_job_nif"]], []}

    toml = File.read!(Path.join(crate, "Cargo.toml"))

    for line <- [
          ~s(name = "my_job"),
          ~s(edition = "2021"),
          ~s(rust-version = "1.63"),
          ~s(crate-type = ["cdylib"]),
          ~s(panic = "unwind")
        ],
        do: assert(toml =~ ~r/^#{Regex.escape(line)}$/m, line)

    assert toml =~ ~r/\[lib\]\n(#.*\n)*crate-type/
    assert toml =~ ~r/\[profile\.release\]\n(#.*\n)*panic/

    build = File.read!(Path.join(crate, "build.rs"))
    assert build =~ ~s("cargo:rustc-link-arg-cdylib={}")
    assert build =~ ~s[std::env::var("DEP_WELL_BEHAVED_RUNTIME")]
    refute build =~ "link-arg-bins"

    lib = File.read!(Path.join(crate, "src/lib.rs"))
    assert lib =~ "impl Job for CountByte {"
    assert lib =~ "const ARGC: usize = 2;"
    assert lib =~ ~s[env.atom("byte_out_of_range")]
    assert lib =~ ~s(module: "Elixir.MyJob.Native",)
    assert lib =~ "jobs: { count_byte: CountByte },"

    gitignore = String.split(File.read!(Path.join(project, ".gitignore")), "\n")

    for line <- ~w(/_build/ /deps/ native/*/target/ native/*/Cargo.lock),
        do: assert(line in gitignore, line)

    readme = File.read!(Path.join(project, "README.md"))
    assert readme =~ "cargo, Rust 1.63 or later"
    assert readme =~ "native/my_job/src/lib.rs"

    # the Elixir side and its tests are the C project's
    c_project = Path.join(dir, "c/my_job")
    New.run([c_project])

    for file <- ~w(test/my_job_test.exs test/test_helper.exs .formatter.exs),
        do: assert(File.read!(Path.join(project, file)) == File.read!(Path.join(c_project, file)))

    # but for where their comments say the job is
    for file <- ~w(lib/my_job.ex lib/my_job/native.ex) do
      c = File.read!(Path.join(c_project, file))
      assert c =~ "c_src/my_job_nif.c"
      rust = File.read!(Path.join(project, file))
      refute rust =~ "c_src"

      assert rust ==
               c
               |> String.replace("c_src/my_job_nif.c", "native/my_job/src/lib.rs")
               |> String.replace("C SDK", "Rust crate"),
             file
    end

    for file <- files(project), Path.extname(file) in [".ex", ".exs"] do
      source = File.read!(Path.join(project, file))
      assert IO.iodata_to_binary([Code.format_string!(source), "\n"]) == source, file
    end
  end

  test "--rust: the crate's path follows --path and --git; --app names the crate",
       %{dir: dir} do
    checkout = Path.join(dir, "checkout")
    File.mkdir_p!(Path.join(checkout, "rust/well_behaved"))
    File.write!(Path.join(checkout, "mix.exs"), "")
    File.write!(Path.join(checkout, "rust/well_behaved/Cargo.toml"), "")

    project = Path.join([dir, "projects", "by_path"])
    New.run([project, "--rust", "--path", checkout])
    assert dep(project) == {:well_behaved, path: "../../checkout"}
    assert crate_dep(project, "by_path") == "../../../../checkout/rust/well_behaved"

    project = Path.join(dir, "by_git")
    New.run([project, "--git", "https://example.com/well_behaved.git", "--rust"])
    assert dep(project) == {:well_behaved, git: "https://example.com/well_behaved.git"}
    # fetched into deps/well_behaved
    assert crate_dep(project, "by_git") == "../../deps/well_behaved/rust/well_behaved"

    project = Path.join(dir, "Renamed")
    New.run([project, "--rust", "--app", "count_it", "--module", "Count.It", "--git", "u"])
    assert File.read!(Path.join(project, "native/count_it/Cargo.toml")) =~ ~s(name = "count_it")

    assert File.read!(Path.join(project, "native/count_it/src/lib.rs")) =~
             ~s(module: "Elixir.Count.It.Native",)

    assert File.read!(Path.join(project, "mix.exs")) =~
             ~s(well_behaved_crates: [count_it: [path: "native/count_it", library: "count_it_nif"]])

    # a source tree without the crate: refused, nothing written
    File.rm_rf!(Path.join(checkout, "rust"))
    refused = Path.join(dir, "refused")

    assert_raise Mix.Error,
                 ~r/--rust needs the Rust crate of WellBehaved.*no rust\/well_behaved/,
                 fn ->
                   New.run([refused, "--rust", "--path", checkout])
                 end

    refute File.exists?(refused)
  end

  test "relative paths: through the common directory, absolute when only / is shared" do
    assert New.relative("/a/b/c", "/a/d") == "../b/c"
    assert New.relative("/a/b", "/a/b/c/d") == "../.."
    assert New.relative("/a/b/c", "/a/b") == "c"
    assert New.relative("/a/b", "/a/b") == "."
    assert New.relative("/x/y", "/a/b") == "/x/y"
  end

  test "refusals name the problem and write nothing", %{dir: dir} do
    taken = Path.join(dir, "taken")
    File.mkdir_p!(Path.join(taken, "lib"))
    file = Path.join(dir, "a_file")
    File.write!(file, "x")
    no_mix = Path.join(dir, "no_mix")
    File.mkdir_p!(no_mix)
    at = &Path.join(dir, &1)

    refusals = [
      {[taken], ~r/the directory .*taken exists and is not empty/},
      {[file], ~r/a_file is a file, not a directory/},
      {[at.("1job")], ~r/invalid application name "1job": it must start with a lowercase/},
      {[at.("MyJob")], ~r/invalid application name "MyJob"/},
      {[at.("my-job")], ~r/invalid application name "my-job"/},
      {[at.("ok"), "--app", "my job"], ~r/invalid application name "my job"/},
      {[at.("well_behaved")], ~r/cannot be named well_behaved/},
      {[at.("ok"), "--module", "myJob"], ~r/invalid module name "myJob"/},
      {[at.("ok"), "--module", "My..Job"], ~r/invalid module name "My..Job"/},
      {[at.("ok"), "--module", "My-Job"], ~r/invalid module name "My-Job"/},
      {[at.("ok"), "--module", "Elixir.MyJob"], ~r/without the Elixir. prefix/},
      {[at.("ok"), "--module", "Enum"], ~r/the module name Enum is already taken/},
      {[at.("ok"), "--path", no_mix], ~r/--path .*no_mix is not a WellBehaved source tree/},
      {[at.("ok"), "--path", @root, "--git", "u"], ~r/give --path or --git, not both/},
      {[], ~r/expected the project's PATH\. Usage: mix well_behaved.new PATH/},
      {[at.("a"), at.("b")], ~r/expected one PATH, got 2/},
      {[at.("ok"), "--force"], ~r/unknown or malformed option --force/}
    ]

    for {args, message} <- refusals do
      assert_raise Mix.Error, message, fn -> New.run(args) end
    end

    assert File.ls!(taken) == ["lib"]
    assert File.read!(file) == "x"
    assert Enum.sort(File.ls!(dir)) == ["a_file", "no_mix", "taken"]
  end

  test "the generated library builds, its tests pass, and its function agrees in every mode",
       %{dir: dir} do
    n = System.unique_integer([:positive])
    app = "wb_new_probe_#{n}"
    module = "WbNewProbe#{n}"
    project = Path.join(dir, app)
    New.run([project])

    # what the :well_behaved_make compiler would pass, with the app's build
    # directory laid out as Mix does: lib/<app>/{priv,ebin}
    app_path = Path.join([dir, "build", "lib", app])
    erts = Path.join([:code.root_dir(), "erts-#{:erlang.system_info(:version)}", "include"])

    env = [
      {"MIX_APP_PATH", app_path},
      {"ERTS_INCLUDE_DIR", erts},
      {"WB_INCLUDE_DIR", SDK.include_dir()},
      {"WB_SOURCES", Enum.join(SDK.sources(), " ")},
      {"CC", System.get_env("CC", "cc")}
    ]

    {out, status} =
      System.cmd("make", ["--no-print-directory"], cd: project, env: env, stderr_to_stdout: true)

    assert status == 0, out
    assert File.regular?(Path.join([app_path, "priv", "#{app}_nif.so"]))

    # make again: nothing to do
    {out, 0} =
      System.cmd("make", ["--no-print-directory"], cd: project, env: env, stderr_to_stdout: true)

    assert out =~ "Nothing to be done"

    ebin = Path.join(app_path, "ebin")
    File.mkdir_p!(ebin)
    sources = Path.wildcard(Path.join(project, "lib/**/*.ex"))
    # loading the stub module runs its @on_load: :code.priv_dir/1 needs the ebin in the path
    Code.prepend_path(ebin)
    mod = Module.concat([module])
    native = Module.concat([module, Native])

    try do
      assert {:ok, modules, []} = Kernel.ParallelCompiler.compile_to_path(sources, ebin)
      assert Enum.sort(modules) == Enum.sort([mod, native])

      generated_tests_pass!(project, ebin)

      Testing.modes_agree(fn opts -> mod.count_byte("abracadabra", ?a, opts) end, 5, native)

      data = for _ <- 1..300_000, into: <<>>, do: <<Enum.random(?a..?d)>>
      want = length(:binary.matches(data, "b"))

      for mode <- Runtime.modes(),
          do: assert(mod.count_byte(data, ?b, schedule: mode) == want, "#{mode}")

      count = Function.capture(native, :count_byte, 5)
      assert Job.call(count, ["abc", 256], schedule: :yielding) == {:error, :byte_out_of_range}

      assert_raise ArgumentError, ~r/count_byte\/3: invalid byte 256/, fn ->
        mod.count_byte("abc", 256)
      end

      # the library's own runtime, apart from WellBehaved's
      assert Map.has_key?(Runtime.stats(native).ps_per_unit, :count_byte)
      refute Map.has_key?(Runtime.stats().ps_per_unit, :count_byte)
    after
      for m <- [mod, native] do
        :code.purge(m)
        :code.delete(m)
        :code.purge(m)
      end

      Code.delete_path(ebin)
    end
  end

  test "--rust: the project's own mix test builds its crate and passes", %{dir: dir} do
    n = System.unique_integer([:positive])
    app = "wb_new_rs_probe_#{n}"
    project = Path.join(dir, app)
    crate = Path.join(project, "native/#{app}")
    New.run([project, "--rust", "--path", @root])

    # the crate as `cargo fmt` leaves it with the repository's settings
    if rustfmt = System.find_executable("rustfmt") do
      config = Path.join(@root, "rustfmt.toml")
      sources = [Path.join(crate, "src/lib.rs"), Path.join(crate, "build.rs")]
      {out, status} = System.cmd(rustfmt, ["--check", "--config-path", config | sources])
      assert status == 0, "not as rustfmt writes it:\n" <> out
    end

    # the dependency, built: this test's own build of the library, linked
    # into the project's _build, which `--no-deps-check` has Mix load as it
    # is (the :well_behaved_cargo compiler's test does the same)
    lib = Path.join(project, "_build/test/lib")
    File.mkdir_p!(lib)
    File.ln_s!(to_string(:code.lib_dir(:well_behaved)), Path.join(lib, "well_behaved"))
    mix = System.find_executable("mix")

    {out, status} =
      System.cmd("timeout", ["--signal=KILL", "300", mix, "test", "--no-deps-check"],
        cd: project,
        env: [{"MIX_ENV", "test"}],
        stderr_to_stdout: true
      )

    assert status == 0, out
    # cargo built the crate, and the compiler put the library where the stubs load it
    assert out =~ ~r/^Compiling #{app} v0\.1\.0 \(/m, out
    assert File.regular?(Path.join([lib, app, "priv", "#{app}_nif.so"]))
    assert out =~ ~r/\b1 doctest, 5 tests, 0 failures/, out
  end

  # the project's own test files, in a VM of its own with WellBehaved's and
  # the generated modules' code paths
  defp generated_tests_pass!(project, ebin) do
    paths = [ebin, Path.dirname(:code.which(WellBehaved))]

    script = """
    {:ok, _} = Application.ensure_all_started(:well_behaved)
    Code.require_file("test/test_helper.exs")
    Code.require_file(hd(Path.wildcard("test/*_test.exs")))
    """

    args = Enum.flat_map(paths, &["-pa", &1]) ++ ["-e", script]
    elixir = System.find_executable("elixir")

    {out, status} =
      System.cmd("timeout", ["--signal=KILL", "300", elixir | args],
        cd: project,
        stderr_to_stdout: true
      )

    assert status == 0, out
    assert out =~ ~r/\b1 doctest, 5 tests, 0 failures/, out
  end
end
