/* A NIF library written against the SDK's 0.1 header, built as a user's
 * is (mk/sdk.mk) and loaded by test/sdk_versions_test.exs: the header of a
 * later 0.x release must still compile and run it unchanged.
 *
 * Elixir.WellBehaved.Test.SDKv0: the job "adler" computes the Adler-32 of
 * a binary, a byte a unit, with only what 0.1 had: the job type's fields
 * of then, WB_JOB_NIF, WB_RUNTIME_NIFS, its own load and unload callbacks,
 * and wb_runtime_load with two arguments (no load_info: the default
 * slice).
 *
 * Built with -DWB_TEST_REFUSED it is Elixir.WellBehaved.Test.SDKv0Refused,
 * whose load callback breaks its job type (or its list) as the load_info
 * integer says before registering it, so that the runtime refuses the
 * load; any other load_info breaks step (the flaw numbers are those of
 * c_src/runtime/wb_job_check.h). */
#include <wb_runtime.h>

typedef struct {
    ErlNifBinary bin;
} adler_args;

typedef struct {
    const unsigned char *data; /* this call's binary (bind) */
    size_t size, next;
    uint32_t a, b;
} adler_state;

static bool adler_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    return enif_inspect_binary(env, argv[0], &((adler_args *)args)->bin) != 0;
}

static uint64_t adler_predict(const void *args) {
    return ((const adler_args *)args)->bin.size;
}

static void adler_bind(const void *args, void *state) {
    ((adler_state *)state)->data = ((const adler_args *)args)->bin.data;
}

static bool adler_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    adler_state *s = state;
    s->size = ((const adler_args *)args)->bin.size;
    s->a = 1;
    adler_bind(args, state);
    return true;
}

static bool adler_step(void *state, uint64_t budget, uint64_t *used) {
    adler_state *s = state;
    size_t left = s->size - s->next;
    size_t end = budget < left ? s->next + (size_t)budget : s->size;
    *used += end - s->next;
    for (; s->next < end; s->next++) {
        s->a = (s->a + s->data[s->next]) % 65521;
        s->b = (s->b + s->a) % 65521;
    }
    return s->next == s->size;
}

static ERL_NIF_TERM adler_result(ErlNifEnv *env, const void *state) {
    const adler_state *s = state;
    return enif_make_uint(env, (s->b << 16) | s->a);
}

static wb_job_type adler_job = {
    .name = "adler",
    .argc = 1,
    .args_size = sizeof(adler_args),
    .state_size = sizeof(adler_state),
    .decode = adler_decode,
    .predict = adler_predict,
    .init = adler_init,
    .bind = adler_bind,
    .step = adler_step,
    .result = adler_result,
    .ps_per_unit = 2000,
};

WB_JOB_NIF(adler, adler_job)

static ErlNifFunc nif_funcs[] = {
    {"adler", 4, adler, 0},
    WB_RUNTIME_NIFS,
};

#ifndef WB_TEST_REFUSED
static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
    (void)priv;
    (void)info;
    static wb_job_type *const types[] = {&adler_job, NULL};
    return wb_runtime_load(env, types);
}
#else
static ERL_NIF_TERM adler_take(ErlNifEnv *env, void *state) {
    return adler_result(env, state);
}

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
    (void)priv;
    static wb_job_type broken;
    /* 32 job types are the most a list may have */
    static wb_job_type *types[34];
    int flaw;
    if (!enif_get_int(env, info, &flaw)) flaw = 7;
    broken = adler_job;
    for (int i = 0; i < 34; i++)
        types[i] = NULL;
    types[0] = &broken;
    switch (flaw) {
    case 1:
        broken.name = "";
        break;
    case 2:
        broken.argc = WB_MAX_JOB_ARGS + 1;
        break;
    case 3:
        broken.args_size = WB_MAX_ARGS_SIZE + 1;
        break;
    case 4:
        broken.decode = NULL;
        break;
    case 5:
        broken.predict = NULL;
        break;
    case 6:
        broken.init = NULL;
        break;
    case 8:
        broken.result = NULL;
        break;
    case 9:
        broken.take_result = adler_take;
        break;
    case 10:
        for (int i = 0; i < 33; i++)
            types[i] = &adler_job;
        break;
    case 11:
        return wb_runtime_load(env, NULL);
    /* the second of two types */
    case 12:
        types[0] = &adler_job;
        types[1] = &broken;
        broken.step = NULL;
        break;
    default:
        broken.step = NULL;
    }
    return wb_runtime_load(env, types);
}
#endif

static void unload(ErlNifEnv *env, void *priv) {
    (void)env;
    (void)priv;
    wb_runtime_unload();
}

#ifdef WB_TEST_REFUSED
ERL_NIF_INIT(Elixir.WellBehaved.Test.SDKv0Refused, nif_funcs, load, NULL, NULL, unload)
#else
ERL_NIF_INIT(Elixir.WellBehaved.Test.SDKv0, nif_funcs, load, NULL, NULL, unload)
#endif
