defmodule WellBehaved.Lab.Floors do
  @moduledoc """
  The machine's floor for each way of calling native code: round trips
  between two small C parties, no VM (`priv/wb_floors`, built from
  `c_src/floors/wb_floors.c`). A method of the latency suite is read
  against the floor of its mechanism:

    * `:futex` - a pointer handed to another thread and back, each side
      sleeping on a futex (a thread pool's worker that sleeps);
    * `:spin` - the same, each side spinning (a worker that spins, on an
      idle CPU);
    * `:unix` - bytes to a child process over a Unix stream socket and back
      (an external server pool);
    * `:pipe` - the same over two pipes (a port program);
    * `:tcp` - the same over TCP on 127.0.0.1 (a C node).

  Threads hand over a pointer, so the size changes nothing for them;
  processes move the bytes both ways.
  """

  @methods [:futex, :spin, :unix, :pipe, :tcp]
  # the program ends itself after 300 s (SIGALRM); a little more here
  @timeout_ms 310_000

  @typedoc "A floor's round trips, in nanoseconds."
  @type figures :: %{
          method: atom(),
          bytes: pos_integer(),
          iterations: pos_integer(),
          p50_ns: non_neg_integer(),
          p90_ns: non_neg_integer(),
          p99_ns: non_neg_integer(),
          min_ns: non_neg_integer()
        }

  @doc "The floors measured, in the order the suite reports them."
  @spec methods() :: [atom()]
  def methods, do: @methods

  @doc """
  Times `iterations` round trips of `method` with `bytes` bytes (after a
  warm-up of a tenth as many), or as many as fit in 3 s (`iterations:` in
  the figures says how many: threads spinning on a loaded machine can take
  milliseconds a round trip): `{:ok, figures}`, or `{:error, reason}` when
  the program failed (a round trip came back wrong, a call failed).
  """
  @spec measure(atom(), pos_integer(), pos_integer()) :: {:ok, figures()} | {:error, term()}
  def measure(method, bytes, iterations)
      when method in @methods and is_integer(bytes) and bytes > 0 and is_integer(iterations) and
             iterations > 0 do
    args = [Atom.to_string(method), Integer.to_string(bytes), Integer.to_string(iterations)]
    task = Task.async(fn -> System.cmd(program(), args, stderr_to_stdout: true) end)

    case Task.yield(task, @timeout_ms) || Task.shutdown(task, :brutal_kill) do
      {:ok, {out, 0}} -> parse(out)
      {:ok, {out, status}} -> {:error, {:exit_status, status, String.trim(out)}}
      nil -> {:error, :timeout}
    end
  end

  def measure(method, bytes, iterations) do
    raise ArgumentError,
          "WellBehaved.Lab.Floors.measure/3: expected a method of #{inspect(@methods)}, " <>
            "bytes and iterations above 0, got: #{inspect({method, bytes, iterations})}"
  end

  @doc false
  @spec parse(String.t()) :: {:ok, figures()} | {:error, term()}
  def parse(out) do
    with [method, bytes, n, p50, p90, p99, min] <- String.split(String.trim(out), " "),
         {:ok, method} <- known(method),
         [bytes, n, p50, p90, p99, min] <- integers([bytes, n, p50, p90, p99, min]) do
      {:ok,
       %{
         method: method,
         bytes: bytes,
         iterations: n,
         p50_ns: p50,
         p90_ns: p90,
         p99_ns: p99,
         min_ns: min
       }}
    else
      _ -> {:error, {:unreadable, out}}
    end
  end

  defp known(name) do
    case Enum.find(@methods, &(Atom.to_string(&1) == name)) do
      nil -> :error
      method -> {:ok, method}
    end
  end

  defp integers(strings) do
    parsed = Enum.map(strings, &Integer.parse/1)
    if Enum.all?(parsed, &match?({_, ""}, &1)), do: Enum.map(parsed, &elem(&1, 0)), else: :error
  end

  defp program do
    path = Path.join(:code.priv_dir(:well_behaved_lab), "wb_floors")
    if File.exists?(path), do: path, else: raise("#{path} is missing: run `make native`")
  end
end
