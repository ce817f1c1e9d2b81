#define _POSIX_C_SOURCE 199309L
#ifdef __linux__
#define _GNU_SOURCE /* SCHED_IDLE */
#endif
#include "wb_runtime.h"
#include "wb_job_check.h"

#include <stdalign.h>
#include <stdatomic.h>
#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif
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

/* ---- global state ------------------------------------------------------------ */

static ErlNifResourceType *job_resource;
/* The job resource types opened by this library's instances, newest
 * last: a job started before the module was purged and loaded again is of
 * an older type (a purged module's type cannot be taken over), and its
 * later calls (a slice, a collect) still find it (get_job). */
#define OLD_TYPES 8
static ErlNifResourceType *_Atomic job_resources[OLD_TYPES];
static _Atomic unsigned job_resource_count;    /* written by load, under the code server */
#define JOB_MAGIC UINT64_C(0x77626a6f62000001) /* a wb_job among resources of a reused type */
static ERL_NIF_TERM atom_ok, atom_error, atom_true, atom_enomem, atom_badarg, atom_unloaded;
static ERL_NIF_TERM atom_normal, atom_dirty_cpu, atom_yielding, atom_yielding_dirty, atom_threaded,
    atom_auto, atom_collect, atom_cancel, atom_done, atom_cancelled;

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
static registered_type job_types[WB_MAX_JOB_TYPES];
static int job_type_count;
static _Atomic int64_t live_jobs, live_bytes, resident_bytes;
static int loaded_instances; /* instances of this library loaded in the VM */
/* auto: normal below one slice of predicted work, else yielding; beyond
 * yielding_max_ns (none by default: NO_LIMIT) yielding_dirty */
#define NO_LIMIT UINT64_MAX
/* normal_max_ns follows the slice until it is configured */
static _Atomic uint64_t normal_max_ns = SLICE_NS_DEFAULT;
static _Atomic bool normal_max_is_slice = true;
static _Atomic uint64_t yielding_max_ns = NO_LIMIT;
static _Atomic uint64_t slice_ns = SLICE_NS_DEFAULT;
static _Atomic uint64_t dirty_slice_ns = DIRTY_SLICE_NS_DEFAULT;
/* Where the slice in force comes from: the load_info's calibration (and
 * the Erlang turn it was derived from), the compiled default, or
 * runtime_configure. `calibrated_ns` is what `slice_us: calibrated`
 * restores. */
typedef enum { SOURCE_DEFAULT, SOURCE_ERLANG_TURN, SOURCE_CONFIGURED } slice_source;
static _Atomic int slice_from = SOURCE_DEFAULT;
static _Atomic uint64_t calibrated_ns = SLICE_NS_DEFAULT;
static _Atomic uint64_t erlang_turn_ns; /* 0: not given */

ERL_NIF_TERM wb_atom(ErlNifEnv *env, const char *name) {
    ERL_NIF_TERM atom;
    if (enif_make_existing_atom(env, name, &atom, ERL_NIF_LATIN1)) return atom;
    return enif_make_atom(env, name);
}

ERL_NIF_TERM wb_error(ErlNifEnv *env, ERL_NIF_TERM reason) {
    return enif_make_tuple2(env, atom_error, reason);
}

/* Works on any thread (enif_monotonic_time only on scheduler threads). */
static int64_t clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* When the step running on this thread should return (clock_ns), or 0
 * while no step runs or the step has no time limit (a :normal run); and
 * when it began or last asked wb_slice_spent. */
static _Thread_local int64_t step_deadline, step_asked;
/* :auto's :normal runs too small to time, counted per thread */
static _Thread_local unsigned untimed_runs;

/* Stops where the step's end falls nearest the deadline: now, when the
 * work until the next call, as long as the work since the last, would
 * run further past it than now falls short of it. */
bool wb_slice_spent(void) {
    if (step_deadline == 0) return false;
    int64_t now = clock_ns(), since = now - step_asked;
    step_asked = now;
    return now + since / 2 >= step_deadline;
}

/* Runs one step of the job within `ns` from `now` (0: no limit). */
static bool step_within(const wb_job_type *type, void *state, uint64_t budget, uint64_t *used,
                        int64_t now, int64_t ns) {
    step_deadline = ns > 0 ? now + ns : 0;
    step_asked = now;
    bool done = type->step(state, budget, used);
    step_deadline = 0;
    return done;
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
    size_t accounted;    /* bytes added to the live counters, 0 if not counted */
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
    struct wb_job *next;
    uint64_t state[]; /* job states need 8-byte alignment, as resources give */
} wb_job;

static int64_t setting_ns(_Atomic uint64_t *setting) {
    return (int64_t)atomic_load_explicit(setting, memory_order_relaxed);
}

int64_t wb_slice_ns(void) {
    return setting_ns(&slice_ns);
}

static void job_prepare(wb_job *job, const wb_job_type *type, registered_type *learned, mode m,
                        bool tiny) {
    /* the state starts zeroed, as the header promises job types */
    memset(job, 0, sizeof *job + type->state_size);
    job->magic = JOB_MAGIC;
    job->type = type;
    job->learned = learned;
    job->mode = m;
    job->tiny = tiny;
    job->check_ns = CHECK_NS;
    if (m == MODE_YIELDING) {
        /* the slice is read once per job: a configure call applies to jobs
         * started after it */
        job->slice_ns = setting_ns(&slice_ns);
        /* one clock read per slice: each check costs about what a yield
         * does, so steps are sized to the time left in the slice */
        job->check_ns = job->slice_ns;
        job->first_slice = true;
    } else if (m == MODE_YIELDING_DIRTY) {
        job->slice_ns = setting_ns(&dirty_slice_ns);
    }
    atomic_init(&job->phase, THREADED_RUNNING);
}

/* The reason a decode gave with wb_reject on this thread, if it did. */
static _Thread_local bool decode_rejected;
static _Thread_local ERL_NIF_TERM decode_reason;

bool wb_reject(ERL_NIF_TERM reason) {
    decode_reason = reason;
    decode_rejected = true;
    return false;
}

/* The type's decode; on failure *reason is what it gave wb_reject, or
 * badarg. */
static bool decode_args(ErlNifEnv *env, const wb_job_type *type, const ERL_NIF_TERM argv[],
                        void *args, ERL_NIF_TERM *reason) {
    decode_rejected = false;
    if (type->decode(env, argv, args)) return true;
    *reason = decode_rejected ? decode_reason : atom_badarg;
    decode_rejected = false;
    return false;
}

/* The finished job's result: take_result may move what the state owns
 * into the term (destroy still runs after it). */
static ERL_NIF_TERM job_result(ErlNifEnv *env, wb_job *job) {
    return job->type->take_result ? job->type->take_result(env, job->state)
                                  : job->type->result(env, job->state);
}

/* Sets up the job's state. A job on the C stack that owns no heap memory
 * cannot outlive its call, so it skips the shared counters (whose atomic
 * updates would be a large part of a short call's cost). */
static bool job_init(ErlNifEnv *env, wb_job *job, const void *args, ERL_NIF_TERM *reason) {
    if (!job->type->init(env, args, job->state, reason)) return false;
    job->initialized = true;
    size_t memory = job->type->memory ? job->type->memory(job->state) : 0;
    if (memory > WB_JOB_MEMORY_MAX) memory = WB_JOB_MEMORY_MAX;
    if (job->on_stack && memory == 0) return true;
    job->accounted = sizeof *job + job->type->state_size + memory;
    atomic_fetch_add_explicit(&live_jobs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&live_bytes, (int64_t)job->accounted, memory_order_relaxed);
    return true;
}

/* Releases what the job owns; the job's own block belongs to its caller. */
static void job_release(wb_job *job) {
    if (job->initialized) {
        if (job->type->destroy) job->type->destroy(job->state);
        job->initialized = false;
        if (job->accounted) {
            atomic_fetch_sub_explicit(&live_jobs, 1, memory_order_relaxed);
            atomic_fetch_sub_explicit(&live_bytes, (int64_t)job->accounted, memory_order_relaxed);
        }
    }
    if (job->env) {
        enif_free_env(job->env);
        job->env = NULL;
    }
}

static void job_destructor(ErlNifEnv *env, void *obj) {
    (void)env;
    wb_job *job = obj;
    job_release(job);
    if (job->reply_env) enif_free_env(job->reply_env);
    job->reply_env = NULL;
}

static void job_down(ErlNifEnv *env, void *obj, ErlNifPid *pid, ErlNifMonitor *mon) {
    (void)env;
    (void)pid;
    (void)mon;
    int running = THREADED_RUNNING;
    atomic_compare_exchange_strong(&((wb_job *)obj)->phase, &running, THREADED_CANCELLED);
}

static uint64_t setup_units(const wb_job_type *type, const void *args) {
    return type->setup ? type->setup(args) : 0;
}

static double predict_ns(registered_type *learned, uint64_t units) {
    uint64_t ps = atomic_load_explicit(&learned->ps_per_unit, memory_order_relaxed);
    return (double)units * (double)ps / 1000.0;
}

