defmodule WellBehaved.External do
  @moduledoc """
  Native work in separate OS processes: pools of external servers (C
  programs) reached over Unix domain sockets.

  A pool runs a server program built from job types (the same C source
  as the NIF library, see the guide "Writing your own well-behaved NIF"),
  and `WellBehaved.Job.call/4` with `schedule: :external` runs a job there
  instead of in the VM, with the same answers: a job that crashes takes
  its server down, never the VM. The built-in pool runs `priv/wb_external`,
  the library's own Levenshtein and fuzzy score jobs built that way, as a
  pool of your own runs yours: `WellBehaved.Fuzzy.score/3` with
  `schedule: :external`, `levenshtein/4` and `WellBehaved.Levenshtein`'s
  `schedule: :external` run the fuzzy score job by that same path, and
  `echo/1` is a request every server answers.
  Pools have names; several run at once, each started lazily by its first
  call or by your supervisor (`child_spec/1`).

  Each server is a port program (so it dies with the VM) listening on a
  socket in a private temporary directory; it serves each connection on a
  thread of its own. Requests and replies are frames of a 4-byte big-endian
  length and a term in the external term format:

    * `{:echo, term}` - the term back;
    * `{:wb_job, name, tiny, args}` - a job of the server's job types,
      named by its NIF (`args` a tuple of its arguments): `{:ok, result}`,
      `{:error, reason}` when the job refused its arguments, `{:raise,
      reason}` when its result raised;
    * `{:wb_stats}` - the server's job counts (`server_stats/1`).

  A crash of native code takes down one server, never the VM: its callers
  get `{:error, :closed}`, the pool starts it again, and later calls succeed.
  Nothing here blocks a scheduler beyond the socket I/O; the price is a round
  trip through the kernel and copying the arguments both ways.

  A pool starts on first use under `WellBehaved.Supervisor` with the
  default options, or explicitly with `start/1`. A caller takes an idle
  connection straight from shared state (one atomic compare-and-swap) and
  talks to the socket itself: no message to a pool process on the way
  unless every connection is busy.

  A call that finds the servers restarting (killed, crashed) waits for one
  to be up again, up to its timeout, instead of failing: a request that
  did not reach a live server computed nothing and goes again. One that
  reached a server that then died answers `{:error, :closed}`.

  ## Callers that give up

  A caller that gives up (its timeout passes) or dies (its process exits,
  killed or not) has its request cancelled: the pool sends a cancel on
  the connection (an empty frame), the server abandons the request at its
  next check (a job between two steps, every millisecond or so: the job's
  `destroy` runs and its memory is freed) and acknowledges it, and the
  connection serves the next caller. A dead caller is noticed within
  half a second (the pool's tick). A job whose step never returns (native
  code stuck in a loop) never gets to the check: when no acknowledgement
  comes within `cancel_timeout_ms` (default 1 s), the pool kills that
  server (SIGKILL) and starts a new one, so no server keeps working for
  nobody. Callers of other jobs on the killed server get
  `{:error, :closed}`. `server_stats/1` counts both outcomes.

  ## Overload and failure

  With every connection busy, a caller waits in the pool's queue, at most
  `max_waiting` of them (default `:infinity`): past that a call answers
  `{:error, :overloaded}` at once instead of waiting up to its timeout,
  so that a service under more load than its servers take sheds the
  excess early (`info/1` counts `sheds`).

  A server that exits is started again, at once or, if it died within a
  second of starting, after a pause (100 ms, doubling up to 5 s and up
  to `max_seconds / (max_restarts + 1)`). As a supervisor does, the pool
  bounds this: more than `max_restarts` failures within `max_seconds`
  (default 10 in 10 s), or more than `max_restarts` starts in a row of
  one server that failed before it was ready (however slow), and it
  gives up for a while. Failures are the exits the pool did not cause (a crash, a
  server that exits by itself, one that did not start in time), not the
  servers it kills for a cancelled job that would not stop, nor its own
  shutdown. Past the intensity the pool is `:unavailable`: it logs an
  error, stops its other servers, answers the callers waiting and every
  new call `{:error, :unavailable}` at once, and starts its servers
  again after `retry_ms` (default 1 s; doubling at each failed recovery,
  up to 30 s, back to `retry_ms` once the pool stayed available for
  `max_seconds`). A recovery that reaches a running server makes the
  pool available again. By design, one input that crashes its server,
  sent over and over, makes the pool unavailable: the retry delay bounds
  how fast it crashes servers.

  ## Logs

  A server's standard output and standard error (one pipe: the pool
  cannot tell them apart) are read a line at a time (4096 bytes; a
  longer line comes in pieces) and logged as warnings, with the
  metadata `pool:` (the pool's name), `server:` (its index) and
  `os_pid:`, as are the pool's own warnings about a server. Each server
  may log 100 lines a second (a server restarted in its place goes on
  in the same second); past that its lines are dropped and one line says
  how many. A server's exit is logged with its status decoded:
  "killed by SIGSEGV (status 139)" for a death by signal (status 128 +
  N; signal names by this system's numbering, so a program's own
  `exit(139)` reads the same, hence the status too), "exited with status
  1" otherwise. On Linux the names are the generic numbering's (x86,
  ARM, RISC-V, PowerPC; MIPS, SPARC and Alpha differ), and the real-time
  signals 32 to 64 read `:SIGRT32` to `:SIGRT64`. Giving up past the restart intensity is logged as an
  error (`server: nil`).

  ## Events

  With events on (see `WellBehaved.Telemetry`), a pool emits the events
  below, each naming the pool in its metadata as `pool`; times are in
  native units (`System.convert_time_unit/3`) and events that count
  carry `count: 1`.

    * `[:well_behaved, :external, :call, :start | :stop | :exception]` -
      a span around each call (`Job.call/4` with `schedule: :external`,
      `echo/1`, `levenshtein/4`). Metadata: `pool`, `request` (the job's
      name, or `:echo`); the stop event adds `server` (the index that
      served the call's last attempt, or `nil`), `result` (`:ok` or
      `:error`) and, for an error, `error` (the reason), and measures `queue_time`, the time spent
      waiting for a connection to be handed over (0 when an idle one was
      free).
    * `[:well_behaved, :external, :timeout]` - a call's reply did not
      come within its timeout. Measurements: `count`. Metadata: `pool`,
      `server`, `slot` (the connection).
    * `[:well_behaved, :external, :cancel]` - a cancelled request (its
      caller timed out or died) is over. Measurements: `count`,
      `duration` (from the cancel to its end). Metadata: `pool`,
      `server`, `slot`, `outcome`: `:acknowledged` (the server abandoned
      the job), `:killed` (the pool killed its server: the job did not
      stop in time) or `:lost` (the connection or the server went first).
    * `[:well_behaved, :external, :server, :start]` - a server printed
      "ready". Measurements: `startup_time`. Metadata: `pool`, `server`,
      `os_pid`.
    * `[:well_behaved, :external, :server, :exit]` - a server exited.
      Measurements: `uptime`. Metadata: `pool`, `server`, `os_pid`,
      `status` (the exit status), `signal` (`:SIGSEGV` and so on, or
      `nil`), `cause` (`:crashed` by a signal, `:exited` by itself,
      `:killed_by_pool`, or `:start_timeout`) and `restart_in` (ms, or
      `nil` when it is not restarted).
    * `[:well_behaved, :external, :overload]` - a call was shed.
      Measurements: `count`, `waiting` (the callers in the queue).
      Metadata: `pool`, `max_waiting`.
    * `[:well_behaved, :external, :unavailable]` - the pool gave up past
      its restart intensity. Measurements: `count`, `crashes` (the
      failures in the window). Metadata: `pool`, `max_restarts`,
      `max_seconds`, `retry_in` (ms).
    * `[:well_behaved, :external, :available]` - a server is up again
      after the retry. Measurements: `count`. Metadata: `pool`,
      `max_restarts`, `max_seconds`.

  ## Errors

  Errors (`{:error, reason}`):

    * `:closed` - the server died mid-call (or the connection broke);
    * `:timeout` - no reply within `:timeout_ms` (the request is
      cancelled, see above; a late reply never reaches the next caller);
    * `:checkout_timeout` - no connection came free within `:timeout_ms`
      (every one busy, or the servers restarting);
    * `:overloaded` - every connection busy and `max_waiting` callers
      already waiting: the call was shed at once;
    * `:unavailable` - the pool's servers failed past its restart
      intensity, and it has not started them again yet;
    * `:not_running` - the pool stopped, or could not start;
    * `:too_large` - the request exceeds the 1 GiB frame limit;
    * `:badarg` - invalid arguments.
  """

  alias WellBehaved.Service
  alias WellBehaved.External.{Client, Pool}
  alias WellBehaved.External.Options, as: ExternalOptions
  alias WellBehaved.Options

  # the score job's own errors ({:error, {tag, ...}}), as in the VM
  @job_errors [:invalid_utf8, :does_not_fit]

  @type reason ::
          :closed
          | :timeout
          | :checkout_timeout
          | :overloaded
          | :unavailable
          | :not_running
          | :too_large
          | :badarg
          | term()

  @type option ::
          {:name, atom()}
          | {:executable, Path.t() | {atom(), String.t()}}
          | {:servers, pos_integer()}
          | {:connections, pos_integer()}
          | {:timeout_ms, pos_integer()}
          | {:cancel_timeout_ms, pos_integer()}
          | {:max_waiting, non_neg_integer() | :infinity}
          | {:max_restarts, non_neg_integer()}
          | {:max_seconds, pos_integer()}
          | {:retry_ms, pos_integer()}

  # the built-in pool
  @builtin WellBehaved.External.Pool
  @builtin_executable {:well_behaved, "wb_external"}
  @builtin_start [name: @builtin, executable: @builtin_executable]

  @start "WellBehaved.External.start/1"
  @child_spec "WellBehaved.External.child_spec/1"

  @doc """
  Starts a pool (if not yet running) under `WellBehaved.Supervisor` and
  returns its manager's pid.

  Options (used only when this call starts the pool):

    * `name:` - the pool's name (an atom), default the built-in pool's;
    * `executable:` - the server program: a path, or `{app, file}` for
      `file` in `app`'s `priv` directory (where a release carries it),
      default the built-in server; a pool of your own job types names
      its program here (`mix compile` builds it with your NIF library);
    * `servers:` - number of server processes, default
      `System.schedulers_online()`;
    * `connections:` - connections (and so server threads) per server,
      default 4; more concurrent callers queue for a free one;
    * `timeout_ms:` - milliseconds a call may wait for its reply, and for
      a free connection, default 60_000;
    * `cancel_timeout_ms:` - milliseconds a server has to abandon the
      request of a caller that gave up (see "Callers that give up" in the
      module doc) before it is killed and replaced, default 1_000;
    * `max_waiting:` - callers that may wait for a busy pool's next free
      connection, a non-negative integer or `:infinity` (the default);
      the next one answers `{:error, :overloaded}` at once (see
      "Overload and failure" in the module doc); with 0, a call that
      finds no idle connection is shed, even while the servers restart;
    * `max_restarts:`, `max_seconds:` - the restart intensity: more than
      `max_restarts` server failures (a non-negative integer, default 10)
      within `max_seconds` (default 10), or more than `max_restarts`
      failed starts in a row of one server, make the pool unavailable;
    * `retry_ms:` - milliseconds an unavailable pool waits before it
      starts its servers again, default 1_000, doubling at each failed
      recovery up to 30_000.

  Options are checked: a bad one raises `ArgumentError` naming this
  function, the option and what it accepts.
  """
  @spec start([option()]) :: {:ok, pid()} | {:error, term()}
  def start(opts \\ []), do: Pool.ensure_started(checked_options!(@start, opts))

  @doc """
  A child specification for a pool under your own supervisor, taking the
  options of `start/1`:

      children = [
        {WellBehaved.External, name: MyApp.Jobs, executable: {:my_app, "my_server"}}
      ]

  Such a pool is restarted as your supervisor says; calls made while it
  is down answer `{:error, :not_running}`.
  """
  @spec child_spec([option()]) :: Supervisor.child_spec()
  def child_spec(opts),
    do: Pool.child_spec([restart: :permanent] ++ checked_options!(@child_spec, opts))

  defp checked_options!(function, opts) do
    ExternalOptions.check!(function, opts)
    Keyword.merge([name: @builtin, executable: @builtin_executable], opts)
  end

  @doc false
  # Runs a job of a server's job types (WellBehaved.Job.call/4 with
  # schedule: :external): its answer as the VM's job NIF gives it.
  @spec run_job(atom(), atom(), list(), boolean(), timeout() | nil, keyword() | nil) :: term()
  def run_job(pool, job, args, tiny, timeout, start) do
    request = :erlang.term_to_binary({:wb_job, job, tiny, List.to_tuple(args)})
    timeout = if timeout == :infinity, do: nil, else: timeout

    case Client.request(pool, request, timeout, start, job) do
      {:ok, reply} ->
        case :erlang.binary_to_term(reply) do
          {:ok, result} -> result
          {:raise, reason} -> :erlang.error(reason)
          {:error, _} = error -> error
        end

      {:error, _} = error ->
        error
    end
  end

  @doc """
  Sends `term` through a server and back.

  Returns the term, or `{:error, reason}` when the call failed.

      iex> WellBehaved.External.echo({:hello, [1, 2.5, "three"]})
      {:hello, [1, 2.5, "three"]}
  """
  @spec echo(term()) :: term() | {:error, reason()}
  def echo(term) do
    case builtin_request(:erlang.term_to_binary({:echo, term})) do
      {:ok, reply} -> :erlang.binary_to_term(reply)
      {:error, _} = error -> error
    end
  end

  @doc """
  The Levenshtein distance between binaries `a` and `b`, computed by a
  server of the built-in pool: the library's fuzzy score job (the same
  C code as `WellBehaved.Fuzzy.score/3`'s, `scorer: :levenshtein, score:
  :distance`) run there as `WellBehaved.Job.call/4` with
  `schedule: :external` runs any job.

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

    # WellBehaved.Fuzzy's score job, as Fuzzy.score/3 with schedule:
    # :external runs it: one path for every external pair
    options = {:levenshtein, :distance, max_distance, 1, 1, 1, 0.1, false}

    case score(a, b, unit, options, false) do
      distance when is_integer(distance) -> {:ok, distance}
      {:error, _} = error -> error
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

  @doc false
  # WellBehaved.Fuzzy's score job (`options` as Fuzzy's native jobs take
  # them) in a server of the built-in pool, by the path of every job's
  # schedule: :external (WellBehaved.Job.call/4): the score, or
  # {:error, reason}, the job's own errors and the pool's alike
  @spec score(binary(), binary(), :byte | :codepoint, tuple(), boolean()) ::
          number() | {:error, term()}
  def score(a, b, unit, options, tiny),
    do: run_job(@builtin, :fuzzy_score, [a, b, unit, options], tiny, nil, @builtin_start)

  @doc false
  # score/5 for WellBehaved.Fuzzy.score/3: the job's errors as in the VM
  # ({:error, reason} for the caller to raise), the pool's raised as
  # WellBehaved.External.Error
  @spec score!(binary(), binary(), :byte | :codepoint, tuple(), boolean()) ::
          number() | {:error, term()}
  def score!(a, b, unit, options, tiny) do
    case score(a, b, unit, options, tiny) do
      {:error, :enomem} = error -> error
      {:error, {tag, _}} = error when tag in @job_errors -> error
      {:error, reason} -> raise WellBehaved.External.Error, reason: reason
      score -> score
    end
  end

  defp builtin_request(payload),
    do: Client.request(@builtin, payload, nil, @builtin_start, :echo)

  @doc """
  Stops the pool `name` (default the built-in one) started by `start/1`
  or a first call: closes its connections, stops every server (waiting
  for each to exit, killing one that does not within 2 s) and removes the
  socket files and their directory. The next call starts a new pool.
  """
  @spec stop(atom()) :: :ok
  def stop(name \\ @builtin), do: Service.stop(WellBehaved.Supervisor, name)

  @doc """
  What the running pool `name` is and has done; `nil` when not running.

    * `name`, `executable`, `dir` (the sockets' directory), `slots` (the
      connections);
    * `status` - `:running`; `:unavailable` past its restart intensity,
      for `retry_in` ms; `:recovering` from then until a server is up;
    * `servers` - index, OS pid, port, socket path and status (`:starting`,
      `:up`, `:down`) of each;
    * `busy` - the slots in use: slot, owner pid and server index;
      `cancelling` - the slots whose request is being cancelled: slot and
      server index;
    * `waiting` and `queue` - the callers waiting for a connection (the
      shared counter and the manager's queue: equal at rest);
      `max_waiting`;
    * counts over the pool's life: `restarts` (servers started again),
      `exits` (a map from exit status to count), `crashes` (from signal,
      `:SIGSEGV` and so on, to count: deaths by a signal the pool did
      not send), `timeouts` (calls whose reply did not come in time),
      `checkout_timeouts` (calls that got no connection in time),
      `cancels` (requests cancelled), `sheds` (calls answered
      `:overloaded`);
    * `max_restarts`, `max_seconds`, `retry_in` (the delay in ms before
      an unavailable pool retries; `nil` while running);
    * `wait` - the checkouts (`count`) and the 50th, 90th and 99th
      percentiles of their waits in milliseconds (`p50`, `p90`, `p99`;
      `nil` before any). A checkout that found an idle connection counts
      as 0 without reading the clock; the others are timed into
      power-of-two buckets of microseconds, and a percentile is its
      bucket's upper bound: `p90: 2.048` says 90% of the waits took less
      than 2.048 ms. Shed calls are not waits.
  """
  @spec info(atom()) :: map() | nil
  def info(name \\ @builtin), do: ask(name, :info, 5_000)

  @doc """
  What each running server of a pool of job types says of its jobs, as
  `{index, {:ok, stats}}` (or `{index, {:error, reason}}`): `jobs`
  started, `live_jobs` and the `live_bytes` their states own (both back
  to 0 once every job has ended, cancelled ones included), and
  `cancelled`: jobs it abandoned after a cancel (their caller gone or
  timed out), all three since that server process started; and, kept by
  the pool over its whole life, `abandoned`: the servers at this index
  killed and replaced because a cancelled job did not stop within
  `cancel_timeout_ms`. `nil` when the pool is not running. The built-in
  pool's servers answer too: they are servers of the library's job
  types.
  """
  @spec server_stats(atom()) :: [{non_neg_integer(), {:ok, map()} | {:error, term()}}] | nil
  def server_stats(name), do: ask(name, :server_stats, 30_000)

  # the running pool's manager's answer, nil when there is none
  defp ask(name, request, timeout) do
    case Process.whereis(name) do
      nil -> nil
      pid -> GenServer.call(pid, request, timeout)
    end
  catch
    :exit, _ -> nil
  end
end
