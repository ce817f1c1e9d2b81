/* Test NIF libraries built on the SDK as a user's would be (see mk/sdk.mk).
 *
 * Elixir.WellBehaved.Test.SDKJobs: the job "fold" folds the numbers
 * 0 .. N - 1 into a 64-bit multiply-add hash, one unit per number (a
 * dependency chain, so no compiler turns it into a formula), with every
 * optional callback NULL: no setup, no bind (the state keeps no pointer
 * into the arguments), no memory, no destroy. The Elixir tests check it
 * against the same fold in Elixir, in every mode.
 *
 * Built with -DWB_TEST_REFUSED it is Elixir.WellBehaved.Test.SDKRefused,
 * whose job type has no step callback: the runtime must refuse the load. */
#include <wb_runtime.h>

typedef struct {
    uint64_t n;
} fold_args;

typedef struct {
    uint64_t next, n, sum;
} fold_state;

static bool fold_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    ErlNifUInt64 n;
    if (!enif_get_uint64(env, argv[0], &n)) return false;
    ((fold_args *)args)->n = n;
    return true;
}

static uint64_t fold_predict(const void *args) {
    return ((const fold_args *)args)->n;
}

static bool fold_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    fold_state *s = state;
    s->n = ((const fold_args *)args)->n;
    return true;
}

static bool fold_step(void *state, uint64_t budget, uint64_t *used) {
    fold_state *s = state;
    uint64_t end = s->n - s->next > budget ? s->next + budget : s->n;
    *used += end - s->next;
    for (; s->next < end; s->next++)
        s->sum = s->sum * UINT64_C(6364136223846793005) + s->next;
    return s->next == s->n;
}

static ERL_NIF_TERM fold_result(ErlNifEnv *env, const void *state) {
    return enif_make_uint64(env, ((const fold_state *)state)->sum);
}

static wb_job_type fold_job = {
    .name = "fold",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .decode = fold_decode,
    .predict = fold_predict,
    .init = fold_init,
#ifndef WB_TEST_REFUSED
    .step = fold_step,
#endif
    .result = fold_result,
};

WB_JOB_NIF(fold, fold_job)

static ErlNifFunc nif_funcs[] = {
    {"fold", 4, fold, 0},
    WB_RUNTIME_NIFS,
};

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
    (void)priv;
    static wb_job_type *const types[] = {&fold_job, NULL};
#ifdef WB_TEST_REFUSED
    (void)fold_step;
#endif
    return wb_runtime_load(env, types, info);
}

static void unload(ErlNifEnv *env, void *priv) {
    (void)env;
    (void)priv;
    wb_runtime_unload();
}

#ifdef WB_TEST_REFUSED
ERL_NIF_INIT(Elixir.WellBehaved.Test.SDKRefused, nif_funcs, load, NULL, NULL, unload)
#else
ERL_NIF_INIT(Elixir.WellBehaved.Test.SDKJobs, nif_funcs, load, NULL, NULL, unload)
#endif