/* The type's first cost measured on this machine replaces the seed whole. */
static void set_measured(registered_type *t, uint64_t ps) {
    atomic_store_explicit(&t->ps_per_unit, ps ? ps : 1, memory_order_relaxed);
    atomic_store_explicit(&t->measured, true, memory_order_relaxed);
}

/* Learns from an :auto :normal run of a type not yet measured: such runs
 * are small, so their units and time add up across calls until they make
 * MEASURE_MIN_NS, and that sum is the type's first measure. */
static void learn_probe(registered_type *t, uint64_t units, int64_t ns) {
    if (units == 0 || ns <= 0) return;
    uint64_t all_units = atomic_fetch_add_explicit(&t->probe_units, units, memory_order_relaxed);
    int64_t all_ns = atomic_fetch_add_explicit(&t->probe_ns, ns, memory_order_relaxed);
    all_units += units;
    all_ns += ns;
    if (all_ns < MEASURE_MIN_NS) return;
    atomic_store_explicit(&t->probe_units, 0, memory_order_relaxed);
    atomic_store_explicit(&t->probe_ns, 0, memory_order_relaxed);
    set_measured(t, (uint64_t)((double)all_ns * 1000.0 / (double)all_units));
}

/* Learns from a timed step: retunes how many units to do between clock
 * reads, and, once enough time has been gathered to time well, the type's
 * cost per unit (running average, 1/8 weight). Both are ratios of the same
 * quantities (units and nanoseconds), so they converge. */
static void learn(wb_job *job, uint64_t units, int64_t ns) {
    if (units == 0 || ns <= 0) return;
    job->work_units += units;
    job->work_ns += ns;
    uint64_t ideal = (uint64_t)((double)units * (double)job->check_ns / (double)ns);
    /* grow at most 2x per check (a normal run has no previous budget) */
    uint64_t cap = job->units_per_check ? job->units_per_check * 2 : MAX_UNITS_PER_CHK;
    if (ideal > cap) ideal = cap;
    if (ideal > MAX_UNITS_PER_CHK) ideal = MAX_UNITS_PER_CHK;
    job->units_per_check = ideal ? ideal : 1;
    /* tiny-slice runs measure per-step overhead, not the work */
    if (job->tiny) return;
    job->learn_units += units;
    job->learn_ns += ns;
    /* Learn once the work done is big enough to time well, judged by its
     * predicted time, never by its measured time: choosing runs because
     * they took long would choose the ones the OS preempted, and a
     * stream of small jobs would ratchet the estimate up. A seed not yet
     * measured predicts nothing: the first measure is taken whole once
     * the work has run that long. */
    registered_type *t = job->learned;
    uint64_t old = atomic_load_explicit(&t->ps_per_unit, memory_order_relaxed);
    bool measured = atomic_load_explicit(&t->measured, memory_order_relaxed);
    if (measured ? (double)job->learn_units * (double)old / 1000.0 < MEASURE_MIN_NS
                 : job->learn_ns < MEASURE_MIN_NS)
        return;
    uint64_t ps = (uint64_t)((double)job->learn_ns * 1000.0 / (double)job->learn_units);
    job->learn_units = 0;
    job->learn_ns = 0;
    if (!measured) {
        set_measured(t, ps);
        return;
    }
    /* one preempted step must not move the estimate far: clamp to 2x */
    if (ps > old * 2) ps = old * 2;
    if (ps < old / 2) ps = old / 2;
    uint64_t next = old - old / 8 + ps / 8;
    atomic_store_explicit(&job->learned->ps_per_unit, next ? next : 1, memory_order_relaxed);
}

/* Learns from a whole :normal run that :auto chose. A run that took more
 * than two slices was predicted under one: the cost per unit is too low by
 * more than 2x, maybe by 100x (a job type's seed far off on this machine).
 * learn moves the estimate by at most 2x per run and only for work
 * predicted long enough to time, so such a type could run :normal for
 * ever; the cost jumps to the measured one instead, and the next call
 * yields. But one run can overrun by chance: the OS preempted its thread,
 * or the hypervisor took the CPU (a 10-byte pair once took 20 us, and its
 * one unit set the cost 10,000x too high: every later call was sliced,
 * with a dirty hop for its set-up, 60x slower). So the cost jumps on the
 * second overrun in a row of the type's timed runs; a run that does not
 * overrun resets the count. */
#define OVERRUNS_TO_JUMP 2
static void learn_run(wb_job *job, uint64_t units, int64_t ns) {
    registered_type *t = job->learned;
    uint64_t old = atomic_load_explicit(&t->ps_per_unit, memory_order_relaxed);
    if (units > 0 && ns > 2 * setting_ns(&slice_ns)) {
        uint64_t ps = (uint64_t)((double)ns * 1000.0 / (double)units);
        if (ps > old) {
            if (atomic_fetch_add_explicit(&t->overruns, 1, memory_order_relaxed) + 1 >=
                OVERRUNS_TO_JUMP) {
                atomic_store_explicit(&t->overruns, 0, memory_order_relaxed);
                atomic_store_explicit(&t->ps_per_unit, ps, memory_order_relaxed);
            }
            return;
        }
    }
    atomic_store_explicit(&t->overruns, 0, memory_order_relaxed);
    learn(job, units, ns);
}

/* At the end of a sliced job that :auto chose because its prediction was
 * over normal_max_ns: when the work measured under half of that, and the
 * job was too small for learn to have used it, the cost was too high (it
 * jumped on runs the machine stretched twice in a row). Such jobs would
 * never learn (their predicted time is under what learn needs), and every
 * call would be sliced: the cost halves, at most down to the measured one. */
static void learn_small_sliced(wb_job *job) {
    if (!job->chosen_by_auto || job->tiny || job->work_units == 0) return;
    if (2 * job->work_ns >= setting_ns(&normal_max_ns)) return;
    registered_type *t = job->learned;
    uint64_t old = atomic_load_explicit(&t->ps_per_unit, memory_order_relaxed);
    uint64_t ps = (uint64_t)((double)job->work_ns * 1000.0 / (double)job->work_units);
    if (ps >= old) return;
    uint64_t next = ps > old / 2 ? ps : old / 2;
    atomic_store_explicit(&t->ps_per_unit, next ? next : 1, memory_order_relaxed);
}

/* After an :auto :normal run that needed more units than predicted: the
 * cost per unit becomes high enough that `predicted` units reach the
 * threshold twice over (at least double). Sliced runs learn it back down
 * from the units their steps report. */
static void outran_prediction(registered_type *t, uint64_t predicted) {
    uint64_t old = atomic_load_explicit(&t->ps_per_unit, memory_order_relaxed);
    double want =
        2.0 * (double)setting_ns(&normal_max_ns) * 1000.0 / (double)(predicted ? predicted : 1);
    uint64_t next = old > UINT64_MAX / 4 ? old : old * 2;
    if (want > (double)next) next = want >= 1e18 ? (uint64_t)1e18 : (uint64_t)want;
    atomic_store_explicit(&t->ps_per_unit, next, memory_order_relaxed);
}

/* Units to do before the next clock read; the first guess comes from the
 * type's measured cost (computed here, not in job_prepare, so that one-call
 * normal jobs never pay for the division). */
static uint64_t next_budget(wb_job *job) {
    if (job->tiny) return 1;
    if (job->units_per_check == 0) {
        /* a seed not measured yet may be off by any factor: start at one
         * unit, and learn grows the steps at most 2x per clock read */
        uint64_t ps = atomic_load_explicit(&job->learned->ps_per_unit, memory_order_relaxed);
        uint64_t units = atomic_load_explicit(&job->learned->measured, memory_order_relaxed)
                             ? (uint64_t)job->check_ns * 1000 / (ps ? ps : 1)
                             : 1;
        job->units_per_check = units ? units : 1;
    }
    return job->units_per_check;
}

/* Reports `ns` of work done in this call to the scheduler, in whole percent
 * of a slice: the VM charges a NIF call a few reductions however long it
 * ran, so without this a long call keeps its process on for more. Returns
 * the time not reported (under one percent), and sets *exhausted when the
 * process has used up its reductions. */
static int64_t charge_ns(ErlNifEnv *env, int64_t ns, int64_t slice, bool *exhausted) {
    int64_t unit = slice / 100 > 0 ? slice / 100 : 1;
    int64_t percent = ns / unit;
    if (percent <= 0) return ns;
    if (percent > 100) {
        percent = 100;
        ns = 100 * unit; /* a slice's worth at most: nothing carries over */
    }
    bool out = enif_consume_timeslice(env, (int)percent);
    if (exhausted) *exhausted = out;
    return ns - percent * unit;
}

/* One step of about next_budget units, timed and learned from; *last is
 * the clock at the step's start, and becomes its end. True when done. */
static bool timed_step(wb_job *job, int64_t *last) {
    uint64_t units = 0;
    bool done = step_within(job->type, job->state, next_budget(job), &units, *last, job->check_ns);
    int64_t now = clock_ns();
    learn(job, units, now - *last);
    *last = now;
    return done;
}

/* ---- normal and dirty_cpu: the whole job in one call -------------------------- */

