/* Spin workloads as runtime jobs; the loops are in spin/spin.c. */
#include "jobs.h"

#include "../spin/spin.h"

static uint64_t spin_predict(ErlNifEnv *env, const ERL_NIF_TERM argv[]) {
    ErlNifUInt64 n;
    return enif_get_uint64(env, argv[0], &n) ? n : 0;
}

static bool spin_init(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *state,
                      ERL_NIF_TERM *reason) {
    ErlNifUInt64 n;
    if (!enif_get_uint64(env, argv[0], &n)) {
        *reason = wb_atom(env, "badarg");
        return false;
    }
    wb_spin_init(state, n);
    return true;
}

static bool spin_step(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *state, uint64_t budget,
                      uint64_t *used) {
    (void)env;
    (void)argv;
    return wb_spin_step(state, budget, used);
}

static ERL_NIF_TERM spin_result(ErlNifEnv *env, const void *state) {
    return enif_make_uint64(env, wb_spin_checksum(state));
}

static size_t no_memory(const void *state) {
    (void)state;
    return 0;
}

static void no_destroy(void *state) {
    (void)state;
}

wb_job_type wb_spin_job = {
    .name = "spin",
    .argc = 1,
    .state_size = sizeof(wb_spin),
    .predict = spin_predict,
    .init = spin_init,
    .step = spin_step,
    .result = spin_result,
    .memory = no_memory,
    .destroy = no_destroy,
    .ps_per_unit = 2700, /* one xorshift round: a 6-cycle dependency chain */
};

/* Spin.until: units are clock polls, predicted at ~25 ns each. */
#define POLL_NS 25

static uint64_t until_predict(ErlNifEnv *env, const ERL_NIF_TERM argv[]) {
    ErlNifUInt64 us;
    return enif_get_uint64(env, argv[0], &us) && us < UINT64_MAX / 1000 ? us * 1000 / POLL_NS : 0;
}

static bool until_init(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *state,
                       ERL_NIF_TERM *reason) {
    ErlNifUInt64 us;
    if (!enif_get_uint64(env, argv[0], &us)) {
        *reason = wb_atom(env, "badarg");
        return false;
    }
    wb_spin_until_init(state, us);
    return true;
}

static bool until_step(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *state, uint64_t budget,
                       uint64_t *used) {
    (void)env;
    (void)argv;
    return wb_spin_until_step(state, budget, used);
}

static ERL_NIF_TERM until_result(ErlNifEnv *env, const void *state) {
    return enif_make_uint64(env, ((const wb_spin_until *)state)->polls);
}

wb_job_type wb_spin_until_job = {
    .name = "spin_until",
    .argc = 1,
    .state_size = sizeof(wb_spin_until),
    .predict = until_predict,
    .init = until_init,
    .step = until_step,
    .result = until_result,
    .memory = no_memory,
    .destroy = no_destroy,
    .ps_per_unit = POLL_NS * 1000,
};
