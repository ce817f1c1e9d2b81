/* Running jobs: a job's life in every mode (its block prepared, its
 * arguments decoded, its state set up, counted and released; the job
 * resource's callbacks), and the modes: wb_run runs a job :normal or dirty
 * in one call, time-sliced (:yielding, :yielding_dirty), or hands it to the
 * thread pool (:threaded, wb_pool.c); :auto picks one from its cost. */
#include "wb_runtime_internal.h"

/* ---- jobs ---------------------------------------------------------------------- */

_Atomic int64_t wb_rt_live_jobs, wb_rt_live_bytes;

void wb_rt_job_prepare(wb_job *job, const wb_job_type *type, registered_type *learned, mode m,
                       const job_note *note) {
    /* the state starts zeroed, as the header promises job types */
    memset(job, 0, sizeof *job + type->state_size);
    job->magic = JOB_MAGIC;
    job->type = type;
    job->learned = learned;
    job->mode = m;
    job->tiny = note->tiny;
    job->report = note->report;
    job->chosen_by_auto = note->by_auto;
    job->rerun = note->rerun;
    job->auto_reason = note->reason;
    job->predicted_units = note->units;
    job->ps_at_choice = note->ps;
    job->check_ns = CHECK_NS;
    if (m == MODE_YIELDING) {
        /* the slice is read once per job: a configure call applies to jobs
         * started after it */
        job->slice_ns = setting_ns(&wb_rt_slice_ns);
        /* one clock read per slice: each check costs about what a yield
         * does, so steps are sized to the time left in the slice */
        job->check_ns = job->slice_ns;
        job->first_slice = true;
    } else if (m == MODE_YIELDING_DIRTY) {
        job->slice_ns = setting_ns(&wb_rt_dirty_slice_ns);
    }
    atomic_init(&job->phase, THREADED_RUNNING);
}

/* ---- a call's thread-locals: counters, decode's reason ----------------------- */

/* This thread's counter block, and the generation of the blocks it was
 * claimed in: blocks are freed when the library unloads
 * (wb_rt_counters_free), and a block of an older generation is never
 * written again. And the reason a decode gave with wb_reject on this
 * thread, if it did. One struct, so that a call finds all of it with one
 * look-up of the library's thread-local storage (not
 * tls_model("initial-exec"), which is cheaper: a library whose
 * thread-locals do not fit the static TLS left when it loads would fail
 * to load). */
typedef struct {
    counter_block *block;
    unsigned generation;
    bool decode_rejected;
    ERL_NIF_TERM decode_reason;
} thread_locals;

static _Thread_local thread_locals here;

/* where a thread counts when no block could be allocated: summed by
 * nobody, so several threads may write it */
static counter_block counters_unsummed;

static counter_block *claim_counters(thread_locals *t) {
    unsigned generation = atomic_load_explicit(&wb_rt_counter_generation, memory_order_relaxed);
    counter_block *b = wb_rt_claim_counters();
    if (!b) return &counters_unsummed; /* the next count tries again */
    t->block = b;
    t->generation = generation;
    return b;
}

/* The thread's block; claimed at its first count. */
static inline counter_block *counters_of(thread_locals *t) {
    counter_block *b = t->block;
    if (WB_UNLIKELY(!b || t->generation != atomic_load_explicit(&wb_rt_counter_generation,
                                                                memory_order_relaxed)))
        b = claim_counters(t);
    return b;
}

counter_block *wb_rt_counters(void) {
    return counters_of(&here);
}

bool wb_reject(ERL_NIF_TERM reason) {
    here.decode_reason = reason;
    here.decode_rejected = true;
    return false;
}

static inline bool decode_args(thread_locals *t, ErlNifEnv *env, const wb_job_type *type,
                               const ERL_NIF_TERM argv[], void *args, ERL_NIF_TERM *reason) {
    t->decode_rejected = false;
    if (type->decode(env, argv, args)) return true;
    *reason = t->decode_rejected ? t->decode_reason : wb_rt_atom_badarg;
    t->decode_rejected = false;
    return false;
}

