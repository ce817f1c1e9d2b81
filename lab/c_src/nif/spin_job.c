/* Spin workloads as runtime jobs; the loops are in spin/spin.c. Both take
 * one argument, a count (iterations, or microseconds for spin_until). */
#include "jobs.h"

#include "../spin/spin.h"

static bool count_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    return enif_get_uint64(env, argv[0], (ErlNifUInt64 *)args);
}

/* Spin.run: units are xorshift rounds */

static uint64_t spin_predict(const void *args) {
    return *(const ErlNifUInt64 *)args;
}

static bool spin_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    wb_spin_init(state, *(const ErlNifUInt64 *)args);
    return true;
}

static bool spin_step(void *state, uint64_t budget, uint64_t *used) {
    return wb_spin_step(state, budget, used);
}

static ERL_NIF_TERM spin_result(ErlNifEnv *env, const void *state) {
    return enif_make_uint64(env, wb_spin_checksum(state));
}

wb_job_type wb_spin_job = {
    .name = "spin",
    .argc = 1,
    .args_size = sizeof(ErlNifUInt64),
    .state_size = sizeof(wb_spin),
    .decode = count_decode,
    .predict = spin_predict,
    .init = spin_init,
    .step = spin_step,
    .result = spin_result,
    .ps_per_unit = 2700, /* one xorshift round: a 6-cycle dependency chain */
};

/* Spin.until: units are clock polls, predicted at ~25 ns each */

#define POLL_NS 25

static uint64_t until_predict(const void *args) {
    ErlNifUInt64 us = *(const ErlNifUInt64 *)args;
    return us < UINT64_MAX / 1000 ? us * 1000 / POLL_NS : UINT64_MAX;
}

static bool until_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    wb_spin_until_init(state, *(const ErlNifUInt64 *)args);
    return true;
}

static bool until_step(void *state, uint64_t budget, uint64_t *used) {
    return wb_spin_until_step(state, budget, used);
}

static ERL_NIF_TERM until_result(ErlNifEnv *env, const void *state) {
    return enif_make_uint64(env, ((const wb_spin_until *)state)->polls);
}

wb_job_type wb_spin_until_job = {
    .name = "spin_until",
    .argc = 1,
    .args_size = sizeof(ErlNifUInt64),
    .state_size = sizeof(wb_spin_until),
    .decode = count_decode,
    .predict = until_predict,
    .init = until_init,
    .step = until_step,
    .result = until_result,
    .ps_per_unit = POLL_NS * 1000,
};
