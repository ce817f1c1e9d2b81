defmodule WellBehaved.TelemetryEventsTest do
  # The events of guides/observability.md: WellBehaved.Telemetry's backend
  # and gate, its spans in the shape of :telemetry.span/3, and the spans
  # of jobs, searches and cdist. Events go to a stand-in for :telemetry
  # (StandIn) or to a handler of `event_handler:` (Recorder), both sending
  # them to this test's process. Global state (application environment,
  # the backend and the gate): async: false, restored after each test.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog

  alias WellBehaved.{Fuzzy, Job, Levenshtein, Runtime, Telemetry}
  alias WellBehaved.Test.{SDKAwaiting, SDKJobs}
  alias WellBehaved.Testing.ChildVM

  @moduletag timeout: 180_000

  defmodule StandIn do
    # :telemetry's execute/3 and list_handlers/1, as far as the library uses them
    def execute(event, measurements, metadata) do
      if pid = Process.whereis(WellBehaved.TelemetryEventsTest),
        do: send(pid, {:event, event, measurements, metadata})

      :ok
    end

    def list_handlers(prefix) do
      for {id, event} <- Application.get_env(:well_behaved, :stand_in_handlers, []),
          List.starts_with?(event, prefix),
          do: %{id: id, event_name: event}
    end
  end

  defmodule Recorder do
    def handle(event, measurements, metadata, pid),
      do: send(pid, {:event, event, measurements, metadata})

    def fail(_event, _measurements, _metadata, _config), do: raise("handler bug")
  end

  @keys [:events, :event_handler, :telemetry_module, :stand_in_handlers]
  @pool SDKJobs.External

  setup_all do
    SDKJobs.ensure_loaded!()
    SDKAwaiting.ensure_loaded!()
    on_exit(fn -> WellBehaved.External.stop(@pool) end)
  end

  setup do
    saved = for key <- @keys, do: {key, Application.fetch_env(:well_behaved, key)}
    Process.register(self(), __MODULE__)

    on_exit(fn ->
      for {key, value} <- saved do
        case value do
          {:ok, v} -> Application.put_env(:well_behaved, key, v)
          :error -> Application.delete_env(:well_behaved, key)
        end
      end

      Telemetry.refresh()
    end)
  end

  # events through the stand-in, on whether or not a handler is attached
  defp stand_in(events \\ :always) do
    Application.delete_env(:well_behaved, :event_handler)
    Application.put_env(:well_behaved, :telemetry_module, StandIn)
    Application.put_env(:well_behaved, :events, events)
    Telemetry.refresh()
  end

  defp handler(f \\ :handle) do
    Application.put_env(:well_behaved, :event_handler, {Recorder, f, self()})
    Application.put_env(:well_behaved, :events, :auto)
    Telemetry.refresh()
  end

  # every event received so far, in order
  defp events(acc \\ []) do
    receive do
      {:event, event, measurements, metadata} -> events([{event, measurements, metadata} | acc])
    after
      0 -> Enum.reverse(acc)
    end
  end

  defp named(events, prefix), do: Enum.filter(events, &List.starts_with?(elem(&1, 0), prefix))

  # the span of `prefix` among `events`: start and stop (or exception)
  defp one_span(events, prefix) do
    assert [{start_name, start_m, start_md}, {end_name, end_m, end_md}] = named(events, prefix)
    assert start_name == prefix ++ [:start]
    assert end_name in [prefix ++ [:stop], prefix ++ [:exception]]
    assert is_reference(start_md.telemetry_span_context)
    assert end_md.telemetry_span_context == start_md.telemetry_span_context
    assert end_m.monotonic_time - start_m.monotonic_time == end_m.duration
    {start_md, end_m, end_md}
  end

  describe "spans" do
    test "start and stop have :telemetry.span/3's keys and share a context" do
      assert stand_in() == true
      fun = fn -> {:value, %{extra: 7}, %{b: 2}} end
      assert Telemetry.span([:well_behaved, :test], %{a: 1}, fun) == :value
      assert Telemetry.span([:well_behaved, :test], %{a: 1}, fn -> {:other, %{}} end) == :other

      assert [{[:well_behaved, :test, :start], start, start_md}, {_, stop, stop_md} | rest] =
               events()

      assert Map.keys(start) |> Enum.sort() == [:monotonic_time, :system_time]
      assert Map.keys(stop) |> Enum.sort() == [:duration, :extra, :monotonic_time]
      assert stop.extra == 7 and stop.duration >= 0
      assert %{a: 1, telemetry_span_context: ctx} = start_md
      assert stop_md == %{a: 1, b: 2, telemetry_span_context: ctx}

      # the second span: another context, no extra measurements
      assert [{_, _, second}, {[:well_behaved, :test, :stop], stop2, _}] = rest
      assert second.telemetry_span_context != ctx
      assert Map.keys(stop2) |> Enum.sort() == [:duration, :monotonic_time]
    end

    test "a raise, a throw and an exit give an exception event and go on" do
      stand_in()

      assert_raise RuntimeError, "boom", fn ->
        Telemetry.span([:well_behaved, :test], %{a: 1}, fn -> raise "boom" end)
      end

      assert catch_throw(Telemetry.span([:well_behaved, :test], %{}, fn -> throw(:t) end)) == :t
      assert catch_exit(Telemetry.span([:well_behaved, :test], %{}, fn -> exit(:x) end)) == :x

      assert [raised, thrown, exited] =
               events() |> Enum.chunk_every(2) |> Enum.map(&one_span(&1, [:well_behaved, :test]))

      assert {%{a: 1}, m, %{kind: :error, reason: %RuntimeError{message: "boom"}} = md} = raised
      assert Map.keys(m) |> Enum.sort() == [:duration, :monotonic_time]
      assert [{__MODULE__, _, _, _} | _] = md.stacktrace
      assert md.a == 1
      assert {_, _, %{kind: :throw, reason: :t}} = thrown
      assert {_, _, %{kind: :exit, reason: :x}} = exited
    end

    test "a handler of event_handler: gets the events :telemetry would" do
      stand_in()

      run = fn ->
        Telemetry.span([:well_behaved, :test], %{a: 1}, fn -> {:v, %{n: 1}, %{}} end)
      end

      run.()
      Telemetry.execute([:well_behaved, :count], %{count: 1}, %{x: 2})
      via_module = events()

      assert handler() == true
      run.()
      Telemetry.execute([:well_behaved, :count], %{count: 1}, %{x: 2})
      via_handler = events()

      shape = fn events ->
        for {name, m, md} <- events,
            do: {name, Map.keys(m), Map.drop(md, [:telemetry_span_context])}
      end

      assert length(via_module) == 3
      assert shape.(via_handler) == shape.(via_module)
    end
  end

  describe "the gate" do
    test "off: nothing reaches the backend, and the function still runs" do
      assert stand_in(:never) == false
      refute Telemetry.enabled?()
      assert Telemetry.span([:well_behaved, :test], %{}, fn -> {:ran, %{}} end) == :ran
      assert Telemetry.execute([:well_behaved, :count], %{count: 1}, %{}) == :ok
      assert Levenshtein.distance("kitten", "sitting", schedule: :normal) == 3

      assert Job.call(&SDKJobs.fold/4, [10], schedule: :threaded) ==
               Job.call(&SDKJobs.fold/4, [10])

      assert events() == []
    end

    test ":auto is on while a handler listens to :well_behaved events; refresh/0 looks" do
      Application.put_env(:well_behaved, :stand_in_handlers, [{"other", [:phoenix, :endpoint]}])
      assert stand_in(:auto) == false

      Application.put_env(:well_behaved, :stand_in_handlers, [
        {"mine", [:well_behaved, :job, :stop]}
      ])

      refute Telemetry.enabled?()
      assert Telemetry.refresh() == true
      assert Telemetry.enabled?()

      Application.put_env(:well_behaved, :stand_in_handlers, [])
      assert Telemetry.refresh() == false
    end

    test "no backend: off even with events: :always" do
      Application.delete_env(:well_behaved, :event_handler)
      Application.put_env(:well_behaved, :telemetry_module, :well_behaved_no_such_module)
      Application.put_env(:well_behaved, :events, :always)
      assert Telemetry.refresh() == false
      assert :persistent_term.get({Telemetry, :backend}, nil) == nil
    end

    test "the periodic check leaves the terms alone while its choice holds" do
      assert stand_in(:never) == false
      # as other tests turn events on: the backend and gate set directly
      Telemetry.set({:handler, Recorder, :handle, self()}, true)
      send(Telemetry, :check)
      :sys.get_state(Telemetry)
      assert Telemetry.enabled?()
      Telemetry.execute([:well_behaved, :count], %{count: 1}, %{})
      assert [{[:well_behaved, :count], %{count: 1}, %{}}] = events()

      # refresh/0 puts back what the settings say
      assert Telemetry.refresh() == false
      assert :persistent_term.get({Telemetry, :backend}) == {:module, StandIn}
    end

    test "bad settings raise ArgumentError naming them" do
      Application.put_env(:well_behaved, :events, :sometimes)
      assert_raise ArgumentError, ~r/:events is :sometimes; expected one of/, &Telemetry.refresh/0

      Application.put_env(:well_behaved, :events, :auto)
      Application.put_env(:well_behaved, :event_handler, {Recorder})
      assert_raise ArgumentError, ~r/:event_handler is \{.*Recorder\}/, &Telemetry.refresh/0
    end

    test "a handler that raises is logged and turns events off until refresh/0" do
      assert handler(:fail) == true

      log =
        capture_log(fn ->
          assert Telemetry.span([:well_behaved, :test], %{}, fn -> {:still, %{}} end) == :still
        end)

      assert log =~ "Recorder.fail/4 failed on [:well_behaved, :test, :start]"
      assert log =~ "handler bug"
      refute Telemetry.enabled?()
      assert Telemetry.refresh() == true
    end

    test "a module named :telemetry is found when the application starts" do
      scenario = """
      defmodule :telemetry do
        def execute(_event, _measurements, _metadata), do: :ok
        def list_handlers([:well_behaved]), do: [%{id: "h", event_name: [:well_behaved, :job, :stop]}]
      end

      {:ok, _} = Application.ensure_all_started(:well_behaved)
      {:persistent_term.get({WellBehaved.Telemetry, :backend}), WellBehaved.Telemetry.enabled?()}
      """

      assert {:ok, {{{:module, :telemetry}, true}, _binding}} =
               ChildVM.run({Code, :eval_string, [scenario]}, bound_ms: 60_000, start: [:elixir])
    end

    test "events: :never at compile time takes the checks out" do
      # the gate says on, but the code compiled with :never never looks
      scenario = """
      defmodule Forward do
        def handle(event, _m, _md, pid), do: send(pid, {:event, event})
      end

      Code.compiler_options(ignore_module_conflict: true)
      Application.put_env(:well_behaved, :events, :never)
      for file <- ["telemetry.ex", "job.ex"], do: Code.compile_file("lib/well_behaved/" <> file)
      :persistent_term.put({WellBehaved.Telemetry, :backend}, {:handler, Forward, :handle, self()})
      WellBehaved.Telemetry.GateWriter.set(true)
      true = WellBehaved.Telemetry.Gate.on?()
      WellBehaved.Telemetry.execute([:well_behaved, :count], %{count: 1}, %{})

      answer =
        WellBehaved.Job.call(&WellBehaved.Native.levenshtein/7, ["kitten", "sitting", :byte, nil],
          schedule: :normal)

      got = receive do: ({:event, _} = e -> e), after: (100 -> :none)
      {WellBehaved.Telemetry.enabled?(), answer, got}
      """

      assert {:ok, {{false, 3, :none}, _binding}} =
               ChildVM.run({Code, :eval_string, [scenario]}, bound_ms: 60_000)
    end
  end

  describe "job spans" do
    test "a short pair answered inline checks nothing; a job call checks once" do
      # the mechanism behind the cost target: a worker's calls to the gate,
      # traced (a process cannot trace itself)
      gate = {WellBehaved.Telemetry.Gate, :on?, 0}
      :erlang.trace_pattern(gate, true, [:global])

      checks = fn call ->
        worker = spawn(fn -> receive do: (:go -> call.()) end)
        :erlang.trace(worker, true, [:call])
        ref = Process.monitor(worker)
        send(worker, :go)
        receive do: ({:DOWN, ^ref, _, _, _} -> :ok)
        :erlang.trace_delivered(worker)
        receive do: ({:trace_delivered, _, _} -> :ok)
        count_checks(0)
      end

      try do
        assert checks.(fn -> Levenshtein.distance("kitten", "sitting") end) == 0
        assert checks.(fn -> Fuzzy.score("kitten", "sitting") end) == 0

        assert checks.(fn -> Levenshtein.distance("kitten", "sitting", schedule: :normal) end) ==
                 1

        assert checks.(fn -> Job.call(&SDKJobs.fold/4, [10], schedule: :yielding) end) == 1
      after
        :erlang.trace_pattern(gate, false, [:global])
      end
    end

    test "every mode: the job, its caller's name, the mode asked and run, the result" do
      stand_in()

      for mode <- Runtime.modes(), tiny <- [false, true] do
        want = Job.call(&SDKJobs.fold/4, [5000], [schedule: :normal], "want")
        events()
        opts = [schedule: mode, tiny_slices: tiny]
        assert Job.call(&SDKJobs.fold/4, [5000], opts, "MyApp.fold/1") == want
        {start, measured, stop} = one_span(events(), [:well_behaved, :job])
        assert %{job: :fold, module: SDKJobs, function: "MyApp.fold/1", mode: ^mode} = start

        how = Map.drop(stop, [:mode_run, :auto, :slices, :answered_in_call])
        assert how == Map.merge(start, %{result: :ok, rerun: false})

        # :auto runs 5000 units of fold in one call; every other mode as asked
        if mode == :auto do
          assert %{mode_run: run, auto: %{reason: reason, predicted_units: 5000}} = stop
          assert {run, reason} in [normal: :below_normal_max, yielding: :below_yielding_max]
        else
          assert %{mode_run: ^mode, auto: nil} = stop
        end

        # one unit a slice: a yielding mode takes a slice per unit
        if tiny and stop.mode_run in [:yielding, :yielding_dirty],
          do: assert(measured.slices == 5000),
          else: assert(measured.slices >= 1)

        assert is_integer(measured.bytes)
      end
    end

    test "a re-run: the stop event's report and the rerun event" do
      stand_in()
      # liar predicts one unit and does 20 million: :normal first, then
      # again sliced (the one place liar runs on this library)
      want = Job.call(&SDKJobs.fold/4, [20_000_000], schedule: :normal)
      events()
      assert Job.call(&SDKAwaiting.liar/4, [20_000_000], [], "MyApp.liar/1") == want
      {reruns, span} = Enum.split_with(events(), &(elem(&1, 0) == [:well_behaved, :job, :rerun]))
      {start, _, stop} = one_span(span, [:well_behaved, :job])

      assert %{mode_run: :yielding, rerun: true, auto: %{reason: :below_normal_max}} = stop
      assert stop.auto.predicted_units == 1

      assert [{[:well_behaved, :job, :rerun], %{count: 1, predicted_units: 1}, meta}] = reruns

      assert meta ==
               Map.take(start, [:job, :module, :function])
               |> Map.put(:ps_per_unit, stop.auto.ps_per_unit)
    end

    test "the fast clause, a library function, and :external" do
      stand_in()
      assert Job.call(&SDKJobs.fold/4, [10]) == Job.call(&SDKJobs.fold/4, [10], schedule: :normal)
      [fast, _normal] = events() |> Enum.chunk_every(2)
      {start, _, _} = one_span(fast, [:well_behaved, :job])
      assert %{mode: :auto, function: "WellBehaved.Job.call/4", job: :fold} = start

      long = String.duplicate("ab", 200)
      assert Levenshtein.distance(long, "b" <> long, schedule: :yielding) == 1
      {start, _, stop} = one_span(events(), [:well_behaved, :job])

      assert %{job: :levenshtein, module: WellBehaved.Native, mode: :yielding} = start
      assert %{function: "WellBehaved.Levenshtein.distance/3", result: :ok} = stop

      assert Job.call(&SDKJobs.fold/4, [10], schedule: :external) ==
               Job.call(&SDKJobs.fold/4, [10], schedule: :normal)

      # the pool's own events (a server started, the call) come in between
      {pool, jobs} =
        Enum.split_with(events(), &match?([:well_behaved, :external | _], elem(&1, 0)))

      [external, _normal] = Enum.chunk_every(jobs, 2)
      {start, _, stop} = one_span(external, [:well_behaved, :job])
      assert %{job: :fold, module: SDKJobs, mode: :external, result: :ok} = stop
      assert %{mode_run: :external, auto: nil, rerun: false} = stop
      assert Map.drop(stop, [:result, :mode_run, :auto, :rerun, :answered_in_call]) == start
      {_, _, stop} = one_span(pool, [:well_behaved, :external, :call])
      assert %{pool: SDKJobs.External, request: :fold, result: :ok} = stop
    end

    test "errors: an {:error, _} answer, a threaded timeout, a raising job" do
      stand_in()
      assert Job.call(&SDKJobs.fold/4, ["no"], schedule: :normal) == {:error, :badarg}
      {_, _, stop} = one_span(events(), [:well_behaved, :job])
      assert %{result: :error, error: :badarg} = stop

      assert Job.call(&SDKJobs.liar/4, [0], schedule: :threaded, timeout: 50) ==
               {:error, :timeout}

      {_, end_m, stop} = one_span(events(), [:well_behaved, :job])
      assert %{mode: :threaded, job: :liar, result: :error, error: :timeout} = stop
      assert end_m.duration >= System.convert_time_unit(50, :millisecond, :native)

      for mode <- [:normal, :threaded] do
        assert_raise ArgumentError, fn -> Job.call(&SDKJobs.raising/4, [5], schedule: mode) end
        {start, _, exception} = one_span(events(), [:well_behaved, :job])
        assert %{job: :raising, mode: ^mode} = start
        assert %{kind: :error, reason: :badarg, stacktrace: [_ | _]} = exception
        refute Map.has_key?(exception, :result)
      end
    end
  end

  describe "search and cdist spans" do
    @names ["Jonathan", "Johanna", "Jon", "Joanne", "Nathan"]

    test "Levenshtein: one span per call, with its candidates and hits" do
      stand_in()
      assert [_, _] = Levenshtein.nearest("Johnathan", @names, limit: 2)
      {start, m, stop} = one_span(events(), [:well_behaved, :search])

      assert start == %{
               function: "WellBehaved.Levenshtein.nearest/3",
               candidates: 5,
               limit: 2,
               index: false,
               nodes: [node()],
               mode: :auto,
               telemetry_span_context: start.telemetry_span_context
             }

      assert m.hits == 2 and stop.result == :ok

      index = Levenshtein.Index.new(@names)
      events()

      assert Levenshtein.distances("Jon", index, schedule: :threaded, as: :binary) |> byte_size() ==
               20

      {start, m, _} = one_span(events(), [:well_behaved, :search])
      assert %{candidates: 5, limit: nil, index: true, mode: :threaded} = start
      assert m.hits == 5
    end

    test "Fuzzy: extract and extract_one" do
      stand_in()
      hits = Fuzzy.extract("Johnathan", @names, scorer: :ratio, score_cutoff: 0.6, limit: :all)
      {start, m, _} = one_span(events(), [:well_behaved, :search])
      assert %{function: "WellBehaved.Fuzzy.extract/3", limit: :all, candidates: 5} = start
      assert m.hits == length(hits) and hits != []

      assert Fuzzy.extract_one("zzz", %{a: "Jon"}, scorer: :ratio, score_cutoff: 0.99) == nil
      {start, m, stop} = one_span(events(), [:well_behaved, :search])
      assert %{function: "WellBehaved.Fuzzy.extract_one/3", limit: 1, candidates: 1} = start
      assert m.hits == 0 and stop.result == :ok
    end

    test "cdist: rows, cols and cells, and a job span per row" do
      stand_in()
      queries = ["kitten", "mitt"]
      matrix = Fuzzy.cdist(queries, @names, scorer: :levenshtein, workers: 2)
      assert length(matrix) == 2
      all = events()
      {start, m, stop} = one_span(all, [:well_behaved, :cdist])
      assert %{rows: 2, cols: 5, workers: 2, scorer: :levenshtein, mode: :auto} = start
      assert m.cells == 10 and stop.result == :ok

      rows = for {[:well_behaved, :job, :start], _, %{job: :fuzzy_cdist_row}} <- all, do: 1
      assert length(rows) == 2
    end

    test "nothing with events off" do
      stand_in(:never)
      Levenshtein.nearest("Johnathan", @names)
      Fuzzy.extract("Johnathan", @names)
      Fuzzy.cdist(["a"], @names)
      assert events() == []
    end
  end

  defp count_checks(n) do
    receive do
      {:trace, _, :call, {WellBehaved.Telemetry.Gate, :on?, []}} -> count_checks(n + 1)
    after
      0 -> n
    end
  end
end
