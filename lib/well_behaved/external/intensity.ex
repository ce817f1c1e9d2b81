defmodule WellBehaved.External.Intensity do
  @moduledoc false
  # A pool's restart intensity, as a supervisor's: more than
  # `max_restarts` server failures within `max_seconds` and the pool stops
  # restarting (it is unavailable) until a retry timer fires, after
  # `retry_ms` at first, doubling at each failed recovery up to
  # @max_retry_ms (or `retry_ms` if larger), and back to `retry_ms` once
  # the pool stayed available for `max_seconds`. Failures are the exits
  # the pool did not cause; the pool counts them here. A server that
  # keeps failing before it is ready passes it too: more than
  # `max_restarts` failed starts in a row, however slow.

  @max_retry_ms 30_000

  @typedoc "The window of recent failures (ms, newest first) and the retry delays."
  @type t :: %{
          max_restarts: non_neg_integer(),
          max_seconds: pos_integer(),
          retry_ms: pos_integer(),
          next_retry_ms: pos_integer(),
          failures: [integer()],
          available_at: integer() | nil
        }

  @doc "A window with no failures, from a pool's options."
  @spec new(keyword()) :: t()
  def new(opts) do
    retry_ms = Keyword.fetch!(opts, :retry_ms)

    %{
      max_restarts: Keyword.fetch!(opts, :max_restarts),
      max_seconds: Keyword.fetch!(opts, :max_seconds),
      retry_ms: retry_ms,
      next_retry_ms: retry_ms,
      failures: [],
      available_at: nil
    }
  end

  @doc """
  Counts a failure at `now` (ms): `{:ok, window}` while within the
  intensity, `{:exceeded, window}` past it.

      iex> alias WellBehaved.External.Intensity
      iex> w = Intensity.new(max_restarts: 1, max_seconds: 5, retry_ms: 100)
      iex> {:ok, w} = Intensity.failure(w, 0)
      iex> {:exceeded, w} = Intensity.failure(w, 4_000)
      iex> Intensity.failures(w)
      2
      iex> {:ok, w} = Intensity.failure(Intensity.new(max_restarts: 1, max_seconds: 5, retry_ms: 100), 0)
      iex> elem(Intensity.failure(w, 5_000), 0)
      :ok
  """
  @spec failure(t(), integer()) :: {:ok | :exceeded, t()}
  def failure(window, now) do
    since = now - window.max_seconds * 1_000
    failures = [now | Enum.filter(window.failures, &(&1 > since))]
    window = %{window | failures: failures}
    {if(length(failures) > window.max_restarts, do: :exceeded, else: :ok), window}
  end

  @doc """
  The pause before restarting a server that died young, after a pause
  of `previous` ms: doubling from 100 ms, at most 5 s and at most
  `max_seconds / (max_restarts + 1)`, so that a server failing at once
  fails often enough to pass the intensity.

      iex> alias WellBehaved.External.Intensity
      iex> w = Intensity.new(max_restarts: 3, max_seconds: 1, retry_ms: 100)
      iex> Enum.map([0, 100, 200, 250], &Intensity.backoff(w, &1))
      [100, 200, 250, 250]
  """
  @spec backoff(t(), non_neg_integer()) :: pos_integer()
  def backoff(window, previous) do
    cap = min(5_000, div(window.max_seconds * 1_000, window.max_restarts + 1))
    max(min(max(previous * 2, 100), cap), 1)
  end

  @doc """
  Whether `count` starts in a row that never reached "ready" are past
  the intensity (more than `max_restarts`), whatever their timing.

      iex> alias WellBehaved.External.Intensity
      iex> w = Intensity.new(max_restarts: 2, max_seconds: 1, retry_ms: 100)
      iex> {Intensity.failed_starts_exceeded?(w, 2), Intensity.failed_starts_exceeded?(w, 3)}
      {false, true}
  """
  @spec failed_starts_exceeded?(t(), non_neg_integer()) :: boolean()
  def failed_starts_exceeded?(window, count), do: count > window.max_restarts

  @doc "The failures in the current window."
  @spec failures(t()) :: non_neg_integer()
  def failures(window), do: length(window.failures)

  @doc """
  The pool gave up at `now`: the delay before its retry, and the window
  with the next delay doubled.

      iex> alias WellBehaved.External.Intensity
      iex> w = Intensity.new(max_restarts: 0, max_seconds: 1, retry_ms: 20_000)
      iex> {20_000, w} = Intensity.give_up(w, 0)
      iex> {30_000, w} = Intensity.give_up(w, 0)
      iex> elem(Intensity.give_up(w, 0), 0)
      30_000
  """
  @spec give_up(t(), integer()) :: {pos_integer(), t()}
  def give_up(window, now) do
    stable? =
      window.available_at != nil and now - window.available_at >= window.max_seconds * 1_000

    delay = if stable?, do: window.retry_ms, else: window.next_retry_ms
    next = min(delay * 2, max(@max_retry_ms, window.retry_ms))
    {delay, %{window | next_retry_ms: next, available_at: nil}}
  end

  @doc "The retry starts: a new window, no failures in it."
  @spec retry(t()) :: t()
  def retry(window), do: %{window | failures: []}

  @doc "A server is up again after a retry, at `now`."
  @spec available(t(), integer()) :: t()
  def available(window, now), do: %{window | available_at: now}
end
