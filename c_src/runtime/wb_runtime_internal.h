/* What the runtime's files (c_src/runtime/wb_*.c) share: the tuning, the
 * job's block, a registered type's learned cost, and what one file calls
 * or reads in another. Private to the runtime, not part of the SDK: every
 * symbol declared here is hidden from the library's exports. Each file
 * includes it first (it sets the feature macros). */
#ifndef WB_RUNTIME_INTERNAL_H
#define WB_RUNTIME_INTERNAL_H

#define _POSIX_C_SOURCE 199309L
#ifdef __linux__
#define _GNU_SOURCE /* SCHED_IDLE (wb_release.c) */
#endif
#include "wb_job_check.h"
#include "wb_runtime.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- tuning ------------------------------------------------------------------ */

/* A yielding job's slice: the time after which it reports a whole
 * timeslice (CONTEXT_REDS reductions) to the VM and gives its scheduler
 * back. The library passes, in load_info, a slice derived from how long
 * this VM's Erlang code takes for those reductions (measured when the
 * library loads: WellBehaved.Runtime.Calibration); this default serves a
 * library loaded without one. Settable: runtime_configure. */
#define SLICE_NS_DEFAULT       30000
#define DIRTY_SLICE_NS_DEFAULT 5000000 /* yielding_dirty: reschedule interval */
#define SLICE_NS_MIN           1000
#define SLICE_NS_MAX           100000000
#define CHECK_NS               50000 /* dirty and threaded: a clock read every 50 us */
#define FIRST_SLICE_STEPS      4     /* a yielding job's first slice is checked in quarters */
#define MAX_UNITS_PER_CHK      (UINT64_C(1) << 40)
#define MEASURE_MIN_NS         20000 /* runs shorter than this are too noisy to learn from */
#define INLINE_STATE_MAX       4096  /* states up to this size live on the C stack */
#define LEARN_MIN_UNITS        4096  /* auto times every normal run from this size */
#define SAMPLE_RUNS            64    /* and one in this many smaller ones */
#define POOL_SPIN_NS           20000 /* a pool worker looks for more work this long */
#define AWAIT_SLICE_SHARE      4     /* a short threaded job's caller waits a quarter slice */
/* A threaded job that has run this long gives its pool thread to the next
 * queued job and queues again behind it (round robin): a short call waits
 * at most about one quantum for each job queued ahead of it, never for a
 * long job to finish. */
#define POOL_QUANTUM_NS 2000000
/* A set-up (init) predicted longer than this runs on a dirty scheduler
 * before a :yielding job's slices. Init is not sliced, so a long one holds
 * a normal scheduler; but a dirty hop costs 10-30 us and wakes a dirty
 * scheduler that competes with the normal ones for the CPU, which costs
 * more than a set-up of a few slices. */
#define SETUP_DIRTY_NS 100000

typedef enum {
    MODE_NORMAL,
    MODE_DIRTY_CPU,
    MODE_YIELDING,
    MODE_YIELDING_DIRTY,
    MODE_THREADED
} mode;

#define JOB_MAGIC UINT64_C(0x77626a6f62000001) /* a wb_job among resources of a reused type */

/* The job types registered at load, with the cost per unit the runtime
 * learns for each (seeded from the type's ps_per_unit), and how many of
 * :auto's timed :normal runs in a row took far longer than predicted.
 * Until the cost has been measured on this machine (`measured`), the seed
 * may be wrong by any factor: work is then bounded by the clock, not by
 * units at that cost, and :auto's :normal runs add their units and time
 * to probe_units and probe_ns until there is enough time to measure. */
typedef struct {
    const wb_job_type *type;
    _Atomic uint64_t ps_per_unit;
    _Atomic unsigned overruns;
    _Atomic bool measured;
    _Atomic uint64_t probe_units;
    _Atomic int64_t probe_ns;
} registered_type;

/* auto: normal below one slice of predicted work, else yielding; beyond
 * yielding_max_ns (none by default: NO_LIMIT) yielding_dirty */
#define NO_LIMIT UINT64_MAX

/* Works on any thread (enif_monotonic_time only on scheduler threads). */
static inline int64_t clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- jobs ---------------------------------------------------------------------- */

