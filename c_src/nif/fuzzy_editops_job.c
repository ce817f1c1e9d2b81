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
#include "pair_symbols.h"

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
    wb_pair_symbols p; /* the binaries and their symbols (editops_bind) */
    bool codepoints;
    wb_eo_metric metric;
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
    wb_pair_bind(&job->p, &in->a, &in->b);
}

static void editops_destroy(void *state) {
    editops_job *job = state;
    if (job->started) wb_eo_free(&job->eo);
    job->started = false;
    wb_pair_free(&job->p);
}

static bool editops_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const editops_args *in = args;
    editops_job *job = state;
    job->codepoints = in->codepoints;
    job->metric = in->metric;
    if (!wb_pair_alloc(&job->p, in->a.size, in->b.size)) {
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
        if (!wb_pair_decode_step(&job->p, job->codepoints, budget, used)) return false;
        if (job->p.invalid) return true;
        /* records the pair: no work that grows with it, cannot fail */
        wb_eo_start(&job->eo, job->metric, job->p.a, job->p.da.count, job->p.b, job->p.db.count);
        job->eo.free_later = wb_free_later;
        job->eo.alloc = wb_block_alloc;
        job->eo.release = wb_block_free;
        job->started = true;
        uint64_t spent = *used - start;
        if (spent >= budget) return false;
        budget -= spent;
    }
    return wb_eo_step(&job->eo, budget, used);
}

/* {Width, LengthA, LengthB, Ops}, the records' block becoming the binary */
static ERL_NIF_TERM editops_take(ErlNifEnv *env, void *state) {
    editops_job *job = state;
    if (job->p.invalid)
        return wb_error(env, enif_make_tuple2(env, wb_atom(env, "invalid_utf8"),
                                              enif_make_int(env, job->p.invalid)));
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
    return job->p.bytes_a + job->p.bytes_b;
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