/* The type's decode; on failure *reason is what it gave wb_reject, or
 * badarg. */
bool wb_rt_decode_args(ErlNifEnv *env, const wb_job_type *type, const ERL_NIF_TERM argv[],
                       void *args, ERL_NIF_TERM *reason) {
    return decode_args(&here, env, type, argv, args, reason);
}

/* Sets up the job's state. A job on the C stack that owns no heap memory
 * cannot outlive its call, so it skips the shared counters (whose atomic
 * updates would be a large part of a short call's cost). */
bool wb_rt_job_init(ErlNifEnv *env, wb_job *job, const void *args, ERL_NIF_TERM *reason) {
    if (!job->type->init(env, args, job->state, reason)) return false;
    job->initialized = true;
    size_t memory = job->type->memory ? job->type->memory(job->state) : 0;
    if (memory > WB_JOB_MEMORY_MAX) memory = WB_JOB_MEMORY_MAX;
    job->state_bytes = job->type->state_size + memory;
    if (job->on_stack && memory == 0) return true;
    job->accounted = sizeof *job + job->type->state_size + memory;
    atomic_fetch_add_explicit(&wb_rt_live_jobs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&wb_rt_live_bytes, (int64_t)job->accounted, memory_order_relaxed);
    return true;
}

/* Releases what the job owns; the job's own block belongs to its caller. */
void wb_rt_job_release(wb_job *job) {
    if (job->initialized) {
        if (job->type->destroy) job->type->destroy(job->state);
        job->initialized = false;
        if (job->accounted) {
            atomic_fetch_sub_explicit(&wb_rt_live_jobs, 1, memory_order_relaxed);
            atomic_fetch_sub_explicit(&wb_rt_live_bytes, (int64_t)job->accounted,
                                      memory_order_relaxed);
        }
    }
    if (job->env) {
        enif_free_env(job->env);
        job->env = NULL;
    }
}

void wb_rt_job_destructor(ErlNifEnv *env, void *obj) {
    (void)env;
    wb_job *job = obj;
    /* a job dropped unfinished: its caller died, or never collected it */
    if (job->magic == JOB_MAGIC && !atomic_load(&job->terminal))
        wb_rt_job_ended(job, CTR_CANCELLED);
    wb_rt_job_release(job);
    if (job->reply_env) enif_free_env(job->reply_env);
    job->reply_env = NULL;
}

void wb_rt_job_down(ErlNifEnv *env, void *obj, ErlNifPid *pid, ErlNifMonitor *mon) {
    (void)env;
    (void)pid;
    (void)mon;
    wb_job *job = obj;
    int running = THREADED_RUNNING;
    if (atomic_compare_exchange_strong(&job->phase, &running, THREADED_CANCELLED)) {
        wb_rt_count_here(CTR_CALLER_DEATHS);
        wb_rt_job_ended(job, CTR_CANCELLED);
    }
}

/* :auto's :normal runs too small to time, counted per thread */
static _Thread_local unsigned untimed_runs;

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

/* ---- normal and dirty_cpu: the whole job in one call -------------------------- */

/* :auto's :normal runs give the job the units of this many thresholds
 * (wb_rt_normal_max_ns) at the learned cost, and at least this many times the
 * units predicted: a job that needs more was predicted wrong (a bug in its
 * predict, or steps that never finish), and goes on sliced instead of
 * holding its scheduler without end. */
#define AUTO_NORMAL_SPAN 2

