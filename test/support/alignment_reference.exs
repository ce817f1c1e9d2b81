defmodule WellBehaved.Test.AlignmentReference do
  @moduledoc """
  The partial ratio's alignment for the tests, by brute force and apart
  from the native core: every window of the longer side is scored against
  the shorter with a textbook LCS table, then the window is picked as
  rapidfuzz-cpp's `fuzz::partial_ratio_alignment` picks it, its steps
  followed one by one:

    * the shorter side (the first on equal lengths) is the needle; when
      the first is longer, the sides are swapped and so is the answer;
    * the whole windows at positions 0 .. L - 1 (L = the longer's length
      less the needle's) are visited by halving: 0 and L - 1 first, then
      the middle of every range that could still hold a better window,
      level by level, left to right; a window replaces the best only
      when its distance is lower;
    * then the prefixes of 1 .. needle - 1 symbols, then the windows
      from L on to the end (the last whole window first, then ever
      shorter suffixes), each replacing the best only when its ratio is
      higher (a window whose edge symbol is not in the needle is passed
      over);
    * equal lengths: unless the score is 100, the same again with the
      second side as the needle, taken only when strictly better.

  Symbols are lists of integers (`WellBehaved.Test.FuzzyReference.symbols/2`).
  """

  @doc """
  `{score, {src_start, src_end, dest_start, dest_end}}`: the partial ratio
  (0..100) of `a` and `b` and where it is, `src` in `a`, `dest` in `b`.
  """
  @spec partial(list(), list()) :: {float(), tuple()}
  def partial(a, b) do
    m = length(a)
    n = length(b)

    cond do
      m > n ->
        {score, {ss, se, ds, de}} = partial(b, a)
        {score, {ds, de, ss, se}}

      m == 0 ->
        {if(n == 0, do: 100.0, else: 0.0), {0, 0, 0, 0}}

      true ->
        {score, window} = direction(a, b)

        if score != 100.0 and m == n do
          case direction(b, a) do
            {other, {ss, se, ds, de}} when other > score -> {other, {ds, de, ss, se}}
            _ -> {score, window}
          end
        else
          {score, window}
        end
    end
  end

  @doc "The Indel ratio of a window of `total` symbols (with the needle) holding `lcs`."
  def ratio(lcs, total), do: 100.0 * (1.0 - (total - 2 * lcs) / total)

  @doc "The length of a longest common subsequence, by the textbook table."
  def lcs(a, b) do
    b = List.to_tuple(b)
    n = tuple_size(b)

    Enum.reduce(a, List.duplicate(0, n + 1), fn x, row ->
      {out, _, _} =
        Enum.reduce(1..n//1, {[0], 0, row}, fn j, {acc, left, [diag | [up | _] = rest]} ->
          value = if elem(b, j - 1) == x, do: diag + 1, else: max(left, up)
          {[value | acc], value, rest}
        end)

      Enum.reverse(out)
    end)
    |> List.last()
  end

  # the needle's windows in the haystack: {score, {0, nl, start, end}}
  defp direction(needle, hay) do
    nl = length(needle)
    hl = length(hay)
    chars = MapSet.new(needle)
    hay_t = List.to_tuple(hay)
    window = fn from, len -> for i <- from..(from + len - 1)//1, do: elem(hay_t, i) end
    best = {0.0, 0, nl}
    best = if hl > nl, do: halving(needle, window, nl, hl - nl), else: best

    with {:go, best} <- edges(best, 1..(nl - 1)//1, fn i -> {0, i} end, needle, window, chars),
         {:go, best} <-
           edges(best, (hl - nl)..(hl - 1)//1, fn i -> {i, hl - i} end, needle, window, chars) do
      found(best, nl)
    else
      {:top, best} -> found(best, nl)
    end
  end

  defp found({score, start, len}, nl), do: {score, {0, nl, start, start + len}}

  # the prefixes or suffixes ({start, len} of each i, in order): a window
  # whose edge symbol is not in the needle is passed over
  defp edges(best, range, span, needle, window, chars) do
    Enum.reduce_while(range, {:go, best}, fn i, {:go, {score, _, _} = best} ->
      {start, len} = span.(i)
      symbols = window.(start, len)
      edge = if start == 0, do: List.last(symbols), else: hd(symbols)

      r = if MapSet.member?(chars, edge), do: ratio(lcs(needle, symbols), length(needle) + len)

      cond do
        r != nil and r > score and r == 100.0 -> {:halt, {:top, {r, start, len}}}
        r != nil and r > score -> {:cont, {:go, {r, start, len}}}
        true -> {:cont, {:go, best}}
      end
    end)
  end

  # the whole windows 0 .. count - 1 by halving, as rapidfuzz visits them
  defp halving(needle, window, nl, count) do
    distance = fn p -> 2 * nl - 2 * lcs(needle, window.(p, nl)) end
    state = %{scores: %{}, cutoff: 2 * nl, best: nil}
    state = rounds([{0, count - 1}], state, distance)

    case state.best do
      nil -> {0.0, 0, nl}
      at -> {ratio(nl - div(state.scores[at], 2), 2 * nl), at, nl}
    end
  end

  defp rounds([], state, _distance), do: state

  defp rounds(windows, state, distance) do
    result =
      Enum.reduce_while(windows, {[], state}, fn {first, second}, {next, state} ->
        state = visit(state, first, distance)
        state = if state.cutoff == 0, do: state, else: visit(state, second, distance)

        cond do
          state.cutoff == 0 ->
            {:halt, {:top, state}}

          second - first <= 1 ->
            {:cont, {next, state}}

          true ->
            diff = second - first
            a = state.scores[first]
            b = state.scores[second]
            improvement = div(diff - div(abs(a - b), 2), 2) * 2

            if min(a, b) - improvement < state.cutoff do
              center = div(diff, 2)
              {:cont, {[{first + center, second}, {first, first + center} | next], state}}
            else
              {:cont, {next, state}}
            end
        end
      end)

    case result do
      {:top, state} -> state
      {next, state} -> rounds(Enum.reverse(next), state, distance)
    end
  end

  defp visit(%{scores: scores} = state, p, _distance) when is_map_key(scores, p), do: state

  defp visit(state, p, distance) do
    d = distance.(p)
    state = %{state | scores: Map.put(state.scores, p, d)}
    if d < state.cutoff, do: %{state | cutoff: d, best: p}, else: state
  end
end