/* A threaded job's life. Only the pool thread moves RUNNING to DONE (and
 * only then sends its one message); the caller's cancel or death moves
 * RUNNING to CANCELLED; collecting the result moves DONE to COLLECTED.
 * A short job's caller may first wait for it inside the call that queued
 * it (AWAITED): the pool thread then moves AWAITED to ANSWERED and sends
 * nothing, or the caller gives up waiting and moves AWAITED to RUNNING.
 * Whichever compare-and-swap wins decides. After DONE or ANSWERED the pool
 * thread touches only the answer's env, the monitor and its own
 * reference. */
typedef enum {
    THREADED_RUNNING,
    THREADED_DONE,
    THREADED_CANCELLED,
    THREADED_COLLECTED,
    THREADED_AWAITED,
    THREADED_ANSWERED
} threaded_phase;

/* Why :auto chose its mode (explain, and a job's report). */
typedef enum { REASON_NONE, BELOW_NORMAL_MAX, BELOW_YIELDING_MAX, ABOVE_YIELDING_MAX } auto_reason;

/* What a call asked for its job, and what :auto decided. */
typedef struct {
    bool tiny;
    bool report;  /* the result comes back with the job's report */
    bool by_auto; /* :auto chose the mode */
    bool rerun;   /* the sliced restart of a :normal run that outran */
    auto_reason reason;
    uint64_t units; /* :auto: predicted and set-up units */
    uint64_t ps;    /* :auto: the cost per unit it chose with */
} job_note;

typedef struct wb_job {
    uint64_t magic;
    const wb_job_type *type;
    registered_type *learned; /* the type's learned cost per unit */
    mode mode;
    bool tiny;
    bool initialized;
    bool first_slice;    /* yielding: the caller may be partway through its reductions */
    bool chosen_by_auto; /* sliced because :auto predicted it long */
    bool on_stack;       /* a normal job living in one call's frame */
    /* for the report (wb_rt_report) */
    bool report, rerun, answered_in_call;
    auto_reason auto_reason;
    uint64_t predicted_units, ps_at_choice;
    uint64_t slices;    /* calls and pool quanta that ran its steps */
    size_t state_bytes; /* the state and what it owns, after init */
    size_t accounted;   /* bytes added to the live counters, 0 if not counted */
    uint64_t units_per_check;
    int64_t check_ns;      /* aim: a clock read every check_ns of work */
    int64_t slice_ns;      /* yielding: a timeslice; yielding_dirty: reschedule interval */
    int64_t unreported_ns; /* yielding: time not yet passed to enif_consume_timeslice */
    uint64_t learn_units;  /* work done since the cost per unit was last learned, */
    int64_t learn_ns;      /* and its time */
    uint64_t work_units;   /* all the work timed in this job, */
    int64_t work_ns;       /* and its time */
    /* threaded mode: the job's own copies of its arguments and reply tag */
    ErlNifEnv *env;
    ErlNifEnv *reply_env; /* the one message's: a send clears its env */
    ERL_NIF_TERM args[WB_MAX_JOB_ARGS];
    ERL_NIF_TERM ref;
    ERL_NIF_TERM answer; /* in reply_env: `done` or an error, once answered */
    ErlNifPid caller;
    ErlNifMonitor monitor;
    bool monitored;
    _Atomic int phase; /* a threaded_phase */
    /* the job's one terminal count is made (completed, failed or
     * cancelled): its destructor counts an unfinished job as cancelled */
    atomic_bool terminal;
    struct wb_job *next;
    uint64_t state[]; /* job states need 8-byte alignment, as resources give */
} wb_job;

/* ---- counters ----------------------------------------------------------------- */

/* Monotonic counts since the library loaded (runtime_stats' `counters`).
 * Each thread that counts owns a block of them, claimed at its first
 * count: the owner adds with a relaxed load and store (no locked
 * instruction, no cache line shared with another writer), and
 * runtime_stats sums the blocks with relaxed loads. By-mode counts are
 * indexed by `mode`; COUNT_AUTO is :auto's own key (its calls, and its
 * calls refused by decode before a mode was chosen). */
