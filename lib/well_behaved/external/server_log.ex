defmodule WellBehaved.External.ServerLog do
  @moduledoc false
  # A pool's log lines, each with the metadata `pool:`, `server:` (index)
  # and `os_pid:`: the servers' own output (stdout and stderr share one
  # pipe, read a line at a time), and the pool's warnings about them.
  #
  # A server's output is rate-limited, per server: up to @lines_per_second
  # lines in a second, then one line saying how many were dropped, so
  # that a server printing in a loop cannot flood the log (nor the
  # manager's mailbox for long: lines are read as they come either way).
  # The window outlives the server: a restart at the same index keeps it.

  require Logger

  @lines_per_second 100
  @second_ms 1_000

  @typedoc "A server's rate window: its start (ms), the lines logged and dropped in it."
  @type t :: %{since: integer(), lines: non_neg_integer(), dropped: non_neg_integer()}

  @doc "A fresh rate window, for a server just started (at `now`, ms)."
  @spec new(integer()) :: t()
  def new(now \\ now()), do: %{since: now, lines: 0, dropped: 0}

  @doc "The metadata of a pool's log lines about one server."
  @spec metadata(atom(), non_neg_integer(), integer() | nil) :: keyword()
  def metadata(pool, index, os_pid), do: [pool: pool, server: index, os_pid: os_pid]

  @doc "A warning about server `index` of `pool`, with its metadata."
  @spec warning(atom(), non_neg_integer(), integer() | nil, String.t()) :: :ok
  def warning(pool, index, os_pid, message) do
    Logger.warning(message, metadata(pool, index, os_pid))
  end

  @doc "An error about `pool` as a whole (server `nil`)."
  @spec pool_error(atom(), String.t()) :: :ok
  def pool_error(pool, message) do
    Logger.error(message, pool: pool, server: nil, os_pid: nil)
  end

  @doc """
  A line (or a piece of a line longer than the port's line length) that
  server `index` printed: logged as a warning unless the server is past
  its rate; returns the window. `now` (ms) is the monotonic clock's.
  """
  @spec line(t(), atom(), non_neg_integer(), integer() | nil, binary(), integer()) :: t()
  def line(window, pool, index, os_pid, text, now \\ now()) do
    window = flush(window, pool, index, os_pid, false, now)

    if window.lines < @lines_per_second do
      warning(pool, index, os_pid, "#{prefix(pool, index, os_pid)}: #{printable(text)}")
      %{window | lines: window.lines + 1}
    else
      %{window | dropped: window.dropped + 1}
    end
  end

  @doc """
  Ends the window if its second is over, logging how many lines it
  dropped, if any. When `now?` (the server exited) the dropped lines are
  reported at once, but the window goes on: the server restarted at the
  same index keeps it, so that a crash loop gets no fresh lines.
  """
  @spec flush(t(), atom(), non_neg_integer(), integer() | nil, boolean(), integer()) :: t()
  def flush(window, pool, index, os_pid, now?, now \\ now()) do
    over? = now - window.since >= @second_ms

    if now? or over? do
      if window.dropped > 0 do
        warning(
          pool,
          index,
          os_pid,
          "#{prefix(pool, index, os_pid)}: #{window.dropped} lines dropped " <>
            "(more than #{@lines_per_second} in a second)"
        )
      end

      if over?, do: new(now), else: %{window | dropped: 0}
    else
      window
    end
  end

  @doc """
  What comes before "ready" at the end of a server's `line` (a trailing
  CR dropped), or `nil` if the line does not end so: a partial line of
  stderr written just before "ready" shares its line.

      iex> alias WellBehaved.External.ServerLog
      iex> Enum.map(["ready", "oops ready\r", "ready now"], &ServerLog.ready_prefix/1)
      ["", "oops ", nil]
  """
  @spec ready_prefix(binary()) :: binary() | nil
  def ready_prefix(line) do
    line = String.trim_trailing(line, "\r")
    size = byte_size(line) - 5

    if size >= 0 and binary_part(line, size, 5) == "ready",
      do: binary_part(line, 0, size),
      else: nil
  end

  @doc "The start of every line about a server: pool, index and OS pid."
  @spec prefix(atom(), non_neg_integer(), integer() | nil) :: String.t()
  def prefix(pool, index, os_pid),
    do: "WellBehaved.External #{inspect(pool)}: server #{index} (OS pid #{os_pid})"

  # the line as text: invalid UTF-8 shown as U+FFFD, a trailing CR dropped
  defp printable(text) do
    text = String.trim_trailing(text, "\r")

    if String.valid?(text) do
      text
    else
      text
      |> String.chunk(:valid)
      |> Enum.map(&if(String.valid?(&1), do: &1, else: "\uFFFD"))
      |> IO.iodata_to_binary()
    end
  end

  defp now, do: System.monotonic_time(:millisecond)
end
