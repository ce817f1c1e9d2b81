defmodule WellBehaved.External do
  @moduledoc """
  Native work in separate OS processes: a pool of external servers
  (`priv/wb_external`, C) reached over Unix domain sockets.

  Each server is a port program (so it dies with the VM) listening on a
  socket in a private temporary directory; it serves each connection on a
  thread of its own. Requests and replies are frames of a 4-byte big-endian
  length and a term in the external term format:

    * `{:echo, term}` - the term back;
    * `{:levenshtein, a, b, unit, max_distance}` - the edit distance
      (the same C core as `WellBehaved.Levenshtein`), or `{:error, reason}`.

  A crash of native code takes down one server, never the VM: its callers
  get `{:error, :closed}`, the pool starts it again, and later calls succeed.
  Nothing here blocks a scheduler beyond the socket I/O; the price is a round
  trip through the kernel and copying the arguments both ways.

  The pool starts on first use under `WellBehaved.Supervisor` with the
  default options, or explicitly with `start/1`. A caller takes an idle
  connection straight from shared state (one atomic compare-and-swap) and
  talks to the socket itself: no message to a pool process on the way
  unless every connection is busy.

  Errors (`{:error, reason}`):

    * `:closed` - the server died mid-call (or the connection broke);
    * `:timeout` - no reply within `:timeout_ms` (the connection is
      dropped, so a late reply never reaches the next caller);
    * `:checkout_timeout` - every connection stayed busy for `:timeout_ms`;
    * `:not_running` - the pool stopped, or could not start;
    * `:too_large` - the request exceeds the 1 GiB frame limit;
    * `:badarg` - invalid arguments.
  """

  alias WellBehaved.Service
  alias WellBehaved.External.Pool
  alias WellBehaved.Options

  # servers, connections and milliseconds: a 32-bit count each
  @max_count 0xFFFF_FFFF

  @type reason ::
          :closed | :timeout | :checkout_timeout | :not_running | :too_large | :badarg | term()

  @type option ::
          {:servers, pos_integer()}
          | {:connections, pos_integer()}
          | {:timeout_ms, pos_integer()}

  @start "WellBehaved.External.start/1"
  @start_options [:servers, :connections, :timeout_ms]

  @doc """
  Starts the pool (if not yet running) and returns its manager's pid.

  Options (used only when this call starts the pool):

    * `servers:` - number of server processes, default
      `System.schedulers_online()`;
    * `connections:` - connections (and so server threads) per server,
      default 4; more concurrent callers queue for a free one;
    * `timeout_ms:` - milliseconds a call may wait for its reply, and for
      a free connection, default 60_000.
  """
  @spec start([option()]) :: {:ok, pid()} | {:error, term()}
  def start(opts \\ []) do
    unless is_list(opts), do: Options.not_keyword!(@start, opts)

    for option <- opts do
      case option do
        {key, value} when key in @start_options ->
          Options.integer!(@start, key, value, 1..@max_count)

        other ->
          Options.bad_option!(@start, other, @start_options, opts)
      end
    end

    Pool.ensure_started(opts)
  end

  @doc """
  Sends `term` through a server and back.

  Returns the term, or `{:error, reason}` when the call failed.

      iex> WellBehaved.External.echo({:hello, [1, 2.5, "three"]})
      {:hello, [1, 2.5, "three"]}
  """
  @spec echo(term()) :: term() | {:error, reason()}
  def echo(term) do
    case Pool.request(:erlang.term_to_binary({:echo, term})) do
      {:ok, reply} -> :erlang.binary_to_term(reply)
      {:error, _} = error -> error
    end
  end

  @doc """
  The Levenshtein distance between binaries `a` and `b`, computed by a
  server.

  `unit` is `:byte` or `:codepoint` (which requires valid UTF-8);
  `max_distance` is `nil` or a cutoff `k`: distances above `k` come back
  as `k + 1`. Invalid UTF-8 gives `{:error, {:invalid_utf8, 1 | 2}}` (the
  argument at fault); an argument of the wrong type or range raises
  `ArgumentError`.

      iex> WellBehaved.External.levenshtein("kitten", "sitting", :byte, nil)
      {:ok, 3}
      iex> WellBehaved.External.levenshtein("abcdef", "uvwxyz", :byte, 2)
      {:ok, 3}
  """
  @spec levenshtein(binary(), binary(), :byte | :codepoint, non_neg_integer() | nil) ::
          {:ok, non_neg_integer()} | {:error, reason()}
  def levenshtein(a, b, unit, max_distance)
      when is_binary(a) and is_binary(b) and unit in [:byte, :codepoint] and
             (is_nil(max_distance) or (is_integer(max_distance) and max_distance >= 0)) do
    # never a bignum for the server to decode
    max_distance =
      WellBehaved.Levenshtein.Call.cutoff(max_distance, max(byte_size(a), byte_size(b)))

    case Pool.request(:erlang.term_to_binary({:levenshtein, a, b, unit, max_distance})) do
      {:ok, reply} ->
        case :erlang.binary_to_term(reply) do
          distance when is_integer(distance) -> {:ok, distance}
          {:error, :invalid_utf8_a} -> {:error, {:invalid_utf8, 1}}
          {:error, :invalid_utf8_b} -> {:error, {:invalid_utf8, 2}}
          {:error, _} = error -> error
        end

      {:error, _} = error ->
        error
    end
  end

  def levenshtein(a, b, unit, max_distance) do
    {what, value, accepted} =
      cond do
        not is_binary(a) -> {"first argument", a, "a binary"}
        not is_binary(b) -> {"second argument", b, "a binary"}
        unit not in [:byte, :codepoint] -> {"unit", unit, ":byte or :codepoint"}
        true -> {"max_distance", max_distance, "a non-negative integer or nil"}
      end

    Options.invalid!("WellBehaved.External.levenshtein/4", what, value, accepted)
  end

  @doc """
  Stops the pool: closes its connections, stops every server (waiting for
  each to exit, killing one that does not within 2 s) and removes the
  socket files and their directory. The next call starts a new pool.
  """
  @spec stop() :: :ok
  def stop, do: Service.stop(WellBehaved.Supervisor, Pool)

  @doc """
  The running pool's servers (index, OS pid, port, socket path, status),
  its directory, slot count, the slots in use (owner pid and server index)
  and the number of callers waiting for one; `nil` when not running.
  """
  @spec info() :: map() | nil
  def info do
    case Process.whereis(Pool) do
      nil -> nil
      pid -> GenServer.call(pid, :info)
    end
  catch
    :exit, _ -> nil
  end
end
