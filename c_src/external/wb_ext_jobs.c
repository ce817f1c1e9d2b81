/*
 * A server of SDK job types: a job type written for the runtime
 * (wb_runtime.h) runs in a server program too, for schedule: :external.
 * The program is the job types' own sources compiled with
 * WB_EXTERNAL_SERVER defined (WB_NIF_INIT then defines main, calling
 * wb_external_main) and linked with the server's sources and libei instead
 * of wb_runtime.c (WellBehaved.SDK.external_sources/0).
 *
 * This file is the server's job handling: the runtime's calls as a server
 * has them, and the requests below. A job's callbacks call erl_nif; here
 * erl_nif is the subset a job needs (wb_ext_nif.c), over terms decoded from
 * the request into memory of the request's own and encoded into the reply
 * (wb_ext_terms.c).
 *
 * Requests (see wb_external.h for the framing):
 *
 *   {wb_job, Name, Tiny, Args}   Name: the job's NIF name (WB_JOB_NIF's, in a
 *       WB_EXTERNAL_SERVER build) or its type's name (an atom); Tiny:
 *       true steps one unit at a time (tests); Args: a tuple of the job's
 *       argc terms. Answers {ok, Result}, {error, Reason} when decode or
 *       init refuses the arguments (as the VM's job NIF answers), or
 *       {raise, Reason} when result raised (enif_make_badarg: badarg).
 *       {error, unknown_job} for a name no job type has.
 *   {wb_stats}   #{jobs => Started, live_jobs => N, live_bytes => Bytes,
 *       cancelled => Count}: live_jobs and live_bytes go back to 0 once
 *       every job has ended, a cancelled one included; cancelled counts the
 *       jobs this server gave up after a cancel.
 *
 * The steps run on the connection's thread, about a millisecond each; between
 * them, every millisecond, the server checks for a cancel (an empty frame,
 * see wb_external.h, or the client gone) and abandons the job (its destroy
 * runs, its memory is freed) when there is one. A step that never returns
 * never sees it: the pool then kills this server (WellBehaved.External).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wb_runtime.h>

#include "../runtime/wb_job_check.h"
#include "wb_ext_terms.h"
#include "wb_external.h"

/* a step's length, and the interval between two checks of the client */
#define STEP_NS  1000000
#define CHECK_NS 1000000

/* --- the runtime's calls, as a server has them ------------------------------------------- */

static _Thread_local ERL_NIF_TERM rejected;
static _Thread_local int64_t step_deadline;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool wb_reject(ERL_NIF_TERM reason) {
    rejected = reason;
    return false;
}

ERL_NIF_TERM wb_atom(ErlNifEnv *env, const char *name) {
    return enif_make_atom(env, name);
}

ERL_NIF_TERM wb_error(ErlNifEnv *env, ERL_NIF_TERM reason) {
    return enif_make_tuple2(env, wb_atom(env, "error"), reason);
}

bool wb_slice_spent(void) {
    return now_ns() >= step_deadline;
}

int64_t wb_slice_ns(void) {
    return STEP_NS;
}

/* a server holds nothing between requests but its jobs, which it counts */
void wb_runtime_resident_bytes(int64_t delta) {
    (void)delta;
}

/* a server's thread may block: clean-ups run at once */
void wb_release_later(void (*release)(void *arg), void *arg) {
    release(arg);
}

void wb_release_later_blocking(void (*release)(void *arg), void *arg) {
    release(arg);
}

void wb_release_block_later(void (*release)(void *arg), void *block, size_t bytes) {
    (void)bytes;
    if (block) release(block);
}

void wb_free_later(void *block, size_t bytes) {
    wb_release_block_later(free, block, bytes);
}

/* The NIF library's entry points, for the same source built as a server:
 * WB_NIF_INIT defines main there, and nothing calls these. */
ERL_NIF_TERM wb_run(ErlNifEnv *env, const wb_job_type *type, int argc, const ERL_NIF_TERM argv[]) {
    (void)type;
    (void)argc;
    (void)argv;
    return enif_make_badarg(env);
}

ERL_NIF_TERM wb_runtime_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    return enif_make_badarg(env);
}

ERL_NIF_TERM wb_runtime_configure(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    return enif_make_badarg(env);
}

/* The load callbacks' calls, for a library's code linked into a server
 * (a Rust crate of jobs): nothing calls them there either. */
int wb_runtime_load(ErlNifEnv *env, wb_job_type *const types[], ERL_NIF_TERM load_info) {
    (void)env;
    (void)types;
    (void)load_info;
    return 1;
}

