defmodule WellBehaved.Test.FuzzyReference do
  @moduledoc """
  The fuzzy scorers' reference for the Elixir tests: the C tests' own,
  `c_src/test/fuzzy_reference.h` (slow, textbook, full-matrix dynamic
  programs written apart from the core), run as a program,
  `c_src/build/fuzzy_reference` (`c_src/test/fuzzy_reference_main.c`,
  built here with make when missing or stale), behind a port.

  One process owns the port, started on the first request and kept for the
  VM's life (requests from every test go through it, one at a time). The
  scorers take lists of integer symbols (bytes or codepoints, see
  `symbols/2`); `reference/5` takes binaries. Ranking (`extract/4`) is done
  here, over any scoring function.
  """
  use GenServer

  @root Path.expand("../..", __DIR__)
  @program "c_src/build/fuzzy_reference"
  @u64_most 0xFFFF_FFFF_FFFF_FFFF
  @u32_most 0xFFFF_FFFF

  ## Symbols

  @doc "Converts a binary into a list of bytes or codepoints."
  @spec symbols(binary(), :byte | :codepoint) :: [non_neg_integer()]
  def symbols(binary, :byte) when is_binary(binary), do: :binary.bin_to_list(binary)
  def symbols(binary, :codepoint) when is_binary(binary), do: String.to_charlist(binary)

  ## Scores

  @doc """
  The score of a scorer (as `WellBehaved.Fuzzy` names it) for binaries `a`
  and `b` in `unit`: `{:edit, distance, maximum}`, `{:unit, similarity}`
  (0..1) or `{:percent, similarity}` (0..100). `kind_of/2` makes it a kind
  of score. Options: `weights: {ins, del, sub}` (levenshtein's),
  `prefix_weight:` (jaro_winkler's).
  """
  @spec reference(atom(), binary(), binary(), :byte | :codepoint, keyword()) :: tuple()
  def reference(scorer, a, b, unit, opts \\ []),
    do: raw(scorer, symbols(a, unit), symbols(b, unit), unit, opts)

  @doc """
  `reference/5` on lists of symbols (integers in 0..2^32-1) in place of
  binaries: `unit` says which white space splits tokens (`:codepoint`:
  Unicode's too).
  """
  @spec reference_symbols(atom(), [non_neg_integer()], [non_neg_integer()], atom(), keyword()) ::
          tuple()
  def reference_symbols(scorer, a, b, unit, opts \\ []), do: raw(scorer, a, b, unit, opts)

  @doc "A score of `reference/5` as the kind of score asked for."
  @spec kind_of(tuple(), atom()) :: number()
  def kind_of(score, kind) do
    name = Atom.to_string(kind)

    case ask(<<?K, byte_size(name)::8, name::binary, encode(score)::binary>>) do
      <<?I, value::64>> -> value
      <<?F, value::float-64>> -> value
      <<?!, message::binary>> -> raise ArgumentError, "kind_of/2: #{message}: #{inspect(kind)}"
    end
  end

  # the scorers by their names, on lists of symbols: edit distances (an
  # integer), Jaro's similarities (0..1), the ratios (0..100)
  @doc "Weighted Wagner-Fischer distance with weights `{ins, del, sub}`."
  def levenshtein(a, b, weights \\ {1, 1, 1}), do: plain(:levenshtein, a, b, weights: weights)

  @doc "Jaro-Winkler similarity: common prefix (at most 4) boost above 0.7."
  def jaro_winkler(a, b, prefix_weight \\ 0.1),
    do: plain(:jaro_winkler, a, b, prefix_weight: prefix_weight)

  @pair_scorers [:indel, :osa, :damerau_levenshtein, :hamming, :jaro, :ratio, :partial_ratio] ++
                  [:qratio]
  for scorer <- @pair_scorers do
    @doc "`#{scorer}` of two lists of symbols."
    def unquote(scorer)(a, b), do: plain(unquote(scorer), a, b, [])
  end

  @token_scorers [:token_sort_ratio, :token_set_ratio, :token_ratio, :partial_token_sort_ratio] ++
                   [:partial_token_set_ratio, :partial_token_ratio, :wratio]
  for scorer <- @token_scorers do
    @doc "`#{scorer}` of two lists of symbols in `unit` (white space by unit)."
    def unquote(scorer)(a, b, unit), do: plain(unquote(scorer), a, b, unit: unit)
  end

  defp plain(scorer, a, b, opts) do
    case raw(scorer, a, b, Keyword.get(opts, :unit, :byte), opts) do
      {:edit, distance, _maximum} -> distance
      {_, similarity} -> similarity
    end
  end

  defp raw(scorer, a, b, unit, opts) do
    name = Atom.to_string(scorer)
    {ins, del, sub} = weights = Keyword.get(opts, :weights, {1, 1, 1})
    prefix_weight = Keyword.get(opts, :prefix_weight, 0.1)

    unless Enum.all?(Tuple.to_list(weights), &(is_integer(&1) and &1 in 0..@u64_most)),
      do:
        raise(
          ArgumentError,
          "reference/5: weights are integers in 0..2^64-1: #{inspect(weights)}"
        )

    unless is_number(prefix_weight),
      do:
        raise(ArgumentError, "reference/5: prefix_weight is a number: #{inspect(prefix_weight)}")

    request =
      <<?S, byte_size(name)::8, name::binary, unit_byte(unit)::8, ins::64, del::64, sub::64,
        prefix_weight / 1::float-64, encode_symbols(a)::binary, encode_symbols(b)::binary>>

    case ask(request) do
      <<?E, distance::64, maximum::64>> ->
        {:edit, distance, maximum}

      <<?F, similarity::float-64, top::float-64>> when top == 1.0 ->
        {:unit, similarity}

      <<?F, similarity::float-64, _::float-64>> ->
        {:percent, similarity}

      <<?!, message::binary>> ->
        raise ArgumentError, "reference/5: #{message}: #{inspect(scorer)}"
    end
  end

  defp unit_byte(:byte), do: 0
  defp unit_byte(:codepoint), do: 1

  defp encode_symbols(list) do
    unless Enum.all?(list, &(is_integer(&1) and &1 in 0..@u32_most)),
      do: raise(ArgumentError, "reference/5: symbols are integers in 0..2^32-1: #{inspect(list)}")

    [<<length(list)::32>> | Enum.map(list, &<<&1::32>>)] |> IO.iodata_to_binary()
  end

  defp encode({:edit, distance, maximum}), do: <<?E, distance::64, maximum::64>>
  defp encode({:unit, similarity}), do: <<?F, similarity::float-64, 1.0::float-64>>
  defp encode({:percent, similarity}), do: <<?F, similarity::float-64, 100.0::float-64>>

  ## Search

  @doc """
  Scores `{key, text}` choices with `scorer_fun.(query, text)`, keeps those
  passing `:cutoff` (by `:better`, `:higher` or `:lower`), sorts best first
  (ties by input position), takes `:limit` (integer or `:all`) and returns
  `[{text, score, key}]`.
  """
  @spec extract(term(), [{term(), term()}], (term(), term() -> number()), keyword()) :: list()
  def extract(query, choices, scorer_fun, opts) do
    cutoff = Keyword.get(opts, :cutoff)
    better = Keyword.get(opts, :better, :higher)
    limit = Keyword.get(opts, :limit, :all)

    passes? = fn score ->
      cond do
        cutoff == nil -> true
        better == :higher -> score >= cutoff
        better == :lower -> score <= cutoff
      end
    end

    better_first? = fn {_, s1, _, i1}, {_, s2, _, i2} ->
      cond do
        s1 == s2 -> i1 <= i2
        better == :higher -> s1 > s2
        better == :lower -> s1 < s2
      end
    end

    sorted =
      choices
      |> Enum.with_index()
      |> Enum.map(fn {{key, text}, i} -> {text, scorer_fun.(query, text), key, i} end)
      |> Enum.filter(fn {_, score, _, _} -> passes?.(score) end)
      |> Enum.sort(better_first?)
      |> Enum.map(fn {text, score, key, _} -> {text, score, key} end)

    if limit in [:all, nil], do: sorted, else: Enum.take(sorted, limit)
  end

  ## The program

  defp ask(request), do: GenServer.call(server(), {:ask, request}, :infinity)

  defp server do
    with nil <- GenServer.whereis(__MODULE__) do
      # not linked: it outlives the test that starts it
      case GenServer.start(__MODULE__, [], name: __MODULE__) do
        {:ok, pid} -> pid
        {:error, {:already_started, pid}} -> pid
        {:error, reason} -> raise "the fuzzy reference did not start: #{inspect(reason)}"
      end
    end
  end

  @impl true
  def init([]) do
    case System.cmd("make", ["--no-print-directory", @program], cd: @root, stderr_to_stdout: true) do
      {_, 0} ->
        path = Path.join(@root, @program)
        {:ok, Port.open({:spawn_executable, path}, [:binary, {:packet, 4}, :exit_status])}

      {out, status} ->
        {:stop, {:make, status, out}}
    end
  end

  @impl true
  def handle_call({:ask, request}, _from, port) do
    true = Port.command(port, request)

    receive do
      {^port, {:data, answer}} -> {:reply, answer, port}
      {^port, {:exit_status, status}} -> {:stop, {:reference_exited, status}, port}
    end
  end
end
