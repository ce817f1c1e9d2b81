defmodule WellBehaved.Probe.Ticker do
  @moduledoc false
  # The tickers of WellBehaved.Probe.measure/2: a process that wants to run
  # every period_ms and records how late each tick due in the window ran,
  # and the percentiles of that lateness.

  alias WellBehaved.Stats

  @doc false
  # A ticker counting the ticks due from count_from_us on: {pid, period_ms}.
  def start(period_ms, count_from_us) do
    parent = self()
    first_due = Integer.floor_div(now_us(), 1000) + period_ms
    pid = spawn_link(fn -> tick(parent, period_ms, first_due, count_from_us, []) end)
    {pid, period_ms}
  end

  # due_ms: a whole millisecond of monotonic time, when the timer fires at
  # the earliest. Every tick due in the window is a sample: its lateness is
  # how long after its due time the ticker ran. A ticker that could not run
  # for a while wakes once, and the ticks it missed were late until then.
  defp tick(parent, period_ms, due_ms, count_from_us, late) do
    timer = :erlang.start_timer(due_ms, self(), :tick, abs: true)

    receive do
      {:timeout, ^timer, :tick} ->
        now = now_us()
        last_due = last_due(due_ms, period_ms, Integer.floor_div(now, 1000))
        late = record(due_ms, last_due, period_ms, now, count_from_us, late)
        tick(parent, period_ms, last_due + period_ms, count_from_us, late)

      {:stop, from, end_us} ->
        :erlang.cancel_timer(timer)
        # only ticks due in the window count; those that had not run by its
        # end were late at least until then
        end_ms = Integer.floor_div(end_us, 1000)
        late = Enum.reject(late, fn {due_us, _} -> due_us > end_us end)

        late =
          if due_ms <= end_ms,
            do:
              record(
                due_ms,
                last_due(due_ms, period_ms, end_ms),
                period_ms,
                end_us,
                count_from_us,
                late
              ),
            else: late

        send(from, {:ticks, self(), late})
    end
  end

  # the last tick due at or before now_ms, from the first one, due_ms
  defp last_due(due_ms, period_ms, now_ms),
    do: due_ms + period_ms * div(max(now_ms - due_ms, 0), period_ms)

  defp record(due_ms, last_ms, period_ms, at_us, count_from_us, late) do
    Enum.reduce(due_ms..last_ms//period_ms, late, fn d, acc ->
      if d * 1000 >= count_from_us, do: [{d * 1000, at_us - d * 1000} | acc], else: acc
    end)
  end

  @doc false
  # Stops the ticker: the ticks due until end_us count. Its percentiles,
  # period_ms, and every sample (samples_us) with its due time (due_us).
  def stop({pid, period_ms}, end_us) do
    send(pid, {:stop, self(), end_us})

    late =
      receive do
        {:ticks, ^pid, late} -> late
      end

    Process.unlink(pid)
    {due, late} = late |> Enum.reverse() |> Enum.unzip()
    late |> percentiles() |> Map.merge(%{period_ms: period_ms, samples_us: late, due_us: due})
  end

  @doc false
  # Exact nearest-rank percentiles of microsecond samples, in ms.
  def percentiles([]), do: %{samples: 0, p50_ms: nil, p90_ms: nil, p99_ms: nil, max_ms: nil}

  def percentiles(samples_us) do
    [p50, p90, p99, max] = Stats.percentiles(samples_us, [0.5, 0.9, 0.99, 1])

    %{
      samples: length(samples_us),
      p50_ms: p50 / 1000,
      p90_ms: p90 / 1000,
      p99_ms: p99 / 1000,
      max_ms: max / 1000
    }
  end

  defp now_us, do: :erlang.monotonic_time(:microsecond)
end
