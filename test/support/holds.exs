defmodule WellBehaved.Test.Holds do
  @moduledoc false
  # Hold checks that tell the code's holds from the host's.
  #
  # A turn's CPU time, read from its scheduler thread's clock, includes
  # what the host takes from a shared virtual machine's CPU: a loop of
  # 77 us chunks of arithmetic, nothing else running, had one chunk charged
  # 70 ms, and an extract's step of 2 units 0.74 ms, with no page fault or
  # context switch in them. A step's work is the same each time the same
  # scenario runs; the host's stalls fall elsewhere each time. So a
  # scenario with a turn over its bound runs again, from the start (a
  # fresh child VM, so a first call is a first call again), up to `runs`
  # times in all; a call fails only when it is over its bound in every run.

  @runs 3

  @typedoc "A call named by `key`, held `us` of CPU time, over `bound_us`; `detail` for the message"
  @type hold :: %{key: term(), us: number(), bound_us: number(), detail: String.t()}

  @doc """
  Runs `run` (0-arity: the scenario, returning its results) and `holds`
  (results -> the calls over their bound, as `t:hold/0` maps) until a run
  has no hold that every run before it had, at most `runs` times. Returns
  `{results of the first run, holds that came back in every run}`, each
  with its least `us` over the runs.
  """
  def recurring(run, holds, runs \\ @runs) when runs >= 1 do
    first = run.()
    {first, again(run, holds, by_key(holds.(first)), runs - 1)}
  end

  defp again(_run, _holds, held, _left) when map_size(held) == 0, do: []
  defp again(_run, _holds, held, 0), do: Map.values(held)

  defp again(run, holds, held, left) do
    # said, so that a run of the gate shows how often the host interferes
    IO.puts(
      :stderr,
      "hold check: #{Enum.map_join(Map.values(held), "; ", &"#{&1.detail} #{&1.us} us")} " <>
        "over its bound; running the scenario again"
    )

    now = by_key(holds.(run.()))

    still =
      for {key, h} <- held, Map.has_key?(now, key), into: %{} do
        {key, if(now[key].us < h.us, do: now[key], else: h)}
      end

    again(run, holds, still, left - 1)
  end

  defp by_key(holds), do: Map.new(holds, &{&1.key, &1})

  @doc """
  `[hold]` when a call's longest turn (`function`, from
  `WellBehaved.Probe.turns/2`) is over max(5 ms, 2x the longest of the
  pure-Erlang process beside it, `control`); `[]` otherwise.
  """
  def over_erlang(key, function, control) do
    bound = max(5000, 2 * control.cpu_max_us)
    over(key, function.cpu_max_us, bound, "pure Erlang's longest: #{control.cpu_max_us} us")
  end

  @doc "`over_erlang/3` of each `{key, function, control}` of `calls`, together."
  def over_erlang(calls) when is_list(calls),
    do:
      Enum.flat_map(calls, fn {key, function, control} -> over_erlang(key, function, control) end)

  @doc "`[hold]` when `us` is over `bound_us`, `[]` otherwise; `note` goes in the message."
  def over(key, us, bound_us, note) do
    if us > bound_us,
      do: [%{key: key, us: us, bound_us: bound_us, detail: "#{inspect(key)} (#{note})"}],
      else: []
  end

  @doc "The message of a failed check: each hold that came back in every run."
  def message(held) do
    Enum.map_join(held, "\n", fn h ->
      "#{h.detail}: held its scheduler #{h.us} us (CPU) in every run (the least shown), " <>
        "bound #{h.bound_us} us"
    end)
  end
end
