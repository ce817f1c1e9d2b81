defmodule Mix.Tasks.WellBehaved.New.RustTemplates do
  @moduledoc false
  # The files of `mix well_behaved.new --rust` that differ from the C
  # project's (Mix.Tasks.WellBehaved.New.Templates has the others, and
  # mix.exs with mix_assigns/1 of this module): EEx
  # templates with the assigns app, module, dep and crate_dep (the path of
  # the SDK's crate `well_behaved` from native/<app>). The crate's files
  # are as `cargo fmt` leaves them with WellBehaved's rustfmt.toml.

  require EEx

  @cargo_toml ~S"""
  [package]
  name = "<%= @app %>"
  version = "0.1.0"
  edition = "2021"
  # also makes a newer cargo write a lock file that Rust 1.63's cargo reads
  rust-version = "1.63"
  publish = false

  [lib]
  # the NIF library, which the :well_behaved_cargo compiler copies to
  # priv/<%= @app %>_nif.so
  crate-type = ["cdylib"]

  [dependencies]
  # the SDK's crate, in the well_behaved dependency's source tree (the
  # compiler checks that the path leads there)
  well_behaved = { path = <%= toml_string(@crate_dep) %> }

  [profile.release]
  # a panic in a job becomes an exception for its caller: never abort
  panic = "unwind"
  """

  @build_rs ~S"""
  // The well_behaved crate's build script compiles the SDK's C runtime;
  // this links it into the NIF library (the cdylib).
  fn main() {
      println!(
          "cargo:rustc-link-arg-cdylib={}",
          std::env::var("DEP_WELL_BEHAVED_RUNTIME").unwrap()
      );
  }
  """

  @lib_rs ~S"""
  //! Elixir.<%= @module %>.Native: the NIF library of <%= @module %>, built on
  //! WellBehaved's Rust crate `well_behaved`. A job is a state advanced by a
  //! budget of units of work per step, so that the runtime can run it in
  //! whichever mode the caller picks (see WellBehaved.Runtime) without
  //! blocking a scheduler.
  //!
  //! The job count_byte counts the bytes of a binary equal to a given byte;
  //! one unit of work is one byte. Put your own work in its place: the
  //! arguments (`Args`), the job's state and its `Job` implementation
  //! (decode, predict, init, step and result); then its entry in
  //! `nif_init!` at the end, and in the stub module (lib/<%= @app %>/native.ex).
  use well_behaved::{Bytes, Env, Error, Job, Step, Term};

  /// The decoded arguments of count_byte(data, byte): a view of the
  /// binary's bytes, which the runtime makes again at every call of the job
  /// (the bytes may move between calls), and the byte.
  pub struct Args {
      data: Bytes,
      byte: u8,
  }

  /// The job's state: kept between steps, dropped after the result or when
  /// the caller dies first (its `Drop` would free what it owns: nothing
  /// here).
  pub struct CountByte {
      pos: usize,
      count: u64,
  }

  impl Job for CountByte {
      type Args = Args;
      const ARGC: usize = 2;
      // a compare and an add per byte: where the learned cost starts
      const PS_PER_UNIT: u64 = 300;

      /// The arguments, at every call: `Err(Error::BadArg)` answers
      /// {:error, :badarg}, `Err(Error::reason(term))` {:error, term}.
      fn decode<'a>(env: Env<'a>, args: &[Term<'a>]) -> Result<Args, Error<'a>> {
          let data = args[0].decode_bytes()?;
          let byte = args[1].decode_u32()?;
          if byte > 255 {
              return Err(Error::reason(env.atom("byte_out_of_range")));
          }
          Ok(Args {
              data,
              byte: byte as u8,
          })
      }

      /// The units of work the job will take: cheap, it runs before the mode
      /// is chosen.
      fn predict(args: &Args) -> u64 {
          args.data.len() as u64
      }

      /// The first call makes the state: a job that allocates does it here,
      /// and answers `Err` when it cannot.
      fn init<'a>(_env: Env<'a>, _args: &Args) -> Result<Self, Error<'a>> {
          Ok(CountByte { pos: 0, count: 0 })
      }

      /// About `budget` units of work, the units done in what it returns.
      /// The budget can be 1 (tiny_slices: true) or u64::MAX (a :normal
      /// run): compare it with the work left.
      fn step(&mut self, args: &Args, budget: u64) -> Step {
          let left = &args.data.as_slice()[self.pos..];
          let n = budget.min(left.len() as u64) as usize;
          self.count += left[..n].iter().filter(|&&b| b == args.byte).count() as u64;
          self.pos += n;
          if n == left.len() {
              Step::Done(n as u64)
          } else {
              Step::More(n as u64)
          }
      }

      /// The answer, once, after the last step, in the caller's process.
      fn result<'a>(&mut self, env: Env<'a>, _args: &Args) -> Result<Term<'a>, Error<'a>> {
          Ok(env.u64(self.count))
      }
  }

  // count_byte(data, byte, mode, tiny, ref): the job's 2 arguments, then the
  // 3 that WellBehaved.Job.call/4 adds; a job of your own: an entry in jobs:.
  // The macro also makes the runtime's NIFs and the load, upgrade and unload
  // callbacks.
  well_behaved::nif_init! {
      module: "Elixir.<%= @module %>.Native",
      jobs: { count_byte: CountByte },
  }
  """

  @readme_md ~S"""
  # <%= @module %>

  A NIF library of its own in Rust, on WellBehaved's crate `well_behaved`:
  `<%= @module %>.count_byte/3` counts a byte in a binary as a native job,
  which runs in any `WellBehaved.Runtime` mode without blocking a
  scheduler, however long the binary.

      iex> <%= @module %>.count_byte("hello world", ?o)
      2
      iex> <%= @module %>.count_byte(big_binary, ?a, schedule: :threaded)

  ## Build and test

  Building the crate needs cargo, Rust 1.63 or later (https://rustup.rs),
  and a C compiler (the `well_behaved` crate compiles the SDK's runtime).

      mix deps.get
      mix compile   # well_behaved, then priv/<%= @app %>_nif.so (cargo builds native/<%= @app %>)
      mix test

  ## A job of your own

  - `native/<%= @app %>/src/lib.rs` - the job: its arguments (`Args`: views
    and small values), its state and the `Job` trait's `decode`, `predict`,
    `init`, `step` and `result`, then `well_behaved::nif_init!`. Replace
    `count_byte` with your work, or add jobs beside it.
  - `lib/<%= @app %>/native.ex` - the stubs, `use WellBehaved.NIF`: each job NIF
    in `jobs:` with its number of arguments.
  - `lib/<%= @app %>.ex` - the public function: checks its arguments, then
    `WellBehaved.Job.call/4`.
  - `test/<%= @app %>_test.exs` - every mode against a reference in Elixir.
  - `native/<%= @app %>/Cargo.toml` - the crate: the `well_behaved` crate by
    path, in the dependency's source tree (the `:well_behaved_cargo`
    compiler checks the path and says which to write); `build.rs` links
    the SDK's runtime into the library.

  WellBehaved's guide "Writing your own well-behaved NIF in Rust"
  (`guides/rust.md`) describes the trait and the macro; its
  `examples/hash_sort/` is a fuller project (two jobs, a server program for
  `schedule: :external`, a release).
  """

  @doc "The assigns of the shared mix.exs template for a crate."
  def mix_assigns(assigns) do
    app = Keyword.fetch!(assigns, :app)

    [
      compiler: ":well_behaved_cargo",
      crates:
        ~s(\n      well_behaved_crates: [#{app}: [path: "native/#{app}", library: "#{app}_nif"]],),
      compiler_comment: [
        "The :well_behaved_cargo compiler builds the crate native/#{app} (the",
        "NIF library, on WellBehaved's Rust crate) with cargo before Elixir",
        "compiles, and copies the library to priv/#{app}_nif.so."
      ]
    ]
  end

  EEx.function_from_string(:def, :cargo_toml, @cargo_toml, [:assigns])
  EEx.function_from_string(:def, :lib_rs, @lib_rs, [:assigns])
  EEx.function_from_string(:def, :readme_md, @readme_md, [:assigns])

  # the same for every project
  def build_rs, do: @build_rs

  # a TOML basic string: quotes and backslashes escaped, control
  # characters as \uXXXX
  defp toml_string(text) do
    escaped =
      for <<c::utf8 <- text>>, into: "" do
        cond do
          c in [?", ?\\] -> <<?\\, c>>
          c < 0x20 or c == 0x7F -> "\\u" <> String.pad_leading(Integer.to_string(c, 16), 4, "0")
          true -> <<c::utf8>>
        end
      end

    ~s("#{escaped}")
  end
end
