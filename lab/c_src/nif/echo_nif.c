/* Echo through each in-VM way of calling native code: the term goes in and
 * comes back unchanged, so a round trip measures the mechanism alone (the
 * echo job, for :threaded and :external_job, is in echo_job.c). */
#include "jobs.h"

#include <stdatomic.h>
#include <stdlib.h>

/* :nif, :dirty_cpu, :dirty_io: the same function, registered three ways */
ERL_NIF_TERM wb_echo(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)env;
    (void)argc;
    return argv[0];
}

/* :yielding: one enif_schedule_nif hop back to a normal scheduler */
ERL_NIF_TERM wb_echo_yield(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    return enif_schedule_nif(env, "echo_yield", 0, wb_echo, argc, argv);
}

/* :thread_new: a native thread per call, which sends {Ref, Term} back.
 * Every thread is joined, so none is still returning through this library
 * when it is unloaded: a finished thread marks itself done, the next call
 * joins the done ones (they are past their work: the join is immediate),
 * and unload joins the rest. */
typedef struct echo_thread {
    ErlNifEnv *env; /* owns the copies of the term and the reference */
    ERL_NIF_TERM msg;
    ErlNifPid to;
    ErlNifTid tid;
    atomic_bool done;
    struct echo_thread *next;
} echo_thread;

static struct {
    ErlNifMutex *lock;
    echo_thread *live; /* started and not yet joined */
    bool unloading;
} threads;

static void *echo_thread_main(void *arg) {
    echo_thread *e = arg;
    enif_send(NULL, &e->to, e->env, e->msg);
    enif_free_env(e->env);
    e->env = NULL;
    atomic_store(&e->done, true);
    return NULL;
}

/* joins the threads that are done (all of them when `all`); under the lock */
static void join_threads(bool all) {
    echo_thread **at = &threads.live;
    while (*at) {
        echo_thread *e = *at;
        if (all || atomic_load(&e->done)) {
            enif_thread_join(e->tid, NULL);
            *at = e->next;
            free(e);
        } else
            at = &e->next;
    }
}

static ERL_NIF_TERM atom_ok;

int wb_echo_load(ErlNifEnv *env) {
    atom_ok = enif_make_atom(env, "ok");
    threads.lock = enif_mutex_create("wb_echo_threads");
    threads.live = NULL;
    threads.unloading = false;
    return threads.lock ? 0 : 1;
}

void wb_echo_unload(void) {
    if (!threads.lock) return;
    enif_mutex_lock(threads.lock);
    threads.unloading = true;
    join_threads(true);
    enif_mutex_unlock(threads.lock);
    enif_mutex_destroy(threads.lock);
    threads.lock = NULL;
}

ERL_NIF_TERM wb_echo_thread_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    echo_thread *e = malloc(sizeof *e);
    if (!e) return wb_error(env, wb_atom(env, "enomem"));
    atomic_init(&e->done, false);
    if (!(e->env = enif_alloc_env())) {
        free(e);
        return wb_error(env, wb_atom(env, "enomem"));
    }
    if (!enif_self(env, &e->to)) {
        enif_free_env(e->env);
        free(e);
        return enif_make_badarg(env);
    }
    e->msg =
        enif_make_tuple2(e->env, enif_make_copy(e->env, argv[1]), enif_make_copy(e->env, argv[0]));
    enif_mutex_lock(threads.lock);
    join_threads(false);
    bool started = !threads.unloading &&
                   enif_thread_create("wb_echo_thread", &e->tid, echo_thread_main, e, NULL) == 0;
    if (started) {
        e->next = threads.live;
        threads.live = e;
    }
    enif_mutex_unlock(threads.lock);
    if (!started) {
        enif_free_env(e->env);
        free(e);
        return wb_error(env, wb_atom(env, "thread_create"));
    }
    return atom_ok;
}
