defmodule Mix.Tasks.WellBehaved.New do
  @shortdoc "Creates a project with a NIF job of its own on the WellBehaved SDK"

  @moduledoc """
  Creates a Mix project whose NIF library is built on WellBehaved's C SDK,
  or with `--rust` on its Rust crate: one small job, its Elixir function,
  and tests in every scheduling mode, ready for
  `mix deps.get && mix test`.

      mix well_behaved.new PATH [--app NAME] [--module MODULE]
        [--path WELL_BEHAVED_DIR | --git URL] [--rust]

  The task is there wherever the library is compiled: in a project that
  depends on `well_behaved`, and in a checkout of WellBehaved itself.

  The application's name is the last part of `PATH` unless `--app` gives
  it: a lowercase ASCII letter, then lowercase letters, digits and
  underscores. The module is its camel case (`my_job` gives `MyJob`)
  unless `--module` gives it. `PATH` must not exist, or be an empty
  directory.

  The project depends on `well_behaved` by path, on the source tree of the
  WellBehaved that runs the task (written relative to the project when
  both share a directory besides `/`), or on `--path` (read from the
  current directory, written the same way), or on the git repository
  `--git`.

  The files, for `mix well_behaved.new my_job`:

    * `mix.exs` - `compilers: [:well_behaved_make] ++ Mix.compilers()` and
      the dependency;
    * `Makefile` - `$(MIX_APP_PATH)/priv/my_job_nif.so` from
      `c_src/my_job_nif.c` and the SDK's `$(WB_SOURCES)`;
    * `c_src/my_job_nif.c` - the job type `count_byte` (how many bytes of a
      binary equal a given byte, a budget of bytes per step), its job NIF
      and the library's `WB_NIF_INIT`;
    * `lib/my_job.ex` - `MyJob.count_byte/3` over `WellBehaved.Job.call/4`;
      `lib/my_job/native.ex` - the stubs, `use WellBehaved.NIF`;
    * `test/my_job_test.exs` - the job against an Elixir reference in every
      mode, with and without one byte per slice, and its refusals;
    * `README.md`, `.formatter.exs`, `.gitignore`, `.clang-format`.

  With `--rust`, the same job, function and tests, the job written in Rust
  on the SDK's crate `well_behaved` (`guides/rust.md`); building it needs
  cargo, Rust 1.63 or later. In place of the Makefile, the C file and
  `.clang-format`:

    * `mix.exs` - `compilers: [:well_behaved_cargo] ++ Mix.compilers()`,
      `well_behaved_crates: [my_job: [path: "native/my_job", library:
      "my_job_nif"]]` and the dependency;
    * `native/my_job/Cargo.toml` - the crate `my_job`, a `cdylib`,
      depending on the `well_behaved` crate by path: the dependency's
      `rust/well_behaved` (`../../deps/well_behaved/rust/well_behaved`
      with `--git`);
    * `native/my_job/build.rs` - links the runtime the `well_behaved`
      crate compiles into the library;
    * `native/my_job/src/lib.rs` - the job `count_byte` (the `Job` trait)
      and `well_behaved::nif_init!`;
    * `.gitignore` also ignores the crate's `target/` and `Cargo.lock`.

  `examples/checksum/` in WellBehaved is the fuller reference: a C++ job,
  a server program for `schedule: :external` and a release;
  `examples/hash_sort/` is its counterpart in Rust.
  """

  use Mix.Task

  alias Mix.Tasks.WellBehaved.New.Templates

  @switches [app: :string, module: :string, path: :string, git: :string, rust: :boolean]

  # this file's source tree: WellBehaved's root (a checkout, or deps/well_behaved)
  @root Path.expand("../../..", __DIR__)

  @impl true
  def run(argv) do
    case OptionParser.parse(argv, strict: @switches) do
      {opts, [path], []} ->
        generate(path, opts)

      {_opts, _args, [{switch, _} | _]} ->
        Mix.raise("mix well_behaved.new: unknown or malformed option #{switch}. " <> usage())

      {_opts, [], []} ->
        Mix.raise("mix well_behaved.new: expected the project's PATH. " <> usage())

      {_opts, args, []} ->
        Mix.raise(
          "mix well_behaved.new: expected one PATH, got #{length(args)}: " <>
            "#{Enum.join(args, " ")}. " <> usage()
        )
    end
  end

  defp usage do
    "Usage: mix well_behaved.new PATH [--app NAME] [--module MODULE] " <>
      "[--path WELL_BEHAVED_DIR | --git URL] [--rust]"
  end

  defp generate(path, opts) do
    target = Path.expand(path)
    app = opts[:app] || Path.basename(target)
    check_app!(app)
    module = opts[:module] || Macro.camelize(app)
    check_module!(module)
    check_target!(target)
    {dep, tree} = dependency(opts, target)
    assigns = [app: app, module: module, dep: dep]

    # the crate's path to the SDK's crate: checked before anything is written
    assigns =
      if opts[:rust],
        do: assigns ++ [rust: true, crate_dep: crate!(tree, target, app)],
        else: assigns ++ [rust: false]

    for {file, content} <- Templates.render(assigns) do
      Mix.Generator.create_file(Path.join(target, file), content, force: true)
    end

    {job_file, language, needs} =
      if opts[:rust],
        do:
          {"native/#{app}/src/lib.rs", "Rust", " (cargo, Rust 1.63 or later, builds the crate)"},
        else: {"c_src/#{app}_nif.c", "C", ""}

    Mix.shell().info("""

    Your project is ready: the job count_byte in #{job_file}, called by
    #{module}.count_byte/3. Build and test it with#{needs}:

        cd #{Path.relative_to_cwd(target)}
        mix deps.get
        mix test

    Then put your own work in its place (the #{language} file's comments say where).
    """)
  end

  defp check_app!(app) do
    cond do
      not (app =~ ~r/^[a-z][a-z0-9_]*$/) ->
        Mix.raise(
          "mix well_behaved.new: invalid application name #{inspect(app)}: it must start " <>
            "with a lowercase ASCII letter, followed by lowercase ASCII letters, digits or " <>
            "underscores. Name the directory so, or pass --app NAME"
        )

      app == "well_behaved" ->
        Mix.raise(
          "mix well_behaved.new: the application cannot be named well_behaved, the name of " <>
            "its dependency: pass --app NAME"
        )

      true ->
        :ok
    end
  end

  defp check_module!(module) do
    cond do
      not (module =~ ~r/^[A-Z][a-zA-Z0-9_]*(\.[A-Z][a-zA-Z0-9_]*)*$/) ->
        Mix.raise(
          "mix well_behaved.new: invalid module name #{inspect(module)}: expected an alias " <>
            "such as MyJob or My.Job (ASCII letters, digits and underscores, each part " <>
            "starting with an uppercase letter)"
        )

      # the C side names the module Elixir.<module>.Native itself
      String.starts_with?(module, "Elixir.") ->
        Mix.raise(
          "mix well_behaved.new: invalid module name #{inspect(module)}: give it without " <>
            "the Elixir. prefix"
        )

      Code.ensure_loaded?(Module.concat([module])) ->
        Mix.raise(
          "mix well_behaved.new: the module name #{module} is already taken: " <>
            "pass --module MODULE"
        )

      true ->
        :ok
    end
  end

  defp check_target!(target) do
    cond do
      File.regular?(target) ->
        Mix.raise("mix well_behaved.new: #{target} is a file, not a directory")

      File.dir?(target) and File.ls!(target) != [] ->
        Mix.raise(
          "mix well_behaved.new: the directory #{target} exists and is not empty: " <>
            "give a new or empty directory"
        )

      true ->
        :ok
    end
  end

  # the dependency's tuple, as written in mix.exs, and where its source tree
  # is: {:path, expanded dir}, or :deps (git: fetched into the project's deps/)
  defp dependency(opts, target) do
    case {opts[:path], opts[:git]} do
      {nil, nil} ->
        if not File.regular?(Path.join(@root, "mix.exs")) do
          Mix.raise(
            "mix well_behaved.new: the WellBehaved source tree this task was compiled " <>
              "from (#{@root}) is gone: pass --path WELL_BEHAVED_DIR or --git URL"
          )
        end

        path_dep(@root, target)

      {path, nil} ->
        dir = Path.expand(path)

        if not File.regular?(Path.join(dir, "mix.exs")) do
          Mix.raise(
            "mix well_behaved.new: --path #{path} is not a WellBehaved source tree " <>
              "(no mix.exs in #{dir})"
          )
        end

        path_dep(dir, target)

      {nil, url} ->
        {"{:well_behaved, git: #{inspect(url)}}", :deps}

      {_path, _url} ->
        Mix.raise("mix well_behaved.new: give --path or --git, not both")
    end
  end

  defp path_dep(dir, target),
    do: {"{:well_behaved, path: #{inspect(relative(dir, target))}}", {:path, dir}}

  # the path of the `well_behaved` crate as the project's Cargo.toml writes
  # it, from the crate's directory native/<app>: the source tree's
  # rust/well_behaved, in deps/ for a git dependency
  defp crate!(:deps, _target, _app), do: "../../deps/well_behaved/rust/well_behaved"

  defp crate!({:path, dir}, target, app) do
    crate = Path.join(dir, "rust/well_behaved")

    if not File.regular?(Path.join(crate, "Cargo.toml")) do
      Mix.raise(
        "mix well_behaved.new: --rust needs the Rust crate of WellBehaved, and the source " <>
          "tree #{dir} has none (no rust/well_behaved/Cargo.toml): give --path a newer " <>
          "WellBehaved, or --git URL"
      )
    end

    relative(crate, Path.join([target, "native", app]))
  end

  @doc false
  # `dir` as written in the project `target`'s mix.exs: relative when the
  # two share a directory besides the root, else absolute (both expanded)
  @spec relative(Path.t(), Path.t()) :: Path.t()
  def relative(dir, target) do
    dir_parts = Path.split(dir)
    target_parts = Path.split(target)

    common =
      Enum.zip(dir_parts, target_parts)
      |> Enum.take_while(fn {a, b} -> a == b end)
      |> length()

    if common <= 1 do
      dir
    else
      ups = List.duplicate("..", length(target_parts) - common)

      case ups ++ Enum.drop(dir_parts, common) do
        [] -> "."
        parts -> Path.join(parts)
      end
    end
  end
end
