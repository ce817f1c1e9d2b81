/* The fuzzy searches as runtime jobs (the algorithms are in c_src/fuzzy/;
 * the score of a pair, and the options' decoding, in fuzzy_score_job.c):
 *
 *   fuzzy_search(Query, Packed, Count, Unit, Options, Limit, Mode, Tiny, Ref)
 *     -> <<Index:64/native, Score:64/float-native, ...>>
 *     the Limit (an integer, or `all`) best candidates of a packed list or
 *     an index within the cutoff, best first, ties by index; with the
 *     alignment asked for (Options), each hit followed by its alignment,
 *     <<SrcStart:64, SrcEnd:64, DestStart:64, DestEnd:64>> (native).
 *   fuzzy_cdist_row(Query, Packed, Count, Unit, Options, Matrix, Row, Mode,
 *                   Tiny, Ref) -> ok
 *     a row of cdist: a native cell per candidate, in order, written into
 *     that row of the matrix (a float, an unsigned integer for an edit
 *     distance's own scores; the worst score of the kind beyond the
 *     cutoff).
 *   fuzzy_matrix_new(Rows, Cols, Width) -> Matrix | {error, enomem}
 *   fuzzy_matrix_binary(Matrix) -> the matrix's cells as one binary, no copy
 *
 * Options: as fuzzy_score's (wb_fuzzy_get_options). The integer kinds'
 * scores are exact integers: a hit's (in place of the float's 64 bits) and a
 * cell's. Errors: {invalid_utf8, query | Position} in codepoint
 * mode, enomem, and for a score that does not fit where it goes:
 * {does_not_fit, u64} past 2^64 - 1, {does_not_fit, u32, Value} past a
 * 32-bit cell of cdist, {does_not_fit, u32, {candidate, Position}} for a
 * unit-cost Levenshtein distance past the search core's 32 bits, and
 * {unequal_lengths, {candidate, Position}, QueryLength, Length} for
 * hamming without padding: the first candidate of another length than
 * the query (lengths in symbols). */
#include "jobs.h"

#include "../fuzzy/extract.h"
#include "../fuzzy/fuzzy.h"

#include <stdlib.h>

/* A cdist matrix: rows x cols cells of `width` bytes, written by the row
 * jobs (each its own row), handed over as one binary without a copy. */
typedef struct {
    uint8_t *data;
    size_t rows, cols, width, bytes;
} matrix;

static ErlNifResourceType *matrix_type;

static void matrix_dtor(ErlNifEnv *env, void *obj) {
    (void)env;
    matrix *x = obj;
    wb_runtime_resident_bytes(-(int64_t)x->bytes);
    wb_block_free(x->data, x->bytes);
}

static ERL_NIF_TERM atom_all, atom_invalid_utf8, atom_query;
static ERL_NIF_TERM atom_does_not_fit, atom_u32, atom_u64;

static ERL_NIF_TERM past_u64(ErlNifEnv *env) {
    return wb_error(env, enif_make_tuple2(env, atom_does_not_fit, atom_u64));
}

/* ---- fuzzy_search(Query, Packed, Count, Unit, Options, Limit) ------------------------ */

/* The search itself is the extract engine's (c_src/fuzzy/extract.h);
 * here, its terms and the resources it reads and writes. */

typedef struct {
    ErlNifBinary query;
    ERL_NIF_TERM query_term;
    void *holder;
    const wb_search_set *set;
    size_t count, limit;
    matrix *into; /* a row of cdist: every score, in order, into row `row` */
    size_t row;
    wb_fz_options o;
} fsearch_args;

typedef struct {
    wb_fz_extract x;
    /* the query, kept until the engine's first steps have copied it (a
     * refc binary's reference, not its bytes) */
    ErlNifEnv *query_env;
    void *holder; /* kept while the job runs */
    matrix *into; /* kept while the job runs */
} fsearch_job;