/* :auto's :normal runs give the job the units of this many thresholds
 * (normal_max_ns) at the learned cost, and at least this many times the
 * units predicted: a job that needs more was predicted wrong (a bug in its
 * predict, or steps that never finish), and goes on sliced instead of
 * holding its scheduler without end. */
#define AUTO_NORMAL_SPAN 2

static uint64_t auto_normal_budget(registered_type *learned, uint64_t predicted) {
    uint64_t ps = atomic_load_explicit(&learned->ps_per_unit, memory_order_relaxed);
    double units = (double)AUTO_NORMAL_SPAN *
                   (double)atomic_load_explicit(&normal_max_ns, memory_order_relaxed) * 1000.0 /
                   (double)(ps ? ps : 1);
    double least = (double)AUTO_NORMAL_SPAN * (double)predicted + 1.0;
    if (units < least) units = least;
    return units >= (double)(UINT64_MAX / 2) ? UINT64_MAX / 2 : (uint64_t)units;
}

/* An :auto :normal run of a type whose cost is not measured yet: the
 * units of one call at the seed's cost could take any time, so the run
 * goes in steps that start at one unit and at most double, each sized by
 * the rate measured so far to end by AUTO_NORMAL_SPAN thresholds on the
 * clock, and stops there (or at `budget` units). True when done; *ns is
 * the run's time. */
static bool probe_steps(wb_job *job, uint64_t budget, uint64_t *used, int64_t *ns) {
    int64_t start = clock_ns(), limit = AUTO_NORMAL_SPAN * setting_ns(&normal_max_ns);
    uint64_t units = 1;
    for (;;) {
        if (units > budget - *used) units = budget - *used;
        bool done = job->type->step(job->state, units, used);
        *ns = clock_ns() - start;
        if (done) return true;
        if (*used >= budget || *ns >= limit) return false;
        /* what fits in the time left at the rate so far, at most twice
         * the last step, at least one unit */
        double fit = (double)*used * (double)(limit - *ns) / (double)(*ns > 0 ? *ns : 1);
        if (fit < 2.0 * (double)units)
            units = fit < 1.0 ? 1 : (uint64_t)fit;
        else
            units *= 2;
    }
}

/* Runs the job to the end. Off the normal schedulers it checks between
 * steps that the caller is still alive and abandons the work when it is
 * not. A normal run reads the clock only when `timed` (big enough to learn
 * from), and does at most `budget` units (UINT64_MAX: no bound); a job
 * that needs more sets *outran and answers nothing. A bounded run of a
 * type whose cost is not measured yet is bounded by the clock too
 * (probe_steps). */
static ERL_NIF_TERM run_to_end(ErlNifEnv *env, wb_job *job, bool dirty, bool timed, uint64_t budget,
                               bool *outran) {
    uint64_t used = 0;
    if (!dirty && !job->tiny && budget != UINT64_MAX &&
        !atomic_load_explicit(&job->learned->measured, memory_order_relaxed)) {
        int64_t ns = 0;
        bool done = probe_steps(job, budget, &used, &ns);
        learn_probe(job->learned, used, ns);
        charge_ns(env, ns, setting_ns(&slice_ns), NULL);
        if (!done) {
            *outran = true;
            return 0;
        }
        return job_result(env, job);
    }
    if (!dirty && !job->tiny) {
        int64_t start = timed ? clock_ns() : 0, ns = 0;
        bool done = true;
        if (budget == UINT64_MAX) {
            while (!job->type->step(job->state, UINT64_MAX, &used)) {
            }
        } else {
            done = job->type->step(job->state, budget, &used);
        }
        if (timed) {
            ns = clock_ns() - start;
            learn_run(job, used, ns);
        } else {
            ns = (int64_t)predict_ns(job->learned, used);
        }
        charge_ns(env, ns, setting_ns(&slice_ns), NULL);
        if (!done) {
            *outran = true;
            return 0;
        }
        return job_result(env, job);
    }
    int64_t last = clock_ns();
    for (;;) {
        if (timed_step(job, &last)) return job_result(env, job);
        if (dirty && !enif_is_current_process_alive(env)) return atom_error;
        if (!dirty && job->work_units >= budget) {
            *outran = true;
            return 0;
        }
    }
}

static ERL_NIF_TERM run_on_stack(ErlNifEnv *env, const wb_job_type *type, registered_type *learned,
                                 const void *args, bool tiny, bool timed, uint64_t budget,
                                 bool *outran) {
    alignas(max_align_t) unsigned char buf[sizeof(wb_job) + INLINE_STATE_MAX];
    wb_job *job = (wb_job *)buf;
    bool heap = type->state_size > INLINE_STATE_MAX;
    if (heap && !(job = enif_alloc(sizeof(wb_job) + type->state_size)))
        return wb_error(env, atom_enomem);
    job_prepare(job, type, learned, MODE_NORMAL, tiny);
    job->on_stack = true;
    ERL_NIF_TERM reason, out;
    if (job_init(env, job, args, &reason))
        out = run_to_end(env, job, false, timed, budget, outran);
    else
        out = wb_error(env, reason);
    job_release(job);
    if (heap) enif_free(job);
    return out;
}

static ERL_NIF_TERM finish(ErlNifEnv *env, wb_job *job) {
    learn_small_sliced(job);
    ERL_NIF_TERM out = job_result(env, job);
    job_release(job); /* free now rather than when the VM drops the resource */
    return out;
}

/* The job in `term`: a resource of the job type this library's instance
 * opened, or of one an earlier instance opened (a job that began before
 * its module was purged and loaded again), newest first; NULL if none. */
static wb_job *get_job(ErlNifEnv *env, ERL_NIF_TERM term) {
    void *obj;
    unsigned n = atomic_load(&job_resource_count);
    for (unsigned i = 0; i < n && i < OLD_TYPES; i++)
        if (enif_get_resource(env, term, job_resources[(n - 1 - i) % OLD_TYPES], &obj))
            return ((wb_job *)obj)->magic == JOB_MAGIC ? obj : NULL;
    return NULL;
}

/* ---- yielding and yielding_dirty: time-sliced -------------------------------- */

/* Continuation arguments: the job resource, then the job's arguments, which
 * keep the input binaries alive for as long as the job runs. */
