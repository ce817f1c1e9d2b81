/* Deferred frees: wb_release_later and wb_free_later hand clean-ups to
 * threads of the runtime's own (one of normal priority, one at the lowest,
 * one for clean-ups that may block), and wb_make_malloc_binary gives a
 * malloc'd block to a binary whose garbage frees it there. */
#include "wb_runtime_internal.h"

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

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
 * ones go to the thread of normal priority, so the memory waiting stays
 * bounded. Larger blocks, rare and slow to free, and every other release,
 * keep the thread of normal priority, which a busy machine cannot hold up
 * for long. Each thread takes what is queued in one go, and is woken only
 * when it sleeps. */

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
    bool lowest;   /* runs at the lowest priority; when starved, passes to `releaser` */
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
        bool starved =
            queued && q->lowest && q->head && t->queued_ns - q->head->queued_ns > IDLE_STARVED_NS;
        if (starved) queued = false;
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
        if (starved) {
            /* to the thread of normal priority, not freed here: giving
             * pages back takes ~0.1 ms per MiB, more on a busy machine,
             * which is when this runs */
            free(t);
            queue_release(&releaser, release, arg);
            return;
        }
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
ErlNifResourceType *wb_rt_owned_block_resource;

void wb_rt_owned_block_destructor(ErlNifEnv *env, void *obj) {
    (void)env;
    owned_block *o = obj;
    if (o->size < WB_RELEASE_LATER_FROM)
        free(o->block);
    else
        wb_release_later(free_block, o->block);
}

ERL_NIF_TERM wb_make_malloc_binary(ErlNifEnv *env, void *block, size_t size) {
    owned_block *o = wb_rt_owned_block_resource
                         ? enif_alloc_resource(wb_rt_owned_block_resource, sizeof *o)
                         : NULL;
    if (!o) {
        free(block);
        return enif_raise_exception(env, wb_rt_atom_enomem);
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

bool wb_rt_releasers_start(void) {
    if (!queue_start(&releaser)) return false;
    if (queue_start(&idler)) {
        if (queue_start(&closer)) return true;
        queue_stop(&idler);
    }
    queue_stop(&releaser);
    return false;
}

void wb_rt_releasers_stop(void) {
    queue_stop(&closer);
    queue_stop(&idler);
    queue_stop(&releaser);
}

/* The releases done and still queued, for runtime_stats: the threads of
 * normal and lowest priority (not the one for blocking clean-ups). */
void wb_rt_release_counts(uint64_t *done, int64_t *pending) {
    *done = atomic_load(&releaser.done) + atomic_load(&idler.done);
    *pending = atomic_load(&releaser.pending) + atomic_load(&idler.pending);
}