/* Query, Packed, Count, Unit, Options: what searches and cdist rows share */
static bool fsearch_decode_set(ErlNifEnv *env, const ERL_NIF_TERM argv[], fsearch_args *in) {
    bool codepoints;
    ErlNifUInt64 count;
    in->query_term = argv[0];
    if (!enif_inspect_binary(env, argv[0], &in->query) || !enif_get_uint64(env, argv[2], &count) ||
        count >= SIZE_MAX / 2 || !wb_search_set_get(env, argv[1], count, &in->holder, &in->set) ||
        !wb_get_unit(env, argv[3], &codepoints) ||
        !wb_fuzzy_get_options(env, argv[4], codepoints, &in->o))
        return false;
    in->count = (size_t)count;
    in->into = NULL;
    return true;
}

static bool fsearch_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    fsearch_args *in = args;
    ErlNifUInt64 limit;
    if (!fsearch_decode_set(env, argv, in)) return false;
    if (enif_is_identical(argv[5], atom_all))
        in->limit = SIZE_MAX;
    else if (enif_get_uint64(env, argv[5], &limit) && limit > 0)
        in->limit = limit < SIZE_MAX ? (size_t)limit : SIZE_MAX;
    else
        return false;
    return true;
}

/* fuzzy_cdist_row's: Matrix, Row after the set */
static bool cdist_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    fsearch_args *in = args;
    ErlNifUInt64 row;
    matrix *x;
    if (!fsearch_decode_set(env, argv, in) ||
        !enif_get_resource(env, argv[5], matrix_type, (void **)&x) ||
        !enif_get_uint64(env, argv[6], &row) || row >= x->rows || x->cols != in->count)
        return false;
    in->into = x;
    in->row = (size_t)row;
    in->limit = SIZE_MAX;
    return true;
}

static uint64_t fsearch_predict(const void *args) {
    const fsearch_args *in = args;
    uint64_t units = wb_fz_extract_units(&in->o, in->set, in->query.data, in->query.size),
             align = wb_fz_extract_align_units(&in->o, in->set, in->query.size, in->limit);
    return units > UINT64_MAX / 2 || align > UINT64_MAX / 2 ? UINT64_MAX / 2 : units + align;
}

static uint64_t fsearch_setup(const void *args) {
    return wb_fz_extract_setup_units(((const fsearch_args *)args)->query.size);
}

static void fsearch_destroy(void *state) {
    fsearch_job *job = state;
    wb_fz_extract_free(&job->x);
    if (job->query_env) enif_free_env(job->query_env);
    if (job->into) enif_release_resource(job->into);
    if (job->holder) wb_search_set_drop(job->holder);
    memset(job, 0, sizeof *job);
}

static bool slice_spent(void *context) {
    (void)context;
    return wb_slice_spent();
}

static bool fsearch_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const fsearch_args *in = args;
    fsearch_job *job = state;
    ErlNifBinary query;
    job->query_env = enif_alloc_env();
    if (!job->query_env ||
        !enif_inspect_binary(job->query_env, enif_make_copy(job->query_env, in->query_term),
                             &query) ||
        query.size != in->query.size) {
        if (job->query_env) enif_free_env(job->query_env);
        job->query_env = NULL;
        *reason = wb_atom(env, "enomem");
        return false;
    }
    wb_fz_extract_config c = {
        .set = in->set,
        .query = query.data,
        .query_len = query.size,
        .o = in->o,
        .limit = in->limit,
        .cells = in->into ? in->into->data + in->row * in->into->cols * in->into->width : NULL,
        .width = in->into ? in->into->width : 0,
        .spent = slice_spent,
        /* the values freed here and now, so that the next search on this
         * scheduler takes the same memory back from the VM's allocator:
         * handed to the releasing thread (even at its lowest priority,
         * wb_block_free), the next search's values were fresh memory, and
         * the partial ratio ran 8.4-10.1 ns a candidate against 7.6-8.0
         * (the lab's set), though freeing here takes 60 us or more for
         * 2-5% of a cdist row's 400 KB */
        .release = wb_block_free_now,
        /* the query's symbols and the token work's blocks: large ones go
         * back off the scheduler (a 4 MB query's took 1.3-2.7 ms to free,
         * a token score's 7.7 ms, in a step) */
        .block_alloc = wb_block_alloc,
        .block_free = wb_block_free,
        /* the query's copy and its pattern's tables: a 4 MB query's took
         * 0.2-1.8 ms to free */
        .free_later = wb_free_later,
    };
    if (wb_fz_extract_init(&job->x, &c) != WB_FZ_EXTRACT_OK) {
        enif_free_env(job->query_env);
        job->query_env = NULL;
        *reason = wb_atom(env, "enomem");
        return false;
    }
    if (in->into) {
        job->into = in->into;
        enif_keep_resource(job->into);
    }
    job->holder = in->holder;
    wb_search_set_keep(job->holder);
    return true;
}