static ERL_NIF_TERM slice_continue(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

static ERL_NIF_TERM reschedule(ErlNifEnv *env, wb_job *job, int argc, const ERL_NIF_TERM argv[]) {
    int flags = job->mode == MODE_YIELDING_DIRTY ? ERL_NIF_DIRTY_JOB_CPU_BOUND : 0;
    return enif_schedule_nif(env, job->type->name, flags, slice_continue, argc, argv);
}

/* Units for `ns` of work, at the job's learned rate (at least one). */
static uint64_t budget_for(wb_job *job, int64_t ns) {
    uint64_t full = next_budget(job);
    if (ns >= job->check_ns) return full;
    uint64_t part = (uint64_t)((double)full * (double)ns / (double)job->check_ns);
    return part ? part : 1;
}

/* One slice. On a normal scheduler: steps sized to fill the slice (one
 * clock read per step, usually one step), then reports a whole timeslice
 * to the VM, so the process is switched out as an Erlang process is after
 * its 4000 reductions. On a dirty scheduler: steps until the reschedule
 * interval has passed. Then it reschedules itself. The state is bound to
 * this call's arguments already. Time is read with clock_ns: the VM's
 * enif_monotonic_time takes a read lock on its time-correction data. */
static ERL_NIF_TERM run_slice(ErlNifEnv *env, wb_job *job, int argc, const ERL_NIF_TERM argv[]) {
    bool dirty = job->mode == MODE_YIELDING_DIRTY;
    int64_t start = clock_ns(), last = start;
    for (;;) {
        uint64_t units = 0;
        /* The first slice starts where the calling process is in its
         * reductions, which only the VM knows: short steps, each reported,
         * until the VM says the process has used them. */
        int64_t left = job->slice_ns - job->unreported_ns;
        if (job->first_slice && left > job->slice_ns / FIRST_SLICE_STEPS)
            left = job->slice_ns / FIRST_SLICE_STEPS;
        uint64_t budget = dirty || job->tiny ? next_budget(job) : budget_for(job, left);
        int64_t limit = dirty ? job->slice_ns - (last - start) : left;
        bool done = step_within(job->type, job->state, budget, &units, last, limit > 0 ? limit : 1);
        int64_t now = clock_ns();
        learn(job, units, now - last);
        job->unreported_ns += now - last;
        last = now;
        if (done) {
            if (!dirty) charge_ns(env, job->unreported_ns, job->slice_ns, NULL);
            return finish(env, job);
        }
        if (dirty) {
            /* consume_timeslice does nothing on dirty schedulers (OTP 22+);
             * a dead caller's job stops here and its memory goes now */
            if (!enif_is_current_process_alive(env)) {
                job_release(job);
                return atom_error;
            }
            if (job->tiny || now - start >= job->slice_ns) break;
        } else if (job->tiny) {
            job->unreported_ns = charge_ns(env, job->unreported_ns, job->slice_ns, NULL);
            break;
        } else if (job->first_slice) {
            bool exhausted = false;
            job->unreported_ns = charge_ns(env, job->unreported_ns, job->slice_ns, &exhausted);
            if (exhausted) {
                job->first_slice = false;
                job->unreported_ns = 0;
                break;
            }
        } else if (job->unreported_ns >= job->slice_ns - job->slice_ns / 8) {
            /* the slice is used (within 1/8): a whole timeslice, then yield */
            enif_consume_timeslice(env, 100);
            job->unreported_ns = 0;
            break;
        }
    }
    return reschedule(env, job, argc, argv);
}

static ERL_NIF_TERM slice_continue(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    wb_job *job;
    ERL_NIF_TERM reason;
    alignas(max_align_t) unsigned char args[WB_MAX_ARGS_SIZE];
    if (!(job = get_job(env, argv[0]))) return enif_make_badarg(env);
    /* a state that keeps no pointer into its arguments needs no decode */
    if (job->type->bind) {
        /* the same terms decoded at the first call: a type whose decode
         * refuses them now answers as it would have then */
        if (!decode_args(env, job->type, argv + 1, args, &reason)) {
            job_release(job);
            return wb_error(env, reason);
        }
        job->type->bind(args, job->state);
    }
    return run_slice(env, job, argc, argv);
}

/* Makes the job resource and the continuation arguments [Job | Args]. */
static wb_job *new_job_resource(ErlNifEnv *env, const wb_job_type *type, registered_type *learned,
                                mode m, bool tiny, const ERL_NIF_TERM argv[],
                                ERL_NIF_TERM cargv[]) {
    wb_job *job = enif_alloc_resource(job_resource, sizeof(wb_job) + type->state_size);
    if (!job) return NULL;
    job_prepare(job, type, learned, m, tiny);
    cargv[0] = enif_make_resource(env, job);
    enif_release_resource(job); /* the term on the process heap owns it now */
    memcpy(cargv + 1, argv, (size_t)type->argc * sizeof *argv);
    return job;
}

/* First call on a dirty scheduler: set-up runs here, so that large inputs
 * are never prepared on a normal scheduler. */
static ERL_NIF_TERM dirty_first(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    wb_job *job;
    ERL_NIF_TERM reason;
    alignas(max_align_t) unsigned char args[WB_MAX_ARGS_SIZE];
    if (!(job = get_job(env, argv[0]))) return enif_make_badarg(env);
    if (!decode_args(env, job->type, argv + 1, args, &reason)) return wb_error(env, reason);
    if (!job_init(env, job, args, &reason)) return wb_error(env, reason);
    if (job->mode == MODE_YIELDING_DIRTY) return run_slice(env, job, argc, argv);
    /* a :yielding job whose set-up was too big for a normal scheduler */
    if (job->mode == MODE_YIELDING)
        return enif_schedule_nif(env, job->type->name, 0, slice_continue, argc, argv);
    bool outran = false;
    ERL_NIF_TERM out = run_to_end(env, job, true, true, UINT64_MAX, &outran);
    job_release(job);
    return out;
}

static ERL_NIF_TERM start_sliced_or_dirty(ErlNifEnv *env, const wb_job_type *type,
                                          registered_type *learned, mode m, bool tiny, bool by_auto,
                                          const ERL_NIF_TERM argv[], const void *args) {
    ERL_NIF_TERM cargv[WB_MAX_JOB_ARGS + 1], reason;
    wb_job *job = new_job_resource(env, type, learned, m, tiny, argv, cargv);
    if (!job) return wb_error(env, atom_enomem);
    job->chosen_by_auto = by_auto;
    if (m != MODE_YIELDING || predict_ns(learned, setup_units(type, args)) >= SETUP_DIRTY_NS)
        return enif_schedule_nif(env, type->name, ERL_NIF_DIRTY_JOB_CPU_BOUND, dirty_first,
                                 type->argc + 1, cargv);
    if (!job_init(env, job, args, &reason)) return wb_error(env, reason);
    return run_slice(env, job, type->argc + 1, cargv);
}

/* ---- threaded: a fixed pool of native threads -------------------------------- */

typedef struct {
    ErlNifMutex *lock;
    ErlNifCond *wake;
    wb_job *head, *tail;
    size_t queued;
    _Atomic size_t pending;  /* queued, readable without the lock */
    _Atomic size_t spinning; /* workers looking for work before they sleep */
    atomic_bool stopping;
    _Atomic uint64_t answered_in_call; /* jobs whose caller waited for them */
    int nthreads;
    ErlNifTid threads[64];
} job_pool;

static job_pool pool;

static void pool_push(wb_job *job) {
    enif_mutex_lock(pool.lock);
    job->next = NULL;
    if (pool.tail)
        pool.tail->next = job;
    else
        pool.head = job;
    pool.tail = job;
    pool.queued++;
    atomic_fetch_add_explicit(&pool.pending, 1, memory_order_seq_cst);
    /* a spinning worker takes the job (it looks for it under the lock once
     * it stops spinning): wake a sleeping one only for jobs beyond them,
     * not one that would find nothing and preempt a scheduler on its way */
    if (pool.queued > atomic_load_explicit(&pool.spinning, memory_order_seq_cst))
        enif_cond_signal(pool.wake);
    enif_mutex_unlock(pool.lock);
}

/* Set by a worker that counted itself among the spinning ones before it
 * answered its job (threaded_reply): it will spin next. */
static _Thread_local bool spin_announced;

/* A worker that just finished a job looks for the next one for a short
 * while before it sleeps: callers that issue calls back to back then skip
 * the futex wake-up, which costs more than the call itself. An idle pool
 * does not spin. */
static void spin_for_work(void) {
    if (!spin_announced) atomic_fetch_add_explicit(&pool.spinning, 1, memory_order_seq_cst);
    spin_announced = false;
    int64_t start = clock_ns();
    while (atomic_load_explicit(&pool.pending, memory_order_seq_cst) == 0 &&
           !atomic_load_explicit(&pool.stopping, memory_order_relaxed)) {
        for (int i = 0; i < 16; i++) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        if (clock_ns() - start > POOL_SPIN_NS) break;
    }
    atomic_fetch_sub_explicit(&pool.spinning, 1, memory_order_seq_cst);
}

static wb_job *pool_pop(bool after_job) {
    if (after_job) spin_for_work();
    enif_mutex_lock(pool.lock);
    while (!pool.head && !atomic_load(&pool.stopping))
        enif_cond_wait(pool.wake, pool.lock);
    wb_job *job = pool.head;
    if (job) {
        pool.head = job->next;
        if (!pool.head) pool.tail = NULL;
        pool.queued--;
        atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_relaxed);
    }
    enif_mutex_unlock(pool.lock);
    return job;
}

static bool job_cancelled(wb_job *job) {
    return atomic_load_explicit(&job->phase, memory_order_relaxed) == THREADED_CANCELLED ||
           atomic_load_explicit(&pool.stopping, memory_order_relaxed);
}

/* The pool thread's end of a job: the one message to the caller, unless
 * the caller cancelled first, or waits for the answer in the call that
 * queued the job: then true, and the caller also takes the monitor off. */
static bool threaded_reply(wb_job *job, ERL_NIF_TERM answer) {
    if (atomic_load(&pool.stopping)) return false;
    /* the answer is made before the job is ANSWERED or DONE: from then on
     * the caller may collect the job and free its state and env, but not
     * reply_env, which only the destructor frees */
    ErlNifEnv *m = job->reply_env;
    job->answer = enif_make_copy(m, answer);
    /* this worker spins for the next job once it has answered: counted
     * from now, a caller's next call (which may come before the worker has
     * let go of this job) waits for its answer, and wakes no sleeping
     * worker the spinning one will beat to it */
    if (!spin_announced) {
        atomic_fetch_add_explicit(&pool.spinning, 1, memory_order_seq_cst);
        spin_announced = true;
    }
    /* a caller waiting in the call that queued the job takes the answer
     * there: no message */
    int awaited = THREADED_AWAITED;
    if (atomic_compare_exchange_strong(&job->phase, &awaited, THREADED_ANSWERED)) return true;
    ERL_NIF_TERM msg = enif_make_tuple2(m, enif_make_copy(m, job->ref), job->answer);
    int running = THREADED_RUNNING;
    if (!atomic_compare_exchange_strong(&job->phase, &running, THREADED_DONE)) return false;
    /* a caller that died meanwhile gets nothing; its resource term goes
     * with it and the destructor frees the state */
    (void)enif_send(NULL, &job->caller, m, msg);
    return false;
}

/* The job no longer watches its caller (env NULL: from a pool thread). */
static void forget_caller(ErlNifEnv *env, wb_job *job) {
    if (job->monitored) enif_demonitor_process(env, job, &job->monitor);
    job->monitored = false;
}

/* Runs a threaded job on a pool thread for up to one quantum while other
 * jobs wait, to the end otherwise. True when the job is over (finished,
 * failed or cancelled); false when it should queue again. The result is
 * not made here: the caller collects it in its own process (an exception
 * raised by `result` then raises there, as in every other mode, and the
 * result is built on the caller's heap, not copied through a message). */
