/* Levenshtein as a runtime job: argument decoding and terms only; the
 * algorithm is in levenshtein/levenshtein.c. */
#include "jobs.h"

#include "../levenshtein/levenshtein.h"

/* arguments: A, B, Unit (byte | codepoint), MaxDistance (integer | nil) */
typedef struct {
    ErlNifBinary a, b;
    bool codepoints;
    size_t max_distance;
} lev_args;

static bool read_args(ErlNifEnv *env, const ERL_NIF_TERM argv[], lev_args *out) {
    if (!enif_inspect_binary(env, argv[0], &out->a) || !enif_inspect_binary(env, argv[1], &out->b))
        return false;
    ErlNifUInt64 k;
    if (enif_is_identical(argv[2], wb_atoms.byte))
        out->codepoints = false;
    else if (enif_is_identical(argv[2], wb_atoms.codepoint))
        out->codepoints = true;
    else
        return false;
    if (enif_get_uint64(env, argv[3], &k))
        out->max_distance = k < SIZE_MAX ? (size_t)k : SIZE_MAX;
    else if (enif_is_atom(env, argv[3]))
        out->max_distance = WB_LEV_NO_LIMIT;
    else
        return false;
    return true;
}

static uint64_t lev_predict(ErlNifEnv *env, const ERL_NIF_TERM argv[]) {
    lev_args in;
    if (!read_args(env, argv, &in)) return 0;
    return wb_lev_predict(in.a.data, in.a.size, in.b.data, in.b.size, in.max_distance);
}

static bool lev_init(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *state, ERL_NIF_TERM *reason) {
    lev_args in;
    if (!read_args(env, argv, &in)) {
        *reason = wb_atom(env, "badarg");
        return false;
    }
    switch (wb_lev_init(state, in.a.data, in.a.size, in.b.data, in.b.size, in.codepoints,
                        in.max_distance)) {
    case WB_LEV_OK:
        return true;
    case WB_LEV_EUTF8_A:
        *reason = enif_make_tuple2(env, wb_atom(env, "invalid_utf8"), enif_make_int(env, 1));
        return false;
    case WB_LEV_EUTF8_B:
        *reason = enif_make_tuple2(env, wb_atom(env, "invalid_utf8"), enif_make_int(env, 2));
        return false;
    default:
        *reason = wb_atom(env, "enomem");
        return false;
    }
}

static bool lev_step(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *state, uint64_t budget,
                     uint64_t *used) {
    ErlNifBinary a, b;
    /* the terms are the ones init accepted, so these cannot fail */
    if (!enif_inspect_binary(env, argv[0], &a) || !enif_inspect_binary(env, argv[1], &b))
        return true;
    return wb_lev_step(state, a.data, b.data, budget, used);
}

static ERL_NIF_TERM lev_result(ErlNifEnv *env, const void *state) {
    return enif_make_uint64(env, wb_lev_result(state));
}

static size_t lev_memory(const void *state) {
    return wb_lev_memory(state);
}

static void lev_destroy(void *state) {
    wb_lev_free(state);
}

wb_job_type wb_levenshtein_job = {
    .name = "levenshtein",
    .argc = 4,
    .state_size = sizeof(wb_lev),
    .predict = lev_predict,
    .init = lev_init,
    .step = lev_step,
    .result = lev_result,
    .memory = lev_memory,
    .destroy = lev_destroy,
    .ps_per_unit = 2000, /* ~2 ns per 64-cell block on the reference machine */
};