static bool fsearch_step(void *state, uint64_t budget, uint64_t *used) {
    return wb_fz_extract_step(&((fsearch_job *)state)->x, budget, used);
}

static ERL_NIF_TERM fsearch_result(ErlNifEnv *env, const void *state) {
    const fsearch_job *job = state;
    uint64_t at;
    switch (wb_fz_extract_status_of(&job->x, &at)) {
    case WB_FZ_EXTRACT_OK:
        break;
    case WB_FZ_EXTRACT_EUTF8_QUERY:
        return wb_error(env, enif_make_tuple2(env, atom_invalid_utf8, atom_query));
    case WB_FZ_EXTRACT_EUTF8_CANDIDATE:
        return wb_error(env, enif_make_tuple2(env, atom_invalid_utf8, enif_make_uint64(env, at)));
    case WB_FZ_EXTRACT_PAST_U64:
        return past_u64(env);
    case WB_FZ_EXTRACT_PAST_CELL:
        return wb_error(
            env, enif_make_tuple3(env, atom_does_not_fit, atom_u32, enif_make_uint64(env, at)));
    case WB_FZ_EXTRACT_PAST_LANES:
        return wb_error(env, enif_make_tuple3(env, atom_does_not_fit, atom_u32,
                                              enif_make_tuple2(env, wb_atom(env, "candidate"),
                                                               enif_make_uint64(env, at))));
    case WB_FZ_EXTRACT_UNEQUAL_CANDIDATE: {
        uint64_t query_len, len;
        wb_fz_extract_lengths(&job->x, &query_len, &len);
        ERL_NIF_TERM which =
            enif_make_tuple2(env, wb_atom(env, "candidate"), enif_make_uint64(env, at));
        return wb_error(env, enif_make_tuple4(env, wb_atom(env, "unequal_lengths"), which,
                                              enif_make_uint64(env, query_len),
                                              enif_make_uint64(env, len)));
    }
    default:
        return wb_error(env, wb_atom(env, "enomem"));
    }
    if (job->into) return wb_atom(env, "ok");
    /* <<Index:64, Score:64/float>> a hit, native endian (the integer
     * kinds: <<Index:64, Score:64>>), with the alignments asked for
     * followed by <<SrcStart:64, SrcEnd:64, DestStart:64, DestEnd:64>> */
    const wb_fz_hit *hits;
    size_t len = wb_fz_extract_hits(&job->x, &hits);
    const wb_fz_alignment *where = wb_fz_extract_alignments(&job->x);
    bool integers = wb_fz_integers(&job->x.o);
    size_t each = where ? 48 : 16;
    /* sized by the caller's limit: an allocation that can fail */
    ErlNifBinary b;
    if (len > SIZE_MAX / each || !enif_alloc_binary(len * each, &b))
        return wb_error(env, wb_atom(env, "enomem"));
    for (size_t i = 0; i < len; i++) {
        uint8_t *out = b.data + i * each;
        memcpy(out, &hits[i].index, 8);
        if (integers)
            memcpy(out + 8, &hits[i].value, 8);
        else
            memcpy(out + 8, &hits[i].score, 8);
        if (where) {
            uint64_t span[4] = {where[i].src_start, where[i].src_end, where[i].dest_start,
                                where[i].dest_end};
            memcpy(out + 16, span, sizeof span);
        }
    }
    return enif_make_binary(env, &b);
}