static bool run_threaded(wb_job *job) {
    ErlNifEnv *env = job->env;
    ERL_NIF_TERM reason;
    bool answered = false; /* the caller took the answer in its call */
    alignas(max_align_t) unsigned char args[WB_MAX_ARGS_SIZE];
    if (job_cancelled(job)) goto over;
    /* the job's env keeps its argument terms alive until it is freed */
    if (!job->initialized) {
        if (!decode_args(env, job->type, job->args, args, &reason) ||
            !job_init(env, job, args, &reason))
            goto failed;
    } else if (job->type->bind) {
        /* resumed on this thread: bind the state to freshly decoded args */
        if (!decode_args(env, job->type, job->args, args, &reason)) goto failed;
        job->type->bind(args, job->state);
    }
    int64_t start = clock_ns(), last = start;
    while (!job_cancelled(job)) {
        if (timed_step(job, &last)) {
            if (!threaded_reply(job, atom_done)) forget_caller(NULL, job);
            return true; /* the state stays for the caller to collect */
        }
        if (last - start >= POOL_QUANTUM_NS &&
            atomic_load_explicit(&pool.pending, memory_order_relaxed) > 0)
            return false;
    }
    goto over;
failed:
    answered = threaded_reply(job, wb_error(env, reason));
over:
    if (!answered) forget_caller(NULL, job);
    job_release(job); /* free the state now, not when the VM drops the resource */
    return true;
}

static void *pool_worker(void *arg) {
    (void)arg;
    wb_job *job;
    bool after_job = false;
    while ((job = pool_pop(after_job))) {
        after_job = run_threaded(job);
        if (after_job)
            enif_release_resource(job);
        else
            pool_push(job); /* its quantum is over: behind the others */
    }
    return NULL;
}

/* The finished job's result, made in the calling process, which then
 * frees the state. The call carries the job's arguments again: a type
 * with a bind is bound to them first, as on any later call of a job, so
 * that what the state holds of its arguments is the caller's, not the
 * pool's copies. `decoded`: this call's arguments already decoded, or
 * NULL to decode them from argv. */
static ERL_NIF_TERM collect_finished(ErlNifEnv *env, const wb_job_type *type, wb_job *job,
                                     const ERL_NIF_TERM argv[], const void *decoded) {
    ERL_NIF_TERM reason;
    alignas(max_align_t) unsigned char args[WB_MAX_ARGS_SIZE];
    if (!job->initialized) return enif_make_badarg(env); /* it failed: nothing to collect */
    if (type->bind) {
        if (!decoded && !decode_args(env, type, argv, args, &reason)) {
            job_release(job);
            return wb_error(env, reason);
        }
        type->bind(decoded ? decoded : args, job->state);
    }
    ERL_NIF_TERM out = job_result(env, job);
    job_release(job);
    return out;
}

/* How long a threaded call waits, in the call that queues the job, for
 * its answer (0: not at all). Only a short job, which a spinning worker
 * takes at once, is waited for: its answer then comes back without a
 * message and the caller's trip through receive, which costs more than
 * the job. The wait holds the calling scheduler for at most a quarter of
 * the slice, as a short :normal call would. */
static int64_t threaded_await_ns(const wb_job_type *type, registered_type *learned,
                                 const void *args) {
#ifdef WB_TEST_THREADED_AWAIT_NS
    /* the tests' build that waits for every job (sdk_awaiting_nif) */
    (void)type, (void)learned, (void)args;
    return WB_TEST_THREADED_AWAIT_NS;
#endif
    if (atomic_load_explicit(&pool.spinning, memory_order_relaxed) == 0 ||
        atomic_load_explicit(&pool.pending, memory_order_relaxed) > 0)
        return 0;
    int64_t wait = setting_ns(&slice_ns) / AWAIT_SLICE_SHARE;
    double predicted = predict_ns(learned, type->predict(args) + setup_units(type, args));
    return predicted < (double)wait / 2 ? wait : 0;
}

/* Waits up to `wait_ns` for the answer of a job queued as AWAITED. True
 * with *out its result wrapped as {Ref, Result} (or the exception its
 * result callback raised), or its error; false when the wait is over first
 * (the job is then RUNNING and answers by message, as any threaded job). */
static bool await_threaded(ErlNifEnv *env, const wb_job_type *type, wb_job *job,
                           const ERL_NIF_TERM argv[], const void *decoded, int64_t wait_ns,
                           ERL_NIF_TERM *out) {
    int64_t deadline = clock_ns() + wait_ns;
    while (atomic_load_explicit(&job->phase, memory_order_acquire) == THREADED_AWAITED &&
           clock_ns() < deadline) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    int awaited = THREADED_AWAITED;
    if (atomic_compare_exchange_strong(&job->phase, &awaited, THREADED_RUNNING)) return false;
    atomic_fetch_add_explicit(&pool.answered_in_call, 1, memory_order_relaxed);
    /* ANSWERED: the pool thread is done with the state and the monitor */
    forget_caller(env, job);
    if (!enif_is_identical(job->answer, atom_done)) {
        *out = enif_make_copy(env, job->answer);
        return true;
    }
    atomic_store(&job->phase, THREADED_COLLECTED);
    *out = collect_finished(env, type, job, argv, decoded);
    if (!enif_has_pending_exception(env, NULL))
        *out = enif_make_tuple2(env, argv[type->argc + 2], *out);
    return true;
}

/* Queues a threaded job and answers the job resource: the caller waits for
 * {Ref, done} or {Ref, {error, Reason}}, then collects the result, or
 * cancels. A short job may answer in this call instead: {Ref, Result} or
 * {error, Reason} (threaded_await_ns). Every threaded job watches its
 * caller: a caller that dies cancels its job wherever it is. */
static ERL_NIF_TERM start_threaded(ErlNifEnv *env, const wb_job_type *type,
                                   registered_type *learned, bool tiny, const ERL_NIF_TERM args[],
                                   ERL_NIF_TERM ref, const void *decoded) {
    /* the reply is tagged with it: without one, nobody could wait for it */
    if (!enif_is_ref(env, ref)) return enif_make_badarg(env);
    int64_t await_ns = threaded_await_ns(type, learned, decoded);
    wb_job *job = enif_alloc_resource(job_resource, sizeof(wb_job) + type->state_size);
    if (!job) return wb_error(env, atom_enomem);
    job_prepare(job, type, learned, MODE_THREADED, tiny);
    ERL_NIF_TERM result;
    if (!(job->env = enif_alloc_env()) || !(job->reply_env = enif_alloc_env())) {
        result = wb_error(env, atom_enomem);
        goto out;
    }
    /* copies share large binaries by reference count, so this is cheap */
    for (int i = 0; i < type->argc; i++)
        job->args[i] = enif_make_copy(job->env, args[i]);
    job->ref = enif_make_copy(job->env, ref);
    if (!enif_self(env, &job->caller)) {
        result = enif_make_badarg(env);
        goto out;
    }
    if (enif_monitor_process(env, job, &job->caller, &job->monitor) != 0) {
        result = wb_error(env, atom_badarg); /* caller already gone */
        goto out;
    }
    job->monitored = true;
    if (atomic_load(&pool.stopping)) {
        enif_demonitor_process(env, job, &job->monitor);
        job->monitored = false;
        result = wb_error(env, atom_unloaded);
        goto out;
    }
    if (await_ns > 0) atomic_store(&job->phase, THREADED_AWAITED);
    enif_keep_resource(job); /* the pool's reference, released by the worker */
    pool_push(job);
    if (!(await_ns > 0 && await_threaded(env, type, job, args, decoded, await_ns, &result)))
        result = enif_make_resource(env, job);
out:
    enif_release_resource(job);
    return result;
}

/* The threaded job of `type` in `term`, or NULL. */
static wb_job *threaded_job(ErlNifEnv *env, const wb_job_type *type, ERL_NIF_TERM term) {
    wb_job *job = get_job(env, term);
    return job && job->type == type && job->mode == MODE_THREADED ? job : NULL;
}

/* collect: the result of a job that answered `done` by message. */
static ERL_NIF_TERM threaded_collect(ErlNifEnv *env, const wb_job_type *type,
                                     const ERL_NIF_TERM argv[]) {
    wb_job *job = threaded_job(env, type, argv[type->argc + 2]);
    int done = THREADED_DONE;
    if (!job || !atomic_compare_exchange_strong(&job->phase, &done, THREADED_COLLECTED))
        return enif_make_badarg(env);
    return collect_finished(env, type, job, argv, NULL);
}

/* cancel: `cancelled` when the job will send nothing more; `done` when it
 * had already finished or failed (its message is on its way). */
static ERL_NIF_TERM threaded_cancel(ErlNifEnv *env, const wb_job_type *type, ERL_NIF_TERM term) {
    wb_job *job = threaded_job(env, type, term);
    if (!job) return enif_make_badarg(env);
    int running = THREADED_RUNNING;
    if (atomic_compare_exchange_strong(&job->phase, &running, THREADED_CANCELLED))
        return atom_cancelled;
    return running == THREADED_CANCELLED ? atom_cancelled : atom_done;
}

