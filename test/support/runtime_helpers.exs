defmodule WellBehaved.Test.RuntimeHelpers do
  @moduledoc false
  import ExUnit.Assertions

  defdelegate eventually(fun), to: WellBehaved.Testing
  defdelegate eventually(fun, limit_ms), to: WellBehaved.Testing

  @doc """
  Calls `echo` (a one-argument function that should return its argument)
  from `callers` processes at once, `calls` times each, with terms unique to
  each call, and asserts every caller got its own terms back.
  """
  def assert_concurrent_echo(echo, callers, calls) do
    1..callers
    |> Enum.map(fn caller ->
      Task.async(fn ->
        Enum.flat_map(1..calls, fn i ->
          term = {self(), caller, i, :crypto.strong_rand_bytes(rem(i * caller, 300))}
          got = echo.(term)
          if got === term, do: [], else: [{term, got}]
        end)
      end)
    end)
    |> Task.await_many(120_000)
    |> Enum.concat()
    |> then(&assert(&1 == [], "echoes that differ ({sent, got}): #{inspect(Enum.take(&1, 3))}"))
  end

  @doc "The OS pid of `pool`'s one server, once it is up."
  def up_os_pid(pool) do
    eventually(fn ->
      case WellBehaved.External.info(pool) do
        %{servers: [%{status: :up, os_pid: os_pid}]} -> os_pid
        _ -> nil
      end
    end)
  end

  defdelegate assert_no_live_jobs(), to: WellBehaved.Testing
  defdelegate assert_no_live_jobs(native), to: WellBehaved.Testing

  @doc """
  Runs `fun` in a process of its own and kills it after `delay_ms` (at
  once for 0), then waits until it is gone.
  """
  def kill_during(fun, delay_ms) do
    pid = spawn(fun)
    if delay_ms > 0, do: Process.sleep(delay_ms)
    ref = Process.monitor(pid)
    Process.exit(pid, :kill)
    assert_receive {:DOWN, ^ref, :process, ^pid, _}, 60_000
  end

  @doc """
  Two binaries of `n` bytes with nothing in common, whose distance is `n`:
  about `n * n / 40e9` seconds of work (a second at the default 200 kB).
  """
  def long_pair(n \\ 200_000) do
    {:binary.copy(<<1, 2>>, div(n, 2)), :binary.copy(<<3, 4>>, div(n, 2))}
  end

  def random_bytes(n, alphabet \\ 256)
  def random_bytes(n, 256), do: :crypto.strong_rand_bytes(n)

  def random_bytes(n, alphabet) do
    for _ <- 1..n//1, into: <<>>, do: <<Enum.random(0..(alphabet - 1))>>
  end

  @doc "Nested terms of every kind, for round-trip tests."
  def nested_terms do
    [
      %{a: 1, b: [2, 3.5, -0.0], c: {:x, "y", ~c"z"}, d: %{nested: %{deeper: [nil, true]}}},
      [1, [2, [3, [4, []]]], {}, %{}, "", <<1, 2, 3::4>>],
      [1, 2 | :improper],
      {1.0e300, -1.5e-300, 3.141592653589793, 0.1 + 0.2},
      {2 ** 64, -(2 ** 64) - 1, 2 ** 1000, -(2 ** 4000) + 17, 255, -256},
      {self(), make_ref(), make_ref(), :erlang.list_to_pid(~c"<0.0.1>")},
      Enum.map(1..1000, &{&1, Integer.to_string(&1), &1 / 3}),
      Map.new(1..100, &{&1, :crypto.strong_rand_bytes(&1)}),
      {:atom, :"atom with spaces", :ünïcödé, "ünïcödé"},
      &Enum.map/2
    ]
  end
end
