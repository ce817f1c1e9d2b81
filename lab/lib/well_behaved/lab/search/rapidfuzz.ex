defmodule WellBehaved.Lab.Search.Rapidfuzz do
  @moduledoc """
  rapidfuzz-cpp's scorers on the fuzzy part's set and query, beside
  `WellBehaved.Fuzzy`'s: `priv/wb_rapidfuzz` (`c_src/rapidfuzz/`), built
  by the lab's Makefile when `RAPIDFUZZ_CPP` names a checkout of
  rapidfuzz-cpp (rapidfuzz is not part of the project). It times each
  scorer's query against every candidate with the candidates in the
  caches (as the fuzzy part's "query repeated" figure), in rounds whose
  order rotates, two ways: `cached` (a cached scorer of the query, one
  candidate after another: `process.extract`'s loop) and `multi`
  (rapidfuzz's SIMD scorers holding every candidate, made once, as an
  index; candidates of up to 32 bytes).
  """

  @program "wb_rapidfuzz"
  # a run of the program, at most (it takes some 10 s a round)
  @timeout_s 600

  @doc """
  The path of the lab's program `name` (`priv/`, built only with
  `RAPIDFUZZ_CPP`; this module's own by default), or nil when it was not
  built.
  """
  @spec program(String.t()) :: String.t() | nil
  def program(name \\ @program) do
    path = Path.join(:code.priv_dir(:well_behaved_lab), name)
    if File.exists?(path), do: path
  end

  @doc """
  rapidfuzz's ns per candidate for `query` against `candidates`, `rounds`
  rounds: `%{available: true, rows: [%{method: atom, way: :cached |
  :multi, ns:, low:, high:}]}`, or `%{available: false, reason: text}`.
  """
  @spec run([String.t()], String.t(), pos_integer()) :: map()
  def run(candidates, query, rounds) do
    case program() do
      nil ->
        %{
          available: false,
          reason: "not measured: run the lab with RAPIDFUZZ_CPP set to a rapidfuzz-cpp checkout"
        }

      path ->
        measure(path, candidates, query, rounds)
    end
  end

  defp measure(path, candidates, query, rounds) do
    file = Path.join(System.tmp_dir!(), "wb_rapidfuzz_#{System.unique_integer([:positive])}.txt")
    File.write!(file, Enum.intersperse([query | candidates], "\n"))

    try do
      args = ["-s", "KILL", "#{@timeout_s}", path, file, "#{rounds}"]

      case System.cmd("timeout", args, stderr_to_stdout: true) do
        {out, 0} -> %{available: true, rows: parse(out)}
        {out, status} -> %{available: false, reason: "the program failed (#{status}): #{out}"}
      end
    after
      File.rm(file)
    end
  end

  @doc "The program's lines: `NAME WAY MEDIAN MIN MAX` (ns per candidate)."
  @spec parse(String.t()) :: [map()]
  def parse(out) do
    for line <- String.split(out, "\n", trim: true),
        [name, way, median, low, high] <- [String.split(line)] do
      %{
        method: String.to_atom(name),
        way: String.to_atom(way),
        ns: number(median),
        low: number(low),
        high: number(high)
      }
    end
  end

  defp number(text), do: elem(Float.parse(text), 0)

  @doc "rapidfuzz's figure for `method` by `way`, or nil."
  @spec ns(map() | nil, atom(), :cached | :multi) :: float() | nil
  def ns(%{available: true, rows: rows}, method, way) do
    Enum.find_value(rows, &(&1.method == method and &1.way == way and &1.ns))
  end

  def ns(_result, _method, _way), do: nil
end
