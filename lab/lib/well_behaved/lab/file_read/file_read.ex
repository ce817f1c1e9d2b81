defmodule WellBehaved.Lab.FileRead do
  @moduledoc """
  The file suite: how fast each way of reading a file's lines is, per line
  and per megabyte, `WellBehaved.File` against OTP's and plain C.

  File shapes (written to a temporary folder, read from the page cache):

    * `100-byte lines`: 99 bytes and `"\\n"` per line, 20 MB in a quick
      run and 100 MB in `--full` (scaled by `rounds_scale`, at least 1 MB);
    * `growing lines, 1 KB` / `1 MB` / `1 GB` (`--full` only): line *i* is
      *i* bytes and `"\\n"`, until the file has the size: Nifsy's shapes,
      where a line-by-line reader meets lines much longer than its buffer.

  Methods, each at buffer sizes 1 KiB, 64 KiB and 1 MiB:

    * `wb_read_line`: `WellBehaved.File.read_line/1`, `buffer_bytes:`;
    * `wb_read_lines`: `WellBehaved.File.read_lines/2`, 4096 at a time;
    * `erl_read_line`: `:file.read_line/1` on a `[:raw, :binary,
      {:read_ahead, buffer}]` file;
    * `erl_read_split`: `:file.read/2` of `buffer` bytes, `:binary.split/3`
      on `"\\n"`, the unfinished line carried over;
    * `file_stream`: `File.stream!/1` (its own buffer: one row);
    * `c_memchr`: plain C `read(2)` into a `buffer`-byte buffer and
      `memchr` (`priv/wb_line_baseline`);
    * `c_core`: the same program through `WellBehaved.File`'s own C line
      reader, so the gap to the NIFs is what the VM adds.

  Every shape runs in its own child VM. The methods are timed in rounds,
  interleaved, so that a slow spell of a shared machine hits all of them;
  a measurement reads the whole file (small files again and again, for at
  least 20 ms). Figures are medians over the rounds. Every method must
  count the same lines, or the shape's child VM fails.

  A shape whose child VM crashes or hits its time bound is a result too:
  an entry with its status (`"crashed (exit 1)"`, `"bound hit (600000 ms)"`)
  and no figures, shown as such in the Markdown and the CSV rows and left
  out of the charts; the other shapes are still measured.

  The parts: `WellBehaved.Lab.FileRead.Plan` (shapes, methods, buffers),
  `WellBehaved.Lab.FileRead.Files` (writing the files),
  `WellBehaved.Lab.FileRead.Child` and `WellBehaved.Lab.FileRead.Readers`
  (the child VM and the readers it times), `WellBehaved.Lab.FileRead.Analysis`
  (rows, targets) and `WellBehaved.Lab.FileRead.Render` (Markdown, charts,
  tables).
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.Suite
  alias WellBehaved.Lab.FileRead.{Analysis, Child, Files, Plan, Render}

  @typedoc "A result map as returned by `run/1`."
  @type result :: %{atom() => term()}

  @doc """
  Writes each file shape, measures it in a child VM and returns the result
  map: `config`, `shapes` (one entry per shape, see `shape_entry/2`) and
  `targets`. Takes the options of `WellBehaved.Lab.Suite.options!/1`.
  """
  @impl true
  @spec run(keyword()) :: result()
  def run(opts) do
    {quick, scale, progress} = Suite.options!(opts)
    rounds = Plan.rounds(scale)
    dir = Path.join(System.tmp_dir!(), "wb_lab_file_#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)

    try do
      shapes =
        for shape <- Plan.shapes(quick, scale) do
          path = Path.join(dir, Plan.slug(shape.name))
          progress.("file: writing #{shape.name} (#{shape.bytes} bytes)")
          Files.write(path, shape)
          spec = %{path: path, rounds: rounds, baseline: Files.baseline_program()}
          entry = shape_entry(shape, Child.run(spec, shape))
          File.rm(path)
          progress.("file #{shape.name}: #{Analysis.summary(entry)}")
          entry
        end

      %{
        config: %{
          quick: quick,
          rounds: rounds,
          buffers: Plan.buffers(),
          rounds_scale: scale * 1.0
        },
        shapes: shapes,
        targets: targets(shapes)
      }
    after
      File.rm_rf(dir)
    end
  end

  @doc """
  The result entry of one file shape (`name`, `kind`, `bytes`) from what
  its child VM returned (`t:WellBehaved.Testing.ChildVM.result/0`).

  A measured shape has `status: "ok"` and its `rows`. A child that hit its
  bound or crashed gives an entry with that status and no rows; a crashed
  one keeps the end of its output (`output`) and the line that says why
  (`error`).

      iex> shape = %{name: "growing lines, 1 KB", kind: :growing, bytes: 1_000}
      iex> WellBehaved.Lab.FileRead.shape_entry(shape, {:timeout, 1000}).status
      "bound hit (1000 ms)"
  """
  @spec shape_entry(map(), ChildVM.result()) :: map()
  defdelegate shape_entry(shape, child_result), to: Child, as: :entry

  @doc false
  @spec child_measure(Child.spec()) :: %{rows: [map()]}
  defdelegate child_measure(spec), to: Child, as: :measure

  @doc false
  @spec targets([map()]) :: [map()]
  defdelegate targets(shapes), to: Analysis

  @doc """
  Renders a result of `run/1` as Markdown: a table per measured shape, the
  status of each shape that was not, and the targets.
  """
  @impl true
  @spec to_markdown(result()) :: String.t()
  def to_markdown(result), do: Render.markdown(result)

  @doc "One `:bars` chart of ns per line per measured shape (none for a failed one)."
  @impl true
  @spec charts(result()) :: [Suite.chart()]
  def charts(result), do: Render.charts(result)

  @doc """
  The raw rows: one per shape, method and buffer size; a shape that was not
  measured has one row with its status and no figures.
  """
  @impl true
  @spec tables(result()) :: [Suite.table()]
  def tables(result), do: Render.tables(result)
end
