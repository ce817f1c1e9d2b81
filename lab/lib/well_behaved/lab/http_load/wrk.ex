defmodule WellBehaved.Lab.HttpLoad.Wrk do
  @moduledoc """
  The load generator of the HTTP-under-load suite: finds `wrk`, runs it
  against a port on loopback with a hard bound, and parses what it prints.
  """

  @threads 2
  @connections 32
  @timeout_s 2
  @percentiles ["p50", "p75", "p90", "p99"]

  @typedoc "What one wrk run measured, as `parse/1` returns it."
  @type measured :: %{
          req_s: float(),
          requests: non_neg_integer(),
          latency_ms: %{atom() => float() | nil},
          errors: %{atom() => non_neg_integer()},
          errors_total: non_neg_integer()
        }

  @doc "wrk's threads (`-t`)."
  @spec threads() :: pos_integer()
  def threads, do: @threads

  @doc "wrk's open connections (`-c`)."
  @spec connections() :: pos_integer()
  def connections, do: @connections

  @doc "wrk's request timeout (`--timeout`), in seconds."
  @spec timeout_s() :: pos_integer()
  def timeout_s, do: @timeout_s

  @doc "The latency percentiles read from wrk's `--latency` output."
  @spec percentiles() :: [String.t()]
  def percentiles, do: @percentiles

  @doc """
  The paths of `wrk` and of coreutils' `timeout`; raises naming the Debian
  package when `wrk` is missing.
  """
  @spec tools!() :: %{wrk: String.t(), timeout: String.t()}
  def tools! do
    wrk =
      System.find_executable("wrk") ||
        raise "the HTTP-under-load suite needs `wrk`, from the Debian package `wrk` " <>
                "(apt-get install -y wrk)"

    timeout = System.find_executable("timeout") || raise "coreutils `timeout` is required"
    %{wrk: wrk, timeout: timeout}
  end

  @doc "wrk's arguments for a run of `duration_s` seconds against `port`."
  @spec args(integer() | String.t(), pos_integer()) :: [String.t()]
  def args(port, duration_s) do
    [
      "-t#{@threads}",
      "-c#{@connections}",
      "-d#{duration_s}s",
      "--latency",
      "--timeout",
      "#{@timeout_s}s",
      "http://127.0.0.1:#{port}/"
    ]
  end

  @doc "The wrk command line, as the report shows it."
  @spec command(integer() | String.t(), pos_integer()) :: String.t()
  def command(port, duration_s), do: Enum.join(["wrk" | args(port, duration_s)], " ")

  @doc """
  Runs wrk against `port` for the plan's duration, killed if it outlives
  that by #{@timeout_s + 5} s, and returns what it measured with its exit
  status and the start of its output.
  """
  @spec run(WellBehaved.Lab.HttpLoad.Plan.t(), pos_integer()) :: map()
  def run(plan, port) do
    bound_s = Integer.to_string(plan.duration_s + @timeout_s + 5)
    args = ["--signal=KILL", bound_s, plan.wrk | args(port, plan.duration_s)]
    {output, status} = System.cmd(plan.timeout, args, stderr_to_stdout: true)
    parsed = parse(output)
    Map.merge(parsed, %{wrk_exit_status: status, wrk_output: String.slice(output, 0, 4000)})
  end

  @doc "The figures of a case in which wrk did not run."
  @spec empty() :: map()
  def empty do
    %{
      req_s: 0.0,
      requests: 0,
      latency_ms: Map.new(@percentiles, &{String.to_atom(&1), nil}),
      errors: %{connect: 0, read: 0, write: 0, timeout: 0, non_2xx: 0},
      errors_total: 0,
      wrk_exit_status: nil,
      wrk_output: ""
    }
  end

  @doc """
  Parses the output of `wrk --latency`: requests/s, completed requests,
  latency percentiles in ms (`nil` when wrk printed none, or completed no
  request) and error counts.
  """
  @spec parse(String.t()) :: measured()
  def parse(output) do
    latency =
      Map.new(@percentiles, fn "p" <> pct = key ->
        value =
          case Regex.run(~r/^\s*#{pct}(?:\.0+)?%\s+([\d.]+)(us|ms|s|m)\s*$/m, output) do
            [_, number, unit] -> to_float(number) * unit_ms(unit)
            nil -> nil
          end

        {String.to_atom(key), value}
      end)

    errors =
      case Regex.run(
             ~r/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/,
             output
           ) do
        [_, c, r, w, t] -> %{connect: int(c), read: int(r), write: int(w), timeout: int(t)}
        nil -> %{connect: 0, read: 0, write: 0, timeout: 0}
      end

    non_2xx =
      case Regex.run(~r/Non-2xx or 3xx responses: (\d+)/, output) do
        [_, n] -> int(n)
        nil -> 0
      end

    errors = Map.put(errors, :non_2xx, non_2xx)
    requests = capture_int(~r/(\d+) requests in /, output) || 0
    # with no request completed, wrk prints zeros
    latency = if requests > 0, do: latency, else: Map.new(latency, fn {k, _} -> {k, nil} end)

    %{
      req_s: capture_float(~r/Requests\/sec:\s+([\d.]+)/, output) || 0.0,
      requests: requests,
      latency_ms: latency,
      errors: errors,
      errors_total: errors |> Map.values() |> Enum.sum()
    }
  end

  defp unit_ms("us"), do: 1.0e-3
  defp unit_ms("ms"), do: 1.0
  defp unit_ms("s"), do: 1.0e3
  defp unit_ms("m"), do: 6.0e4

  defp capture_float(re, text) do
    case Regex.run(re, text) do
      [_, x] -> to_float(x)
      nil -> nil
    end
  end

  defp capture_int(re, text) do
    case Regex.run(re, text) do
      [_, x] -> int(x)
      nil -> nil
    end
  end

  defp to_float(text) do
    {x, _} = Float.parse(text)
    x
  end

  defp int(text), do: String.to_integer(text)
end