static void pool_stop(void) {
    if (!pool.lock) return;
    enif_mutex_lock(pool.lock);
    atomic_store(&pool.stopping, true);
    enif_cond_broadcast(pool.wake);
    enif_mutex_unlock(pool.lock);
    for (int i = 0; i < pool.nthreads; i++)
        enif_thread_join(pool.threads[i], NULL);
    /* workers drain the queue before they exit (cancelled jobs) */
    enif_cond_destroy(pool.wake);
    enif_mutex_destroy(pool.lock);
    memset(&pool, 0, sizeof pool);
}

static bool pool_start(int nthreads) {
    pool.lock = enif_mutex_create("wb_pool_lock");
    pool.wake = enif_cond_create("wb_pool_wake");
    if (!pool.lock || !pool.wake) {
        if (pool.wake) enif_cond_destroy(pool.wake);
        if (pool.lock) enif_mutex_destroy(pool.lock);
        memset(&pool, 0, sizeof pool);
        return false;
    }
    if (nthreads > 64) nthreads = 64;
    for (int i = 0; i < nthreads; i++) {
        if (enif_thread_create("wb_pool_worker", &pool.threads[i], pool_worker, NULL, NULL) != 0) {
            pool_stop();
            return false;
        }
        pool.nthreads++;
    }
    return true;
}

/* ---- clean-ups off the schedulers ---------------------------------------------
 *
 * Giving a large block back to the system takes time in proportion to its
 * pages (~0.1 ms per MiB here): more than a slice from a few hundred KiB.
 * Destructors and destroy callbacks hand such blocks to a thread of the
 * runtime's own, which frees them in order. Clean-ups that can block for
 * long (flushing and closing a file on a stalled disk or pipe) have a
 * thread of their own, so that memory keeps being given back meanwhile.
 *
 * Blocks of up to WB_RELEASE_IDLE_MOST (a cdist matrix, a search's
 * distances) go to a third thread, at the system's lowest priority where it
 * has one (Linux's SCHED_IDLE): woken by a scheduler thread, a thread of
 * normal priority took that scheduler's CPU at once, and handing a cdist
 * matrix of 400 KB over took 24 us on average (12 with the wake-up after
 * the lock is let go); at idle priority 1.5-3 us. It frees when a CPU has
 * nothing else to run, or in the small share the system gives it; should
 * that share not come for IDLE_STARVED_NS while blocks wait, the next
 * ones are freed where they are given (as without the thread), so the
 * memory waiting stays bounded. Larger blocks, rare and slow to free, and
 * every other release, keep the thread of normal priority, which a busy
 * machine cannot hold up for long. Each thread takes what is queued in
 * one go, and is woken only when it sleeps. */

typedef struct release_task {
    void (*release)(void *arg);
    void *arg;
    int64_t queued_ns; /* clock_ns when queued */
    struct release_task *next;
} release_task;

/* The idle-priority thread has not taken the oldest block for this long:
 * it is starved (the CPUs busy with other work) */
#define IDLE_STARVED_NS 20000000

typedef struct {
    const char *name;
    ErlNifMutex *lock; /* made once, kept: destructors may run after unload */
    ErlNifCond *wake;
    ErlNifTid thread;
    bool running, stopping;
    bool lowest;   /* runs at the lowest priority, or frees where given when starved */
    bool sleeping; /* waits for work: a new task wakes it */
    release_task *head, *tail;
    _Atomic uint64_t done;
    _Atomic int64_t pending; /* queued, not yet done */
} release_queue;

static release_queue releaser = {.name = "wb_releaser"};
static release_queue idler = {.name = "wb_idle_releaser", .lowest = true};
static release_queue closer = {.name = "wb_closer"};

static void *release_worker(void *arg) {
    release_queue *q = arg;
#ifdef SCHED_IDLE
    if (q->lowest) {
        /* where it fails, the thread stays as it was */
        struct sched_param lowest = {0};
        (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &lowest);
    }
#endif
    enif_mutex_lock(q->lock);
    for (;;) {
        while (!q->head && !q->stopping) {
            q->sleeping = true;
            enif_cond_wait(q->wake, q->lock);
        }
        q->sleeping = false;
        release_task *t = q->head;
        if (!t) break; /* stopping, and every task done */
        q->head = q->tail = NULL;
        enif_mutex_unlock(q->lock);
        while (t) {
            release_task *next = t->next;
            t->release(t->arg);
            free(t);
            atomic_fetch_add_explicit(&q->done, 1, memory_order_relaxed);
            atomic_fetch_sub_explicit(&q->pending, 1, memory_order_relaxed);
            t = next;
        }
        enif_mutex_lock(q->lock);
    }
    enif_mutex_unlock(q->lock);
    return NULL;
}

static void queue_release(release_queue *q, void (*release)(void *arg), void *arg) {
    release_task *t = malloc(sizeof *t);
    if (t && q->lock) {
        t->release = release;
        t->arg = arg;
        t->next = NULL;
        t->queued_ns = clock_ns();
        enif_mutex_lock(q->lock);
        bool queued = q->running && !q->stopping, wake = q->sleeping;
        if (queued && q->lowest && q->head && t->queued_ns - q->head->queued_ns > IDLE_STARVED_NS)
            queued = false;
        if (queued) {
            if (q->tail)
                q->tail->next = t;
            else
                q->head = t;
            q->tail = t;
            q->sleeping = false;
            atomic_fetch_add_explicit(&q->pending, 1, memory_order_relaxed);
        }
        enif_mutex_unlock(q->lock);
        /* the lock and the condition are never destroyed (see
         * release_queue): woken after the lock is let go, the thread does
         * not wait for it */
        if (queued && wake) enif_cond_signal(q->wake);
        if (queued) return;
    }
    free(t);
    release(arg); /* no thread to take it: at once */
    atomic_fetch_add_explicit(&q->done, 1, memory_order_relaxed);
}

void wb_release_later(void (*release)(void *arg), void *arg) {
    queue_release(&releaser, release, arg);
}

void wb_release_later_blocking(void (*release)(void *arg), void *arg) {
    queue_release(&closer, release, arg);
}

static void free_block(void *block) {
    free(block);
}

void wb_release_block_later(void (*release)(void *arg), void *block, size_t bytes) {
    if (!block) return;
    if (bytes < WB_RELEASE_LATER_FROM)
        release(block);
    else
        queue_release(bytes <= WB_RELEASE_IDLE_MOST ? &idler : &releaser, release, block);
}

void wb_free_later(void *block, size_t bytes) {
    wb_release_block_later(free_block, block, bytes);
}

/* ---- blocks handed over as binaries ------------------------------------------ */

/* A malloc'd block that a binary term owns: the resource's destructor runs
 * when the last term referring to it is garbage, and hands a large block
 * to the releasing thread of normal priority, so that a process's garbage
 * collection never gives large memory back on its scheduler (a hundred
 * 1 MiB binaries took 6-8 ms there). Not the idle-priority one: a garbage
 * collection can drop hundreds of megabytes at once, and on a busy machine
 * that thread starves and its blocks are freed where they are given. */
typedef struct {
    void *block;
    size_t size;
} owned_block;
static ErlNifResourceType *owned_block_resource;

static void owned_block_destructor(ErlNifEnv *env, void *obj) {
    (void)env;
    owned_block *o = obj;
    if (o->size < WB_RELEASE_LATER_FROM)
        free(o->block);
    else
        wb_release_later(free_block, o->block);
}

ERL_NIF_TERM wb_make_malloc_binary(ErlNifEnv *env, void *block, size_t size) {
    owned_block *o =
        owned_block_resource ? enif_alloc_resource(owned_block_resource, sizeof *o) : NULL;
    if (!o) {
        free(block);
        return enif_raise_exception(env, atom_enomem);
    }
    o->block = block;
    o->size = size;
    ERL_NIF_TERM term = enif_make_resource_binary(env, o, block, size);
    enif_release_resource(o); /* the term owns it */
    return term;
}

static bool queue_start(release_queue *q) {
    if (!q->lock) q->lock = enif_mutex_create((char *)q->name);
    if (!q->wake) q->wake = enif_cond_create((char *)q->name);
    if (!q->lock || !q->wake) return false;
    enif_mutex_lock(q->lock);
    q->stopping = false;
    enif_mutex_unlock(q->lock);
    if (enif_thread_create((char *)q->name, &q->thread, release_worker, q, NULL) != 0) return false;
    enif_mutex_lock(q->lock);
    q->running = true;
    enif_mutex_unlock(q->lock);
    return true;
}

/* Waits for every queued release; later ones run at once, where asked. */
static void queue_stop(release_queue *q) {
    if (!q->lock) return;
    enif_mutex_lock(q->lock);
    bool running = q->running;
    q->stopping = true;
    enif_cond_broadcast(q->wake);
    enif_mutex_unlock(q->lock);
    if (running) enif_thread_join(q->thread, NULL);
    enif_mutex_lock(q->lock);
    q->running = false;
    enif_mutex_unlock(q->lock);
}