static uint64_t auto_normal_budget(registered_type *learned, uint64_t predicted) {
    uint64_t ps = atomic_load_explicit(&learned->ps_per_unit, memory_order_relaxed);
    double units = (double)AUTO_NORMAL_SPAN *
                   (double)atomic_load_explicit(&wb_rt_normal_max_ns, memory_order_relaxed) *
                   1000.0 / (double)(ps ? ps : 1);
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
    int64_t start = clock_ns(), limit = AUTO_NORMAL_SPAN * setting_ns(&wb_rt_normal_max_ns);
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
 * not (then *outran, and the answer is `error`). A normal run reads the clock only when `timed`
 * (big enough to learn from), and does at most `budget` units (UINT64_MAX: no bound); a job that
 * needs more sets *outran and answers nothing. A bounded run of a type whose cost is not measured
 * yet is bounded by the clock too (probe_steps). */
static ERL_NIF_TERM run_to_end(ErlNifEnv *env, wb_job *job, bool dirty, bool timed, uint64_t budget,
                               bool *outran) {
    uint64_t used = 0;
    job->slices++;
    if (!dirty && !job->tiny && budget != UINT64_MAX &&
        !atomic_load_explicit(&job->learned->measured, memory_order_relaxed)) {
        int64_t ns = 0;
        bool done = probe_steps(job, budget, &used, &ns);
        wb_rt_learn_probe(job->learned, used, ns);
        charge_ns(env, ns, setting_ns(&wb_rt_slice_ns), NULL);
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
            wb_rt_learn_run(job, used, ns);
        } else {
            ns = (int64_t)predict_ns(job->learned, used);
        }
        charge_ns(env, ns, setting_ns(&wb_rt_slice_ns), NULL);
        if (!done) {
            *outran = true;
            return 0;
        }
        return job_result(env, job);
    }
    int64_t last = clock_ns();
    for (;;) {
        if (wb_rt_timed_step(job, &last)) return job_result(env, job);
        if (dirty && !enif_is_current_process_alive(env)) {
            *outran = true;
            return wb_rt_atom_error;
        }
        if (!dirty && job->work_units >= budget) {
            *outran = true;
            return 0;
        }
    }
}

/* A :normal job in this call; *failed when it answers an error or its
 * result raised. */
static ERL_NIF_TERM run_on_stack(ErlNifEnv *env, const wb_job_type *type, registered_type *learned,
                                 const void *args, const job_note *note, bool timed,
                                 uint64_t budget, bool *outran, bool *failed) {
    alignas(max_align_t) unsigned char buf[sizeof(wb_job) + INLINE_STATE_MAX];
    wb_job *job = (wb_job *)buf;
    bool heap = type->state_size > INLINE_STATE_MAX;
    if (heap && !(job = enif_alloc(sizeof(wb_job) + type->state_size))) {
        *failed = true;
        return wb_error(env, wb_rt_atom_enomem);
    }
    wb_rt_job_prepare(job, type, learned, MODE_NORMAL, note);
    job->on_stack = true;
    ERL_NIF_TERM reason, out;
    if (wb_rt_job_init(env, job, args, &reason)) {
        out = run_to_end(env, job, false, timed, budget, outran);
        *failed = !*outran && result_raised(env, out);
        if (job->report && !*outran) out = wb_rt_report(env, job, out);
    } else {
        out = wb_error(env, reason);
        *failed = true;
    }
    wb_rt_job_release(job);
    if (heap) enif_free(job);
    return out;
}

static ERL_NIF_TERM finish(ErlNifEnv *env, wb_job *job) {
    wb_rt_learn_small_sliced(job);
    ERL_NIF_TERM out = job_result(env, job);
    wb_rt_job_ended(job, result_raised(env, out) ? CTR_FAILED : CTR_COMPLETED);
    if (job->report) out = wb_rt_report(env, job, out);
    wb_rt_job_release(job); /* free now rather than when the VM drops the resource */
    return out;
}

/* ---- yielding and yielding_dirty: time-sliced -------------------------------- */

/* Continuation arguments: the job resource, then the job's arguments, which
 * keep the input binaries alive for as long as the job runs. */
