defmodule WellBehaved.Probe.Options do
  @moduledoc false
  # The options of WellBehaved.Probe's functions: each function's spec of
  # {default, check}, and the validator that turns a keyword list into a
  # map of every option or raises ArgumentError naming the function, the
  # option and what it accepts.

  # {default, check}: every option of measure/2
  @options [
    workers: {nil, :workers},
    calls: {nil, :pos_or_nil},
    duration_ms: {1000, :pos},
    tick_ms: {1, :pos},
    slow_tick_ms: {1000, :pos},
    warmup_ms: {50, :non_neg},
    long_schedule_ms: {10, :pos},
    timeout_ms: {120_000, :pos},
    finish_calls: {true, :boolean},
    control: {true, :boolean},
    samples: {false, :boolean}
  ]
  @turns_options [
    workers: {nil, :workers},
    duration_ms: {200, :pos},
    warmup_ms: {20, :non_neg},
    control: {true, :boolean},
    timeout_ms: {60_000, :pos}
  ]
  @judge_options [max_block_ms: {1, :pos_number}, max_ratio: {1.5, :ratio}, rounds: {3, :pos}]
  @max_int 0xFFFF_FFFF

  @doc false
  # measure/2's options, as a map
  def measure!(opts), do: options!(opts, @options, "measure/2", Keyword.keys(@options))

  @doc false
  # turns/2's options, as a map
  def turns!(opts),
    do: options!(opts, @turns_options, "turns/2", Keyword.keys(@turns_options))

  @doc false
  # judge/2's options (or those of the public function `name` that judges):
  # {bounds, turn_opts}, the judgement's bounds and its windows' options
  def judge!(opts, name) do
    keyword!(opts, name)
    accepted = Keyword.keys(@judge_options) ++ Keyword.keys(@turns_options)

    {bounds, turn_opts} =
      Enum.split_with(opts, fn {k, _} -> Keyword.has_key?(@judge_options, k) end)

    {options!(bounds, @judge_options, name, accepted),
     options!(turn_opts, @turns_options, name, accepted)}
  end

  @doc false
  # a Probe function ("turns/2") or another module's, named in full
  def qualified("WellBehaved." <> _ = name), do: name
  def qualified(name), do: "WellBehaved.Probe." <> name

  defp keyword!(opts, function) do
    unless is_list(opts) and Enum.all?(opts, &match?({key, _} when is_atom(key), &1)),
      do: WellBehaved.Options.not_keyword!(qualified(function), opts)
  end

  # Validates a keyword list against a spec of {default, check} and returns
  # a map of every option; `accepted` are the keys named when one is unknown.
  defp options!(opts, spec, function, accepted) do
    keyword!(opts, function)

    Enum.each(opts, fn {key, value} ->
      case Keyword.fetch(spec, key) do
        {:ok, {_default, check}} ->
          check!(check, value) ||
            WellBehaved.Options.invalid!(
              qualified(function),
              key,
              value,
              describe(check)
            )

        :error ->
          WellBehaved.Options.unknown!(qualified(function), key, accepted)
      end
    end)

    Map.new(spec, fn {key, {default, _}} -> {key, Keyword.get(opts, key, default)} end)
  end

  # durations and counts end up in `receive ... after` and timers: at most
  # 2^32 - 1 (ms: 49 days)
  defp check!(:pos, v), do: is_integer(v) and v in 1..@max_int
  defp check!(:non_neg, v), do: is_integer(v) and v in 0..@max_int
  defp check!(:pos_or_nil, v), do: v == nil or check!(:pos, v)
  defp check!(:workers, v), do: v == nil or (is_integer(v) and v in 1..max_workers())
  defp check!(:boolean, v), do: is_boolean(v)
  defp check!(:pos_number, v), do: is_number(v) and v > 0 and v <= @max_int
  defp check!(:ratio, v), do: is_number(v) and v >= 1

  defp describe(:pos), do: "an integer in 1..#{@max_int}"
  defp describe(:non_neg), do: "an integer in 0..#{@max_int}"
  defp describe(:pos_or_nil), do: "an integer in 1..#{@max_int} (or nil for the default)"

  defp describe(:workers),
    do: "an integer in 1..#{max_workers()} (half the VM's process limit), or nil"

  defp describe(:boolean), do: "a boolean"
  defp describe(:pos_number), do: "a positive number of milliseconds, at most #{@max_int}"
  defp describe(:ratio), do: "a number >= 1"

  defp max_workers, do: div(:erlang.system_info(:process_limit), 2)
end
