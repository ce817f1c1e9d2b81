/*
 * WellBehaved scheduling runtime: the SDK a NIF author includes. It runs
 * resumable native jobs in the mode each caller picks, so the work is
 * written once and every way of keeping the VM's schedulers responsive
 * comes with it. Usable from C11 and from C++.
 *
 * A job type describes the work: how to predict its size, set up its state
 * from the call's arguments, advance it by a bounded number of units, turn
 * the finished state into a term and release it. The runtime owns time
 * slicing, rescheduling, dirty hops, the thread pool, cancellation of jobs
 * whose caller died, and the accounting of live jobs and their memory.
 *
 * A job NIF registered with wb_run takes the job type's arguments followed
 * by three more: the mode atom (normal | dirty_cpu | yielding |
 * yielding_dirty | threaded | auto), the flags, and a reference that tags
 * the reply in threaded mode. The flags are `true` to force one unit per
 * slice (a test mode that exercises every resume path), `false`, or an
 * integer: bit 0 that tiny-slices flag, bit 1 the report. It returns the
 * result term, or `{error, Reason}` when decode or init rejects the
 * arguments. With the report bit a result (never an error or a raise)
 * comes back as `{'$wb_report', Result, Info}`, Info #{mode_run, reason
 * (below_normal_max | below_yielding_max | above_yielding_max, nil for a
 * mode asked), predicted_units (nil for a mode asked), ps_per_unit,
 * slices, rerun, answered_in_call, bytes, normal_max_ns, yielding_max_ns
 * (infinity when none)}. The mode `explain` (the reference unused) runs
 * nothing: it decodes the arguments and answers what :auto would do,
 * #{mode, reason, predicted_units, setup_units, ps_per_unit, predicted_ns,
 * normal_max_ns, yielding_max_ns, cost_measured, setup_on_dirty}, or
 * `{error, Reason}`. In threaded mode it
 * returns the job (a resource) and the pool sends the caller `{Ref, done}`
 * or `{Ref, {error, Reason}}`; the caller then calls the same NIF with the
 * mode `collect` and the job in the reference's place for the result (made
 * in its own process), or with `cancel` (answering `cancelled`, or `done`
 * when the job's message is already on its way). A short job that a pool
 * thread finished while the call waited for it answers in that call
 * instead, `{Ref, Result}` or `{error, Reason}`, and sends nothing. A
 * threaded job whose
 * caller dies is cancelled. On the Elixir side, WellBehaved.Job.call/4 adds
 * those arguments and does all of this.
 *
 * Every NIF library compiled with the runtime's sources has a runtime of its
 * own: its settings, thread pool, counters and learned costs.
 *
 * Versions: the SDK follows semantic versioning, with the library's
 * version (mix.exs). WB_SDK_VERSION is one integer, major * 1000000 +
 * minor * 1000 + patch (0.2.0 is 2000), for `#if WB_SDK_VERSION >= ...`;
 * WB_SDK_VERSION_STRING is "major.minor.patch". Code written against an
 * earlier 0.x header keeps compiling: wb_runtime_load also takes the two
 * arguments of 0.1 (see below). CHANGELOG.md lists every change.
 */
#ifndef WB_RUNTIME_H
#define WB_RUNTIME_H

#define WB_SDK_VERSION_MAJOR  0
#define WB_SDK_VERSION_MINOR  2
#define WB_SDK_VERSION_PATCH  0
#define WB_SDK_VERSION_STRING "0.2.0"
#define WB_SDK_VERSION                                                                             \
    (WB_SDK_VERSION_MAJOR * 1000000 + WB_SDK_VERSION_MINOR * 1000 + WB_SDK_VERSION_PATCH)

#include <erl_nif.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WB_MAX_JOB_ARGS  8
#define WB_MAX_ARGS_SIZE 256 /* bytes of a job type's decoded arguments */

