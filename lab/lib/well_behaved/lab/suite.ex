defmodule WellBehaved.Lab.Suite do
  @moduledoc """
  What a lab suite provides, so that `mix well_behaved.lab` can run it and
  `WellBehaved.Lab.Report` can render it.

  `c:run/1` gets:

    * `quick:` - `true` for the quick run `make lab` does, `false` for `--full`;
    * `rounds_scale:` - multiplies repetitions (a small value gives a fast,
      rough run, as the lab's own tests use);
    * `progress:` - a function to call with a line of text while running.

  It returns a map of atoms, numbers, strings, lists and maps (no tuples), so
  that it can go into `results.json` as it is.

  A chart is a map:

      %{
        name: "lateness_spin",          # file name stem, unique in the run
        title: "Ticker lateness p99, Spin",
        kind: :bars | :lines,
        x_label: "mode", y_label: "ms",
        log_y: true,
        categories: ["normal", "yielding"],             # the x axis
        series: [%{label: "1x", values: [12.5, 1.1]}]   # nil: no value
      }

  or, for a heatmap (a coloured grid, one cell per row and category):

      %{
        name: "lateness_heatmap",
        title: "Ticker lateness p99 over the baseline",
        kind: :heatmap,
        x_label: "work per call / workers", y_label: "mode",
        categories: ["1 ms x1", "1 ms x10"],            # the columns (x axis)
        rows: ["erlang", "normal"],                     # the y axis, first at the top
        values: [[1.0, 1.1], [0.9, nil]],               # one list per row; nil: no value
        labels: [["1.0", "1.1"], ["0.9", "bound hit"]], # optional; nil or "": none
        log_scale: true,                                # log colour scale (<= 0: no value)
        color_label: "ticker p99 / baseline"            # the colour box's title
      }

  Without `labels:` a cell shows its value, or `-` if it has none. See
  `WellBehaved.Lab.Plot` for how charts are drawn.

  A table is raw data for a CSV file:
  `%{name: "lateness", columns: ["mode", ...], rows: [["normal", ...]]}`.
  """

  @type chart :: xy_chart() | heatmap()

  @typedoc "A `:bars` or `:lines` chart."
  @type xy_chart :: %{
          name: String.t(),
          title: String.t(),
          kind: :bars | :lines,
          x_label: String.t(),
          y_label: String.t(),
          log_y: boolean(),
          categories: [String.t()],
          series: [%{label: String.t(), values: [number() | nil]}]
        }

  @typedoc "A `:heatmap` chart; `labels:` is optional."
  @type heatmap :: %{
          required(:name) => String.t(),
          required(:title) => String.t(),
          required(:kind) => :heatmap,
          required(:x_label) => String.t(),
          required(:y_label) => String.t(),
          required(:categories) => [String.t()],
          required(:rows) => [String.t()],
          required(:values) => [[number() | nil]],
          optional(:labels) => [[String.t() | nil]],
          required(:log_scale) => boolean(),
          required(:color_label) => String.t()
        }

  @type table :: %{name: String.t(), columns: [String.t()], rows: [[term()]]}

  # the lab's own NIF libraries, each with its copy of the runtime
  @lab_runtimes [WellBehaved.Lab.Native, WellBehaved.Lab.RustNative]

  @doc """
  Validates the options every suite's `c:run/1` takes and returns
  `{quick, rounds_scale, progress}`.
  """
  @spec options!(keyword()) :: {boolean(), number(), (String.t() -> any())}
  def options!(opts) do
    opts = Keyword.validate!(opts, quick: true, rounds_scale: 1.0, progress: fn _ -> :ok end)
    quick = Keyword.fetch!(opts, :quick)
    scale = Keyword.fetch!(opts, :rounds_scale)
    progress = Keyword.fetch!(opts, :progress)

    unless is_boolean(quick), do: raise(ArgumentError, "quick: expects a boolean")

    unless is_number(scale) and scale > 0,
      do: raise(ArgumentError, "rounds_scale: expects a positive number")

    unless is_function(progress, 1),
      do: raise(ArgumentError, "progress: expects a one-argument function")

    {quick, scale, progress}
  end

  @doc """
  In a child VM that measures schedulers, before its first measurement:
  the slice the VM would have after its first seconds, at once. The
  library measures the Erlang turn when it loads and again over the first
  6.4 s (`WellBehaved.Runtime.Calibration.refine/0`: a machine slowed down
  at start gives too long a turn); a child VM of the lab lives for
  seconds, so it measures three more times, 30 ms apart, now.
  """
  @spec settle_calibration() :: :ok
  def settle_calibration do
    # refine/0 gives its slice to the runtimes that are loaded
    Enum.each(@lab_runtimes, &Code.ensure_loaded!/1)

    for _ <- 1..3 do
      WellBehaved.Runtime.Calibration.refine()
      Process.sleep(30)
    end

    :ok
  end

  @doc """
  Applies runtime settings (`WellBehaved.Runtime.configure/2`) to every
  runtime the lab uses, so that they run on equal settings: the
  library's (Levenshtein), the lab's own NIF library's (Spin, echo) and
  its Rust NIF library's (`WellBehaved.Lab.Spin.run_rust/2`).
  """
  @spec configure_runtimes(keyword()) :: :ok
  def configure_runtimes(settings) do
    :ok = WellBehaved.Runtime.configure(settings)
    Enum.each(@lab_runtimes, &(:ok = WellBehaved.Runtime.configure(&1, settings)))
  end

  @callback run(keyword()) :: map()
  @callback to_markdown(map()) :: String.t()
  @callback charts(map()) :: [chart()]
  @callback tables(map()) :: [table()]
end
