defmodule WellBehaved.Lab.HttpLoad.Plan do
  @moduledoc """
  What the HTTP-under-load suite runs: its cases, how long wrk loads each
  one, how much work a background worker's call does, and the `config:`
  part of the result that records all of it.
  """

  alias WellBehaved.Runtime
  alias WellBehaved.Lab.{Spin, Stats}
  alias WellBehaved.Lab.HttpLoad.{Handler, Wrk}

  @work_ms 10
  @workers_per_scheduler 2
  @quick_duration_s 3
  @full_duration_s 10
  @warmup_ms 300

  @typedoc """
  What running a case needs: the Spin iterations of one worker call, wrk's
  duration, and the paths of `wrk` and of `timeout`.
  """
  @type t :: %{
          iterations: pos_integer(),
          duration_s: pos_integer(),
          wrk: String.t(),
          timeout: String.t()
        }

  @doc "Milliseconds of work a background worker's Spin call is sized to."
  @spec work_ms() :: pos_integer()
  def work_ms, do: @work_ms

  @doc "Background workers per online scheduler (none in the `:idle` case)."
  @spec workers_per_scheduler() :: pos_integer()
  def workers_per_scheduler, do: @workers_per_scheduler

  @doc "The warm-up, in ms, between the server being ready and the load."
  @spec warmup_ms() :: pos_integer()
  def warmup_ms, do: @warmup_ms

  @doc "wrk's base duration in seconds: quick runs, full runs."
  @spec base_durations_s() :: {pos_integer(), pos_integer()}
  def base_durations_s, do: {@quick_duration_s, @full_duration_s}

  @doc """
  wrk's duration per case in seconds: the quick or full duration times
  `scale`, rounded to whole seconds, at least 1.
  """
  @spec duration_s(boolean(), number()) :: pos_integer()
  def duration_s(quick, scale) do
    base_s = if quick, do: @quick_duration_s, else: @full_duration_s
    max(1, round(base_s * scale))
  end

  @doc """
  The cases in the order they run: `:idle` first, as the baseline, then
  the runtime's scheduling modes, `:normal` first and `:auto` last.
  """
  @spec case_names() :: [atom()]
  def case_names do
    modes = Runtime.modes()
    [:idle, :normal | modes -- [:normal, :auto]] ++ [:auto]
  end

  @doc """
  Calibrates the workers' calls: the median ns/iteration of a few `:normal`
  Spin runs of about 2.5 ms, and the iteration count that makes about
  #{@work_ms} ms of work.
  """
  @spec calibrate() :: {float(), pos_integer()}
  def calibrate do
    probe = 1_000_000
    ns = Stats.median_ns(fn -> Spin.run(probe, schedule: :normal) end, 7) / probe
    {ns, max(1, round(@work_ms * 1.0e6 / ns))}
  end

  @doc "The `config:` map of a result."
  @spec config(boolean(), number(), t(), float()) :: map()
  def config(quick, scale, plan, ns_per_iteration) do
    %{
      quick: quick,
      rounds_scale: scale * 1.0,
      duration_s: plan.duration_s,
      wrk_threads: Wrk.threads(),
      wrk_connections: Wrk.connections(),
      wrk_timeout_s: Wrk.timeout_s(),
      wrk_command: Wrk.command("PORT", plan.duration_s),
      workers_per_scheduler: @workers_per_scheduler,
      work_ms: @work_ms,
      iterations: plan.iterations,
      ns_per_iteration: ns_per_iteration,
      body_bytes: byte_size(Handler.body()),
      warmup_ms: @warmup_ms
    }
  end
end
