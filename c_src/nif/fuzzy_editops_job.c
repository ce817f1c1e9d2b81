/* The edit script of two binaries as a runtime job (the core:
 * c_src/metric/editops.h), beside the score job (fuzzy_score_job.c) and
 * like it run by a server of the library's job types too
 * (c_src/external/wb_ext_library.c).
 *
 *   fuzzy_editops(A, B, Unit, Metric) -> {Width, LengthA, LengthB, Ops}
 *     Metric levenshtein | indel | osa; the script of A into B (their
 *     lengths in units of Unit), Ops a
 *     binary of records <<Type:8, Src:Width/unit:8-native,
 *     Dest:Width/unit:8-native>> (Type: 0 insert, 1 delete, 2 replace, 3
 *     transpose; editops.h), positions in units of Unit, made in the
 *     steps and handed over as it is (no copy); decoded by the caller.
 *     Errors: {invalid_utf8, 1 | 2} in codepoint mode, enomem, and
 *     broken_script for a defect of the core (never).
 *
 * Both binaries are decoded into symbols in the first steps, a budget at
 * a time (the score job's decoding), then the script is made. */
#include "jobs.h"

#include "../metric/editops.h"

#include <stdlib.h>

static const char *const metric_names[WB_EO_METRICS] = {"levenshtein", "indel", "osa"};
static ERL_NIF_TERM metric_atoms[WB_EO_METRICS];

typedef struct {
    ErlNifBinary a, b;
    bool codepoints;
    wb_eo_metric metric;
} editops_args;

typedef struct {
    const uint8_t *in_a, *in_b; /* this call's binaries (editops_bind) */
    size_t len_a, len_b;
    bool codepoints;
    wb_eo_metric metric;
    uint32_t *a, *b; /* their symbols, blocks of `bytes` each */
    size_t bytes_a, bytes_b;
    wb_fz_decoding da, db;
    int invalid;  /* the binary whose UTF-8 is invalid: 1 or 2 (0: none) */
    bool started; /* eo is started: the symbols are all decoded */
    wb_eo eo;
} editops_job;

static bool editops_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    editops_args *in = args;
    if (!enif_inspect_binary(env, argv[0], &in->a) || !enif_inspect_binary(env, argv[1], &in->b) ||
        !wb_get_unit(env, argv[2], &in->codepoints))
        return false;
    for (int i = 0; i < WB_EO_METRICS; i++)
        if (enif_is_identical(argv[3], metric_atoms[i])) {
            in->metric = (wb_eo_metric)i;
            return true;
        }
    return false;
}

/* the decoding, then the script (the symbols at most the bytes) */
static uint64_t editops_predict(const void *args) {
    const editops_args *in = args;
    uint64_t decode = wb_fz_decode_units(in->a.size) + wb_fz_decode_units(in->b.size);
    uint64_t script = wb_eo_units(in->metric, in->a.size, in->b.size);
    return decode > UINT64_MAX - script ? UINT64_MAX : decode + script;
}

static uint64_t editops_setup(const void *args) {
    (void)args;
    return 1;
}

static void editops_bind(const void *args, void *state) {
    const editops_args *in = args;
    editops_job *job = state;
    job->in_a = in->a.data;
    job->in_b = in->b.data;
}

/* a symbol block of len (its bytes in *bytes), at least one symbol */
static uint32_t *symbol_block(size_t len, size_t *bytes) {
    if (len > SIZE_MAX / sizeof(uint32_t) - 1) return NULL;
    *bytes = (len > 0 ? len : 1) * sizeof(uint32_t);
    return wb_block_alloc(*bytes);
}

static void editops_destroy(void *state) {
    editops_job *job = state;
    if (job->started) wb_eo_free(&job->eo);
    job->started = false;
    wb_block_free(job->a, job->bytes_a);
    wb_block_free(job->b, job->bytes_b);
    job->a = job->b = NULL;
}

static bool editops_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const editops_args *in = args;
    editops_job *job = state;
    job->codepoints = in->codepoints;
    job->metric = in->metric;
    job->len_a = in->a.size;
    job->len_b = in->b.size;
    job->a = symbol_block(in->a.size, &job->bytes_a);
    job->b = job->a ? symbol_block(in->b.size, &job->bytes_b) : NULL;
    if (!job->b) {
        editops_destroy(job);
        *reason = wb_atom(env, "enomem");
        return false;
    }
    editops_bind(args, state);
    return true;
}

static bool editops_step(void *state, uint64_t budget, uint64_t *used) {
    editops_job *job = state;
    if (!job->started) {
        uint64_t start = *used;
        bool cp = job->codepoints;
        if (!wb_fz_symbols_step(&job->da, job->in_a, job->len_a, cp, job->a, budget, used))
            return false;
        if (job->da.invalid) {
            job->invalid = 1;
            return true;
        }
        uint64_t spent = *used - start;
        if (spent >= budget) return false;
        if (!wb_fz_symbols_step(&job->db, job->in_b, job->len_b, cp, job->b, budget - spent, used))
            return false;
        if (job->db.invalid) {
            job->invalid = 2;
            return true;
        }
        /* records the pair: no work that grows with it, cannot fail */
        wb_eo_start(&job->eo, job->metric, job->a, job->da.count, job->b, job->db.count);
        job->eo.free_later = wb_free_later;
        job->eo.alloc = wb_block_alloc;
        job->eo.release = wb_block_free;
        job->started = true;
        spent = *used - start;
        if (spent >= budget) return false;
        budget -= spent;
    }
    return wb_eo_step(&job->eo, budget, used);
}

/* {Width, LengthA, LengthB, Ops}, the records' block becoming the binary */
static ERL_NIF_TERM editops_take(ErlNifEnv *env, void *state) {
    editops_job *job = state;
    if (job->invalid)
        return wb_error(env, enif_make_tuple2(env, wb_atom(env, "invalid_utf8"),
                                              enif_make_int(env, job->invalid)));
    if (job->eo.broken) return wb_error(env, wb_atom(env, "broken_script"));
    if (job->eo.failed) return wb_error(env, wb_atom(env, "enomem"));
    size_t bytes;
    uint8_t *out = wb_eo_take(&job->eo, &bytes);
    ERL_NIF_TERM ops;
    if (out) {
        ops = wb_make_malloc_binary(env, out, bytes);
    } else if (!enif_make_new_binary(env, 0, &ops)) {
        return wb_error(env, wb_atom(env, "enomem"));
    }
    return enif_make_tuple4(env, enif_make_uint(env, (unsigned)job->eo.width),
                            enif_make_uint64(env, job->eo.m), enif_make_uint64(env, job->eo.n),
                            ops);
}

/* read once, after init: the symbols' blocks */
static size_t editops_memory(const void *state) {
    const editops_job *job = state;
    return job->bytes_a + job->bytes_b;
}

wb_job_type wb_fuzzy_editops_job = {
    .name = "fuzzy_editops",
    .argc = 4,
    .args_size = sizeof(editops_args),
    .state_size = sizeof(editops_job),
    .decode = editops_decode,
    .predict = editops_predict,
    .setup = editops_setup,
    .init = editops_init,
    .bind = editops_bind,
    .step = editops_step,
    .take_result = editops_take,
    .memory = editops_memory,
    .destroy = editops_destroy,
    .ps_per_unit = 2000, /* a unit is about 2 ns (kernels.h) */
};

void wb_fuzzy_editops_load(ErlNifEnv *env) {
    for (int i = 0; i < WB_EO_METRICS; i++)
        metric_atoms[i] = enif_make_atom(env, metric_names[i]);
}