static bool releasers_start(void) {
    if (!queue_start(&releaser)) return false;
    if (queue_start(&idler)) {
        if (queue_start(&closer)) return true;
        queue_stop(&idler);
    }
    queue_stop(&releaser);
    return false;
}

static void releasers_stop(void) {
    queue_stop(&closer);
    queue_stop(&idler);
    queue_stop(&releaser);
}

/* ---- entry, stats, configuration, load --------------------------------------- */

static bool parse_mode(ErlNifEnv *env, ERL_NIF_TERM term, bool *is_auto, mode *m) {
    (void)env;
    *is_auto = false;
    if (enif_is_identical(term, atom_auto))
        *is_auto = true;
    else if (enif_is_identical(term, atom_normal))
        *m = MODE_NORMAL;
    else if (enif_is_identical(term, atom_yielding))
        *m = MODE_YIELDING;
    else if (enif_is_identical(term, atom_dirty_cpu))
        *m = MODE_DIRTY_CPU;
    else if (enif_is_identical(term, atom_yielding_dirty))
        *m = MODE_YIELDING_DIRTY;
    else if (enif_is_identical(term, atom_threaded))
        *m = MODE_THREADED;
    else
        return false;
    return true;
}

static mode pick_mode(registered_type *learned, uint64_t units) {
    double ns = predict_ns(learned, units);
    if (ns < (double)atomic_load_explicit(&normal_max_ns, memory_order_relaxed)) return MODE_NORMAL;
    uint64_t yielding_max = atomic_load_explicit(&yielding_max_ns, memory_order_relaxed);
    if (yielding_max == NO_LIMIT || ns < (double)yielding_max) return MODE_YIELDING;
    return MODE_YIELDING_DIRTY;
}

/* The learned cost of a registered type; NULL for a type not registered
 * at load. A handful of pointers: a scan costs less than the call. */
static registered_type *learned_of(const wb_job_type *type) {
    for (int i = 0; i < job_type_count; i++)
        if (job_types[i].type == type) return &job_types[i];
    return NULL;
}

ERL_NIF_TERM wb_run(ErlNifEnv *env, const wb_job_type *type, int argc, const ERL_NIF_TERM argv[]) {
    registered_type *learned = type ? learned_of(type) : NULL;
    if (!learned || argc != type->argc + 3) return enif_make_badarg(env);
    bool is_auto;
    mode m = MODE_NORMAL;
    if (!parse_mode(env, argv[type->argc], &is_auto, &m)) {
        /* a threaded job's caller collecting or cancelling it: the job
         * resource comes in the reference's place */
        if (enif_is_identical(argv[type->argc], atom_collect))
            return threaded_collect(env, type, argv);
        if (enif_is_identical(argv[type->argc], atom_cancel))
            return threaded_cancel(env, type, argv[type->argc + 2]);
        return enif_make_badarg(env);
    }
    bool tiny = enif_is_identical(argv[type->argc + 1], atom_true);
    alignas(max_align_t) unsigned char args[WB_MAX_ARGS_SIZE];
    ERL_NIF_TERM reason;
    if (!decode_args(env, type, argv, args, &reason)) return wb_error(env, reason);
    uint64_t units = 0;
    if (is_auto) {
        units = type->predict(args) + setup_units(type, args);
        m = pick_mode(learned, units);
    }
    switch (m) {
    case MODE_NORMAL:
        /* learn from auto's normal runs that are big enough to time well,
         * and from one in SAMPLE_RUNS of the others (per scheduler thread):
         * a type whose units cost far more than predicted is seen too */
        {
            bool outran = false;
            ERL_NIF_TERM out = run_on_stack(
                env, type, learned, args, tiny,
                is_auto && (units >= LEARN_MIN_UNITS || ++untimed_runs % SAMPLE_RUNS == 0),
                is_auto ? auto_normal_budget(learned, units) : UINT64_MAX, &outran);
            if (!outran) return out;
            /* the job needed more units than it predicted: what it did is
             * dropped (steps touch nothing but their state) and it starts
             * again sliced, and the cost per predicted unit jumps so that
             * the next call like it is sliced from the start */
            outran_prediction(learned, units);
            return start_sliced_or_dirty(env, type, learned, MODE_YIELDING, tiny, true, argv, args);
        }
    case MODE_THREADED:
        return start_threaded(env, type, learned, tiny, argv, argv[type->argc + 2], args);
    default:
        return start_sliced_or_dirty(env, type, learned, m, tiny, is_auto, argv, args);
    }
}

void wb_runtime_resident_bytes(int64_t delta) {
    atomic_fetch_add_explicit(&resident_bytes, delta, memory_order_relaxed);
}

static ERL_NIF_TERM slice_source_atom(ErlNifEnv *env) {
    switch (atomic_load(&slice_from)) {
    case SOURCE_ERLANG_TURN:
        return wb_atom(env, "erlang_turn");
    case SOURCE_CONFIGURED:
        return wb_atom(env, "configured");
    default:
        return wb_atom(env, "default");
    }
}

/* What the C side accepts, for the Elixir side to be checked against:
 * the modes, the most job arguments, the slice settings' range in us. */
static ERL_NIF_TERM limits_map(ErlNifEnv *env) {
    ERL_NIF_TERM modes[] = {atom_auto,     atom_normal,         atom_dirty_cpu,
                            atom_yielding, atom_yielding_dirty, atom_threaded};
    ERL_NIF_TERM keys[] = {wb_atom(env, "modes"), wb_atom(env, "max_job_args"),
                           wb_atom(env, "slice_us_min"), wb_atom(env, "slice_us_max")};
    ERL_NIF_TERM values[] = {
        enif_make_list_from_array(env, modes, sizeof modes / sizeof *modes),
        enif_make_int(env, WB_MAX_JOB_ARGS),
        enif_make_uint64(env, SLICE_NS_MIN / 1000),
        enif_make_uint64(env, SLICE_NS_MAX / 1000),
    };
    ERL_NIF_TERM map;
    if (!enif_make_map_from_arrays(env, keys, values, sizeof keys / sizeof *keys, &map))
        return wb_atom(env, "nil");
    return map;
}

ERL_NIF_TERM wb_runtime_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    enif_mutex_lock(pool.lock);
    size_t queued = pool.queued;
    enif_mutex_unlock(pool.lock);
    ERL_NIF_TERM costs = enif_make_new_map(env), measured = enif_make_new_map(env);
    for (int i = 0; i < job_type_count; i++) {
        uint64_t ps = atomic_load_explicit(&job_types[i].ps_per_unit, memory_order_relaxed);
        bool known = atomic_load_explicit(&job_types[i].measured, memory_order_relaxed);
        ERL_NIF_TERM name = wb_atom(env, job_types[i].type->name);
        if (!enif_make_map_put(env, costs, name, enif_make_uint64(env, ps), &costs) ||
            !enif_make_map_put(env, measured, name, known ? atom_true : wb_atom(env, "false"),
                               &measured))
            return enif_make_badarg(env);
    }
    uint64_t turn = atomic_load(&erlang_turn_ns);
    ERL_NIF_TERM keys[] = {
        wb_atom(env, "live_jobs"),        wb_atom(env, "live_bytes"),
        wb_atom(env, "pool_threads"),     wb_atom(env, "queued"),
        wb_atom(env, "normal_max_us"),    wb_atom(env, "yielding_max_us"),
        wb_atom(env, "slice_us"),         wb_atom(env, "dirty_slice_us"),
        wb_atom(env, "ps_per_unit"),      wb_atom(env, "resident_bytes"),
        wb_atom(env, "slice_ns"),         wb_atom(env, "slice_source"),
        wb_atom(env, "erlang_turn_ns"),   wb_atom(env, "calibrated_slice_ns"),
        wb_atom(env, "released_later"),   wb_atom(env, "limits"),
        wb_atom(env, "answered_in_call"), wb_atom(env, "release_pending"),
        wb_atom(env, "cost_measured"),
    };
    ERL_NIF_TERM values[] = {
        enif_make_int64(env, atomic_load(&live_jobs)),
        enif_make_int64(env, atomic_load(&live_bytes)),
        enif_make_int(env, pool.nthreads),
        enif_make_uint64(env, queued),
        enif_make_uint64(env, atomic_load(&normal_max_ns) / 1000),
        atomic_load(&yielding_max_ns) == NO_LIMIT
            ? wb_atom(env, "infinity")
            : enif_make_uint64(env, atomic_load(&yielding_max_ns) / 1000),
        enif_make_uint64(env, (atomic_load(&slice_ns) + 500) / 1000),
        enif_make_uint64(env, atomic_load(&dirty_slice_ns) / 1000),
        costs,
        enif_make_int64(env, atomic_load(&resident_bytes)),
        enif_make_uint64(env, atomic_load(&slice_ns)),
        slice_source_atom(env),
        turn ? enif_make_uint64(env, turn) : wb_atom(env, "nil"),
        enif_make_uint64(env, atomic_load(&calibrated_ns)),
        enif_make_uint64(env, atomic_load(&releaser.done) + atomic_load(&idler.done)),
        limits_map(env),
        enif_make_uint64(env, atomic_load(&pool.answered_in_call)),
        enif_make_int64(env, atomic_load(&releaser.pending) + atomic_load(&idler.pending)),
        measured,
    };
    ERL_NIF_TERM map;
    if (!enif_make_map_from_arrays(env, keys, values, sizeof keys / sizeof *keys, &map))
        return enif_make_badarg(env);
    return map;
}