static size_t fsearch_memory(const void *state) {
    return wb_fz_extract_memory(&((const fsearch_job *)state)->x);
}

wb_job_type wb_fuzzy_search_job = {
    .name = "fuzzy_search",
    .argc = 6,
    .args_size = sizeof(fsearch_args),
    .state_size = sizeof(fsearch_job),
    .decode = fsearch_decode,
    .predict = fsearch_predict,
    .setup = fsearch_setup,
    .init = fsearch_init,
    .step = fsearch_step,
    .result = fsearch_result,
    .memory = fsearch_memory,
    .destroy = fsearch_destroy,
    .ps_per_unit = 2000,
};

/* A row of cdist: the same engine and state, a job type of its own (the
 * runtime learns its cost a unit apart from the searches': a cell's
 * store and division, CELL_UNITS) */
wb_job_type wb_fuzzy_cdist_job = {
    .name = "fuzzy_cdist_row",
    .argc = 7,
    .args_size = sizeof(fsearch_args),
    .state_size = sizeof(fsearch_job),
    .decode = cdist_decode,
    .predict = fsearch_predict,
    .setup = fsearch_setup,
    .init = fsearch_init,
    .step = fsearch_step,
    .result = fsearch_result,
    .memory = fsearch_memory,
    .destroy = fsearch_destroy,
    .ps_per_unit = 2000,
};

/* ---- the cdist matrix ---------------------------------------------------------------- */

ERL_NIF_TERM wb_fuzzy_matrix_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifUInt64 rows, cols;
    unsigned width;
    if (!enif_get_uint64(env, argv[0], &rows) || !enif_get_uint64(env, argv[1], &cols) ||
        !enif_get_uint(env, argv[2], &width) || (width != 4 && width != 8))
        return enif_make_badarg(env);
    if (cols != 0 && rows > SIZE_MAX / 16 / cols) return wb_error(env, wb_atom(env, "enomem"));
    size_t bytes = (size_t)rows * (size_t)cols * width;
    matrix *x = enif_alloc_resource(matrix_type, sizeof *x);
    if (!x) return wb_error(env, wb_atom(env, "enomem"));
    /* from the VM's allocators, which keep freed memory mapped */
    *x = (matrix){.data = wb_block_alloc(bytes > 0 ? bytes : 1),
                  .rows = (size_t)rows,
                  .cols = (size_t)cols,
                  .width = width,
                  .bytes = bytes > 0 ? bytes : 1};
    if (!x->data) {
        x->bytes = 0;
        enif_release_resource(x);
        return wb_error(env, wb_atom(env, "enomem"));
    }
    wb_runtime_resident_bytes((int64_t)x->bytes);
    ERL_NIF_TERM term = enif_make_resource(env, x);
    enif_release_resource(x);
    return term;
}

ERL_NIF_TERM wb_fuzzy_matrix_binary(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    matrix *x;
    if (!enif_get_resource(env, argv[0], matrix_type, (void **)&x)) return enif_make_badarg(env);
    return enif_make_resource_binary(env, x, x->data, x->rows * x->cols * x->width);
}

int wb_fuzzy_load(ErlNifEnv *env) {
    matrix_type = enif_open_resource_type(env, NULL, "wb_fuzzy_matrix", matrix_dtor,
                                          ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER, NULL);
    if (!matrix_type) return 1;
    wb_fuzzy_score_load(env);
    wb_fuzzy_text_load(env);
    atom_all = enif_make_atom(env, "all");
    atom_invalid_utf8 = enif_make_atom(env, "invalid_utf8");
    atom_query = enif_make_atom(env, "query");
    atom_does_not_fit = enif_make_atom(env, "does_not_fit");
    atom_u32 = enif_make_atom(env, "u32");
    atom_u64 = enif_make_atom(env, "u64");
    return 0;
}
