/*
 * Elixir.WellBehaved.Probe.Tracer: an erl_tracer module that logs the
 * :running events of the processes it traces into a turn log
 * (turn_log.c). The VM calls its enabled/3 and trace/5 on the scheduler
 * thread of the traced process, as the process is scheduled in or out, so
 * each event is stamped with that thread's monotonic and CPU clocks: a
 * turn's wall time, and the CPU time its thread actually had (what the OS
 * took away is the difference).
 */
#define _POSIX_C_SOURCE 199309L
#include "thread_cpu.h"
#include "turn_log.h"

#include <erl_nif.h>
#include <string.h>
#include <time.h>

typedef struct {
    wb_turn_log *log;
    /* every `in` and every `out` event seen, logged or lost: once the traced
     * processes are all waiting, equal counts say that each one's last turn
     * has ended in the log (WellBehaved.Probe waits for that before it
     * stops tracing, so that a call's last turn is whole) */
    atomic_uint_fast64_t ins, outs;
} tracer;

static ErlNifResourceType *tracer_type;
static ERL_NIF_TERM atom_ok, atom_error, atom_enomem, atom_trace, atom_discard, atom_remove,
    atom_in, atom_out, atom_in_exiting, atom_out_exiting, atom_out_exited, atom_trace_status;

static int64_t clock_of(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void tracer_dtor(ErlNifEnv *env, void *obj) {
    (void)env;
    wb_turn_log_free(((tracer *)obj)->log);
}

static bool get_tracer(ErlNifEnv *env, ERL_NIF_TERM term, tracer **t) {
    return enif_get_resource(env, term, tracer_type, (void **)t) && (*t)->log;
}

/* new(Capacity) -> {ok, Tracer} | {error, enomem} */
static ERL_NIF_TERM tracer_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifUInt64 capacity;
    if (!enif_get_uint64(env, argv[0], &capacity) || capacity == 0 || capacity > WB_TURN_LOG_MAX)
        return enif_make_badarg(env);
    /* the resource is small; the log, sized by the caller, can fail */
    tracer *t = enif_alloc_resource(tracer_type, sizeof *t);
    if (!t) return enif_make_tuple2(env, atom_error, atom_enomem);
    atomic_init(&t->ins, 0);
    atomic_init(&t->outs, 0);
    t->log = wb_turn_log_new((size_t)capacity);
    ERL_NIF_TERM out = t->log ? enif_make_tuple2(env, atom_ok, enif_make_resource(env, t))
                              : enif_make_tuple2(env, atom_error, atom_enomem);
    enif_release_resource(t);
    return out;
}

static bool running_tag(ERL_NIF_TERM tag) {
    return enif_is_identical(tag, atom_in) || enif_is_identical(tag, atom_out) ||
           enif_is_identical(tag, atom_in_exiting) || enif_is_identical(tag, atom_out_exiting) ||
           enif_is_identical(tag, atom_out_exited);
}

/* enabled(TraceTag, Tracer, Tracee) -> trace | discard | remove */
static ERL_NIF_TERM tracer_enabled(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    tracer *t;
    if (!get_tracer(env, argv[1], &t) || atomic_load(&t->log->closed)) return atom_remove;
    if (enif_is_identical(argv[0], atom_trace_status)) return atom_trace;
    return running_tag(argv[0]) ? atom_trace : atom_discard;
}

/* trace(TraceTag, Tracer, Tracee, TraceTerm, Opts) -> ok */
static ERL_NIF_TERM tracer_trace(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    tracer *t;
    ErlNifPid pid;
    if (!get_tracer(env, argv[1], &t) || !enif_get_local_pid(env, argv[2], &pid)) return atom_ok;
    bool in = enif_is_identical(argv[0], atom_in) || enif_is_identical(argv[0], atom_in_exiting);
    int64_t wall = clock_of(CLOCK_MONOTONIC), cpu = clock_of(CLOCK_THREAD_CPUTIME_ID);
    atomic_fetch_add_explicit(in ? &t->ins : &t->outs, 1, memory_order_relaxed);
    /* a local pid is an immediate term: its bits name the process */
    wb_turn_log_add(t->log, (uint64_t)pid.pid, in, (uint8_t)enif_thread_type(), wall, cpu);
    return atom_ok;
}

/* running(Tracer) -> N: how many more turns began than ended (events seen,
 * logged or not): 0 when every traced process that ran has been scheduled
 * out since. `outs` is read first: a count read later can only be higher,
 * so 0 is never read while a turn is open. */
static ERL_NIF_TERM tracer_running(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    tracer *t;
    if (!get_tracer(env, argv[0], &t)) return enif_make_badarg(env);
    uint64_t outs = atomic_load(&t->outs), ins = atomic_load(&t->ins);
    return enif_make_int64(env, (int64_t)(ins - outs));
}

