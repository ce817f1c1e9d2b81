defmodule WellBehaved.Lab.Search.EditScripts do
  @moduledoc """
  The Levenshtein edit script (`Fuzzy.editops/3`) at the C level beside
  rapidfuzz-cpp's `levenshtein_editops`: the `editops` part of
  `priv/wb_fzbench` (`c_src/fzbench/`, built by the lab's Makefile when
  `RAPIDFUZZ_CPP` names a checkout of rapidfuzz-cpp). Two strings of
  1 kB, random text and near copies, 8 pairs of each, the script made
  as the job makes it (both sides decoded, the script made, its records
  handed over); both ways interleaved in rounds, thread CPU time. Issue
  48's target: ours at most 1.5x rapidfuzz's, judged on each shape's
  95% interval. The program first compares the scripts: the distances
  must agree, and the scripts should be the same records (ties broken as
  rapidfuzz breaks them).
  """

  alias WellBehaved.Lab.Search.Pairs

  @program "wb_fzbench"
  @timeout_s 900
  @bytes 1000
  @bound 1.5

  @doc "The bound on ours / rapidfuzz-cpp's."
  @spec bound() :: float()
  def bound, do: @bound

  @doc "The program's path, or nil when it was not built."
  @spec program() :: String.t() | nil
  def program, do: WellBehaved.Lab.Search.Rapidfuzz.program(@program)

  @doc """
  Runs the program's editops part, `rounds` rounds a shape:
  `%{available: true, rows: [row], agree: [agree]}` (as `parse/1` gives
  them), or `%{available: false, reason: text}`.
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
        args = ["-s", "KILL", "#{@timeout_s}", path, "--parts", "editops"]

        args =
          args ++ ["--editops-bytes", "#{@bytes}", "--rounds", "#{rounds}", "--chunk-ms", "3"]

        case System.cmd("timeout", args, stderr_to_stdout: true) do
          {out, 0} -> Map.put(parse(out), :available, true)
          {out, status} -> %{available: false, reason: "the program failed (#{status}): #{out}"}
        end
    end
  end

  @doc """
  The program's lines: `editops SHAPE BYTES OURS_NS THEIRS_NS RATIO LOW
  HIGH ROUNDS` as rows, `agree editops SHAPE BYTES DISTANCES SCRIPTS
  COMPARED` as agreements (the pairs whose distance, and whose script,
  differ from rapidfuzz's).

      iex> out = "agree editops random 1000 0 1 8\\neditops random 1000 68000.5 78700.25 0.84 0.55 0.9 7\\n"
      iex> WellBehaved.Lab.Search.EditScripts.parse(out)
      %{rows: [%{shape: :random, bytes: 1000, ours_ns: 68000.5, theirs_ns: 78700.25, ratio: 0.84,
                 low: 0.55, high: 0.9, rounds: 7}],
        agree: [%{shape: :random, bytes: 1000, distances: 0, scripts: 1, compared: 8}]}
  """
  @spec parse(String.t()) :: %{rows: [map()], agree: [map()]}
  def parse(out) do
    lines = for line <- String.split(out, "\n", trim: true), do: String.split(line)

    rows =
      for ["editops", shape, bytes | timing] <- lines, length(timing) == 6 do
        Map.merge(
          %{shape: String.to_atom(shape), bytes: String.to_integer(bytes)},
          Pairs.timing(timing)
        )
      end

    agree =
      for ["agree", "editops", shape, bytes, distances, scripts, compared] <- lines do
        %{
          shape: String.to_atom(shape),
          bytes: String.to_integer(bytes),
          distances: String.to_integer(distances),
          scripts: String.to_integer(scripts),
          compared: String.to_integer(compared)
        }
      end

    %{rows: rows, agree: agree}
  end

  @doc """
  The target row (`WellBehaved.Lab.Search.Analysis.fuzzy_targets/1`'s
  kind): met when every shape's interval is within the bound and every
  distance agreed; not measured without the program (or for results of
  runs before it).
  """
  @spec target(map() | nil) :: map()
  def target(result) do
    row = %{
      target: "editops, two 1 kB strings / rapidfuzz-cpp's levenshtein_editops <= #{@bound}x"
    }

    case result do
      %{available: true, rows: [_ | _] = rows, agree: agree} ->
        wrong = Enum.filter(agree, &(&1.distances > 0))

        measured =
          Enum.map_join(rows, ", ", fn r ->
            "#{r.shape} #{fmt(r.ratio)}x (#{fmt(r.low)}-#{fmt(r.high)})"
          end) <> if(wrong == [], do: "", else: "; distances differ")

        Map.merge(row, %{
          measured: measured,
          met: wrong == [] and Enum.all?(rows, &(&1.high <= @bound))
        })

      _ ->
        Map.merge(row, %{measured: "-", met: false})
    end
  end

  @doc """
  The part of the report: a row a shape, whether the scripts were the
  same, or why nothing was measured (`""` for results of runs before it).
  """
  @spec to_markdown(map() | nil) :: String.t()
  def to_markdown(%{available: true, rows: rows, agree: agree}) do
    table =
      for r <- rows do
        [
          "#{r.shape}",
          "#{fmt(r.ours_ns / 1000)} us",
          "#{fmt(r.theirs_ns / 1000)} us",
          "#{fmt(r.ratio)} (#{fmt(r.low)}-#{fmt(r.high)})"
        ]
      end

    same =
      case Enum.filter(agree, &(&1.distances + &1.scripts > 0)) do
        [] ->
          "Every pair's script was rapidfuzz's, record for record."

        differ ->
          "Scripts that differ from rapidfuzz-cpp's: " <>
            Enum.map_join(differ, ", ", fn a ->
              "#{a.shape}: #{a.scripts} of #{a.compared} pairs (#{a.distances} distances)"
            end) <> "."
      end

    """
    The Levenshtein edit script of two strings of #{@bytes} bytes (`Fuzzy.editops/3`'s
    job at the C level, `priv/wb_fzbench`) against rapidfuzz-cpp's
    `levenshtein_editops`; per pair, median over the rounds; ours /
    rapidfuzz-cpp's (95% interval), below 1 is faster. #{same}

    #{WellBehaved.Lab.Markdown.table(["pairs", "ours", "rapidfuzz-cpp", "ours / rapidfuzz"], table)}
    """
  end

  def to_markdown(%{reason: reason}), do: "Edit scripts beside rapidfuzz-cpp: #{reason}.\n"
  def to_markdown(_none), do: ""

  defp fmt(x), do: :erlang.float_to_binary(x / 1, decimals: 2)
end
