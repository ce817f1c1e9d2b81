/* Levenshtein as a runtime job: argument decoding and terms only; the
 * algorithm is in metric/levenshtein_text.c. */
#include "jobs.h"

#include "../metric/levenshtein_text.h"

#include <stdlib.h>

static ERL_NIF_TERM atom_byte, atom_codepoint, atom_long;

/* arguments: A, B, Unit (byte | codepoint), MaxDistance (integer | nil) */
typedef struct {
    ErlNifBinary a, b;
    bool codepoints;
    size_t max_distance;
} lev_args;

/* the core's state, and the inputs of the current NIF call (byte mode
 * reads the text from them at every step) */
typedef struct {
    wb_lev core;
    const uint8_t *a, *b;
} lev_job;

bool wb_get_unit(ErlNifEnv *env, ERL_NIF_TERM term, bool *codepoints) {
    (void)env;
    if (enif_is_identical(term, atom_byte))
        *codepoints = false;
    else if (enif_is_identical(term, atom_codepoint))
        *codepoints = true;
    else
        return false;
    return true;
}

bool wb_get_cutoff(ErlNifEnv *env, ERL_NIF_TERM term, size_t *max_distance) {
    ErlNifUInt64 k;
    if (enif_get_uint64(env, term, &k))
        *max_distance = wb_lev_cutoff(k);
    else if (enif_is_atom(env, term)) /* nil */
        *max_distance = WB_LEV_NO_LIMIT;
    else
        return false;
    return true;
}

ERL_NIF_TERM wb_levenshtein_short(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifBinary a, b;
    bool codepoints;
    size_t max_distance, d;
    if (!enif_inspect_binary(env, argv[0], &a) || !enif_inspect_binary(env, argv[1], &b) ||
        !wb_get_unit(env, argv[2], &codepoints) || !wb_get_cutoff(env, argv[3], &max_distance))
        return enif_make_badarg(env);
    if (!wb_lev_short(a.data, a.size, b.data, b.size, codepoints, max_distance, &d))
        return atom_long;
    return enif_make_uint64(env, d);
}

static bool lev_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    lev_args *in = args;
    return enif_inspect_binary(env, argv[0], &in->a) && enif_inspect_binary(env, argv[1], &in->b) &&
           wb_get_unit(env, argv[2], &in->codepoints) &&
           wb_get_cutoff(env, argv[3], &in->max_distance);
}

/* A codepoint column can cost more than a byte column of the same blocks
 * (symbols of 256 and up are looked up in the pattern's map, and decoding
 * UTF-8 is slower than widening bytes): its units count double, so that
 * the one cost per unit the runtime learns for this job type holds for
 * both units. */
#define CODEPOINT_WEIGHT 2

/* The set-up (decoding, affixes, the pattern) runs in the steps. */
static uint64_t lev_predict(const void *args) {
    const lev_args *in = args;
    uint64_t units =
        wb_lev_predict(in->a.data, in->a.size, in->b.data, in->b.size, in->max_distance) +
        wb_lev_setup_units(in->a.size, in->b.size, in->codepoints);
    return in->codepoints ? units * CODEPOINT_WEIGHT : units;
}

/* init tries the short path (at most WB_LEV_SHORT_BYTES bytes looked at,
 * about a unit per 4); the rest of the set-up runs in the steps, a budget
 * at a time: in init it would hold the scheduler unsliced. */
static uint64_t lev_setup(const void *args) {
    const lev_args *in = args;
    size_t bytes = in->a.size + in->b.size;
    return (bytes < WB_LEV_SHORT_BYTES ? bytes : WB_LEV_SHORT_BYTES) / 4 + 16;
}

static void lev_bind(const void *args, void *state) {
    const lev_args *in = args;
    lev_job *job = state;
    job->a = in->a.data;
    job->b = in->b.data;
}

/* {invalid_utf8, 1 | 2} or enomem: why a set-up failed */
static ERL_NIF_TERM failure(ErlNifEnv *env, wb_lev_status status) {
    switch (status) {
    case WB_LEV_EUTF8_A:
        return enif_make_tuple2(env, wb_atom(env, "invalid_utf8"), enif_make_int(env, 1));
    case WB_LEV_EUTF8_B:
        return enif_make_tuple2(env, wb_atom(env, "invalid_utf8"), enif_make_int(env, 2));
    default:
        return wb_atom(env, "enomem");
    }
}

static bool lev_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const lev_args *in = args;
    lev_job *job = state;
    (void)env;
    (void)reason;
    /* allocates nothing, cannot fail: a short pair is done at once, the
     * steps set the others up */
    wb_lev_begin(&job->core, in->a.data, in->a.size, in->b.data, in->b.size, in->codepoints,
                 in->max_distance);
    lev_bind(args, state);
    return true;
}

static bool lev_step(void *state, uint64_t budget, uint64_t *used) {
    lev_job *job = state;
    if (!job->core.codepoints) return wb_lev_step(&job->core, job->a, job->b, budget, used);
    uint64_t done = 0, part = budget / CODEPOINT_WEIGHT;
    bool finished = wb_lev_step(&job->core, job->a, job->b, part ? part : 1, &done);
    *used += done * CODEPOINT_WEIGHT;
    return finished;
}

/* The distance, or {error, Reason} for a codepoint set-up that failed in
 * a step. */
static ERL_NIF_TERM lev_result(ErlNifEnv *env, const void *state) {
    const wb_lev *core = &((const lev_job *)state)->core;
    if (wb_lev_error(core) != WB_LEV_OK) return wb_error(env, failure(env, wb_lev_error(core)));
    return enif_make_uint64(env, wb_lev_result(core));
}

static size_t lev_memory(const void *state) {
    return wb_lev_memory(&((const lev_job *)state)->core);
}

static void lev_destroy(void *state) {
    wb_lev_free(&((lev_job *)state)->core);
}

void wb_levenshtein_load(ErlNifEnv *env) {
    atom_byte = enif_make_atom(env, WB_LEV_UNIT_BYTE);
    atom_codepoint = enif_make_atom(env, WB_LEV_UNIT_CODEPOINT);
    atom_long = enif_make_atom(env, "long");
    /* symbol buffers: blocks from the VM's allocators, large ones freed off
     * the scheduler */
    static const wb_lev_table_allocator vm_tables = {wb_block_alloc, wb_block_free};
    wb_lev_set_table_allocator(&vm_tables);
    /* the fastest way to compute long pairs' columns on this CPU */
    wb_lev_choose_path();
}

wb_job_type wb_levenshtein_job = {
    .name = "levenshtein",
    .argc = 4,
    .args_size = sizeof(lev_args),
    .state_size = sizeof(lev_job),
    .decode = lev_decode,
    .predict = lev_predict,
    .setup = lev_setup,
    .init = lev_init,
    .bind = lev_bind,
    .step = lev_step,
    .result = lev_result,
    .memory = lev_memory,
    .destroy = lev_destroy,
    .ps_per_unit = 2000, /* ~2 ns per 64-cell block on the reference machine */
};