/*
 * The life of a job: every NIF call that works on it first decodes the
 * call's argument terms into a small struct (on the C stack, valid only
 * during that call). The first call predicts the work from it and sets the
 * state up; every later call binds the state to the freshly decoded
 * arguments again (a type without bind skips both); then the runtime
 * steps the state. The job's argument
 * terms travel with every rescheduled call, so the binaries they name stay
 * alive for the whole job, and no pointer into them outlives its call.
 *
 * The state is memory the runtime owns (state_size bytes, 8-byte aligned,
 * zeroed before init); what init allocates beyond it, the state owns and
 * destroy frees. destroy runs exactly once for every successful init: when
 * the job finishes, or when its caller died or the library is unloaded
 * before that. A job runs on one thread at a time, but not always the same
 * one: a normal or dirty scheduler, or a pool thread in threaded mode,
 * where decode and init get an environment of no process. result always
 * runs in the caller's process (in threaded mode once the pool thread has
 * finished the steps, after decode and bind on the caller's arguments):
 * it may raise (enif_make_badarg, enif_raise_exception), in every mode,
 * returning what the raise returned, as erl_nif asks of a NIF.
 *
 * Required: name, decode, predict, init, step, and result or take_result.
 * Optional (NULL): setup, bind, memory, destroy. wb_runtime_load refuses a
 * type that misses a required one: the module's load then fails with
 * {error, {load_failed, Reason}}, Reason naming the type and the callback.
 *
 * From C++, fill the type field by field in a value-initialised struct
 * (designated initializers are C++20, and -Wextra warns about every
 * member they leave out):
 *
 *     static wb_job_type make_type() {
 *         wb_job_type t{};
 *         t.name = "crc32_chunks";
 *         ...
 *         return t;
 *     }
 *     static wb_job_type crc_job = make_type();
 */
typedef struct wb_job_type {
    const char *name; /* shown by the VM for rescheduled calls; a stats key */
    int argc;         /* the job's own arguments, before mode/tiny/ref */
    size_t args_size; /* <= WB_MAX_ARGS_SIZE */
    size_t state_size;
    /* Reads the argument terms into *args; false if they are unusable: the
     * call then answers {error, badarg}, or {error, Reason} when decode
     * returns wb_reject(Reason) (a term made in env). Runs at the first
     * call of the job, at every later one when the type has a bind, and
     * once more on the pool thread of a threaded job. */
    bool (*decode)(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args);
    /* Units of work the job will take. Must be cheap: it runs on a normal
     * scheduler, before :auto chooses the mode (and before a threaded job
     * starts, to decide whether to watch its caller). */
    uint64_t (*predict)(const void *args);
    /* Units of work that init itself takes (NULL: negligible). Time-sliced
     * jobs with a large set-up run init on a dirty scheduler first. */
    uint64_t (*setup)(const void *args);
    /* Sets up the state (zeroed), and binds it to args for this call as
     * bind would: bind runs only on the calls after the first. On failure
     * leaves nothing allocated and stores the reason term (made in env) in
     * *reason: the call answers {error, Reason}. */
    bool (*init)(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason);
    /* Points the state at this call's decoded arguments (NULL: the state
     * keeps no pointer into them). */
    void (*bind)(const void *args, void *state);
    /* Advances by about `budget` units (UINT64_MAX: to the end), adds the
     * units done to *used, returns true when finished. No erl_nif calls: it
     * may run on a thread of the pool. No effect outside the state: under
     * :auto a job that needs more than twice the units it predicted is
     * dropped and run again, sliced, from init. A unit should cost about the same
     * all through the job (a few ns to a few us): the runtime sizes the
     * budget from the time the last units took. A job whose units change
     * cost between phases weighs them (count a costly unit as several), or
     * calls wb_slice_spent() between units and returns early. */
    bool (*step)(void *state, uint64_t budget, uint64_t *used);
    /* The finished job's result, made in env. It runs in one go, not
     * sliced, in the caller's process: keep it to the cost of making the
     * term (a binary the state already holds costs nothing, see
     * take_result; a large output is written in the steps into a
     * wb_output, wb_output.h, and handed over by take_result). destroy
     * runs after it. */
    ERL_NIF_TERM (*result)(ErlNifEnv *env, const void *state);
    /* Heap bytes owned by the state, for runtime_stats, read once after
     * init (NULL: none); counted at most 2^47 per job. */
    size_t (*memory)(const void *state);
    /* Frees what the state owns (NULL: nothing). Not the state itself. */
    void (*destroy)(void *state);
    /* A typical cost of one unit in picoseconds, the start of the cost the
     * runtime learns (0: 1000). Until the runtime has measured the cost on
     * this machine, it trusts no seed: :auto's :normal runs step from one
     * unit and stop by the clock, and the first steps of a sliced job
     * start at one unit, so a seed wrong by any factor costs at most about
     * two slices on the first calls. */
    uint64_t ps_per_unit;
    /* Instead of result (a type sets exactly one of the two): the result,
     * made in env from a state it may take from, so that what the state
     * owns becomes the term without a copy. An ErlNifBinary the state
     * allocated is handed over by enif_make_binary; a resource by
     * enif_make_resource then enif_release_resource. destroy still runs
     * after it: leave the state as destroy expects (a flag or NULL for
     * what was taken). */
    ERL_NIF_TERM (*take_result)(ErlNifEnv *env, void *state);
} wb_job_type;