#define COUNT_MODES 5
#define COUNT_AUTO  COUNT_MODES
enum {
    CTR_CALLS = 0,                                 /* by mode asked, and auto */
    CTR_AUTO_CHOSEN = CTR_CALLS + COUNT_MODES + 1, /* by mode */
    CTR_COMPLETED = CTR_AUTO_CHOSEN + COUNT_MODES, /* by mode run */
    CTR_FAILED = CTR_COMPLETED + COUNT_MODES,      /* by mode run, and auto */
    CTR_CANCELLED = CTR_FAILED + COUNT_MODES + 1,  /* by mode run */
    CTR_RERUNS = CTR_CANCELLED + COUNT_MODES,
    CTR_YIELDS,
    CTR_DIRTY_HOPS,
    CTR_REQUEUES,
    CTR_CALLER_DEATHS,
    CTR_ANSWERED_IN_CALL,
    CTR_COUNT
};

#if defined(__GNUC__)
#define WB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define WB_UNLIKELY(x) (x)
#endif

/* A thread's counters, on cache lines of their own. */
typedef struct counter_block {
    alignas(64) _Atomic uint64_t n[CTR_COUNT];
    struct counter_block *next; /* the list runtime_stats sums */
} counter_block;

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif
/* wb_run.c: this thread's block, claimed at its first count (a block
 * nobody sums when none can be had); wb_config.c: a new block on the
 * list runtime_stats sums, or NULL. */
counter_block *wb_rt_counters(void);
counter_block *wb_rt_claim_counters(void);
extern _Atomic unsigned wb_rt_counter_generation;
#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

/* Adds one; only the block's own thread writes it. */
static inline void wb_rt_count(counter_block *b, int counter) {
    uint64_t n = atomic_load_explicit(&b->n[counter], memory_order_relaxed);
    atomic_store_explicit(&b->n[counter], n + 1, memory_order_relaxed);
}

static inline void wb_rt_count_here(int counter) {
    wb_rt_count(wb_rt_counters(), counter);
}

/* The job's terminal count: `counter` (CTR_COMPLETED, CTR_FAILED or
 * CTR_CANCELLED) for the mode it runs in. */
static inline void wb_rt_job_ended(wb_job *job, int counter) {
    atomic_store(&job->terminal, true);
    wb_rt_count_here(counter + (int)job->mode);
}

static inline int64_t setting_ns(_Atomic uint64_t *setting) {
    return (int64_t)atomic_load_explicit(setting, memory_order_relaxed);
}

/* True when `result` is what a raise answered (the result callback raised
 * with enif_make_badarg or enif_raise_exception, whose return value
 * erl_nif requires to be the NIF's return value). That value's primary
 * tag (low two bits) is 0, which no other term has: only such a term
 * costs the call that asks the VM. */
static inline bool result_raised(ErlNifEnv *env, ERL_NIF_TERM result) {
    return WB_UNLIKELY((result & 3) == 0) && enif_has_pending_exception(env, NULL);
}

/* The finished job's result: take_result may move what the state owns
 * into the term (destroy still runs after it). */
static inline ERL_NIF_TERM job_result(ErlNifEnv *env, wb_job *job) {
    return job->type->take_result ? job->type->take_result(env, job->state)
                                  : job->type->result(env, job->state);
}

static inline uint64_t setup_units(const wb_job_type *type, const void *args) {
    return type->setup ? type->setup(args) : 0;
}

/* The time of `units` at `ps` picoseconds each, in ns. */
static inline double units_ns(uint64_t units, uint64_t ps) {
    return (double)units * (double)ps / 1000.0;
}

static inline double predict_ns(registered_type *learned, uint64_t units) {
    return units_ns(units, atomic_load_explicit(&learned->ps_per_unit, memory_order_relaxed));
}

/* ---- shared between the files ------------------------------------------------ */

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* wb_runtime.c: made at load */
extern ERL_NIF_TERM wb_rt_atom_ok, wb_rt_atom_error, wb_rt_atom_true, wb_rt_atom_enomem,
    wb_rt_atom_badarg, wb_rt_atom_unloaded;
