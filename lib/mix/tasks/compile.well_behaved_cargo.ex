defmodule Mix.Tasks.Compile.WellBehavedCargo do
  @moduledoc """
  A Mix compiler that builds a project's NIF libraries written in Rust on
  the WellBehaved runtime: each crate with `cargo`, its library and server
  program copied to the app's `priv/`.

  In the project's `mix.exs`:

      def project do
        [
          app: :my_app,
          compilers: [:well_behaved_cargo] ++ Mix.compilers(),
          deps: [{:well_behaved, path: "../well_behaved"}],
          well_behaved_crates: [
            hash_sort: [
              path: "native/hash_sort",
              library: "hash_sort_nif",
              server: "hash_sort_server"
            ]
          ]
        ]
      end

  Each entry of `well_behaved_crates` is a crate, by a name of your
  choosing (the messages use it), with:

    * `:path` (required) - the crate's directory, relative to the project,
      with its `Cargo.toml`;
    * `:library` - the name of the NIF library in `priv/`, without `.so`
      (default: the crate's key): what `use WellBehaved.NIF` is given as
      `library:`;
    * `:server` - the name of a binary target of the crate, a server
      program for `schedule: :external`, copied to `priv/` under the same
      name.

  The crate is a library with `crate-type = ["cdylib", "rlib"]` in its
  `[lib]` section, and depends on the `well_behaved` crate by path, in
  `[dependencies]`:

      well_behaved = { path = "../../deps/well_behaved/rust/well_behaved" }

  Cargo takes no dependency path from the environment, so the path is
  written there: the compiler checks that it leads to the crate of the
  WellBehaved the project builds with (`WellBehaved.SDK.rust_crate_dir/0`)
  and, if not, stops with the path to write.

  At every `mix compile` the compiler runs, in the project's directory:

      cargo build --offline --release --manifest-path <path>/Cargo.toml

  with the variables of the `:well_behaved_make` compiler
  (`Mix.Tasks.Compile.WellBehavedMake`) in its environment, which the
  `well_behaved` crate's build script reads to compile the runtime's C
  code: `MIX_APP_PATH`, `MIX_ENV`, `ERTS_INCLUDE_DIR`, `WB_INCLUDE_DIR`,
  `WB_SOURCES`, `WB_EXTERNAL_SOURCES`, `EI_INCLUDE_DIR`, `EI_LIB_DIR`, `CC`
  and `CXX`; and `CARGO_NET_OFFLINE=true` and
  `CARGO_TARGET_DIR=$MIX_APP_PATH/cargo`, so that each Mix environment
  keeps its build in `_build/<env>/lib/<app>/cargo`. Cargo rebuilds what
  changed; the compiler shows the `Compiling` lines of what it built.

  It then copies `lib<crate>.so` (the crate's `[lib]` or `[package]`
  name, `-` read as `_`) to `priv/<library>.so` and the server to
  `priv/<server>`, in the app's build directory (`$MIX_APP_PATH/priv`,
  where `:code.priv_dir/1` finds them). A file whose content has not
  changed is left as it is, so a build with nothing to do touches nothing.
  A changed file is written under a temporary name in `priv/` and renamed
  over the old one: a VM that has the old library loaded keeps its file.
  `mix clean` removes them with the rest of the app's build directory.

  The build stops with a message:

    * naming what to install, when `cargo`, the C compiler (which links
      the crate and compiles the runtime) or `erl_nif.h` is missing;
    * naming both versions, when the crate's `rust-version` is newer than
      `cargo --version`;
    * giving the path to write, when the `well_behaved` dependency's path
      leads elsewhere;
    * with cargo's whole output, the crate and cargo's exit status, when
      the build fails;
    * naming `well_behaved_crates`, the crate and what is accepted, when
      the configuration is not as above.
  """
  use Mix.Task.Compiler

  alias Mix.WellBehaved.BuildEnv

  @options [:path, :library, :server]

  @impl true
  def run(_args) do
    # all checked before any is built
    crates = crates!(Mix.Project.config())
    built = Enum.map(crates, &build!/1)
    if :ok in built, do: {:ok, []}, else: {:noop, []}
  end

  defp target_dir, do: Path.join(Mix.Project.app_path(), "cargo")
  defp priv_dir, do: Path.join(Mix.Project.app_path(), "priv")

  # --- one crate --------------------------------------------------------------

  defp build!({name, crate}) do
    building = "the Rust NIF crate #{name}"

    cargo =
      System.find_executable("cargo") ||
        Mix.raise(
          "building #{building} needs cargo, which is not installed: install Rust " <>
            "(rustup, https://rustup.rs, or Debian: apt-get install cargo)"
        )

    env = BuildEnv.env!(building)
    manifest = Path.join(crate.path, "Cargo.toml")

    if not File.regular?(manifest) do
      Mix.raise(
        "invalid well_behaved_crates in mix.exs: the crate #{name} has path: " <>
          "#{inspect(crate.path)}, which has no Cargo.toml (expected the crate's directory " <>
          "relative to the project)"
      )
    end

    toml = toml_entries(File.read!(manifest))
    rust_version!(toml, cargo, name, manifest)
    sdk_path!(toml, crate.path, name, manifest)

    target = target_dir()
    env = env ++ [{"CARGO_NET_OFFLINE", "true"}, {"CARGO_TARGET_DIR", target}]
    built = cargo_build!(cargo, manifest, env, building)

    release = Path.join(target, "release")
    lib = "lib" <> crate_file_name!(toml, manifest) <> library_extension()

    library =
      install!(Path.join(release, lib), crate.library <> ".so", fn ->
        "#{building}: cargo built no #{lib}: the crate's [lib] section needs " <>
          ~s(crate-type = ["cdylib", "rlib"])
      end)

    server =
      crate.server &&
        install!(Path.join(release, crate.server), crate.server, fn ->
          "#{building}: cargo built no program #{crate.server}: name a binary target of " <>
            "the crate (a [[bin]] section, or src/bin/#{crate.server}.rs)"
        end)

    if built or library == :copied or server == :copied, do: :ok, else: :noop
  end

  # shows cargo's `Compiling` lines and says whether there were any; on a
  # failure, its whole output
  defp cargo_build!(cargo, manifest, env, building) do
    args = ["build", "--offline", "--release", "--manifest-path", manifest]

    case System.cmd(cargo, args, env: env, stderr_to_stdout: true) do
      {output, 0} ->
        compiled = for line <- String.split(output, "\n"), compiling?(line), do: line
        Enum.each(compiled, &Mix.shell().info(String.trim(strip_colours(&1))))
        compiled != []

      {output, status} ->
        Mix.shell().error(output)
        Mix.raise("building #{building} failed: cargo exited with status #{status}")
    end
  end

  defp compiling?(line), do: strip_colours(line) =~ ~r/^\s*Compiling /
  defp strip_colours(line), do: String.replace(line, ~r/\e\[[0-9;]*m/, "")

  defp library_extension do
    case :os.type() do
      {:unix, :darwin} -> ".dylib"
      _ -> ".so"
    end
  end

  # --- copies into priv/ --------------------------------------------------------

  # `source` to priv/`file` unless it holds the same bytes already: written
  # beside it under another name, then renamed over it, so that a VM that
  # has the old file mapped keeps a whole file (its own inode)
  defp install!(source, file, missing) do
    stat =
      case File.stat(source) do
        {:ok, %File.Stat{type: :regular} = stat} -> stat
        _ -> Mix.raise(missing.())
      end

    dest = Path.join(priv_dir(), file)

    if same_content?(source, stat.size, dest) do
      :same
    else
      File.mkdir_p!(priv_dir())
      tmp = Path.join(priv_dir(), ".#{file}.#{System.unique_integer([:positive])}.tmp")

      try do
        File.cp!(source, tmp)
        File.chmod!(tmp, Bitwise.band(stat.mode, 0o777))
        File.rename!(tmp, dest)
      after
        File.rm(tmp)
      end

      :copied
    end
  end

  # compared by size, then byte for byte: a file's time says too little,
  # as two links within the same second share it
  defp same_content?(source, size, dest) do
    case File.stat(dest) do
      {:ok, %File.Stat{type: :regular, size: ^size}} ->
        Stream.zip(File.stream!(source, [], 65_536), File.stream!(dest, [], 65_536))
        |> Enum.all?(fn {a, b} -> a == b end)

      _ ->
        false
    end
  end

  # --- the configuration --------------------------------------------------------

  defp crates!(config) do
    case Keyword.get(config, :well_behaved_crates, []) do
      crates when is_list(crates) ->
        if not Keyword.keyword?(crates), do: bad_config!(crates)
        Enum.map(crates, &crate!/1)

      other ->
        bad_config!(other)
    end
  end

  defp bad_config!(value) do
    Mix.raise(
      "invalid well_behaved_crates in mix.exs: #{inspect(value)}, expected a keyword list " <>
        "of crates, e.g. [hash_sort: [path: \"native/hash_sort\"]]"
    )
  end

  defp crate!({name, opts}) do
    where = "invalid well_behaved_crates in mix.exs: the crate #{name}"

    if not Keyword.keyword?(opts) do
      Mix.raise(
        "#{where} has #{inspect(opts)}, expected a keyword list of options " <>
          "(:path, required; :library; :server)"
      )
    end

    case Keyword.keys(opts) -- @options do
      [] ->
        :ok

      [key | _] ->
        Mix.raise(
          "#{where} has the unknown option #{inspect(key)}, expected :path (required), " <>
            ":library or :server"
        )
    end

    path =
      case opts[:path] do
        path when is_binary(path) and path != "" ->
          path

        nil ->
          Mix.raise("#{where} has no :path, the crate's directory relative to the project")

        other ->
          Mix.raise(
            "#{where} has path: #{inspect(other)}, expected the crate's directory " <>
              "relative to the project, a string"
          )
      end

    crate = %{
      path: path,
      library: file_name!(Keyword.get(opts, :library, Atom.to_string(name)), :library, where),
      server: opts[:server] && file_name!(opts[:server], :server, where)
    }

    {name, crate}
  end

  defp file_name!(name, key, where) do
    if is_binary(name) and name =~ ~r/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/ do
      name
    else
      Mix.raise(
        "#{where} has #{key}: #{inspect(name)}, expected a file name " <>
          "(a string of letters, digits, _, - and .)"
      )
    end
  end

  # --- Cargo.toml ---------------------------------------------------------------

  # {table, key, value text} for each `key = value` line, the table being
  # the last [header] above it (quotes and spaces removed): enough for the
  # few keys read here, which Cargo.toml files write on one line
  defp toml_entries(text) do
    {_table, entries} =
      text
      |> String.split(~r/\r?\n/)
      |> Enum.reduce({"", []}, fn line, {table, entries} ->
        cond do
          header = Regex.run(~r/^\s*\[\[?([^\]]+)\]\]?\s*(#.*)?$/, line) ->
            {bare(Enum.at(header, 1)), entries}

          pair = Regex.run(~r/^\s*("[^"]*"|'[^']*'|[\w.-]+)\s*=\s*(.*)$/, line) ->
            [_, key, value] = pair
            {table, [{table, bare(key), value} | entries]}

          true ->
            {table, entries}
        end
      end)

    Enum.reverse(entries)
  end

  defp bare(key), do: String.replace(key, ~r/["'\s]/, "")

  defp get(toml, table, key),
    do: Enum.find_value(toml, fn {t, k, v} -> t == table and k == key and string(v) end)

  # the string a value starts with, single or double quoted
  defp string(value) do
    case Regex.run(~r/^\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')/, value, capture: :all_but_first) do
      [double] -> double
      [_, single] -> single
      nil -> nil
    end
  end

  # the string of `key = "..."` inside an inline table `{ ... }`
  defp inline(value, key) do
    case Regex.run(~r/[{,]\s*#{key}\s*=\s*(.*)$/, value, capture: :all_but_first) do
      [rest] -> string(rest)
      nil -> nil
    end
  end

  defp crate_file_name!(toml, manifest) do
    name =
      get(toml, "lib", "name") || get(toml, "package", "name") ||
        Mix.raise("#{manifest} has no name in its [package] section")

    String.replace(name, "-", "_")
  end

  defp rust_version!(toml, cargo, name, manifest) do
    with required when is_binary(required) <- get(toml, "package", "rust-version"),
         {:ok, want} <- version(required),
         {out, 0} <- System.cmd(cargo, ["--version"], stderr_to_stdout: true),
         [installed] <- Regex.run(~r/^cargo (\d+\.\d+\.\d+)/, out, capture: :all_but_first),
         {:ok, have} <- version(installed),
         true <- want > have do
      Mix.raise(
        "the Rust NIF crate #{name} needs Rust #{required} (rust-version in #{manifest}), " <>
          "and cargo is #{installed}: update Rust (rustup update)"
      )
    else
      _ -> :ok
    end
  end

  # "1.70" and "1.70.0" as {1, 70, 0}
  defp version(text) do
    case Regex.run(~r/^(\d+)(?:\.(\d+))?(?:\.(\d+))?$/, text, capture: :all_but_first) do
      nil -> :error
      parts -> {:ok, parts |> Enum.map(&String.to_integer/1) |> pad()}
    end
  end

  defp pad([a]), do: {a, 0, 0}
  defp pad([a, b]), do: {a, b, 0}
  defp pad([a, b, c]), do: {a, b, c}

  # the path of the dependency on the crate `well_behaved`, written in one
  # of the ways Cargo.toml allows, or nil
  defp sdk_dependency(toml) do
    Enum.find_value(toml, fn
      {"dependencies", "well_behaved", value} ->
        inline(value, "path")

      {"dependencies", "well_behaved.path", value} ->
        string(value)

      {"dependencies.well_behaved", "path", value} ->
        string(value)

      # renamed: other = { package = "well_behaved", path = "..." }
      {"dependencies", _, value} ->
        inline(value, "package") == "well_behaved" && inline(value, "path")

      _ ->
        nil
    end)
  end

  defp sdk_path!(toml, crate_dir, name, manifest) do
    with path when is_binary(path) <- sdk_dependency(toml),
         sdk = WellBehaved.SDK.rust_crate_dir(),
         crate_dir = Path.expand(crate_dir),
         false <- same_dir?(Path.expand(path, crate_dir), sdk) do
      right = Mix.Tasks.WellBehaved.New.relative(sdk, crate_dir)

      Mix.raise(
        "the Rust NIF crate #{name} depends on well_behaved at #{inspect(path)} " <>
          "(#{manifest}), which is not the crate of the WellBehaved this project builds " <>
          "with (#{sdk}): " <>
          "write well_behaved = { path = #{inspect(right)} } in its [dependencies]"
      )
    else
      _ -> :ok
    end
  end

  defp same_dir?(a, b) do
    a == b or
      match?(
        {{:ok, %File.Stat{inode: inode, major_device: device}},
         {:ok, %File.Stat{inode: inode, major_device: device}}},
        {File.stat(a), File.stat(b)}
      )
  end
end