/* Calls for the NIF library's load and unload callbacks. load registers
 * the library's job types (a NULL-terminated list, at most 32), checks
 * them, and returns 0, or non-zero to refuse the load: the load callback
 * returns that value as it is, and the stub module (use WellBehaved.NIF,
 * or WellBehaved.SDK.load_result/1 in a hand-written one) turns a refused
 * type into {error, {load_failed, Reason}}.
 * `load_info` is the load callback's own argument: the stub module passes
 * WellBehaved.SDK.load_info() to erlang:load_nif/2, a map holding the
 * slice derived from how long this VM's Erlang code runs per turn; any
 * other term leaves the compiled default slice (30 us). */
int wb_runtime_load(ErlNifEnv *env, wb_job_type *const types[], ERL_NIF_TERM load_info);

/* The load of SDK 0.1, without load_info: the compiled default slice. */
static inline int wb_runtime_load_no_info(ErlNifEnv *env, wb_job_type *const types[]) {
    return wb_runtime_load(env, types, enif_make_atom(env, "undefined"));
}

/* wb_runtime_load(env, types, load_info), or wb_runtime_load(env, types)
 * as in 0.1: a call with two arguments runs wb_runtime_load_no_info. The
 * function itself stays: (wb_runtime_load) or &wb_runtime_load name it. */
// clang-format off
#define WB_RUNTIME_LOAD_PICK_(env, types, info, fn, ...) fn
#define wb_runtime_load(...)                                                                       \
    WB_RUNTIME_LOAD_PICK_(__VA_ARGS__, wb_runtime_load, wb_runtime_load_no_info,                   \
                          wb_runtime_load_takes_2_or_3_arguments, )(__VA_ARGS__)
// clang-format on

/* For the upgrade callback (a new version of the stub module loading the
 * library while the old one has it): as load, with the same types. */
int wb_runtime_upgrade(ErlNifEnv *env, wb_job_type *const types[], ERL_NIF_TERM load_info);
void wb_runtime_unload(void);

/* Body of a job NIF (see the top of this file for its arguments); the type
 * must be one registered by wb_runtime_load. */
ERL_NIF_TERM wb_run(ErlNifEnv *env, const wb_job_type *type, int argc, const ERL_NIF_TERM argv[]);

/* Defines `static ERL_NIF_TERM fn(env, argc, argv)`: the job NIF of the
 * wb_job_type `type`, for the library's ErlNifFunc table (it registers with
 * the job's argc + 3 arguments, and no dirty flag). Built with
 * WB_EXTERNAL_SERVER, it also tells the server that requests for the NIF
 * `fn` run `type` (schedule: :external names the job by its NIF). */
