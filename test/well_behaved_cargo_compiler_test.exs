defmodule Mix.Tasks.Compile.WellBehavedCargoTest do
  # The :well_behaved_cargo compiler builds a crate with cargo in the
  # environment :well_behaved_make gives make, copies its library and
  # server program to the app's priv/ only when they changed (a new file,
  # renamed into place), and stops with a message naming what is wrong:
  # no cargo, no C compiler, a Rust too old, a dependency on another
  # WellBehaved crate, a crate that does not compile, a bad configuration.
  #
  # The projects are written in a temporary directory. `mix compile` runs
  # in them as a user runs it, with `--no-deps-check`: their dependency on
  # this checkout is the build this test runs from (its lib/well_behaved,
  # linked into the project's _build), which Mix then loads without
  # compiling it again. The checks that stop before cargo runs are made in
  # this VM instead (Mix.Project.in_project/4), which takes milliseconds.
  use ExUnit.Case, async: false

  alias Mix.Tasks.Compile.WellBehavedCargo
  alias WellBehaved.SDK

  @root Path.expand("..", __DIR__)
  # the variables both compilers pass (Mix.WellBehaved.BuildEnv)
  @vars ~w(CC CXX MIX_APP_PATH MIX_ENV ERTS_INCLUDE_DIR WB_INCLUDE_DIR WB_SOURCES
           WB_EXTERNAL_SOURCES EI_INCLUDE_DIR EI_LIB_DIR)

  setup do
    dir = Path.join(System.tmp_dir!(), "wb_cargo_test_#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)
    on_exit(fn -> File.rm_rf!(dir) end)
    {:ok, dir: dir}
  end

  @lib_rs """
  #[no_mangle]
  pub extern "C" fn answer() -> i32 {
      42
  }
  """

  # the variables the build script sees, one NAME=value a line, in the
  # app's build directory
  @cargo_vars ~w(CARGO_TARGET_DIR CARGO_NET_OFFLINE)
  @build_rs """
  use std::io::Write;

  fn main() {
      let dir = std::env::var("MIX_APP_PATH").expect("MIX_APP_PATH");
      let mut out = std::fs::File::create(format!("{}/cargo_env.txt", dir)).unwrap();
      for name in [#{Enum.map_join(@vars ++ @cargo_vars, ", ", &inspect/1)}] {
          writeln!(out, "{}={}", name, std::env::var(name).unwrap_or_default()).unwrap();
      }
  }
  """

  # a project in `dir` with the crate `answer` (package answer-crate) in
  # native/answer: `toml` is added to its Cargo.toml's [package] section,
  # `deps` after it; `crates` is the project's well_behaved_crates
  defp project!(dir, opts \\ []) do
    n = System.unique_integer([:positive])
    app = :"cargo_fixture_#{n}"
    crate = Path.join(dir, "native/answer")
    File.mkdir_p!(Path.join(crate, "src/bin"))

    crates =
      Keyword.get(opts, :crates,
        answer: [path: "native/answer", library: "answer_nif", server: "x_server"]
      )

    compilers = Keyword.get(opts, :compilers, [:well_behaved_cargo])

    File.write!(Path.join(dir, "mix.exs"), """
    defmodule CargoFixture#{n}.MixProject do
      use Mix.Project

      def project do
        [
          app: #{inspect(app)},
          version: "0.1.0",
          compilers: #{inspect(compilers)} ++ Mix.compilers(),
          deps: [{:well_behaved, path: #{inspect(@root)}}],
          well_behaved_crates: #{inspect(crates)}
        ]
      end
    end
    """)

    File.write!(Path.join(crate, "Cargo.toml"), """
    [package]
    name = "answer-crate"
    version = "0.1.0"
    edition = "2021"
    #{opts[:toml]}
    [lib]
    crate-type = ["cdylib", "rlib"]
    #{opts[:deps]}
    """)

    File.write!(Path.join(crate, "src/lib.rs"), Keyword.get(opts, :lib_rs, @lib_rs))

    File.write!(
      Path.join(crate, "src/bin/x_server.rs"),
      ~s|fn main() { println!("x_server up"); }\n|
    )

    if opts[:build_rs], do: File.write!(Path.join(crate, "build.rs"), @build_rs)

    # the dependency, built: this test's own build of the library
    lib = Path.join(dir, "_build/dev/lib")
    File.mkdir_p!(lib)
    File.ln_s!(to_string(:code.lib_dir(:well_behaved)), Path.join(lib, "well_behaved"))

    %{dir: dir, app: app, crate: crate, app_path: Path.join(lib, Atom.to_string(app))}
  end

  # `mix compile` in the project, bounded; env: more variables
  defp mix_compile(project, env \\ []) do
    System.cmd(
      "timeout",
      ["--signal=KILL", "300", System.find_executable("mix"), "compile", "--no-deps-check"],
      cd: project.dir,
      env: [{"MIX_ENV", "dev"} | env],
      stderr_to_stdout: true
    )
  end

  # the compiler run in this VM on the project, its configuration changed
  # by `config`
  defp run_here(project, config \\ []) do
    Mix.Project.in_project(project.app, project.dir, config, fn _ -> WellBehavedCargo.run([]) end)
  end

  defp stat!(path) do
    %File.Stat{inode: inode, mtime: mtime} = File.stat!(path, time: :posix)
    {inode, mtime}
  end

  defp env_file(path) do
    for line <- String.split(File.read!(path), "\n", trim: true), into: %{} do
      [name, value] = String.split(line, "=", parts: 2)
      {name, value}
    end
  end

  test "builds the library and the server into priv/, and copies only what changed",
       %{dir: dir} do
    # :well_behaved_make first, its Makefile writing the variables make sees
    project = project!(dir, build_rs: true, compilers: [:well_behaved_make, :well_behaved_cargo])

    File.write!(Path.join(dir, "Makefile"), """
    $(MIX_APP_PATH)/make_env.txt:
    \t@mkdir -p $(@D)
    \t@for v in #{Enum.join(@vars, " ")}; do printenv "$$v" | sed "s|^|$$v=|"; done > $@
    """)

    {out, status} = mix_compile(project)
    assert status == 0, out
    assert out =~ ~r/^Compiling answer-crate v0\.1\.0 \(/m
    refute out =~ "Finished"

    priv = Path.join(project.app_path, "priv")
    library = Path.join(priv, "answer_nif.so")
    server = Path.join(priv, "x_server")
    assert Enum.sort(File.ls!(priv)) == ["answer_nif.so", "x_server"]

    {symbols, 0} = System.cmd("nm", ["-D", "--defined-only", library])
    assert symbols =~ ~r/ T answer$/m
    assert System.cmd(server, []) == {"x_server up\n", 0}

    # cargo's build in the app's build directory, none in the crate
    target = Path.join(project.app_path, "cargo")
    assert File.read!(library) == File.read!(Path.join(target, "release/libanswer_crate.so"))
    refute File.exists?(Path.join(project.crate, "target"))

    # the crate's build script saw the variables make sees, and cargo's own
    cargo_env = env_file(Path.join(project.app_path, "cargo_env.txt"))
    make_env = env_file(Path.join(project.app_path, "make_env.txt"))
    assert Map.take(cargo_env, @vars) == make_env
    assert cargo_env["WB_SOURCES"] == Enum.join(SDK.sources(), " ")
    assert cargo_env["WB_EXTERNAL_SOURCES"] == Enum.join(SDK.external_sources(), " ")
    assert cargo_env["WB_INCLUDE_DIR"] == SDK.include_dir()
    assert cargo_env["MIX_APP_PATH"] == project.app_path
    assert cargo_env["MIX_ENV"] == "dev"
    assert File.regular?(Path.join(cargo_env["ERTS_INCLUDE_DIR"], "erl_nif.h"))
    assert cargo_env["CARGO_TARGET_DIR"] == target
    assert cargo_env["CARGO_NET_OFFLINE"] == "true"

    # nothing changed: nothing built, nothing written
    before = {stat!(library), stat!(server)}
    {out, 0} = mix_compile(project)
    refute out =~ "Compiling"
    assert {stat!(library), stat!(server)} == before

    # a changed source: built again, the library a new file beside the old
    old_bytes = File.read!(library)
    File.write!(Path.join(project.crate, "src/lib.rs"), String.replace(@lib_rs, "42", "43"))
    {out, 0} = mix_compile(project)
    assert out =~ "Compiling answer-crate"
    {{old_inode, _}, _} = before
    assert elem(stat!(library), 0) != old_inode
    assert File.read!(library) != old_bytes
    assert File.read!(library) == File.read!(Path.join(target, "release/libanswer_crate.so"))
    assert File.read!(server) == File.read!(Path.join(target, "release/x_server"))
    assert Enum.sort(File.ls!(priv)) == ["answer_nif.so", "x_server"]
  end

  test "without cargo on the PATH, the build names it", %{dir: dir} do
    project = project!(dir)

    path =
      ~w(mix erl cc make timeout)
      |> Enum.map(&Path.dirname(System.find_executable(&1)))
      |> Enum.uniq()

    # else the test would prove nothing
    refute Enum.any?(path, &File.exists?(Path.join(&1, "cargo")))

    {out, status} = mix_compile(project, [{"PATH", Enum.join(path, ":")}])
    assert status != 0

    assert out =~
             "building the Rust NIF crate answer needs cargo, which is not installed: " <>
               "install Rust (rustup, https://rustup.rs, or Debian: apt-get install cargo)"

    refute File.exists?(Path.join(project.app_path, "priv"))
  end

  test "a dependency on another well_behaved crate: the message gives the path to write",
       %{dir: dir} do
    # `version = "=99.0.0"`: with the right path, cargo then refuses the
    # crate itself, at once, whatever the SDK crate holds
    project =
      project!(dir,
        deps: "[dependencies]\nwell_behaved = { version = \"=99.0.0\", path = '../elsewhere' }"
      )

    {out, status} = mix_compile(project)
    assert status != 0
    assert out =~ ~s(the Rust NIF crate answer depends on well_behaved at "../elsewhere")

    [right] =
      Regex.run(~r/write well_behaved = \{ path = "([^"]+)" \} in its \[dependencies\]/, out,
        capture: :all_but_first
      )

    assert Path.expand(right, project.crate) == SDK.rust_crate_dir()
    refute File.exists?(Path.join(project.app_path, "cargo"))

    # the path it gives passes the check: cargo runs
    manifest = Path.join(project.crate, "Cargo.toml")
    File.write!(manifest, String.replace(File.read!(manifest), "'../elsewhere'", inspect(right)))
    {out, status} = mix_compile(project)
    assert status != 0
    refute out =~ "depends on well_behaved at"
    assert out =~ "building the Rust NIF crate answer failed: cargo exited with status 101"
  end

  test "the dependency is found however Cargo.toml writes it", %{dir: dir} do
    project = project!(dir)
    manifest = Path.join(project.crate, "Cargo.toml")
    toml = File.read!(manifest)

    for deps <- [
          ~s([dependencies.well_behaved]\npath = "../../elsewhere"),
          ~s([dependencies]\nwell_behaved.path = "../../elsewhere"),
          ~s([dependencies]\n"well_behaved" = { path = "../../elsewhere" } # the SDK),
          ~s([dependencies]\nwb = { package = "well_behaved", path = '../../elsewhere' })
        ] do
      File.write!(manifest, toml <> deps <> "\n")

      assert_raise Mix.Error, ~r/depends on well_behaved at "..\/..\/elsewhere"/, fn ->
        run_here(project)
      end
    end
  end

  test "a crate that does not compile: cargo's errors, then the crate and status", %{dir: dir} do
    project =
      project!(dir, lib_rs: ~s|#[no_mangle]\npub extern "C" fn answer() -> i32 { "42" }\n|)

    {out, status} = mix_compile(project)
    assert status != 0
    assert out =~ "error[E0308]: mismatched types"
    assert out =~ "src/lib.rs:2:"
    assert out =~ "building the Rust NIF crate answer failed: cargo exited with status 101"
    refute File.exists?(Path.join(project.app_path, "priv"))
  end

  test "rust-version: a newer one than cargo's stops the build, naming both", %{dir: dir} do
    project = project!(dir, toml: ~s(rust-version = "99.1"))
    {version, 0} = System.cmd("cargo", ["--version"])
    [installed] = Regex.run(~r/^cargo (\S+)/, version, capture: :all_but_first)

    message =
      "the Rust NIF crate answer needs Rust 99.1 (rust-version in native/answer/Cargo.toml), " <>
        "and cargo is #{installed}: update Rust (rustup update)"

    assert_raise Mix.Error, message, fn -> run_here(project) end

    # an older one builds: :ok, then :noop with nothing to do
    manifest = Path.join(project.crate, "Cargo.toml")
    File.write!(manifest, String.replace(File.read!(manifest), "99.1", "1.56"))
    shell = Mix.shell()
    Mix.shell(Mix.Shell.Process)

    try do
      assert run_here(project) == {:ok, []}
      assert_received {:mix_shell, :info, ["Compiling answer-crate v0.1.0 " <> _]}
      assert run_here(project) == {:noop, []}
      refute_received {:mix_shell, :info, ["Compiling" <> _]}
    after
      Mix.shell(shell)
    end
  end

  test "a missing C compiler is named as :well_behaved_make names it", %{dir: dir} do
    project = project!(dir)
    cc = "no_such_cc_#{System.unique_integer([:positive])}"
    old = System.get_env("CC")
    System.put_env("CC", cc)

    message =
      "needs a C compiler (#{cc}), which is not installed: install it " <>
        "(Debian: apt-get install gcc)"

    try do
      error = assert_raise Mix.Error, fn -> run_here(project) end
      assert error.message == "building the Rust NIF crate answer " <> message

      make = fn _ -> Mix.Tasks.Compile.WellBehavedMake.run([]) end
      error = assert_raise Mix.Error, fn -> Mix.Project.in_project(project.app, dir, make) end
      assert error.message == "building the NIF library " <> message
    after
      if old, do: System.put_env("CC", old), else: System.delete_env("CC")
    end
  end

  test "a bad well_behaved_crates names the option, the crate and what is accepted",
       %{dir: dir} do
    project = project!(dir, crates: [])
    crate = "invalid well_behaved_crates in mix.exs: the crate answer has "

    bad = [
      {"native/answer",
       ~s(invalid well_behaved_crates in mix.exs: "native/answer", expected a keyword list)},
      {[{"answer", [path: "native/answer"]}], "expected a keyword list of crates"},
      {[answer: "native/answer"],
       crate <>
         ~s("native/answer", expected a keyword list of options (:path, required; ) <>
         ":library; :server)"},
      {[answer: [library: "x"]],
       crate <> "no :path, the crate's directory relative to the project"},
      {[answer: [path: :native]],
       crate <>
         "path: :native, expected the crate's directory relative to the project, " <>
         "a string"},
      {[answer: [path: "native/answer", lib: "x"]],
       crate <> "the unknown option :lib, expected :path (required), :library or :server"},
      {[answer: [path: "native/answer", server: "../x"]],
       crate <> ~s(server: "../x", expected a file name)},
      {[answer: [path: "native/answer", library: :x]],
       crate <> "library: :x, expected a file name"},
      {[answer: [path: "native/none"]], crate <> ~s(path: "native/none", which has no Cargo.toml)}
    ]

    for {crates, message} <- bad do
      error = assert_raise Mix.Error, fn -> run_here(project, well_behaved_crates: crates) end
      assert error.message =~ message
    end

    # no crates: nothing to do
    assert run_here(project, well_behaved_crates: []) == {:noop, []}
  end
end