int wb_runtime_upgrade(ErlNifEnv *env, wb_job_type *const types[], ERL_NIF_TERM load_info) {
    (void)env;
    (void)types;
    (void)load_info;
    return 1;
}

void wb_runtime_unload(void) {}

/* --- jobs ------------------------------------------------------------------------------ */

static wb_job_type *const *job_types;

/* NIF names of job types (WB_JOB_NIF in a WB_EXTERNAL_SERVER build),
 * registered before main */
#define MAX_ALIASES 64
static struct {
    const char *nif;
    const wb_job_type *type;
} aliases[MAX_ALIASES];
static int alias_count;
static bool aliases_overflow;

void wb_external_alias(const char *nif_name, const wb_job_type *type) {
    if (alias_count == MAX_ALIASES) {
        aliases_overflow = true;
        return;
    }
    aliases[alias_count].nif = nif_name;
    aliases[alias_count].type = type;
    alias_count++;
}

/* the job type a request names: by its NIF's name, else by its own */
static const wb_job_type *find_type(const char *name) {
    for (int i = 0; i < alias_count; i++)
        if (strcmp(aliases[i].nif, name) == 0) return aliases[i].type;
    for (int i = 0; job_types && job_types[i]; i++)
        if (strcmp(job_types[i]->name, name) == 0) return job_types[i];
    return NULL;
}
static _Atomic uint64_t jobs_started, jobs_cancelled;
static _Atomic int64_t live_jobs, live_bytes;

/* {Tag, Term}, or {error, enomem} when env ran out of memory */
static int reply_tagged(wb_ext_reply *reply, ErlNifEnv *env, const char *tag, ERL_NIF_TERM term) {
    if (env->failed) return wb_ext_reply_error(reply, "enomem");
    if (ei_x_new_with_version(&reply->x) != 0) return -1;
    if (ei_x_encode_tuple_header(&reply->x, 2) != 0 || ei_x_encode_atom(&reply->x, tag) != 0 ||
        wb_ext_encode(&reply->x, term, 0) != 0) {
        ei_x_free(&reply->x);
        return env->failed ? wb_ext_reply_error(reply, "enomem") : -1;
    }
    return wb_ext_reply_x(reply);
}

static int reply_stats(wb_ext_reply *reply) {
    ei_x_buff *x = &reply->x;
    if (ei_x_new_with_version(x) != 0) return -1;
    if (ei_x_encode_map_header(x, 4) != 0 || ei_x_encode_atom(x, "jobs") != 0 ||
        ei_x_encode_ulonglong(x, atomic_load(&jobs_started)) != 0 ||
        ei_x_encode_atom(x, "live_jobs") != 0 ||
        ei_x_encode_longlong(x, atomic_load(&live_jobs)) != 0 ||
        ei_x_encode_atom(x, "live_bytes") != 0 ||
        ei_x_encode_longlong(x, atomic_load(&live_bytes)) != 0 ||
        ei_x_encode_atom(x, "cancelled") != 0 ||
        ei_x_encode_ulonglong(x, atomic_load(&jobs_cancelled)) != 0) {
        ei_x_free(x);
        return -1;
    }
    return wb_ext_reply_x(reply);
}

/* Steps the job to its end (about STEP_NS a step), or until cancel says the
 * client is gone: false then. */
static bool run_steps(const wb_job_type *type, void *state, bool tiny, wb_ext_cancel_fn cancel,
                      void *cancel_ctx) {
    uint64_t ps = type->ps_per_unit ? type->ps_per_unit : 1000;
    uint64_t budget = tiny ? 1 : (uint64_t)STEP_NS * 1000 / ps + 1;
    int64_t start = now_ns(), check_at = start + CHECK_NS;
    for (;;) {
        step_deadline = start + STEP_NS;
        uint64_t used = 0;
        if (type->step(state, budget, &used)) return true;
        int64_t end = now_ns();
        if (!tiny && used > 0) { /* the next step's budget from this one's pace */
            int64_t took = end - start > 0 ? end - start : 1;
            double next = (double)used * STEP_NS / (double)took;
            budget = next < 1 ? 1 : next > 1e15 ? (uint64_t)1e15 : (uint64_t)next;
        }
        if (cancel && end >= check_at) {
            if (cancel(cancel_ctx)) return false;
            check_at = end + CHECK_NS;
        }
        start = end;
    }
}

