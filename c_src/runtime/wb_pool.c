/* :threaded: a fixed pool of native threads that run jobs in quanta, round
 * robin; the caller's reply by message (or, for a short job, in the call
 * that queued it), collecting the result in the caller's process, and
 * cancelling a job whose caller cancels or dies. */
#include "wb_runtime_internal.h"

typedef struct {
    ErlNifMutex *lock;
    ErlNifCond *wake;
    wb_job *head, *tail;
    size_t queued;
    _Atomic size_t pending;  /* queued, readable without the lock */
    _Atomic size_t spinning; /* workers looking for work before they sleep */
    atomic_bool stopping;
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
 * queued the job: then true, and the caller also takes the monitor off.
 * *won: the answer reached the caller (in the call or by message). */
static bool threaded_reply(wb_job *job, ERL_NIF_TERM answer, bool *won) {
    *won = false;
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
    if (atomic_compare_exchange_strong(&job->phase, &awaited, THREADED_ANSWERED)) {
        *won = true;
        return true;
    }
    ERL_NIF_TERM msg = enif_make_tuple2(m, enif_make_copy(m, job->ref), job->answer);
    int running = THREADED_RUNNING;
    if (!atomic_compare_exchange_strong(&job->phase, &running, THREADED_DONE)) return false;
    *won = true;
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
    bool answered = false, won; /* the caller took the answer in its call */
    alignas(max_align_t) unsigned char args[WB_MAX_ARGS_SIZE];
    if (job_cancelled(job)) goto over;
    job->slices++; /* a quantum */
    /* the job's env keeps its argument terms alive until it is freed */
    if (!job->initialized) {
        if (!wb_rt_decode_args(env, job->type, job->args, args, &reason) ||
            !wb_rt_job_init(env, job, args, &reason))
            goto failed;
    } else if (job->type->bind) {
        /* resumed on this thread: bind the state to freshly decoded args */
        if (!wb_rt_decode_args(env, job->type, job->args, args, &reason)) goto failed;
        job->type->bind(args, job->state);
    }
    int64_t start = clock_ns(), last = start;
    while (!job_cancelled(job)) {
        if (wb_rt_timed_step(job, &last)) {
            /* counted when collected, or by the destructor if never */
            if (!threaded_reply(job, wb_rt_atom_done, &won)) forget_caller(NULL, job);
            return true; /* the state stays for the caller to collect */
        }
        if (last - start >= POOL_QUANTUM_NS &&
            atomic_load_explicit(&pool.pending, memory_order_relaxed) > 0)
            return false;
    }
    goto over;
failed:
    answered = threaded_reply(job, wb_error(env, reason), &won);
    if (won) wb_rt_job_ended(job, CTR_FAILED); /* else a cancel counted it */
over:
    if (!answered) forget_caller(NULL, job);
    wb_rt_job_release(job); /* free the state now, not when the VM drops the resource */
    return true;
}

static void *pool_worker(void *arg) {
    (void)arg;
    wb_job *job;
    bool after_job = false;
    while ((job = pool_pop(after_job))) {
        after_job = run_threaded(job);
        if (after_job) {
            enif_release_resource(job);
        } else {
            wb_rt_count_here(CTR_REQUEUES);
            pool_push(job); /* its quantum is over: behind the others */
        }
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
        if (!decoded && !wb_rt_decode_args(env, type, argv, args, &reason)) {
            wb_rt_job_ended(job, CTR_FAILED);
            wb_rt_job_release(job);
            return wb_error(env, reason);
        }
        type->bind(decoded ? decoded : args, job->state);
    }
    ERL_NIF_TERM out = job_result(env, job);
    wb_rt_job_ended(job, result_raised(env, out) ? CTR_FAILED : CTR_COMPLETED);
    if (job->report) out = wb_rt_report(env, job, out);
    wb_rt_job_release(job);
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
    int64_t wait = setting_ns(&wb_rt_slice_ns) / AWAIT_SLICE_SHARE;
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
    wb_rt_count_here(CTR_ANSWERED_IN_CALL);
    job->answered_in_call = true;
    /* ANSWERED: the pool thread is done with the state and the monitor */
    forget_caller(env, job);
    if (!enif_is_identical(job->answer, wb_rt_atom_done)) {
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
ERL_NIF_TERM wb_rt_start_threaded(ErlNifEnv *env, const wb_job_type *type, registered_type *learned,
                                  const job_note *note, const ERL_NIF_TERM args[], ERL_NIF_TERM ref,
                                  const void *decoded) {
    /* the reply is tagged with it: without one, nobody could wait for it */
    if (!enif_is_ref(env, ref)) {
        wb_rt_count_here(CTR_FAILED + MODE_THREADED);
        return enif_make_badarg(env);
    }
    int64_t await_ns = threaded_await_ns(type, learned, decoded);
    wb_job *job = wb_rt_alloc_job(type);
    if (!job) {
        wb_rt_count_here(CTR_FAILED + MODE_THREADED);
        return wb_error(env, wb_rt_atom_enomem);
    }
    wb_rt_job_prepare(job, type, learned, MODE_THREADED, note);
    ERL_NIF_TERM result;
    if (!(job->env = enif_alloc_env()) || !(job->reply_env = enif_alloc_env())) {
        result = wb_error(env, wb_rt_atom_enomem);
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
        result = wb_error(env, wb_rt_atom_badarg); /* caller already gone */
        goto out;
    }
    job->monitored = true;
    if (atomic_load(&pool.stopping)) {
        enif_demonitor_process(env, job, &job->monitor);
        job->monitored = false;
        result = wb_error(env, wb_rt_atom_unloaded);
        goto out;
    }
    if (await_ns > 0) atomic_store(&job->phase, THREADED_AWAITED);
    enif_keep_resource(job); /* the pool's reference, released by the worker */
    pool_push(job);
    if (!(await_ns > 0 && await_threaded(env, type, job, args, decoded, await_ns, &result)))
        result = enif_make_resource(env, job);
    enif_release_resource(job);
    return result;
out:
    /* refused before it was queued */
    wb_rt_job_ended(job, CTR_FAILED);
    enif_release_resource(job);
    return result;
}

/* The threaded job of `type` in `term`, or NULL. */
static wb_job *threaded_job(ErlNifEnv *env, const wb_job_type *type, ERL_NIF_TERM term) {
    wb_job *job = wb_rt_get_job(env, term);
    return job && job->type == type && job->mode == MODE_THREADED ? job : NULL;
}

/* collect: the result of a job that answered `done` by message. */
ERL_NIF_TERM wb_rt_threaded_collect(ErlNifEnv *env, const wb_job_type *type,
                                    const ERL_NIF_TERM argv[]) {
    wb_job *job = threaded_job(env, type, argv[type->argc + 2]);
    int done = THREADED_DONE;
    if (!job || !atomic_compare_exchange_strong(&job->phase, &done, THREADED_COLLECTED))
        return enif_make_badarg(env);
    return collect_finished(env, type, job, argv, NULL);
}

/* cancel: `cancelled` when the job will send nothing more; `done` when it
 * had already finished or failed (its message is on its way). */
ERL_NIF_TERM wb_rt_threaded_cancel(ErlNifEnv *env, const wb_job_type *type, ERL_NIF_TERM term) {
    wb_job *job = threaded_job(env, type, term);
    if (!job) return enif_make_badarg(env);
    int running = THREADED_RUNNING;
    if (atomic_compare_exchange_strong(&job->phase, &running, THREADED_CANCELLED)) {
        wb_rt_job_ended(job, CTR_CANCELLED);
        return wb_rt_atom_cancelled;
    }
    return running == THREADED_CANCELLED ? wb_rt_atom_cancelled : wb_rt_atom_done;
}

void wb_rt_pool_stop(void) {
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

bool wb_rt_pool_start(int nthreads) {
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
            wb_rt_pool_stop();
            return false;
        }
        pool.nthreads++;
    }
    return true;
}

void wb_rt_pool_counts(size_t *queued, int *threads) {
    enif_mutex_lock(pool.lock);
    *queued = pool.queued;
    enif_mutex_unlock(pool.lock);
    *threads = pool.nthreads;
}