#ifdef WB_EXTERNAL_SERVER
void wb_external_alias(const char *nif_name, const wb_job_type *type);
#define WB_JOB_NIF(fn, type)                                                                       \
    static ERL_NIF_TERM fn(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {                  \
        return wb_run(env, &(type), argc, argv);                                                   \
    }                                                                                              \
    __attribute__((constructor)) static void fn##_wb_alias_(void) {                                \
        (void)fn;                                                                                  \
        wb_external_alias(#fn, &(type));                                                           \
    }
#else
#define WB_JOB_NIF(fn, type)                                                                       \
    static ERL_NIF_TERM fn(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {                  \
        return wb_run(env, &(type), argc, argv);                                                   \
    }
#endif

/* The ErlNifFunc entries of runtime_stats/0 and runtime_configure/4. */
// clang-format off
#define WB_RUNTIME_NIFS                                                                            \
    {"runtime_stats", 0, wb_runtime_stats, 0},                                                     \
    {"runtime_configure", 4, wb_runtime_configure, 0}
// clang-format on

/* NIFs a library registers to let WellBehaved.Runtime read and set its
 * runtime: runtime_stats/0 and runtime_configure/4.
 *
 * runtime_stats() -> #{live_jobs, live_bytes, resident_bytes, pool_threads, queued,
 * normal_max_us, yielding_max_us, slice_us, slice_ns, dirty_slice_us,
 * slice_source => erlang_turn | default | configured, erlang_turn_ns (nil
 * when load_info had none), calibrated_slice_ns, released_later, limits =>
 * #{modes, max_job_args, slice_us_min, slice_us_max},
 * ps_per_unit => #{JobName => Picoseconds},
 * cost_measured => #{JobName => true | false}, answered_in_call,
 * counters => Counters}
 *
 * Counters: counts since the library's first loaded instance (an upgrade
 * or reload while an instance lives shares them; a load after the last
 * unload starts at 0), each only ever growing, cheap enough to stay on
 * (every thread counts in memory of its own; the stats call sums them):
 *
 *   #{calls => #{auto, normal, dirty_cpu, yielding, yielding_dirty,
 *                threaded => N},          job NIF calls, by mode asked
 *     auto_chosen => #{Mode => N},        :auto's choices (the five modes)
 *     completed => #{Mode => N},          jobs that answered their result,
 *     failed => #{auto, Mode... => N},    an error (decode, init, enomem;
 *                                         auto: refused before choosing)
 *                                         or a raising result,
 *     cancelled => #{Mode => N},          or were cancelled (a timeout's
 *                                         cancel, a dead caller, a job
 *                                         dropped unfinished), by the mode
 *                                         that ran them: one of the three
 *                                         per job
 *     reruns => N,                        :auto's :normal runs that needed
 *                                         more than predicted and started
 *                                         again :yielding
 *     yields => N,                        slices that rescheduled their job
 *     dirty_hops => N,                    moves between normal and dirty
 *                                         schedulers
 *     requeues => N,                      :threaded quanta that queued
 *                                         their job again behind others
 *     caller_deaths => N,                 callers found dead by a running
 *                                         job (dirty check, monitor)
 *     answered_in_call => N}              as the key of that name
 *
 * At rest (no job running), for each Mode: calls[Mode] +
 * auto_chosen[Mode] (+ reruns for yielding) = completed[Mode] +
 * failed[Mode] + cancelled[Mode] (+ reruns for normal); and calls[auto] =
 * the sum of auto_chosen + failed[auto]. */
ERL_NIF_TERM wb_runtime_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* runtime_configure(NormalMaxMicros | slice, YieldingMaxMicros | infinity,
 * SliceMicros | calibrated, DirtySliceMicros) -> ok; each may be `keep`;
 * the slices in 1..100000 us; `slice` makes normal_max one slice (the
 * default), `calibrated` restores the slice load_info gave. With the load
 * info map as SliceMicros (the others ignored) it applies it as
 * wb_runtime_load does: WellBehaved.Runtime.calibrate/1. */
ERL_NIF_TERM wb_runtime_configure(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

/* Inside a step: true when the step's time is up (a :yielding slice, a
 * :yielding_dirty interval, the 50 us between checks of the other modes),
 * so a step whose units vary in cost can return before its budget is
 * used; true already when the work until the next call, as long as the
 * work since the last (or since the step began), would run further past
 * the end than now falls short of it, so a step asking at even intervals
 * ends within half an interval of its time. Never true in a :normal run.
 * In a server program (:external) a step has 1 ms, and this is true once
 * it is past, the step's exact end mattering to no scheduler there.
 * Each call reads the clock (20-50 ns): call it every microsecond of work
 * or so, not every few nanoseconds. */
bool wb_slice_spent(void);

/* The slice in force, in nanoseconds: for a NIF of the library's own that
 * does bounded work per call outside a job (and returns to the caller to
 * be called again). */
int64_t wb_slice_ns(void);

/* Memory the library holds outside jobs (in resources, say), added to
 * (delta > 0) or taken from (delta < 0) runtime_stats' resident_bytes. */
void wb_runtime_resident_bytes(int64_t delta);

/* Runs release(arg) on a thread of the runtime's own instead of the
 * calling scheduler, in the order asked, exactly once; at once when no such
 * thread can take it (out of memory, library unloading). For destroy
 * callbacks and resource destructors that free large memory: giving a
 * block back to the system costs ~0.1 ms per MiB, more than a slice from a
 * few hundred KiB. release must not touch the job's state (it is gone by
 * then): hand it the blocks themselves. Counted in runtime_stats'
 * released_later once done. */
void wb_release_later(void (*release)(void *arg), void *arg);

/* The same, on a thread of its own, for clean-ups that can block for long
 * (flushing and closing a file on a stalled disk or pipe): the memory that
 * wb_release_later gives back is not held up behind them. */
void wb_release_later_blocking(void (*release)(void *arg), void *arg);

/* release(block) for a block of `bytes`, off the scheduler from
 * WB_RELEASE_LATER_FROM on, at once below; NULL is ignored. Blocks of up
 * to WB_RELEASE_IDLE_MOST go to a thread at the system's lowest priority
 * (where it has one), so that handing them over never takes the calling
 * scheduler's CPU (1.5-3 us where a thread of normal priority took 12-24
 * us): for blocks freed often, a batch's matrix. Larger
 * ones go where wb_release_later's do. Counted in released_later too; not
 * ordered with wb_release_later's. */
#define WB_RELEASE_LATER_FROM (128 * 1024)
#define WB_RELEASE_IDLE_MOST  (16 * 1024 * 1024)
void wb_release_block_later(void (*release)(void *arg), void *block, size_t bytes);

/* free(block) (malloc'd): wb_release_block_later with free. */
void wb_free_later(void *block, size_t bytes);

/* A binary term of the `size` bytes at `block`, a block from malloc that
 * the term then owns, without a copy: for take_result. When the last term
 * referring to it is garbage, the block goes back as wb_free_later's do,
 * off the scheduler that collects it. Out of memory, it frees the block
 * and raises enomem. In a server program (:external) the block is sent
 * with the reply and freed after it. */
ERL_NIF_TERM wb_make_malloc_binary(ErlNifEnv *env, void *block, size_t size);

/* The main of a server program that runs these job types (a NULL-terminated
 * list, at most 32) for schedule: :external (WellBehaved.External): the job
 * types' sources linked with WellBehaved.SDK.external_sources/0 and libei
 * instead of the runtime. A request names its job by the NIF's name
 * (WB_JOB_NIF's fn, in a WB_EXTERNAL_SERVER build) or else by the type's
 * name. Each job runs in one go on its connection's
 * thread, its arguments decoded from the request; erl_nif there is the
 * subset a job type needs (terms: atoms, integers, floats, binaries,
 * tuples, lists; binaries of the job's own; enif_alloc and enif_free;
 * enif_alloc_env and enif_free_env, for terms made once at a library's
 * load), and a call outside it fails to link. A job may crash its server, never the VM.
 * Returns the program's exit status. */
int wb_external_main(int argc, char **argv, wb_job_type *const types[]);

/* The load, upgrade and unload callbacks of a library whose only state is
 * the runtime's, and its ERL_NIF_INIT, in one line:
 *
 *     static wb_job_type *const types[] = {&adler32_job, NULL};
 *     WB_NIF_INIT(Elixir.Checksum.Native, nif_funcs, types)
 *
 * (the Elixir side: `use WellBehaved.NIF`).
 *
 * A library with more to load (resource types, atoms, locks) names its own
 * hooks, either of them NULL:
 *
 *     static int my_load(ErlNifEnv *env, ERL_NIF_TERM load_info);
 *     static void my_unload(ErlNifEnv *env);
 *     WB_NIF_INIT_WITH(Elixir.MyApp.Native, nif_funcs, types, my_load, my_unload)
 *
 * The load hook runs before the runtime's load, and a non-zero answer
 * refuses the load (the load callback returns it as it is); the unload hook
 * runs after the runtime's unload, when the runtime's threads, which may
 * run the library's release functions, have stopped, and also when the
 * runtime refuses the load after the hook loaded. The library's state thus
 * outlives the runtime's. A library with a load hook refuses an upgrade
 * (a new version of its module loading it while the old one has it: both
 * would share the hook's state); it loads again once the old version is
 * purged. Without one, an upgrade runs wb_runtime_upgrade.
 *
 * The same source compiled with WB_EXTERNAL_SERVER defined is the server
 * program of its job types instead: WB_NIF_INIT and WB_NIF_INIT_WITH define
 * main, calling wb_external_main with TYPES. The hooks do not run there;
 * FUNCS and the hooks are only named (in sizeof), but a build without
 * optimisation still links what they refer to: keep NIFs and hooks the
 * server lacks under #ifndef WB_EXTERNAL_SERVER, with NULL hooks and a
 * table of the job NIFs in the server build (lab/c_src/nif/lab_nif.c). */
#ifdef WB_EXTERNAL_SERVER
#define WB_NIF_INIT_WITH(MODULE, FUNCS, TYPES, LOAD_HOOK, UNLOAD_HOOK)                             \
    int main(int argc, char **argv) {                                                              \
        (void)sizeof(FUNCS);                                                                       \
        (void)sizeof((int (*)(ErlNifEnv *, ERL_NIF_TERM))(LOAD_HOOK));                             \
        (void)sizeof((void (*)(ErlNifEnv *))(UNLOAD_HOOK));                                        \
        return wb_external_main(argc, argv, TYPES);                                                \
    }
#else
#define WB_NIF_INIT_WITH(MODULE, FUNCS, TYPES, LOAD_HOOK, UNLOAD_HOOK)                             \
    static int (*const wb_nif_load_hook_)(ErlNifEnv *, ERL_NIF_TERM) = LOAD_HOOK;                  \
    static void (*const wb_nif_unload_hook_)(ErlNifEnv *) = UNLOAD_HOOK;                           \
    static int wb_nif_load_(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {                      \
        (void)priv;                                                                                \
        if (wb_nif_load_hook_) {                                                                   \
            int refused = wb_nif_load_hook_(env, info);                                            \
            if (refused) return refused;                                                           \
        }                                                                                          \
        int refused = wb_runtime_load(env, TYPES, info);                                           \
        if (refused && wb_nif_unload_hook_) wb_nif_unload_hook_(env);                              \
        return refused;                                                                            \
    }                                                                                              \
    static int wb_nif_upgrade_(ErlNifEnv *env, void **priv, void **old_priv, ERL_NIF_TERM info) {  \
        (void)priv;                                                                                \
        (void)old_priv;                                                                            \
        if (wb_nif_load_hook_) return 1;                                                           \
        return wb_runtime_upgrade(env, TYPES, info);                                               \
    }                                                                                              \
    static void wb_nif_unload_(ErlNifEnv *env, void *priv) {                                       \
        (void)priv;                                                                                \
        wb_runtime_unload();                                                                       \
        if (wb_nif_unload_hook_) wb_nif_unload_hook_(env);                                         \
    }                                                                                              \
    ERL_NIF_INIT(MODULE, FUNCS, wb_nif_load_, NULL, wb_nif_upgrade_, wb_nif_unload_)
#endif

#define WB_NIF_INIT(MODULE, FUNCS, TYPES) WB_NIF_INIT_WITH(MODULE, FUNCS, TYPES, NULL, NULL)

/* For decode: returns false, and the call answers {error, Reason} instead
 * of {error, badarg}. Reason is a term made in decode's env:
 *
 *     if (chunk == 0) return wb_reject(wb_atom(env, "zero_chunk"));
 */
bool wb_reject(ERL_NIF_TERM reason);

/* An atom by name (a lookup per call: make hot ones once, at load). */
ERL_NIF_TERM wb_atom(ErlNifEnv *env, const char *name);
/* {error, Reason} */
ERL_NIF_TERM wb_error(ErlNifEnv *env, ERL_NIF_TERM reason);

#ifdef __cplusplus
}
#endif

#endif
