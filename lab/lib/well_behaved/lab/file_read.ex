defmodule WellBehaved.Lab.FileRead do
  @moduledoc """
  The file suite: how fast each way of reading a file's lines is, per line
  and per megabyte, `WellBehaved.File` against OTP's and plain C.

  File shapes (written to a temporary folder, read from the page cache):

    * `100-byte lines`: 99 bytes and `"\\n"` per line, 30 MB in a quick
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
  """

  @behaviour WellBehaved.Lab.Suite

  alias WellBehaved.File, as: WFile
  alias WellBehaved.Testing.ChildVM
  alias WellBehaved.Lab.{Markdown, Plot, Stats, Suite}

  @buffers [1024, 65_536, 1_048_576]
  @methods [
    :wb_read_line,
    :wb_read_lines,
    :erl_read_line,
    :erl_read_split,
    :file_stream,
    :c_memchr,
    :c_core
  ]
  # methods whose buffer cannot be chosen: measured once
  @fixed_buffer [:file_stream]
  @min_sample_ns 20_000_000

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
    rounds = max(1, round(3 * scale))
    dir = Path.join(System.tmp_dir!(), "wb_lab_file_#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)

    try do
      shapes =
        for shape <- shapes(quick, scale) do
          path = Path.join(dir, slug(shape.name))
          progress.("file: writing #{shape.name} (#{shape.bytes} bytes)")
          write_shape(path, shape)
          spec = %{path: path, rounds: rounds, baseline: baseline_program()}
          entry = shape_entry(shape, measure_in_child(spec, shape))
          File.rm(path)
          progress.("file #{shape.name}: #{summary(entry)}")
          entry
        end

      %{
        config: %{quick: quick, rounds: rounds, buffers: @buffers, rounds_scale: scale * 1.0},
        shapes: shapes,
        targets: targets(shapes)
      }
    after
      File.rm_rf(dir)
    end
  end

  defp shapes(quick, scale) do
    # a quick run reads 300,000 lines, a full one a million
    lines_mb = max(1, round(if(quick, do: 30, else: 100) * scale))

    [
      %{name: "100-byte lines, #{lines_mb} MB", kind: :fixed, bytes: lines_mb * 1_000_000},
      %{name: "growing lines, 1 KB", kind: :growing, bytes: 1_000},
      %{name: "growing lines, 1 MB", kind: :growing, bytes: 1_000_000}
    ] ++
      if quick,
        do: [],
        else: [%{name: "growing lines, 1 GB", kind: :growing, bytes: 1_000_000_000}]
  end

  # ---- the files ------------------------------------------------------------------

  defp write_shape(path, %{kind: :fixed, bytes: bytes}) do
    # 10,000 different 100-byte lines, repeated
    block =
      for i <- 1..10_000, into: "" do
        text = Base.encode64(:crypto.hash(:sha512, <<i::32>>) <> :crypto.hash(:sha256, <<i::32>>))
        :binary.part(text, 0, 99) <> "\n"
      end

    File.open!(path, [:write, :raw, :binary], fn io ->
      full = div(bytes, byte_size(block))
      for _ <- 1..full//1, do: :ok = :file.write(io, block)
      :ok = :file.write(io, :binary.part(block, 0, bytes - full * byte_size(block)))
    end)
  end

  defp write_shape(path, %{kind: :growing, bytes: bytes}) do
    File.open!(path, [:write, :raw, :binary, {:delayed_write, 1_048_576, 1000}], fn io ->
      write_growing(io, 1, bytes)
    end)
  end

  defp write_growing(_io, _len, left) when left <= 0, do: :ok

  defp write_growing(io, len, left) do
    line = :binary.copy("g", min(len, max(left - 1, 0))) <> "\n"
    :ok = :file.write(io, line)
    write_growing(io, len + 1, left - byte_size(line))
  end

  defp baseline_program do
    path = Path.join(:code.priv_dir(:well_behaved_lab), "wb_line_baseline")
    if File.exists?(path), do: path, else: raise("#{path} is missing: run `make native`")
  end

  # ---- in the child VM ----------------------------------------------------------------

  defp measure_in_child(spec, shape) do
    bound_ms = if shape.bytes > 500_000_000, do: 1_800_000, else: 600_000
    ChildVM.run({__MODULE__, :child_measure, [spec]}, bound_ms: bound_ms)
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
  def shape_entry(shape, child_result) do
    base = Map.take(shape, [:name, :kind, :bytes])

    case child_result do
      {:ok, %{rows: rows}} ->
        Map.merge(base, %{status: "ok", rows: rows})

      {:timeout, ms} ->
        Map.merge(base, %{status: "bound hit (#{ms} ms)", rows: [], bound_ms: ms})

      {:crashed, code, output} ->
        Map.merge(base, %{
          status: "crashed (exit #{code})",
          rows: [],
          error: error_line(output),
          output: String.slice(output, -500, 500)
        })
    end
  end

  # the line of a child's output that says why it failed: the exception's
  # banner if there is one, else the last line
  defp error_line(output) do
    lines = output |> String.split("\n", trim: true) |> Enum.map(&String.trim/1)
    Enum.find(lines, &String.starts_with?(&1, "** (")) || List.last(lines) || ""
  end

  @doc false
  def child_measure(%{path: path, rounds: rounds} = spec) do
    # warm the page cache
    _ = sample(:c_memchr, path, 1_048_576, spec.baseline)

    combos =
      for method <- @methods,
          buffer <- if(method in @fixed_buffer, do: [nil], else: @buffers),
          do: {method, buffer}

    samples =
      for _round <- 1..rounds, {method, buffer} <- combos, reduce: %{} do
        acc ->
          sample = sample(method, path, buffer, spec.baseline)
          Map.update(acc, {method, buffer}, [sample], &[sample | &1])
      end

    rows =
      for {method, buffer} <- combos do
        taken = samples[{method, buffer}]
        ns = Stats.median(Enum.map(taken, & &1.ns_per_pass))
        lines = hd(taken).lines

        %{
          method: method,
          buffer: buffer,
          lines: lines,
          ns_per_line: ns / max(lines, 1),
          mb_per_s: File.stat!(path).size / ns * 1000,
          rounds: length(taken)
        }
      end

    case rows |> Enum.map(& &1.lines) |> Enum.uniq() do
      [_] ->
        :ok

      counts ->
        raise "the methods disagree on the line count: " <>
                inspect(Enum.map(rows, &{&1.method, &1.buffer, &1.lines}), limit: :infinity) <>
                " (#{inspect(counts)})"
    end

    %{rows: rows}
  end

  # reads the whole file, as many times as fit in @min_sample_ns (at least once)
  defp sample(method, path, buffer, baseline)
       when method in [:c_memchr, :c_core] do
    mode = if method == :c_memchr, do: "memchr", else: "core"
    repeat(fn -> c_pass(baseline, [path, Integer.to_string(buffer), mode]) end, 0, 0, 0)
  end

  defp sample(method, path, buffer, _baseline) do
    :erlang.garbage_collect()

    repeat(
      fn ->
        t0 = :erlang.monotonic_time(:nanosecond)
        lines = count_lines(method, path, buffer)
        {:erlang.monotonic_time(:nanosecond) - t0, lines}
      end,
      0,
      0,
      0
    )
  end

  # `pass` reads the file once and returns {nanoseconds, lines}
  defp repeat(_pass, passes, ns, lines) when ns >= @min_sample_ns and passes > 0,
    do: %{ns_per_pass: ns / passes, lines: lines}

  defp repeat(pass, passes, ns, _lines) do
    {took, lines} = pass.()
    repeat(pass, passes + 1, ns + took, lines)
  end

  # one run of the C program, timed by itself (no process start-up)
  defp c_pass(program, args) do
    case System.cmd(program, args) do
      {out, 0} ->
        %{"lines" => lines, "ns" => took} =
          Regex.named_captures(~r/lines=(?<lines>\d+) .*ns=(?<ns>\d+)/, out)

        {String.to_integer(took), String.to_integer(lines)}

      {out, code} ->
        raise "#{program} exited with #{code}: #{out}"
    end
  end

  defp count_lines(:wb_read_line, path, buffer) do
    file = WFile.open!(path, :read, buffer_bytes: buffer)
    n = wb_lines(file, 0)
    :ok = WFile.close(file)
    n
  end

  defp count_lines(:wb_read_lines, path, buffer) do
    file = WFile.open!(path, :read, buffer_bytes: buffer)
    n = wb_batches(file, 0)
    :ok = WFile.close(file)
    n
  end

  defp count_lines(:erl_read_line, path, buffer) do
    {:ok, io} = :file.open(path, [:read, :raw, :binary, {:read_ahead, buffer}])
    n = erl_lines(io, 0)
    :ok = :file.close(io)
    n
  end

  defp count_lines(:erl_read_split, path, buffer) do
    {:ok, io} = :file.open(path, [:read, :raw, :binary])
    n = split_lines(io, buffer, "", 0)
    :ok = :file.close(io)
    n
  end

  defp count_lines(:file_stream, path, nil) do
    path |> File.stream!() |> Enum.reduce(0, fn _line, n -> n + 1 end)
  end

  defp wb_lines(file, n) do
    case WFile.read_line(file) do
      {:ok, _line} -> wb_lines(file, n + 1)
      :eof -> n
    end
  end

  defp wb_batches(file, n) do
    case WFile.read_lines(file, 4096) do
      {:ok, lines} -> wb_batches(file, n + length(lines))
      :eof -> n
    end
  end

  defp erl_lines(io, n) do
    case :file.read_line(io) do
      {:ok, _line} -> erl_lines(io, n + 1)
      :eof -> n
    end
  end

  defp split_lines(io, buffer, carry, n) do
    case :file.read(io, buffer) do
      {:ok, chunk} ->
        parts = :binary.split(carry <> chunk, "\n", [:global])
        split_lines(io, buffer, List.last(parts), n + length(parts) - 1)

      :eof ->
        if carry == "", do: n, else: n + 1
    end
  end

  # ---- analysis and rendering ----------------------------------------------------------

  defp summary(%{status: "ok", rows: rows}) do
    at = fn method -> Enum.find(rows, &(&1.method == method and &1.buffer in [65_536, nil])) end

    "read_line #{fmt(at.(:wb_read_line).ns_per_line)} ns/line, " <>
      "read_lines #{fmt(at.(:wb_read_lines).ns_per_line)}, " <>
      ":file.read_line #{fmt(at.(:erl_read_line).ns_per_line)}, " <>
      "C #{fmt(at.(:c_memchr).ns_per_line)} (64 KiB buffers)"
  end

  defp summary(%{status: status, error: error}), do: "#{status}: #{error}"
  defp summary(%{status: status}), do: status

  defp row(shape, method, buffer) do
    Enum.find(Map.get(shape, :rows, []), &(&1.method == method and &1.buffer == buffer))
  end

  @doc false
  def targets(shapes) do
    lines = Enum.find(shapes, &(&1.kind == :fixed and &1.status == "ok"))
    at = fn method -> lines && row(lines, method, 65_536) end
    ns = fn method -> (r = at.(method)) && r.ns_per_line end

    ratio = fn a, b -> ns.(a) && ns.(b) && ns.(b) / ns.(a) end
    read_line_x = ratio.(:wb_read_line, :erl_read_line)
    lines_vs_c = ns.(:wb_read_lines) && ns.(:c_memchr) && ns.(:wb_read_lines) / ns.(:c_memchr)

    [
      target("read_line <= 100 ns per 100-byte line", ns.(:wb_read_line), "ns", &(&1 <= 100)),
      target(
        "read_line >= 3.5x :file.read_line (raw, read_ahead)",
        read_line_x,
        "x",
        &(&1 >= 3.5)
      ),
      target("read_lines <= 25 ns per line", ns.(:wb_read_lines), "ns", &(&1 <= 25)),
      target(
        "read_lines within 25/15 of C read + memchr (the ratio behind 25 ns)",
        lines_vs_c,
        "x C",
        &(&1 <= 25 / 15)
      )
    ]
  end

  defp target(label, nil, _unit, _ok?), do: %{target: label, measured: "-", met: false}

  defp target(label, value, unit, ok?),
    do: %{
      target: label <> " (64 KiB buffers)",
      measured: "#{fmt(value)} #{unit}",
      met: ok?.(value)
    }

  @doc """
  Renders a result of `run/1` as Markdown: a table per measured shape, the
  status of each shape that was not, and the targets.
  """
  @impl true
  @spec to_markdown(result()) :: String.t()
  def to_markdown(result) do
    c = result.config

    [
      """
      ## Reading lines from a file

      `WellBehaved.File` against `:file.read_line/1`, `File.stream!/1`, `:file.read/2` with \
      `:binary.split/3`, and plain C, on page-cached files. Medians of #{c.rounds} \
      interleaved round(s) in one child VM per file; a sample reads the whole file (small \
      files repeatedly, for at least 20 ms). "vs erl" is `:file.read_line` time over this \
      method's time at the same buffer size (higher is faster); "vs C" is this method's time \
      over C read + memchr's.

      """,
      Enum.map(result.shapes, &shape_md/1),
      "### Targets\n\n",
      Markdown.targets_table(result.targets)
    ]
    |> IO.iodata_to_binary()
  end

  defp shape_md(%{status: "ok"} = shape) do
    lines = hd(shape.rows).lines

    rows =
      for r <- shape.rows do
        erl = row(shape, :erl_read_line, r.buffer || 65_536)
        c = row(shape, :c_memchr, r.buffer || 65_536)

        [
          "`#{r.method}`",
          buffer_label(r.buffer),
          fmt(r.ns_per_line),
          fmt(r.mb_per_s),
          fmt(erl.ns_per_line / r.ns_per_line) <> "x",
          fmt(r.ns_per_line / c.ns_per_line) <> "x"
        ]
      end

    [
      "### #{shape.name}: #{lines} lines, #{shape.bytes} bytes\n\n",
      Markdown.table(["method", "buffer", "ns/line", "MB/s", "vs erl", "vs C"], rows),
      "\n"
    ]
  end

  defp shape_md(shape) do
    error =
      case Map.get(shape, :error) do
        e when e in [nil, ""] -> ""
        e -> "```\n#{String.replace(e, "`", "'")}\n```\n\n"
      end

    [
      "### #{shape.name}: #{shape.bytes} bytes\n\n",
      "**#{shape.status}**: not measured.\n\n",
      error
    ]
  end

  defp slug(name), do: name |> String.downcase() |> Plot.file_stem()

  defp buffer_label(nil), do: "default"
  defp buffer_label(b) when b >= 1_048_576, do: "#{div(b, 1_048_576)} MiB"
  defp buffer_label(b), do: "#{div(b, 1024)} KiB"

  @doc "One `:bars` chart of ns per line per measured shape (none for a failed one)."
  @impl true
  @spec charts(result()) :: [Suite.chart()]
  def charts(result) do
    for shape <- result.shapes, shape.status == "ok" do
      methods = shape.rows |> Enum.map(& &1.method) |> Enum.uniq()

      %{
        name: "file_" <> slug(shape.name),
        title: "Reading lines: #{shape.name}, ns per line",
        kind: :bars,
        x_label: "method",
        y_label: "ns per line",
        log_y: true,
        categories: Enum.map(methods, &Atom.to_string/1),
        series:
          for buffer <- @buffers do
            %{
              label: buffer_label(buffer) <> " buffer",
              values:
                for m <- methods do
                  r = row(shape, m, buffer) || row(shape, m, nil)
                  r && r.ns_per_line
                end
            }
          end
      }
    end
  end

  @doc """
  The raw rows: one per shape, method and buffer size; a shape that was not
  measured has one row with its status and no figures.
  """
  @impl true
  @spec tables(result()) :: [Suite.table()]
  def tables(result) do
    rows =
      Enum.flat_map(result.shapes, fn shape ->
        case Map.get(shape, :rows, []) do
          [] ->
            [[shape.name, nil, nil, nil, shape.bytes, nil, nil, nil, shape.status]]

          rows ->
            for r <- rows do
              [
                shape.name,
                r.method,
                r.buffer,
                r.lines,
                shape.bytes,
                r.ns_per_line,
                r.mb_per_s,
                r.rounds,
                shape.status
              ]
            end
        end
      end)

    [
      %{
        name: "lines",
        columns:
          ~w(shape method buffer_bytes lines file_bytes ns_per_line mb_per_s rounds status),
        rows: rows
      }
    ]
  end

  defp fmt(x), do: Markdown.fmt_auto(x)
end
