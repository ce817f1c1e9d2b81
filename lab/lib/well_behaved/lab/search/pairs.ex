defmodule WellBehaved.Lab.Search.Pairs do
  @moduledoc """
  The fuzzy scorers on one pair at a time, at the C level, beside
  rapidfuzz-cpp's free functions: `priv/wb_fzbench` (`c_src/fzbench/`),
  built by the lab's Makefile when `RAPIDFUZZ_CPP` names a checkout of
  rapidfuzz-cpp. The program scores near copies of 8, 32, 100 and 1,000
  bytes as `Fuzzy.score/3`'s job does (both sides decoded, the pair
  started and stepped to its end), both ways interleaved in rounds,
  thread CPU time; a row gives the median ratio ours / rapidfuzz's with
  a 95% interval. It first compares the two sides' scores (`agree`
  lines): a scorer that disagrees is reported as such.
  """

  alias WellBehaved.Lab.Markdown

  @program "wb_fzbench"
  # a run of the program, at most (about two minutes at 5 rounds)
  @timeout_s 900
  @sizes [8, 32, 100, 1000]

  @doc "The sizes (bytes a side) the pairs are measured at."
  @spec sizes() :: [pos_integer()]
  def sizes, do: @sizes

  @doc "The program's path, or nil when it was not built."
  @spec program() :: String.t() | nil
  def program, do: WellBehaved.Lab.Search.Rapidfuzz.program(@program)

  @doc """
  Runs the program's pair part, `rounds` rounds a cell:
  `%{available: true, rows: [row], disagree: [{scorer, size, count}]}`
  (rows as `parse/1` gives them), or `%{available: false, reason: text}`.
  """
  @spec run(pos_integer()) :: map()
  def run(rounds) do
    case program() do
      nil ->
        %{
          available: false,
          reason: "not measured: run the lab with RAPIDFUZZ_CPP set to a rapidfuzz-cpp checkout"
        }

      path ->
        sizes = Enum.join(@sizes, ",")
        args = ["-s", "KILL", "#{@timeout_s}", path, "--parts", "pairs", "--sizes", sizes]
        args = args ++ ["--rounds", "#{rounds}", "--chunk-ms", "3"]

        case System.cmd("timeout", args, stderr_to_stdout: true) do
          {out, 0} -> Map.put(parse(out), :available, true)
          {out, status} -> %{available: false, reason: "the program failed (#{status}): #{out}"}
        end
    end
  end

  @doc """
  The program's lines: `pair SCORER SIZE OURS_NS THEIRS_NS RATIO LOW HIGH
  ROUNDS` as rows, and `agree pairs SIZE SCORER DIFFERENT COMPARED` with
  a difference as `disagree`.

      iex> out = "agree pairs 8 osa 0 64\\npair osa 8 203.13 74.74 2.732 2.689 2.772 11\\n"
      iex> WellBehaved.Lab.Search.Pairs.parse(out)
      %{rows: [%{scorer: :osa, size: 8, ours_ns: 203.13, theirs_ns: 74.74, ratio: 2.732,
                 low: 2.689, high: 2.772, rounds: 11}], disagree: []}
  """
  @spec parse(String.t()) :: %{rows: [map()], disagree: [{atom(), pos_integer(), pos_integer()}]}
  def parse(out) do
    lines = for line <- String.split(out, "\n", trim: true), do: String.split(line)

    rows =
      for ["pair", name, size | timing] <- lines, length(timing) == 6 do
        Map.merge(%{scorer: String.to_atom(name), size: String.to_integer(size)}, timing(timing))
      end

    disagree =
      for ["agree", "pairs", size, name, different, _compared] <- lines,
          different != "0",
          do: {String.to_atom(name), String.to_integer(size), String.to_integer(different)}

    %{rows: rows, disagree: disagree}
  end

  @doc """
  A line's timing fields, `OURS_NS THEIRS_NS RATIO LOW HIGH ROUNDS`, as
  the bench prints them for every part.
  """
  @spec timing([String.t()]) :: map()
  def timing([ours, theirs, ratio, low, high, rounds]) do
    %{
      ours_ns: number(ours),
      theirs_ns: number(theirs),
      ratio: number(ratio),
      low: number(low),
      high: number(high),
      rounds: String.to_integer(rounds)
    }
  end

  defp number(text), do: elem(Float.parse(text), 0)

  @doc """
  The rows as a table: one row a scorer, a column a size, each cell the
  ratio (interval); `-` where a size was not measured.
  """
  @spec table_rows([map()]) :: [[String.t()]]
  def table_rows(rows) do
    by = Map.new(rows, &{{&1.scorer, &1.size}, &1})

    for scorer <- rows |> Enum.map(& &1.scorer) |> Enum.uniq() do
      cells =
        for size <- @sizes do
          case Map.get(by, {scorer, size}) do
            nil -> "-"
            r -> "#{fmt(r.ratio)} (#{fmt(r.low)}-#{fmt(r.high)})"
          end
        end

      ["`#{scorer}`" | cells]
    end
  end

  @doc """
  The pairs' part of the report: the table, whether both sides agreed,
  or why nothing was measured (`""` for results of runs before the
  pairs were measured).
  """
  @spec to_markdown(map() | nil) :: String.t()
  def to_markdown(%{available: true, rows: rows, disagree: disagree}) do
    sizes = Enum.map(@sizes, &"#{&1} B")

    agree =
      case disagree do
        [] ->
          "Both sides gave the same score for every pair measured."

        list ->
          "Scores that differ from rapidfuzz-cpp's: " <>
            Enum.map_join(list, ", ", fn {s, size, n} -> "`#{s}` at #{size} B (#{n} pairs)" end) <>
            "."
      end

    """
    One pair at a time, at the C level (`priv/wb_fzbench`): each scorer on
    near copies of the sizes below, as `Fuzzy.score/3`'s job scores them,
    against rapidfuzz-cpp's free function; thread CPU time, the two
    interleaved in rounds; ours / rapidfuzz-cpp's, median (95% interval),
    below 1 is faster. #{agree}

    #{Markdown.table(["scorer" | sizes], table_rows(rows))}
    """
  end

  def to_markdown(%{reason: reason}), do: "Pairs beside rapidfuzz-cpp: #{reason}.\n"
  def to_markdown(_none), do: ""

  defp fmt(x), do: :erlang.float_to_binary(x / 1, decimals: 2)
end
