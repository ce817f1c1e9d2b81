/* A job type of the job server's tests (test_ext_jobs.c) and fuzz target
 * (fuzz_ext_jobs.c), in a server only: "mirror", whose result is its
 * argument term (the term lives as long as the request there; in the VM a
 * job would copy it), and the pieces other test jobs share. */
#ifndef WB_MIRROR_JOB_H
#define WB_MIRROR_JOB_H

#include <wb_runtime.h>

typedef struct {
    ERL_NIF_TERM term;
} mirror_args;

static bool mirror_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    (void)env;
    ((mirror_args *)args)->term = argv[0];
    return true;
}

static uint64_t one_unit(const void *args) {
    (void)args;
    return 1;
}

static bool mirror_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    *(mirror_args *)state = *(const mirror_args *)args;
    return true;
}

static bool done_step(void *state, uint64_t budget, uint64_t *used) {
    (void)state;
    (void)budget;
    *used += 1;
    return true;
}

static ERL_NIF_TERM mirror_result(ErlNifEnv *env, const void *state) {
    (void)env;
    return ((const mirror_args *)state)->term;
}

static wb_job_type mirror_job = {
    .name = "mirror",
    .argc = 1,
    .args_size = sizeof(mirror_args),
    .state_size = sizeof(mirror_args),
    .decode = mirror_decode,
    .predict = one_unit,
    .init = mirror_init,
    .step = done_step,
    .result = mirror_result,
};

#endif
