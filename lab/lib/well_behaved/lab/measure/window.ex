defmodule WellBehaved.Lab.Measure.Window do
  # a window whose CPUs were stalled outside the VM longer than this share
  # of it is disturbed
  @stalled_max 0.05

  @moduledoc """
  The lab's measurement window: `WellBehaved.Probe.measure/2` recording a
  ticker that wants to run every millisecond, with the noise sampler
  (`WellBehaved.Lab.Noise.start_sampler/0`) running around it, from outside
  the VM where `priv/wb_noise_watch` was built.

  On a virtual machine a CPU is stalled now and then for 0.3-7 ms whatever
  the VM does (a thread pinned to each CPU that wakes every millisecond
  sees it wake more than 250 us late). The time a tick's wait overlapped
  such a stall is taken out of its lateness (`stall_corrected/2`), for a
  cell and its baseline alike. A window is disturbed (`noisy`) when
  `WellBehaved.Lab.Noise.noisy?/1` says other work or the hypervisor took
  the CPU, or when its CPUs were stalled longer than
  #{round(@stalled_max * 100)}% of it. `WellBehaved.Lab.Measure.Verdict`
  says what a disturbed repeat may still count for.
  """

  alias WellBehaved.Lab.{Noise, Stats}
  alias WellBehaved.Probe

  @typedoc "What a window measured."
  @type t :: %{
          report: map(),
          usage: map(),
          samples_us: [non_neg_integer()],
          stalled_share: float(),
          noisy: boolean()
        }

  @doc """
  Measures one window: `fun` run by `WellBehaved.Probe.measure/2` with
  `probe_opts` (`duration_ms:` is the window's length; `samples: true` is
  added), the sampler around it. Returns the Probe's `report`, the
  sampler's `usage`, and, from `judge/3`, the ticker's lateness without the
  stalls (`samples_us`), the share of the window its CPUs were stalled and
  whether it was `noisy`.
  """
  @spec measure((() -> any()), keyword()) :: t()
  def measure(fun, probe_opts) do
    window_ms = Keyword.fetch!(probe_opts, :duration_ms)
    sampler = Noise.start_sampler()
    report = Probe.measure(fun, Keyword.put(probe_opts, :samples, true))
    usage = Noise.stop_sampler(sampler)

    report.ticker
    |> judge(usage, window_ms)
    |> Map.put(:report, report)
  end

  @doc """
  A window's figures from what was recorded: the `ticker` of a Probe report
  (`due_us` and `samples_us`), the sampler's `usage` (with its `stalls`) and
  the window's length. The testable half of `measure/2`.
  """
  @spec judge(map(), map(), pos_integer()) :: %{
          usage: map(),
          samples_us: [non_neg_integer()],
          stalled_share: float(),
          noisy: boolean()
        }
  def judge(ticker, usage, window_ms) do
    ticks = Enum.zip(ticker.due_us, ticker.samples_us)
    stalled_us = usage.stalls |> Enum.map(fn {from, to} -> to - from end) |> Enum.sum()
    stalled_share = stalled_us / 1000 / max(window_ms, 1)

    %{
      usage: usage,
      # CPU time stalled outside the VM is nobody's doing: left out of
      # every tick's lateness alike
      samples_us: stall_corrected(ticks, usage.stalls),
      stalled_share: stalled_share,
      noisy: Noise.noisy?(usage) or stalled_share > @stalled_max
    }
  end

  @doc "The p99 of a window's lateness samples (us), in ms; nil without samples."
  @spec p99_ms([number()]) :: float() | nil
  def p99_ms([]), do: nil
  def p99_ms(samples_us), do: Stats.percentile(samples_us, 0.99) / 1000

  @doc """
  The lateness of each of `ticks` (`{due_us, late_us}`, in the VM's
  monotonic microseconds) without the time its wait overlapped a stall
  (`{from_us, to_us}`, sorted and disjoint, as the sampler returns them):
  while a CPU was held up outside the VM, a tick could not run whatever
  the VM was doing. A tick held up 100 ms by a normal NIF keeps nearly all
  of it; one held up 2 ms by a 2 ms stall keeps nearly none.
  """
  @spec stall_corrected([{integer(), non_neg_integer()}], [{integer(), integer()}]) ::
          [non_neg_integer()]
  def stall_corrected(ticks, []), do: Enum.map(ticks, &elem(&1, 1))

  def stall_corrected(ticks, stalls) do
    stalls = List.to_tuple(stalls)

    Enum.map(ticks, fn {due, late} ->
      i = first_ending_after(stalls, due, 0, tuple_size(stalls))
      max(late - overlap(stalls, i, due, due + late, 0), 0)
    end)
  end

  # time of the stalls from index i on that falls within [a, b]
  defp overlap(stalls, i, a, b, acc) do
    if i < tuple_size(stalls) and elem(elem(stalls, i), 0) <= b do
      {from, to} = elem(stalls, i)
      overlap(stalls, i + 1, a, b, acc + max(min(to, b) - max(from, a), 0))
    else
      acc
    end
  end

  # binary search for the first stall ending at or after a
  defp first_ending_after(_stalls, _a, lo, hi) when lo >= hi, do: lo

  defp first_ending_after(stalls, a, lo, hi) do
    mid = div(lo + hi, 2)

    if elem(elem(stalls, mid), 1) < a,
      do: first_ending_after(stalls, a, mid + 1, hi),
      else: first_ending_after(stalls, a, lo, mid)
  end
end