/* A setting's new value in *ns, or false when the term is not one: `keep`
 * (the current value), a whole number of microseconds within [min_ns,
 * max_ns], or, where `special` names an atom, that atom (*ns = NO_LIMIT). */
static bool get_setting_ns(ErlNifEnv *env, ERL_NIF_TERM term, uint64_t current, uint64_t min_ns,
                           uint64_t max_ns, const char *special, uint64_t *ns) {
    ErlNifUInt64 us;
    if (enif_is_identical(term, wb_atom(env, "keep"))) {
        *ns = current;
        return true;
    }
    if (special && enif_is_identical(term, wb_atom(env, special))) {
        *ns = NO_LIMIT;
        return true;
    }
    if (!enif_get_uint64(env, term, &us) || us > max_ns / 1000 || us * 1000 < min_ns) return false;
    *ns = us * 1000;
    return true;
}

/* Keeps normal_max_ns at one slice while it follows the slice. */
static void follow_slice(void) {
    if (atomic_load(&normal_max_is_slice)) atomic_store(&normal_max_ns, atomic_load(&slice_ns));
}

/* The slice that load_info carries, #{slice_ns => Ns, erlang_turn_ns => Ns}
 * (WellBehaved.SDK.load_info/0); anything else leaves the default (false).
 * A configured slice stays as it is (a reload of the library). Also
 * runtime_configure's, for a library loaded before the calibration could
 * be made (while it compiled). */
static bool apply_load_info(ErlNifEnv *env, ERL_NIF_TERM info) {
    ERL_NIF_TERM v;
    ErlNifUInt64 slice, turn;
    if (!enif_is_map(env, info) ||
        !enif_get_map_value(env, info, enif_make_atom(env, "slice_ns"), &v) ||
        !enif_get_uint64(env, v, &slice) || slice < SLICE_NS_MIN || slice > SLICE_NS_MAX ||
        !enif_get_map_value(env, info, enif_make_atom(env, "erlang_turn_ns"), &v) ||
        !enif_get_uint64(env, v, &turn) || turn == 0)
        return false;
    atomic_store(&calibrated_ns, slice);
    atomic_store(&erlang_turn_ns, turn);
    if (atomic_load(&slice_from) == SOURCE_CONFIGURED) return true;
    atomic_store(&slice_from, SOURCE_ERLANG_TURN);
    atomic_store(&slice_ns, slice);
    follow_slice();
    return true;
}

ERL_NIF_TERM wb_runtime_configure(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    uint64_t normal, yielding, slice, dirty;
    if (argc == 4 && enif_is_map(env, argv[2]))
        return apply_load_info(env, argv[2]) ? atom_ok : enif_make_badarg(env);
    if (argc != 4 ||
        !get_setting_ns(env, argv[0], atomic_load(&normal_max_ns), 0, NO_LIMIT - 1, "slice",
                        &normal) ||
        !get_setting_ns(env, argv[1], atomic_load(&yielding_max_ns), 0, NO_LIMIT - 1, "infinity",
                        &yielding) ||
        !get_setting_ns(env, argv[2], atomic_load(&slice_ns), SLICE_NS_MIN, SLICE_NS_MAX,
                        "calibrated", &slice) ||
        !get_setting_ns(env, argv[3], atomic_load(&dirty_slice_ns), SLICE_NS_MIN, SLICE_NS_MAX,
                        NULL, &dirty))
        return enif_make_badarg(env);
    bool calibrated = slice == NO_LIMIT;
    if (calibrated) slice = atomic_load(&calibrated_ns);
    bool normal_is_slice = normal == NO_LIMIT || (atomic_load(&normal_max_is_slice) &&
                                                  enif_is_identical(argv[0], wb_atom(env, "keep")));
    if (normal_is_slice) normal = slice;
    if (normal > yielding) return enif_make_badarg(env);
    if (!enif_is_identical(argv[2], wb_atom(env, "keep")))
        atomic_store(&slice_from, calibrated ? (atomic_load(&erlang_turn_ns) ? SOURCE_ERLANG_TURN
                                                                             : SOURCE_DEFAULT)
                                             : SOURCE_CONFIGURED);
    atomic_store(&normal_max_is_slice, normal_is_slice);
    atomic_store(&normal_max_ns, normal);
    atomic_store(&yielding_max_ns, yielding);
    atomic_store(&slice_ns, slice);
    atomic_store(&dirty_slice_ns, dirty);
    return atom_ok;
}

/* Registers the types (a reload of the library keeps what it learned):
 * 0, or the code of the first type refused (wb_load_refusal). */
static int register_types(wb_job_type *const types[]) {
    int index;
    enum wb_job_problem problem = wb_job_types_check(types, &index);
    if (problem != WB_JOB_FINE) return wb_load_refusal(index, problem);
    for (int i = 0; types[i]; i++) {
        if (learned_of(types[i])) continue;
        /* new types beside those of an instance still loaded */
        if (job_type_count == WB_MAX_JOB_TYPES) return wb_load_refusal(i, WB_JOB_TOO_MANY_TYPES);
        registered_type *slot = &job_types[job_type_count++];
        slot->type = types[i];
        atomic_init(&slot->ps_per_unit, types[i]->ps_per_unit ? types[i]->ps_per_unit : 1000);
        atomic_init(&slot->overruns, 0);
        atomic_init(&slot->measured, false);
        atomic_init(&slot->probe_units, 0);
        atomic_init(&slot->probe_ns, 0);
    }
    return 0;
}

static int runtime_load(ErlNifEnv *env, wb_job_type *const types[], ERL_NIF_TERM load_info,
                        ErlNifResourceFlags flags) {
    int refused = register_types(types);
    if (refused) return refused;
    owned_block_resource =
        enif_open_resource_type(env, NULL, "wb_owned_block", owned_block_destructor, flags, NULL);
    if (!owned_block_resource) return 1;
    ErlNifResourceTypeInit init = {.dtor = job_destructor, .down = job_down};
    job_resource = enif_open_resource_type_x(env, "wb_job", &init, flags, NULL);
    if (!job_resource) {
        if (loaded_instances == 0) job_type_count = 0;
        return 1;
    }
    unsigned n = atomic_load(&job_resource_count);
    if (n == 0 || job_resources[(n - 1) % OLD_TYPES] != job_resource) {
        atomic_store(&job_resources[n % OLD_TYPES], job_resource);
        atomic_store(&job_resource_count, n + 1);
    }
    atom_ok = enif_make_atom(env, "ok");
    atom_error = enif_make_atom(env, "error");
    atom_true = enif_make_atom(env, "true");
    atom_enomem = enif_make_atom(env, "enomem");
    atom_badarg = enif_make_atom(env, "badarg");
    atom_unloaded = enif_make_atom(env, "unloaded");
    atom_normal = enif_make_atom(env, "normal");
    atom_dirty_cpu = enif_make_atom(env, "dirty_cpu");
    atom_yielding = enif_make_atom(env, "yielding");
    atom_yielding_dirty = enif_make_atom(env, "yielding_dirty");
    atom_threaded = enif_make_atom(env, "threaded");
    atom_auto = enif_make_atom(env, "auto");
    atom_collect = enif_make_atom(env, "collect");
    atom_cancel = enif_make_atom(env, "cancel");
    atom_done = enif_make_atom(env, "done");
    atom_cancelled = enif_make_atom(env, "cancelled");
    apply_load_info(env, load_info);
    /* A reload of this library (purge, then load) shares its statics with
     * the instance still alive: one pool serves every loaded instance. The
     * code server serializes load and unload calls. */
    if (loaded_instances++ > 0) return 0;
    ErlNifSysInfo info;
    enif_system_info(&info, sizeof info);
    int threads = info.scheduler_threads > 1 ? info.scheduler_threads : 2;
    if (pool_start(threads)) {
        if (releasers_start()) return 0;
        pool_stop();
    }
    loaded_instances--;
    job_type_count = 0;
    return 1;
}

int wb_runtime_load(ErlNifEnv *env, wb_job_type *const types[], ERL_NIF_TERM load_info) {
    return runtime_load(env, types, load_info, ERL_NIF_RT_CREATE);
}

/* The new module instance takes the job resource type over (the old
 * one's jobs keep running, freed by the same code); both instances share
 * this library's statics, pool and counters. */
int wb_runtime_upgrade(ErlNifEnv *env, wb_job_type *const types[], ERL_NIF_TERM load_info) {
    return runtime_load(env, types, load_info, ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER);
}

void wb_runtime_unload(void) {
    if (--loaded_instances > 0) return;
    pool_stop();
    releasers_stop();
    job_type_count = 0;
}
