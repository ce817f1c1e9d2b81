defmodule WellBehaved.Lab.FileRead.Plan do
  @moduledoc """
  What the file suite measures: the file shapes of a run, the reading
  methods and buffer sizes, the rounds and each child VM's time bound.
  """

  alias WellBehaved.Lab.Plot

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

  @typedoc "A file shape: its `name`, `kind` (`:fixed` or `:growing`) and size in `bytes`."
  @type shape :: %{name: String.t(), kind: :fixed | :growing, bytes: pos_integer()}

  @doc "The buffer sizes every method is measured at, in bytes."
  @spec buffers() :: [pos_integer()]
  def buffers, do: @buffers

  @doc """
  Every method with each buffer size it is measured at, in the order they
  are timed in a round: `nil` for a method whose buffer cannot be chosen.
  """
  @spec combos() :: [{atom(), pos_integer() | nil}]
  def combos do
    for method <- @methods,
        buffer <- if(method in @fixed_buffer, do: [nil], else: @buffers),
        do: {method, buffer}
  end

  @doc "The rounds of a run: 3, scaled by `rounds_scale`, at least 1."
  @spec rounds(number()) :: pos_integer()
  def rounds(scale), do: max(1, round(3 * scale))

  @doc """
  The shapes of a run: 100-byte lines (20 MB quick, 100 MB full, scaled by
  `scale`, at least 1 MB) and growing lines of 1 KB, 1 MB and, in a full
  run only, 1 GB.
  """
  @spec shapes(boolean(), number()) :: [shape()]
  def shapes(quick, scale) do
    # a quick run reads 200,000 lines, a full one a million (a quick run
    # of every suite is held to 360 s)
    lines_mb = max(1, round(if(quick, do: 20, else: 100) * scale))

    [
      %{name: "100-byte lines, #{lines_mb} MB", kind: :fixed, bytes: lines_mb * 1_000_000},
      %{name: "growing lines, 1 KB", kind: :growing, bytes: 1_000},
      %{name: "growing lines, 1 MB", kind: :growing, bytes: 1_000_000}
    ] ++
      if quick,
        do: [],
        else: [%{name: "growing lines, 1 GB", kind: :growing, bytes: 1_000_000_000}]
  end

  @doc "How long a shape's child VM may take: 30 min above 500 MB, else 10."
  @spec bound_ms(shape()) :: pos_integer()
  def bound_ms(shape), do: if(shape.bytes > 500_000_000, do: 1_800_000, else: 600_000)

  @doc """
  A shape's name as a file name stem, for its file and its chart.

      iex> WellBehaved.Lab.FileRead.Plan.slug("growing lines, 1 KB")
      "growing_lines__1_kb"
  """
  @spec slug(String.t()) :: String.t()
  def slug(name), do: name |> String.downcase() |> Plot.file_stem()
end
