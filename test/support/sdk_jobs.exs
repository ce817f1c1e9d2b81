defmodule WellBehaved.Test.SDKStubs do
  @moduledoc false
  # The NIFs of c_src/test/sdk_jobs_nif.c, for each module a build of it
  # loads as; `load!/1` builds the libraries (make sdk-test-nifs) and loads
  # one, once per VM.
  import ExUnit.Assertions

  defmacro __using__(_opts) do
    quote do
      def fold(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)

      def phases(_cheap, _dear, _spent, _mode, _tiny, _ref),
        do: :erlang.nif_error(:nif_not_loaded)

      def dear(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
      def lumpy(_stall_us, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
      def liar(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
      def raising(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
      def fickle(_n, _k, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
      def huge(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
      def owned(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
      def sham(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
      def sham_runs, do: :erlang.nif_error(:nif_not_loaded)
      def rle(_bin, _flat, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)

      def holding(_hold_us, _n, _mode, _tiny, _ref),
        do: :erlang.nif_error(:nif_not_loaded)

      def runtime_stats, do: :erlang.nif_error(:nif_not_loaded)
      def runtime_configure(_, _, _, _), do: :erlang.nif_error(:nif_not_loaded)

      # a library loads from its own module (SDKRefused loads its own way)
      @compile {:nowarn_unused_function, load!: 1}
      defp load!(library) do
        try do
          runtime_stats()
          :ok
        rescue
          ErlangError ->
            WellBehaved.Test.SDKStubs.build!()
            path = String.to_charlist("c_src/build/sdk/" <> library)
            :ok = :erlang.load_nif(path, WellBehaved.SDK.load_info())
        end
      end
    end
  end

  @doc """
  The source of a new version of `module`, a NIF stub module, that loads
  `library` as it loads (@on_load), as a hot upgrade of a user's module
  does: a stub for every NIF the old version exports (its functions but
  the helpers that are no NIF), the old version left in place.
  """
  def upgrade_source(module, library) do
    helpers = [:ensure_loaded!, :child_prelude, :__wb_external__]

    stubs =
      for {name, arity} <- module.__info__(:functions), name not in helpers do
        args = Enum.map_join(1..arity//1, ", ", &"_a#{&1}")
        "def #{name}(#{args}), do: :erlang.nif_error(:nif_not_loaded)"
      end

    Code.compiler_options(ignore_module_conflict: true)

    load = ~s|def load, do: :erlang.load_nif(~c"#{library}", WellBehaved.SDK.load_info())|

    Enum.join(
      ["defmodule #{inspect(module)} do", "@on_load :load", load | stubs] ++ ["end"],
      "\n"
    )
  end

  def build! do
    {out, status} =
      System.cmd("make", ["--no-print-directory", "sdk-test-nifs"], stderr_to_stdout: true)

    assert status == 0, out
  end
end

defmodule WellBehaved.Test.SDKJobs do
  @moduledoc false
  # The stub of c_src/test/sdk_jobs_nif.c, a NIF library built on the SDK
  # as a user's is (mk/sdk.mk), built and loaded by ensure_loaded!/0.
  use WellBehaved.Test.SDKStubs

  # jobs of the server program only (sdk_jobs_server): no NIF in the VM
  def crash(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)
  def stuck(_n, _mode, _tiny, _ref), do: :erlang.nif_error(:nif_not_loaded)

  @server "c_src/build/sdk/sdk_jobs_server"

  # the pool schedule: :external uses for these jobs, as
  # `use WellBehaved.NIF, external: ...` declares it
  def __wb_external__,
    do: [name: WellBehaved.Test.SDKJobs.External, executable: Path.expand(@server), servers: 1]

  @doc "Builds the library (make sdk-test-nifs) and loads it, once per VM."
  def ensure_loaded!, do: load!("sdk_jobs_nif")

  @doc "The code a child VM's scenario starts with to call these jobs."
  def child_prelude do
    """
    Code.require_file("test/support/sdk_jobs.exs")
    alias WellBehaved.Test.SDKJobs
    alias WellBehaved.Job
    SDKJobs.ensure_loaded!()
    """
  end
end

defmodule WellBehaved.Test.SDKAwaiting do
  @moduledoc false
  # The same library built so that every :threaded call waits for its
  # job's answer in the call that queues it (mk/sdk.mk).
  use WellBehaved.Test.SDKStubs

  def ensure_loaded!, do: load!("sdk_awaiting_nif")
end

defmodule WellBehaved.Test.SDKImpatient do
  @moduledoc false
  # The same library built so that every :threaded call starts waiting
  # for its job's answer and gives up at once: the job answers by message
  # from the waiting state (mk/sdk.mk).
  use WellBehaved.Test.SDKStubs

  def ensure_loaded!, do: load!("sdk_impatient_nif")
end

defmodule WellBehaved.Test.SDKCounted do
  @moduledoc false
  # The same library again, called only by test/runtime_counters_test.exs,
  # so that its runtime's counters move by exactly that file's calls
  # (mk/sdk.mk).
  use WellBehaved.Test.SDKStubs

  def ensure_loaded!, do: load!("sdk_counted_nif")
end