extern ERL_NIF_TERM wb_rt_atom_normal, wb_rt_atom_dirty_cpu, wb_rt_atom_yielding,
    wb_rt_atom_yielding_dirty, wb_rt_atom_threaded, wb_rt_atom_auto, wb_rt_atom_collect,
    wb_rt_atom_cancel, wb_rt_atom_done, wb_rt_atom_cancelled, wb_rt_atom_false, wb_rt_atom_explain;
registered_type *wb_rt_learned_of(const wb_job_type *type);
registered_type *wb_rt_registered_types(int *count);
wb_job *wb_rt_alloc_job(const wb_job_type *type);
wb_job *wb_rt_get_job(ErlNifEnv *env, ERL_NIF_TERM term);

/* wb_config.c: the settings */
extern _Atomic uint64_t wb_rt_normal_max_ns, wb_rt_yielding_max_ns, wb_rt_slice_ns,
    wb_rt_dirty_slice_ns;
bool wb_rt_apply_load_info(ErlNifEnv *env, ERL_NIF_TERM info);
void wb_rt_counters_sum(uint64_t sums[CTR_COUNT]);
void wb_rt_report_atoms(ErlNifEnv *env);
ERL_NIF_TERM wb_rt_report(ErlNifEnv *env, const wb_job *job, ERL_NIF_TERM result);
ERL_NIF_TERM wb_rt_explain(ErlNifEnv *env, registered_type *learned, mode m, auto_reason reason,
                           uint64_t ps, uint64_t predicted, uint64_t setup, bool setup_on_dirty);
void wb_rt_counters_seed(void);
void wb_rt_counters_free(void);

/* wb_run.c: a job's life, and the live counters */
extern _Atomic int64_t wb_rt_live_jobs, wb_rt_live_bytes;
void wb_rt_job_prepare(wb_job *job, const wb_job_type *type, registered_type *learned, mode m,
                       const job_note *note);
bool wb_rt_decode_args(ErlNifEnv *env, const wb_job_type *type, const ERL_NIF_TERM argv[],
                       void *args, ERL_NIF_TERM *reason);
bool wb_rt_job_init(ErlNifEnv *env, wb_job *job, const void *args, ERL_NIF_TERM *reason);
void wb_rt_job_release(wb_job *job);
void wb_rt_job_destructor(ErlNifEnv *env, void *obj);
void wb_rt_job_down(ErlNifEnv *env, void *obj, ErlNifPid *pid, ErlNifMonitor *mon);

/* wb_cost.c: steps and their learned cost */
bool wb_rt_step_within(const wb_job_type *type, void *state, uint64_t budget, uint64_t *used,
                       int64_t now, int64_t ns);
void wb_rt_learn_probe(registered_type *t, uint64_t units, int64_t ns);
void wb_rt_learn(wb_job *job, uint64_t units, int64_t ns);
void wb_rt_learn_run(wb_job *job, uint64_t units, int64_t ns);
void wb_rt_learn_small_sliced(wb_job *job);
void wb_rt_outran_prediction(registered_type *t, uint64_t predicted);
uint64_t wb_rt_next_budget(wb_job *job);
bool wb_rt_timed_step(wb_job *job, int64_t *last);

/* wb_pool.c: :threaded */
ERL_NIF_TERM wb_rt_start_threaded(ErlNifEnv *env, const wb_job_type *type, registered_type *learned,
                                  const job_note *note, const ERL_NIF_TERM args[], ERL_NIF_TERM ref,
                                  const void *decoded);
ERL_NIF_TERM wb_rt_threaded_collect(ErlNifEnv *env, const wb_job_type *type,
                                    const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_rt_threaded_cancel(ErlNifEnv *env, const wb_job_type *type, ERL_NIF_TERM term);
bool wb_rt_pool_start(int nthreads);
void wb_rt_pool_stop(void);
void wb_rt_pool_counts(size_t *queued, int *threads);

/* wb_release.c: deferred frees and blocks owned by binaries */
extern ErlNifResourceType *wb_rt_owned_block_resource;
void wb_rt_owned_block_destructor(ErlNifEnv *env, void *obj);
bool wb_rt_releasers_start(void);
void wb_rt_releasers_stop(void);
void wb_rt_release_counts(uint64_t *done, int64_t *pending);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