static ERL_NIF_TERM slice_continue(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

static ERL_NIF_TERM reschedule(ErlNifEnv *env, wb_job *job, int argc, const ERL_NIF_TERM argv[]) {
    wb_rt_count_here(CTR_YIELDS);
    int flags = job->mode == MODE_YIELDING_DIRTY ? ERL_NIF_DIRTY_JOB_CPU_BOUND : 0;
    return enif_schedule_nif(env, job->type->name, flags, slice_continue, argc, argv);
}

/* Units for `ns` of work, at the job's learned rate (at least one). */
static uint64_t budget_for(wb_job *job, int64_t ns) {
    uint64_t full = wb_rt_next_budget(job);
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
    job->slices++;
    for (;;) {
        uint64_t units = 0;
        /* The first slice starts where the calling process is in its
         * reductions, which only the VM knows: short steps, each reported,
         * until the VM says the process has used them. */
        int64_t left = job->slice_ns - job->unreported_ns;
        if (job->first_slice && left > job->slice_ns / FIRST_SLICE_STEPS)
            left = job->slice_ns / FIRST_SLICE_STEPS;
        uint64_t budget = dirty || job->tiny ? wb_rt_next_budget(job) : budget_for(job, left);
        int64_t limit = dirty ? job->slice_ns - (last - start) : left;
        bool done =
            wb_rt_step_within(job->type, job->state, budget, &units, last, limit > 0 ? limit : 1);
        int64_t now = clock_ns();
        wb_rt_learn(job, units, now - last);
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
                wb_rt_count_here(CTR_CALLER_DEATHS);
                wb_rt_job_ended(job, CTR_CANCELLED);
                wb_rt_job_release(job);
                return wb_rt_atom_error;
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
    if (!(job = wb_rt_get_job(env, argv[0]))) return enif_make_badarg(env);
    /* a state that keeps no pointer into its arguments needs no decode */
    if (job->type->bind) {
        /* the same terms decoded at the first call: a type whose decode
         * refuses them now answers as it would have then */
        if (!wb_rt_decode_args(env, job->type, argv + 1, args, &reason)) {
            wb_rt_job_ended(job, CTR_FAILED);
            wb_rt_job_release(job);
            return wb_error(env, reason);
        }
        job->type->bind(args, job->state);
    }
    return run_slice(env, job, argc, argv);
}

/* Makes the job resource and the continuation arguments [Job | Args]. */
static wb_job *new_job_resource(ErlNifEnv *env, const wb_job_type *type, registered_type *learned,
                                mode m, const job_note *note, const ERL_NIF_TERM argv[],
                                ERL_NIF_TERM cargv[]) {
    wb_job *job = wb_rt_alloc_job(type);
    if (!job) return NULL;
    wb_rt_job_prepare(job, type, learned, m, note);
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
    if (!(job = wb_rt_get_job(env, argv[0]))) return enif_make_badarg(env);
    if (!wb_rt_decode_args(env, job->type, argv + 1, args, &reason) ||
        !wb_rt_job_init(env, job, args, &reason)) {
        wb_rt_job_ended(job, CTR_FAILED);
        return wb_error(env, reason);
    }
    if (job->mode == MODE_YIELDING_DIRTY) return run_slice(env, job, argc, argv);
    /* a :yielding job whose set-up was too big for a normal scheduler */
    if (job->mode == MODE_YIELDING) {
        wb_rt_count_here(CTR_DIRTY_HOPS);
        return enif_schedule_nif(env, job->type->name, 0, slice_continue, argc, argv);
    }
    bool died = false;
    ERL_NIF_TERM out = run_to_end(env, job, true, true, UINT64_MAX, &died);
    if (died) wb_rt_count_here(CTR_CALLER_DEATHS);
    wb_rt_job_ended(job, died                      ? CTR_CANCELLED
                         : result_raised(env, out) ? CTR_FAILED
                                                   : CTR_COMPLETED);
    if (job->report && !died) out = wb_rt_report(env, job, out);
    wb_rt_job_release(job);
    return out;
}

/* A set-up that runs on a dirty scheduler before a :yielding job's
 * slices. */
static bool setup_on_dirty(registered_type *learned, const wb_job_type *type, const void *args) {
    return predict_ns(learned, setup_units(type, args)) >= SETUP_DIRTY_NS;
}

static ERL_NIF_TERM start_sliced_or_dirty(ErlNifEnv *env, const wb_job_type *type,
                                          registered_type *learned, mode m, const job_note *note,
                                          const ERL_NIF_TERM argv[], const void *args) {
    ERL_NIF_TERM cargv[WB_MAX_JOB_ARGS + 1], reason;
    wb_job *job = new_job_resource(env, type, learned, m, note, argv, cargv);
    if (!job) {
        wb_rt_count_here(CTR_FAILED + (int)m);
        return wb_error(env, wb_rt_atom_enomem);
    }
    if (m != MODE_YIELDING || setup_on_dirty(learned, type, args)) {
        wb_rt_count_here(CTR_DIRTY_HOPS);
        return enif_schedule_nif(env, type->name, ERL_NIF_DIRTY_JOB_CPU_BOUND, dirty_first,
                                 type->argc + 1, cargv);
    }
    if (!wb_rt_job_init(env, job, args, &reason)) {
        wb_rt_job_ended(job, CTR_FAILED);
        return wb_error(env, reason);
    }
    return run_slice(env, job, type->argc + 1, cargv);
}

/* ---- entry ------------------------------------------------------------------- */

static bool parse_mode(ErlNifEnv *env, ERL_NIF_TERM term, bool *is_auto, mode *m) {
    (void)env;
    *is_auto = false;
    if (enif_is_identical(term, wb_rt_atom_auto))
        *is_auto = true;
    else if (enif_is_identical(term, wb_rt_atom_normal))
        *m = MODE_NORMAL;
    else if (enif_is_identical(term, wb_rt_atom_yielding))
        *m = MODE_YIELDING;
    else if (enif_is_identical(term, wb_rt_atom_dirty_cpu))
        *m = MODE_DIRTY_CPU;
    else if (enif_is_identical(term, wb_rt_atom_yielding_dirty))
        *m = MODE_YIELDING_DIRTY;
    else if (enif_is_identical(term, wb_rt_atom_threaded))
        *m = MODE_THREADED;
    else
        return false;
    return true;
}

/* :auto's choice for `units` of work, and *ps, the cost per unit it
 * predicted with. */
static mode pick_mode(registered_type *learned, uint64_t units, auto_reason *reason, uint64_t *ps) {
    *ps = atomic_load_explicit(&learned->ps_per_unit, memory_order_relaxed);
    double ns = units_ns(units, *ps);
    *reason = BELOW_NORMAL_MAX;
    if (ns < (double)atomic_load_explicit(&wb_rt_normal_max_ns, memory_order_relaxed))
        return MODE_NORMAL;
    uint64_t yielding_max = atomic_load_explicit(&wb_rt_yielding_max_ns, memory_order_relaxed);
    *reason = BELOW_YIELDING_MAX;
    if (yielding_max == NO_LIMIT || ns < (double)yielding_max) return MODE_YIELDING;
    *reason = ABOVE_YIELDING_MAX;
    return MODE_YIELDING_DIRTY;
}

/* explain: what :auto would do with these arguments, without running. */
static ERL_NIF_TERM explain(ErlNifEnv *env, const wb_job_type *type, registered_type *learned,
                            const ERL_NIF_TERM argv[]) {
    alignas(max_align_t) unsigned char args[WB_MAX_ARGS_SIZE];
    ERL_NIF_TERM reason;
    if (!wb_rt_decode_args(env, type, argv, args, &reason)) return wb_error(env, reason);
    uint64_t predicted = type->predict(args), setup = setup_units(type, args), ps;
    auto_reason why;
    mode m = pick_mode(learned, predicted + setup, &why, &ps);
    bool dirty_setup =
        m == MODE_YIELDING_DIRTY || (m == MODE_YIELDING && setup_on_dirty(learned, type, args));
    return wb_rt_explain(env, learned, m, why, ps, predicted, setup, dirty_setup);
}

/* The flags argument: `true` (tiny), or an integer, bit 0 tiny and bit 1
 * report; anything else (`false`) neither. `false` is compared as a term
 * first: an atom is one word, and this is every call's. */
static void parse_flags(ErlNifEnv *env, ERL_NIF_TERM term, job_note *note) {
    int flags;
    if (term == wb_rt_atom_false) return;
    if (enif_is_identical(term, wb_rt_atom_true)) {
        note->tiny = true;
    } else if (enif_get_int(env, term, &flags) && flags >= 0) {
        note->tiny = flags & 1;
        note->report = flags & 2;
    }
}

ERL_NIF_TERM wb_run(ErlNifEnv *env, const wb_job_type *type, int argc, const ERL_NIF_TERM argv[]) {
    registered_type *learned = type ? wb_rt_learned_of(type) : NULL;
    if (!learned || argc != type->argc + 3) return enif_make_badarg(env);
    bool is_auto;
    mode m = MODE_NORMAL;
    if (!parse_mode(env, argv[type->argc], &is_auto, &m)) {
        /* a threaded job's caller collecting or cancelling it: the job
         * resource comes in the reference's place */
        if (enif_is_identical(argv[type->argc], wb_rt_atom_collect))
            return wb_rt_threaded_collect(env, type, argv);
        if (enif_is_identical(argv[type->argc], wb_rt_atom_cancel))
            return wb_rt_threaded_cancel(env, type, argv[type->argc + 2]);
        if (enif_is_identical(argv[type->argc], wb_rt_atom_explain))
            return explain(env, type, learned, argv);
        return enif_make_badarg(env);
    }
    /* one look-up of the thread-locals per call: the compiler would look
     * the address up again after each call it makes (the barrier makes it
     * keep the pointer) */
    thread_locals *t = &here;
#if defined(__GNUC__)
    __asm__("" : "+r"(t));
#endif
    counter_block *counters = counters_of(t);
    wb_rt_count(counters, CTR_CALLS + (is_auto ? COUNT_AUTO : (int)m));
    job_note note = {.by_auto = is_auto};
    parse_flags(env, argv[type->argc + 1], &note);
    alignas(max_align_t) unsigned char args[WB_MAX_ARGS_SIZE];
    ERL_NIF_TERM reason;
    if (!decode_args(t, env, type, argv, args, &reason)) {
        wb_rt_count(counters, CTR_FAILED + (is_auto ? COUNT_AUTO : (int)m));
        return wb_error(env, reason);
    }
    uint64_t units = 0;
    if (is_auto) {
        units = type->predict(args) + setup_units(type, args);
        m = pick_mode(learned, units, &note.reason, &note.ps);
        note.units = units;
        wb_rt_count(counters, CTR_AUTO_CHOSEN + (int)m);
    }
    switch (m) {
    case MODE_NORMAL:
        /* learn from auto's normal runs that are big enough to time well,
         * and from one in SAMPLE_RUNS of the others (per scheduler thread):
         * a type whose units cost far more than predicted is seen too */
        {
            bool outran = false, failed = false;
            ERL_NIF_TERM out = run_on_stack(
                env, type, learned, args, &note,
                is_auto && (units >= LEARN_MIN_UNITS || ++untimed_runs % SAMPLE_RUNS == 0),
                is_auto ? auto_normal_budget(learned, units) : UINT64_MAX, &outran, &failed);
            if (!outran) {
                wb_rt_count(counters, (failed ? CTR_FAILED : CTR_COMPLETED) + MODE_NORMAL);
                return out;
            }
            /* the :normal attempt ends as a rerun, and a :yielding job starts */
            wb_rt_count(counters, CTR_RERUNS);
            /* the job needed more units than it predicted: what it did is
             * dropped (steps touch nothing but their state) and it starts
             * again sliced, and the cost per predicted unit jumps so that
             * the next call like it is sliced from the start */
            wb_rt_outran_prediction(learned, units);
            note.rerun = true;
            return start_sliced_or_dirty(env, type, learned, MODE_YIELDING, &note, argv, args);
        }
    case MODE_THREADED:
        return wb_rt_start_threaded(env, type, learned, &note, argv, argv[type->argc + 2], args);
    default:
        return start_sliced_or_dirty(env, type, learned, m, &note, argv, args);
    }
}