static int run_job(ErlNifEnv *env, const wb_job_type *type, const ERL_NIF_TERM argv[], bool tiny,
                   wb_ext_reply *reply, wb_ext_cancel_fn cancel, void *cancel_ctx) {
    alignas(max_align_t) unsigned char args[WB_MAX_ARGS_SIZE];
    memset(args, 0, sizeof args);
    rejected = 0;
    if (!type->decode(env, argv, args)) {
        ERL_NIF_TERM reason = rejected ? rejected : wb_atom(env, "badarg");
        rejected = 0;
        return reply_tagged(reply, env, "error", reason);
    }
    void *state = calloc(1, type->state_size ? type->state_size : 1);
    if (!state) return wb_ext_reply_error(reply, "enomem");
    ERL_NIF_TERM reason = 0;
    if (!type->init(env, args, state, &reason)) {
        free(state);
        return reply_tagged(reply, env, "error", reason ? reason : wb_atom(env, "badarg"));
    }
    size_t memory = type->memory ? type->memory(state) : 0;
    int64_t bytes = (int64_t)(memory > WB_JOB_MEMORY_MAX ? WB_JOB_MEMORY_MAX : memory);
    atomic_fetch_add(&jobs_started, 1);
    atomic_fetch_add(&live_jobs, 1);
    atomic_fetch_add(&live_bytes, bytes);

    int rc = WB_EXT_CANCELLED;
    if (run_steps(type, state, tiny, cancel, cancel_ctx)) {
        ERL_NIF_TERM result =
            type->take_result ? type->take_result(env, state) : type->result(env, state);
        rc = env->raised ? reply_tagged(reply, env, "raise", env->exception)
                         : reply_tagged(reply, env, "ok", result);
    } else {
        atomic_fetch_add(&jobs_cancelled, 1);
    }
    if (type->destroy) type->destroy(state);
    free(state);
    atomic_fetch_sub(&live_bytes, bytes);
    atomic_fetch_sub(&live_jobs, 1);
    return rc;
}

static int handle(const char *tag, int arity, const char *req, size_t len, int idx,
                  wb_ext_reply *reply, wb_ext_cancel_fn cancel, void *cancel_ctx) {
    if (arity == 1 && strcmp(tag, "wb_stats") == 0) return reply_stats(reply);
    if (arity != 4 || strcmp(tag, "wb_job") != 0) return WB_EXT_UNKNOWN;
    char name[MAXATOMLEN], tiny[MAXATOMLEN];
    if (!wb_ext_decode_atom(req, len, &idx, name) || !wb_ext_decode_atom(req, len, &idx, tiny) ||
        (strcmp(tiny, "true") != 0 && strcmp(tiny, "false") != 0))
        return wb_ext_reply_error(reply, "badarg");
    const wb_job_type *type = find_type(name);
    if (!type) return wb_ext_reply_error(reply, "unknown_job");

    ErlNifEnv env;
    wb_ext_env_init(&env);
    wb_ext_term_reader r = {(const unsigned char *)req, len, (size_t)idx, &env};
    ERL_NIF_TERM args = wb_ext_decode(&r, 0);
    int rc;
    if (env.failed)
        rc = wb_ext_reply_error(reply, "enomem");
    else if (!args || r.at != len || NODE(args)->kind != T_TUPLE ||
             NODE(args)->size != (size_t)type->argc)
        rc = wb_ext_reply_error(reply, "badarg");
    else
        rc = run_job(&env, type, NODE(args)->v.elems, strcmp(tiny, "true") == 0, reply, cancel,
                     cancel_ctx);
    wb_ext_env_free(&env);
    return rc;
}

int wb_ext_jobs_use(wb_job_type *const types[]) {
    if (!wb_job_types_ok(types, "wb_external_main")) return -1;
    if (aliases_overflow) {
        fprintf(stderr, "wb_external_main: more than %d job NIFs\n", MAX_ALIASES);
        return -1;
    }
    for (int a = 0; a < alias_count; a++) {
        bool listed = false;
        for (int i = 0; types[i] && !listed; i++)
            listed = types[i] == aliases[a].type;
        if (!listed) {
            fprintf(stderr, "wb_external_main: the job NIF %s runs a type not in the list\n",
                    aliases[a].nif);
            return -1;
        }
    }
    job_types = types;
    wb_ext_use(handle);
    return 0;
}

int wb_external_main(int argc, char **argv, wb_job_type *const types[]) {
    if (wb_ext_jobs_use(types) != 0) return 2;
    const char *name = argc > 0 ? strrchr(argv[0], '/') : NULL;
    return wb_ext_server_main(name       ? name + 1
                              : argc > 0 ? argv[0]
                                         : "wb_external_main",
                              argc, argv);
}
