/* The echo job: a job type that does no work and answers its argument,
 * for the runtime's :threaded mode and, in the lab's server program, for
 * schedule: :external (the :external_job echo method). */
#include "jobs.h"

/* :threaded: the runtime's threaded mode, with a job that does no work.
 * The term is the job's only argument: the runtime copies it into the job's
 * own environment, where the result refers to it (in a server, the term is
 * the request's, as long as the job). */
typedef struct {
    ERL_NIF_TERM term;
} echo_args;

typedef struct {
    ERL_NIF_TERM term;
} echo_state;

static bool echo_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    (void)env;
    ((echo_args *)args)->term = argv[0];
    return true;
}

static uint64_t echo_predict(const void *args) {
    (void)args;
    return 1;
}

static void echo_bind(const void *args, void *state) {
    ((echo_state *)state)->term = ((const echo_args *)args)->term;
}

static bool echo_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    echo_bind(args, state);
    return true;
}

static bool echo_step(void *state, uint64_t budget, uint64_t *used) {
    (void)state;
    (void)budget;
    *used += 1;
    return true;
}

static ERL_NIF_TERM echo_result(ErlNifEnv *env, const void *state) {
    (void)env;
    return ((const echo_state *)state)->term;
}

static size_t echo_memory(const void *state) {
    (void)state;
    return 0;
}

static void echo_destroy(void *state) {
    (void)state;
}

wb_job_type wb_echo_job = {
    .name = "echo",
    .argc = 1,
    .args_size = sizeof(echo_args),
    .state_size = sizeof(echo_state),
    .decode = echo_decode,
    .predict = echo_predict,
    .init = echo_init,
    .bind = echo_bind,
    .step = echo_step,
    .result = echo_result,
    .memory = echo_memory,
    .destroy = echo_destroy,
    .ps_per_unit = 1000,
};
