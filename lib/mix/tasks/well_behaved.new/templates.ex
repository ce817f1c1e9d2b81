defmodule Mix.Tasks.WellBehaved.New.Templates do
  @moduledoc false
  # The files `mix well_behaved.new` writes, as EEx templates with the
  # assigns app (the application's name), module (its main module, as
  # written in code), dep (the well_behaved dependency's tuple, as written
  # in mix.exs) and rust (whether the job is in Rust: the crate's files,
  # in RustTemplates, then replace the C ones, and crate_dep is the path
  # of the well_behaved crate from the crate's directory). The Elixir
  # files are formatted after rendering, so that a long name or path still
  # gives `mix format`'s layout. The Makefile's recipe lines start with a
  # tab.

  require EEx

  alias Mix.Tasks.WellBehaved.New.RustTemplates

  @mix_exs ~S"""
  defmodule <%= @module %>.MixProject do
    use Mix.Project

  <%= for line <- @compiler_comment do %>  # <%= line %>
  <% end %>  def project do
      [
        app: :<%= @app %>,
        version: "0.1.0",
        elixir: "~> 1.14",
        compilers: [<%= @compiler %>] ++ Mix.compilers(),<%= @crates %>
        start_permanent: Mix.env() == :prod,
        deps: deps()
      ]
    end

    def application do
      [extra_applications: [:logger]]
    end

    defp deps do
      [
        <%= @dep %>
      ]
    end
  end
  """

  @makefile ~S"""
  # `mix compile` runs this Makefile (the :well_behaved_make compiler, see
  # mix.exs) with MIX_APP_PATH, ERTS_INCLUDE_DIR, CC and the SDK's
  # WB_INCLUDE_DIR and WB_SOURCES in the environment. The NIF library goes
  # to $(MIX_APP_PATH)/priv, where :code.priv_dir/1 finds it, as a
  # dependency and in a release too.

  CFLAGS := -std=c11 -Wall -Wextra -Werror -O2 -fPIC -fvisibility=hidden
  INCLUDES := -I$(ERTS_INCLUDE_DIR) -I$(WB_INCLUDE_DIR)
  NIF := $(MIX_APP_PATH)/priv/<%= @app %>_nif.so
  OBJ := $(MIX_APP_PATH)/obj
  # the library's own C files (add yours here), and the SDK's runtime
  NIF_OBJS := $(OBJ)/<%= @app %>_nif.o
  SDK_OBJS := $(addprefix $(OBJ)/,$(notdir $(WB_SOURCES:.c=.o)))
  # the SDK's header, and the private ones beside its runtime's sources
  SDK_HEADERS := $(WB_INCLUDE_DIR)/wb_runtime.h $(wildcard $(addsuffix *.h,$(sort $(dir $(WB_SOURCES)))))

  .PHONY: all

  ifdef MIX_APP_PATH
  all: $(NIF)
  else
  all: # run by hand: let Mix set the variables
  	mix compile
  endif

  $(NIF): $(NIF_OBJS) $(SDK_OBJS)
  	@mkdir -p $(@D)
  	$(CC) -shared -o $@ $^

  $(OBJ)/%.o: c_src/%.c $(wildcard c_src/*.h) $(SDK_HEADERS)
  	@mkdir -p $(@D)
  	$(CC) $(CFLAGS) $(INCLUDES) -c -o $@ $<

  # the runtime's sources, from the well_behaved dependency's c_src/runtime
  vpath %.c $(sort $(dir $(WB_SOURCES)))
  $(SDK_OBJS): $(OBJ)/%.o: %.c $(SDK_HEADERS)
  	@mkdir -p $(@D)
  	$(CC) $(CFLAGS) $(INCLUDES) -c -o $@ $<
  """

  @nif_c ~S"""
  /* Elixir.<%= @module %>.Native: the NIF library of <%= @module %>, built on
   * WellBehaved's C SDK (wb_runtime.h). Each job NIF runs a job type: a
   * state advanced by a budget of units of work per step, so that the
   * runtime can run it in whichever mode the caller picks (see
   * WellBehaved.Runtime) without blocking a scheduler.
   *
   * The job type count_byte counts the bytes of a binary equal to a given
   * byte; one unit of work is one byte. Put your own work in its place:
   * the arguments' struct and decode, the state, predict (the units the
   * job will take), init, step and result; then the NIF table and the
   * types list at the end, and the stub module (lib/<%= @app %>/native.ex). */
  #include <wb_runtime.h>

  /* the decoded arguments, on the C stack for one NIF call */
  typedef struct {
      ErlNifBinary data;
      unsigned byte;
  } count_args;

  /* the job's state: the runtime zeroes it before init, keeps it between
   * steps and frees it (destroy frees what it would own: nothing here) */
  typedef struct {
      const unsigned char *data; /* this call's bytes: set by init and bind */
      size_t size, pos;
      uint64_t count;
      unsigned char byte;
  } count_state;

  /* the job's arguments, count_byte(Data, Byte): false answers {error,
   * badarg}, wb_reject(Reason) {error, Reason} */
  static bool count_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
      count_args *in = args;
      if (!enif_inspect_binary(env, argv[0], &in->data) || !enif_get_uint(env, argv[1], &in->byte))
          return false;
      if (in->byte > 255) return wb_reject(wb_atom(env, "byte_out_of_range"));
      return true;
  }

  /* the units of work the job will take: cheap, it runs before the mode is
   * chosen */
  static uint64_t count_predict(const void *args) {
      return ((const count_args *)args)->data.size;
  }

  /* the bytes belong to the argument term: a pointer into them holds for
   * one NIF call, so each later call of the job points the state at them
   * again */
  static void count_bind(const void *args, void *state) {
      ((count_state *)state)->data = ((const count_args *)args)->data.data;
  }

  /* the first call: the whole state, the data included (bind runs on the
   * later calls only); a job that allocates does it here, and on failure
   * frees it, sets *reason and returns false */
  static bool count_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
      (void)env;
      (void)reason;
      const count_args *in = args;
      *(count_state *)state = (count_state){
          .data = in->data.data, .size = in->data.size, .byte = (unsigned char)in->byte};
      return true;
  }

  /* about budget units of work: adds the units done to *used and returns
   * true when the job is finished. The budget can be 1 (tiny_slices: true)
   * or UINT64_MAX (a :normal run): compare it with the work left. */
  static bool count_step(void *state, uint64_t budget, uint64_t *used) {
      count_state *s = state;
      size_t left = s->size - s->pos;
      size_t n = budget < left ? (size_t)budget : left;
      *used += n;
      if (n == 0) return s->pos == s->size; /* no arithmetic on an empty binary's pointer */
      const unsigned char *p = s->data + s->pos;
      uint64_t count = s->count;
      for (size_t i = 0; i < n; i++)
          count += p[i] == s->byte;
      s->count = count;
      s->pos += n;
      return s->pos == s->size;
  }

  /* the answer, once, after the last step */
  static ERL_NIF_TERM count_result(ErlNifEnv *env, const void *state) {
      return enif_make_uint64(env, ((const count_state *)state)->count);
  }

  static wb_job_type count_byte_job = {
      .name = "count_byte",
      .argc = 2,
      .args_size = sizeof(count_args),
      .state_size = sizeof(count_state),
      .decode = count_decode,
      .predict = count_predict,
      .init = count_init,
      .bind = count_bind,
      .step = count_step,
      .result = count_result,
      /* setup, memory, destroy: NULL (no set-up work, nothing on the heap) */
      .ps_per_unit = 300, /* a compare and an add per byte: where the learned cost starts */
  };

  /* count_byte(Data, Byte, Mode, Tiny, Ref): the job's 2 arguments, then the
   * 3 that WellBehaved.Job.call/4 adds */
  WB_JOB_NIF(count_byte, count_byte_job)

  /* a job NIF of your own: a line here, one in the table, one in types */
  static ErlNifFunc nif_funcs[] = {
      {"count_byte", 5, count_byte, 0},
      WB_RUNTIME_NIFS,
  };

  static wb_job_type *const types[] = {&count_byte_job, NULL};

  /* load, upgrade and unload: the runtime's */
  WB_NIF_INIT(Elixir.<%= @module %>.Native, nif_funcs, types)
  """

  # lib_ex and native_ex also take job_file (the job's source) and sdk
  # (what it is built on)
  @lib_ex ~S'''
  defmodule <%= @module %> do
    @moduledoc """
    Counts a byte in a binary with a native job built on WellBehaved's
    <%= @sdk %> (`<%= @job_file %>`). However long the binary, the
    call keeps the VM's schedulers responsive, in whichever
    `WellBehaved.Runtime` mode the caller picks.

    The NIF library has a runtime of its own, read and tuned with
    `WellBehaved.Runtime.stats(<%= @module %>.Native)` and
    `WellBehaved.Runtime.configure(<%= @module %>.Native, opts)`.
    """

    alias WellBehaved.{Job, Options}

    @count_byte "<%= @module %>.count_byte/3"

    @type option :: {:schedule, WellBehaved.Runtime.mode()} | {:tiny_slices, boolean()}

    @doc """
    How many bytes of `data` equal `byte`.

    Options, passed to `WellBehaved.Job.call/4`:

      * `schedule:` - a `t:WellBehaved.Runtime.mode/0` (default `:auto`:
        short inputs run directly, long ones yield).
      * `tiny_slices:` - for tests: one byte per slice, so that every
        resume path of the job runs. Slow.

    Raises `ArgumentError` when `data` is not a binary or `byte` not an
    integer in 0..255, and on an unknown option or value.

    ## Examples

        iex> <%= @module %>.count_byte("hello world", ?o)
        2
        iex> <%= @module %>.count_byte(:binary.copy("ab", 1_000_000), ?a, schedule: :threaded)
        1_000_000
    """
    @spec count_byte(binary(), byte(), [option()]) :: non_neg_integer()
    def count_byte(data, byte, opts \\ [])

    def count_byte(data, byte, opts) when is_binary(data) and byte in 0..255 do
      case Job.call(&<%= @module %>.Native.count_byte/5, [data, byte], opts, @count_byte) do
        count when is_integer(count) -> count
        {:error, reason} -> raise "#{@count_byte}: the native job failed: #{inspect(reason)}"
      end
    end

    def count_byte(data, _byte, _opts) when not is_binary(data),
      do: Options.invalid!(@count_byte, "data", data, "a binary")

    def count_byte(_data, byte, _opts),
      do: Options.invalid!(@count_byte, "byte", byte, "an integer in 0..255")
  end
  '''

  @native_ex ~S"""
  defmodule <%= @module %>.Native do
    @moduledoc false
    # The stubs of priv/<%= @app %>_nif.so, built from <%= @job_file %>:
    # its @on_load and the runtime's runtime_stats/0 and runtime_configure/4,
    # written by WellBehaved.NIF. The job NIF count_byte takes the job's 2
    # arguments, then the mode, tiny slices and reference that
    # WellBehaved.Job.call/4 adds. Call <%= @module %>, which checks the
    # arguments. A job NIF of your own: name: argc in jobs:.
    use WellBehaved.NIF, otp_app: :<%= @app %>, library: "<%= @app %>_nif", jobs: [count_byte: 2]
  end
  """

  @test_exs ~S"""
  defmodule <%= @module %>Test do
    # <%= @module %>.count_byte/3 against an Elixir reference in every mode of
    # WellBehaved.Runtime, with and without one byte per slice; the job's
    # refusals and the function's bad arguments.
    use ExUnit.Case, async: true

    alias WellBehaved.{Job, Runtime, Testing}

    doctest <%= @module %>

    # the reference
    defp count(data, byte), do: length(:binary.matches(data, <<byte>>))

    # bytes from a small alphabet, so that a byte's count is a fair part of
    # the size
    defp random(size), do: for(_ <- 1..size//1, into: <<>>, do: <<Enum.random(?a..?d)>>)

    test "every mode, around the sizes of a slice and far beyond" do
      for size <- [0, 1, 2, 1000, 65_537, 1_000_000], byte <- [?a, ?z] do
        data = random(size)
        expected = count(data, byte)

        for mode <- Runtime.modes() do
          assert <%= @module %>.count_byte(data, byte, schedule: mode) == expected,
                 "#{size} bytes, #{mode}"
        end
      end
    end

    test "every mode, one byte per slice: every resume path runs" do
      for size <- [0, 1, 2, 1000] do
        data = random(size)

        Testing.modes_agree(
          fn opts -> <%= @module %>.count_byte(data, ?b, opts) end,
          count(data, ?b),
          <%= @module %>.Native
        )
      end
    end

    test "a sub-binary at an odd offset" do
      whole = random(300_001)
      part = binary_part(whole, 3, 200_000)

      for mode <- Runtime.modes() do
        assert <%= @module %>.count_byte(part, ?c, schedule: mode) == count(part, ?c), "#{mode}"
      end
    end

    test "the job's decode refuses what the function would not pass" do
      for mode <- Runtime.modes() do
        assert Job.call(&<%= @module %>.Native.count_byte/5, ["abc", 256], schedule: mode) ==
                 {:error, :byte_out_of_range}

        assert Job.call(&<%= @module %>.Native.count_byte/5, [:abc, 1], schedule: mode) ==
                 {:error, :badarg}
      end
    end

    test "bad arguments raise ArgumentError, naming the argument" do
      assert_raise ArgumentError,
                   "<%= @module %>.count_byte/3: invalid data :x, expected a binary",
                   fn -> <%= @module %>.count_byte(:x, 1) end

      for byte <- [-1, 256, 1.0, nil] do
        assert_raise ArgumentError,
                     "<%= @module %>.count_byte/3: invalid byte #{inspect(byte)}, " <>
                       "expected an integer in 0..255",
                     fn -> <%= @module %>.count_byte("abc", byte) end
      end

      assert_raise ArgumentError, ~r/invalid :schedule :fast/, fn ->
        <%= @module %>.count_byte("abc", ?a, schedule: :fast)
      end
    end
  end
  """

  @test_helper_exs ~S"""
  ExUnit.start()
  """

  @formatter_exs ~S"""
  [
    inputs: ["{mix,.formatter}.exs", "{config,lib,test}/**/*.{ex,exs}"]
  ]
  """

  @gitignore ~S"""
  /_build/
  /deps/
  /tmp/
  erl_crash.dump
  *.ez
  """

  # the crate's build, should cargo be run by hand in it, and its lock file
  @gitignore_rust ~S"""
  native/*/target/
  native/*/Cargo.lock
  """

  # the C style of WellBehaved's own sources (clang-format -i c_src/*.c)
  @clang_format ~S"""
  BasedOnStyle: LLVM
  IndentWidth: 4
  ColumnLimit: 100
  AllowShortFunctionsOnASingleLine: Empty
  AllowShortIfStatementsOnASingleLine: WithoutElse
  AlignConsecutiveMacros: true
  """

  @readme_md ~S"""
  # <%= @module %>

  A NIF library of its own on WellBehaved's C SDK: `<%= @module %>.count_byte/3`
  counts a byte in a binary as a native job, which runs in any
  `WellBehaved.Runtime` mode without blocking a scheduler, however long
  the binary.

      iex> <%= @module %>.count_byte("hello world", ?o)
      2
      iex> <%= @module %>.count_byte(big_binary, ?a, schedule: :threaded)

  ## Build and test

      mix deps.get
      mix compile   # well_behaved, then priv/<%= @app %>_nif.so (the Makefile)
      mix test

  ## A job of your own

  - `c_src/<%= @app %>_nif.c` - the job type: decoded arguments, a state,
    `decode`, `predict`, `init`, `bind`, `step` and `result`, then the NIF
    table and `WB_NIF_INIT`. Replace `count_byte` with your work, or add
    job types beside it.
  - `lib/<%= @app %>/native.ex` - the stubs, `use WellBehaved.NIF`: each job NIF
    in `jobs:` with its number of arguments.
  - `lib/<%= @app %>.ex` - the public function: checks its arguments, then
    `WellBehaved.Job.call/4`.
  - `test/<%= @app %>_test.exs` - every mode against a reference in Elixir.
  - `Makefile` - more C files: add their objects to `NIF_OBJS`.

  WellBehaved's guide "Writing your own well-behaved NIF" (`guides/sdk.md`)
  describes every callback; its `examples/checksum/` is a fuller project (a
  C++ job, a server program for `schedule: :external`, a release).
  """

  EEx.function_from_string(:defp, :mix_exs, @mix_exs, [:assigns])
  EEx.function_from_string(:defp, :makefile, @makefile, [:assigns])
  EEx.function_from_string(:defp, :nif_c, @nif_c, [:assigns])
  EEx.function_from_string(:defp, :lib_ex, @lib_ex, [:assigns])
  EEx.function_from_string(:defp, :native_ex, @native_ex, [:assigns])
  EEx.function_from_string(:defp, :test_exs, @test_exs, [:assigns])
  EEx.function_from_string(:defp, :readme_md, @readme_md, [:assigns])

  @doc false
  # [{path in the project, content}] for assigns app, module, dep and rust
  # (with crate_dep)
  @spec render(keyword()) :: [{Path.t(), String.t()}]
  def render(assigns) do
    app = Keyword.fetch!(assigns, :app)

    if Keyword.get(assigns, :rust, false) do
      crate = "native/#{app}"
      assigns = assigns ++ [job_file: "#{crate}/src/lib.rs", sdk: "Rust crate"]

      [
        {"mix.exs", elixir(mix_exs(assigns ++ RustTemplates.mix_assigns(assigns)))},
        {"#{crate}/Cargo.toml", RustTemplates.cargo_toml(assigns)},
        {"#{crate}/build.rs", RustTemplates.build_rs()},
        {"#{crate}/src/lib.rs", RustTemplates.lib_rs(assigns)}
      ] ++
        elixir_files(assigns) ++
        [
          {".gitignore", @gitignore <> @gitignore_rust},
          {"README.md", RustTemplates.readme_md(assigns)}
        ]
    else
      assigns = assigns ++ [job_file: "c_src/#{app}_nif.c", sdk: "C SDK"]

      make = [
        compiler: ":well_behaved_make",
        crates: "",
        compiler_comment: [
          "The :well_behaved_make compiler runs the Makefile, which builds the",
          "NIF library of c_src/ on WellBehaved's C SDK, before Elixir compiles."
        ]
      ]

      [
        {"mix.exs", elixir(mix_exs(assigns ++ make))},
        {"Makefile", makefile(assigns)},
        {"c_src/#{app}_nif.c", nif_c(assigns)}
      ] ++
        elixir_files(assigns) ++
        [
          {".gitignore", @gitignore},
          {".clang-format", @clang_format},
          {"README.md", readme_md(assigns)}
        ]
    end
  end

  # the files both languages share
  defp elixir_files(assigns) do
    app = Keyword.fetch!(assigns, :app)

    [
      {"lib/#{app}.ex", elixir(lib_ex(assigns))},
      {"lib/#{app}/native.ex", elixir(native_ex(assigns))},
      {"test/#{app}_test.exs", elixir(test_exs(assigns))},
      {"test/test_helper.exs", @test_helper_exs},
      {".formatter.exs", @formatter_exs}
    ]
  end

  defp elixir(source), do: IO.iodata_to_binary([Code.format_string!(source), "\n"])
end