/* close(Tracer) -> ok: no more events */
static ERL_NIF_TERM tracer_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    tracer *t;
    if (!get_tracer(env, argv[0], &t)) return enif_make_badarg(env);
    wb_turn_log_close(t->log, clock_of(CLOCK_MONOTONIC));
    return atom_ok;
}

static ERL_NIF_TERM thread_kind(ErlNifEnv *env, uint8_t thread) {
    switch (thread) {
    case ERL_NIF_THR_NORMAL_SCHEDULER:
        return enif_make_atom(env, "normal");
    case ERL_NIF_THR_DIRTY_CPU_SCHEDULER:
        return enif_make_atom(env, "dirty_cpu");
    case ERL_NIF_THR_DIRTY_IO_SCHEDULER:
        return enif_make_atom(env, "dirty_io");
    default:
        return enif_make_atom(env, "other");
    }
}

/* turns(Tracer) -> {[{Pid, WallNs, CpuNs | open, Thread}], Lost}, on a
 * dirty scheduler (a log can hold millions); the tracer must be closed. A
 * turn still running at the close is `open`, its wall time until then. */
static ERL_NIF_TERM tracer_turns(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    tracer *t;
    if (!get_tracer(env, argv[0], &t) || !atomic_load(&t->log->closed))
        return enif_make_badarg(env);
    size_t room = t->log->capacity;
    wb_turn *turns = enif_alloc(room * sizeof *turns);
    if (!turns) return enif_make_tuple2(env, atom_error, atom_enomem);
    long n = wb_turn_log_turns(t->log, turns);
    if (n < 0) {
        enif_free(turns);
        return enif_make_tuple2(env, atom_error, atom_enomem);
    }
    ERL_NIF_TERM kinds[4], list = enif_make_list(env, 0);
    for (uint8_t k = 0; k < 4; k++)
        kinds[k] = thread_kind(env, k);
    for (long i = n - 1; i >= 0; i--) {
        ErlNifPid pid = {.pid = (ERL_NIF_TERM)turns[i].key};
        ERL_NIF_TERM turn = enif_make_tuple4(
            env, enif_make_pid(env, &pid), enif_make_int64(env, turns[i].wall_ns),
            turns[i].open ? enif_make_atom(env, "open") : enif_make_int64(env, turns[i].cpu_ns),
            turns[i].thread < 4 ? kinds[turns[i].thread] : kinds[0]);
        list = enif_make_list_cell(env, turn, list);
    }
    enif_free(turns);
    return enif_make_tuple2(env, list, enif_make_uint64(env, wb_turn_log_lost(t->log)));
}

/* other_threads_cpu_ns() -> Ns | undefined: the CPU time of this VM's
 * threads other than its normal schedulers (no /proc: undefined). On a
 * dirty IO scheduler: it reads a few dozen files. */
static ERL_NIF_TERM tracer_other_threads_cpu_ns(ErlNifEnv *env, int argc,
                                                const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    int64_t ns = wb_other_threads_cpu_ns("/proc/self/task");
    return ns < 0 ? enif_make_atom(env, "undefined") : enif_make_int64(env, ns);
}

static ErlNifFunc nif_funcs[] = {
    {"new", 1, tracer_new, 0},
    {"enabled", 3, tracer_enabled, 0},
    {"trace", 5, tracer_trace, 0},
    {"close", 1, tracer_close, 0},
    {"running", 1, tracer_running, 0},
    {"turns", 1, tracer_turns, ERL_NIF_DIRTY_JOB_CPU_BOUND},
    {"other_threads_cpu_ns", 0, tracer_other_threads_cpu_ns, ERL_NIF_DIRTY_JOB_IO_BOUND},
};

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
    (void)priv;
    (void)info;
    tracer_type =
        enif_open_resource_type(env, NULL, "wb_turn_tracer", tracer_dtor, ERL_NIF_RT_CREATE, NULL);
    if (!tracer_type) return 1;
    atom_ok = enif_make_atom(env, "ok");
    atom_error = enif_make_atom(env, "error");
    atom_enomem = enif_make_atom(env, "enomem");
    atom_trace = enif_make_atom(env, "trace");
    atom_discard = enif_make_atom(env, "discard");
    atom_remove = enif_make_atom(env, "remove");
    atom_in = enif_make_atom(env, "in");
    atom_out = enif_make_atom(env, "out");
    atom_in_exiting = enif_make_atom(env, "in_exiting");
    atom_out_exiting = enif_make_atom(env, "out_exiting");
    atom_out_exited = enif_make_atom(env, "out_exited");
    atom_trace_status = enif_make_atom(env, "trace_status");
    return 0;
}

ERL_NIF_INIT(Elixir.WellBehaved.Probe.Tracer, nif_funcs, load, NULL, NULL, NULL)
