defmodule WellBehaved.Lab.Measure.Verdict do
  # a verdict needs this many repeats, and this many quiet ones for the
  # disturbed ones to be left out
  @min_repeats 3
  # a repeat whose baseline ran this many times later than the baseline's
  # median over the repeats was disturbed
  @base_outlier 3

  @moduledoc """
  The lab's verdict rule on repeats: a cell measured several times, each
  repeat paired with its baseline measured in the same run, and the ratio
  of the two judged against an upper bound.

  Repeats disturbed by other work (a noisy window of the cell or of its
  baseline, see `WellBehaved.Lab.Measure.Window`, or a baseline far out of
  line with its other repeats, see `mark_baselines/1`) are left out when at
  least #{@min_repeats} quiet ones remain. Otherwise every repeat is kept
  for the figures, but there is no verdict: with fewer than
  #{@min_repeats} repeats, or with a disturbed one among those kept, the
  verdict is `:not_distinguishable` with a note saying why. The figure is
  the median of the ratios kept, with a 95% bootstrap interval over them
  (`WellBehaved.Lab.Stats.bootstrap_interval/3`); the verdict is that
  interval's against the bound (`WellBehaved.Lab.Stats.verdict/2`):
  `:within` when the whole interval is below it, `:outside` when the whole
  interval is above it, `:not_distinguishable` otherwise.
  """

  alias WellBehaved.Lab.Stats

  @typedoc """
  A repeat: its ratio to the baseline, whether either window was noisy,
  and optionally the baseline's own figure (`base`, see `mark_baselines/1`;
  other keys are kept).
  """
  @type pair :: %{
          required(:ratio) => number(),
          required(:noisy) => boolean(),
          optional(:base) => number(),
          optional(any()) => any()
        }

  @type verdict :: :within | :outside | :not_distinguishable

  @typedoc "What `judge/2` makes of a cell's repeats."
  @type t :: %{
          pairs: [pair()],
          used: [pair()],
          ratios: [number()],
          ratio: number(),
          ratio_low: number(),
          ratio_high: number(),
          verdict: verdict(),
          note: String.t() | nil,
          disturbed: boolean()
        }

  @doc "How many repeats a verdict needs (and how many quiet ones leave the others out)."
  @spec min_repeats() :: pos_integer()
  def min_repeats, do: @min_repeats

  @doc """
  Judges a cell's repeats (`pairs`) against `bound`; nil when there is no
  pair. `pairs` are the repeats as judged (`mark_baselines/1`), `used` the
  ones the figures rest on, `disturbed` says whether any repeat was noisy
  (left out or not), and `note` why there is no verdict, if so.

      iex> pairs = for r <- [0.6, 0.7, 0.8], do: %{ratio: r, noisy: false}
      iex> WellBehaved.Lab.Measure.Verdict.judge(pairs ++ [%{ratio: 9.0, noisy: true}], 1.5)
      ...> |> Map.take([:ratio, :verdict, :disturbed])
      %{ratio: 0.7, verdict: :within, disturbed: true}
  """
  @spec judge([pair()], number()) :: t() | nil
  def judge([], _bound), do: nil

  def judge(pairs, bound) do
    pairs = mark_baselines(pairs)
    quiet = Enum.reject(pairs, & &1.noisy)
    used = if length(quiet) >= @min_repeats, do: quiet, else: pairs
    ratios = Enum.map(used, & &1.ratio)
    {low, high} = Stats.bootstrap_interval(ratios, &Stats.median/1)

    {verdict, note} =
      cond do
        length(pairs) < @min_repeats ->
          {:not_distinguishable, "fewer than #{@min_repeats} repeats"}

        Enum.any?(used, & &1.noisy) ->
          {:not_distinguishable, "fewer than #{@min_repeats} quiet repeats"}

        true ->
          {Stats.verdict({low, high}, bound), nil}
      end

    %{
      pairs: pairs,
      used: used,
      ratios: ratios,
      ratio: Stats.median(ratios),
      ratio_low: low,
      ratio_high: high,
      verdict: verdict,
      note: note,
      disturbed: length(quiet) < length(pairs)
    }
  end

  @doc """
  Marks as noisy each repeat whose baseline (`base`: the same work in every
  repeat, e.g. pure Erlang's ticker p99) is more than #{@base_outlier}x the median
  of the repeats' baselines. The noise check reads the CPU counters and
  the stalls it can see; a host can slow the VM down for a whole window
  without either (pure Erlang's p99 at 0.4-2.6 ms in a window, 0.06-0.1 ms
  in the others of the same run), and such a baseline makes its repeat's
  ratio look better than the cell is. Left as they are without a `base`
  in every pair.

      iex> pairs = for b <- [0.07, 0.08, 0.9], do: %{ratio: 0.08 / b, base: b, noisy: false}
      iex> WellBehaved.Lab.Measure.Verdict.mark_baselines(pairs) |> Enum.map(& &1.noisy)
      [false, false, true]
  """
  @spec mark_baselines([pair()]) :: [pair()]
  def mark_baselines(pairs) do
    if pairs != [] and Enum.all?(pairs, &is_number(Map.get(&1, :base))) do
      most = @base_outlier * Stats.median(Enum.map(pairs, & &1.base))
      Enum.map(pairs, &%{&1 | noisy: &1.noisy or &1.base > most})
    else
      pairs
    end
  end

  @doc """
  The verdict on ratios taken together (already quiet ones, e.g. the
  repeats of several cells of the same code): `:not_distinguishable` with
  fewer than #{@min_repeats}, else the interval of their median against
  `bound`.
  """
  @spec of_ratios([number()], number()) :: verdict()
  def of_ratios(ratios, _bound) when length(ratios) < @min_repeats, do: :not_distinguishable

  def of_ratios(ratios, bound),
    do: Stats.verdict(Stats.bootstrap_interval(ratios, &Stats.median/1), bound)
end
