/* The fuzzy scorers as runtime jobs (the algorithms are in c_src/fuzzy/):
 *
 *   fuzzy_score(A, B, Unit, Options, Mode, Tiny, Ref) -> Score
 *     the score of two binaries (a float); the worst of its kind when it
 *     does not pass the cutoff (wb_fz_worst).
 *   fuzzy_search(Query, Packed, Count, Unit, Options, Limit, Mode, Tiny, Ref)
 *     -> <<Index:64/native, Score:64/float-native, ...>>
 *     the Limit (an integer, or `all`) best candidates of a packed list or
 *     an index within the cutoff, best first, ties by index; with Limit
 *     {into, Matrix, Row}, a row of cdist: a native cell per candidate, in
 *     order, written into that row of the matrix (a float, an unsigned
 *     integer for an edit distance's own scores; the worst score of the
 *     kind beyond the cutoff), answering ok.
 *   fuzzy_matrix_new(Rows, Cols, Width) -> Matrix | {error, enomem}
 *   fuzzy_matrix_binary(Matrix) -> the matrix's cells as one binary, no copy
 *
 * Options: {Scorer, Kind, Cutoff | nil, Ins, Del, Sub, PrefixWeight}, the
 * atoms of fuzzy.h's names (the cutoff of an integer kind, and the
 * weights, 64-bit unsigned integers). The integer kinds' scores are exact
 * integers: a score, a hit's (in place of the float's 64 bits) and a
 * cell's. Errors: {invalid_utf8, 1 | 2 | query | Position} in codepoint
 * mode, enomem, and for a score that does not fit where it goes:
 * {does_not_fit, u64} past 2^64 - 1, {does_not_fit, u32, Value} past a
 * 32-bit cell of cdist, {does_not_fit, u32, {candidate, Position}} for a
 * unit-cost Levenshtein distance past the search core's 32 bits. */
#include "jobs.h"

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

static const char *const scorer_names[] = WB_FZ_SCORER_NAMES;
static const char *const kind_names[] = WB_FZ_KIND_NAMES;
static ERL_NIF_TERM scorer_atoms[WB_FZ_SCORERS], kind_atoms[WB_FZ_KINDS];
static ERL_NIF_TERM atom_all, atom_into, atom_nil, atom_other, atom_invalid_utf8, atom_query;
static ERL_NIF_TERM atom_does_not_fit, atom_u32, atom_u64;

static ERL_NIF_TERM past_u64(ErlNifEnv *env) {
    return wb_error(env, enif_make_tuple2(env, atom_does_not_fit, atom_u64));
}

static bool get_number(ErlNifEnv *env, ERL_NIF_TERM term, double *x) {
    ErlNifSInt64 i;
    if (enif_get_double(env, term, x)) return true;
    if (!enif_get_int64(env, term, &i)) return false;
    *x = (double)i;
    return true;
}

static bool get_options(ErlNifEnv *env, ERL_NIF_TERM term, bool codepoints, wb_fz_options *o) {
    const ERL_NIF_TERM *t;
    int arity;
    ErlNifUInt64 ins, del, sub;
    memset(o, 0, sizeof *o);
    if (!enif_get_tuple(env, term, &arity, &t) || arity != 7) return false;
    size_t i = 0;
    while (i < WB_FZ_SCORERS && !enif_is_identical(t[0], scorer_atoms[i]))
        i++;
    if (i == WB_FZ_SCORERS) return false;
    o->scorer = (wb_fz_scorer)i;
    i = 0;
    while (i < WB_FZ_KINDS && !enif_is_identical(t[1], kind_atoms[i]))
        i++;
    if (i == WB_FZ_KINDS) return false;
    o->kind = (wb_fz_kind)i;
    o->has_cutoff = !enif_is_identical(t[2], atom_nil);
    if (o->has_cutoff && wb_fz_integers(o)) {
        /* exactly: a double holds integers up to 2^53 only */
        ErlNifUInt64 c;
        if (!enif_get_uint64(env, t[2], &c)) return false;
        o->exact_cutoff = true;
        o->icutoff = c;
        o->cutoff = (double)c;
    } else if (o->has_cutoff && !get_number(env, t[2], &o->cutoff)) {
        return false;
    }
    if (!enif_get_uint64(env, t[3], &ins) || !enif_get_uint64(env, t[4], &del) ||
        !enif_get_uint64(env, t[5], &sub) || !get_number(env, t[6], &o->prefix_weight) ||
        !(o->prefix_weight >= 0 && o->prefix_weight <= WB_FZ_PREFIX_WEIGHT_MOST))
        return false;
    o->ins = ins;
    o->del = del;
    o->sub = sub;
    o->codepoints = codepoints;
    return true;
}

/* The symbols of a binary in a block of their own (NULL with *failed set
 * when out of memory; *count SIZE_MAX when the UTF-8 is invalid). */
static uint32_t *symbols_of(const uint8_t *bytes, size_t len, bool codepoints, size_t *count,
                            bool *failed) {
    uint32_t *out = malloc((len > 0 ? len : 1) * sizeof *out);
    if (!out || len > SIZE_MAX / sizeof *out) {
        free(out);
        *failed = true;
        return NULL;
    }
    *count = wb_fz_symbols(bytes, len, codepoints, out);
    return out;
}

/* units of decoding n bytes */
static uint64_t decode_units(size_t n) {
    return 1 + n / 8;
}

/* ---- fuzzy_score(A, B, Unit, Options) ---------------------------------------------- */

typedef struct {
    ErlNifBinary a, b;
    wb_fz_options o;
} score_args;

/* A score: both binaries decoded into symbols in the first steps, a
 * budget at a time (init only allocates), then the pair scored. */
typedef struct {
    wb_fz_options o;
    const uint8_t *in_a, *in_b; /* this call's binaries (score_bind) */
    size_t len_a, len_b;
    uint32_t *a, *b; /* their symbols, blocks of `bytes` each */
    size_t bytes_a, bytes_b;
    wb_fz_decoding da, db;
    int invalid;  /* the binary whose UTF-8 is invalid: 1 or 2 (0: none) */
    bool started; /* fz is started: the symbols are all decoded */
    wb_fz fz;
} score_job;

static bool score_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    score_args *in = args;
    bool codepoints;
    return enif_inspect_binary(env, argv[0], &in->a) && enif_inspect_binary(env, argv[1], &in->b) &&
           wb_get_unit(env, argv[2], &codepoints) && get_options(env, argv[3], codepoints, &in->o);
}

/* the decoding, then the score */
static uint64_t score_predict(const void *args) {
    const score_args *in = args;
    return wb_fz_decode_units(in->a.size) + wb_fz_decode_units(in->b.size) +
           wb_fz_units(&in->o, in->a.size, in->b.size) +
           wb_fz_setup_units(&in->o, in->a.size, in->b.size);
}

/* init allocates only: the symbols' blocks */
static uint64_t score_setup(const void *args) {
    (void)args;
    return 1;
}

static void score_bind(const void *args, void *state) {
    const score_args *in = args;
    score_job *job = state;
    job->in_a = in->a.data;
    job->in_b = in->b.data;
}

/* a symbol block of len (its bytes in *bytes), at least one symbol */
static uint32_t *symbol_block(size_t len, size_t *bytes) {
    if (len > SIZE_MAX / sizeof(uint32_t) - 1) return NULL;
    *bytes = (len > 0 ? len : 1) * sizeof(uint32_t);
    return wb_block_alloc(*bytes);
}

static void score_destroy(void *state) {
    score_job *job = state;
    if (job->started) wb_fz_free(&job->fz);
    job->started = false;
    wb_block_free(job->a, job->bytes_a);
    wb_block_free(job->b, job->bytes_b);
    job->a = job->b = NULL;
}

static bool score_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const score_args *in = args;
    score_job *job = state;
    job->o = in->o;
    job->len_a = in->a.size;
    job->len_b = in->b.size;
    job->a = symbol_block(in->a.size, &job->bytes_a);
    job->b = job->a ? symbol_block(in->b.size, &job->bytes_b) : NULL;
    if (!job->b) {
        score_destroy(job);
        *reason = wb_atom(env, "enomem");
        return false;
    }
    score_bind(args, state);
    return true;
}

static bool score_step(void *state, uint64_t budget, uint64_t *used) {
    score_job *job = state;
    if (!job->started) {
        uint64_t start = *used;
        bool cp = job->o.codepoints;
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
        wb_fz_start(&job->fz, &job->o, job->a, job->da.count, job->b, job->db.count);
        job->fz.alloc = wb_block_alloc;
        job->fz.release = wb_block_free;
        job->started = true;
        spent = *used - start;
        if (spent >= budget) return false;
        budget -= spent;
    }
    return wb_fz_step(&job->fz, budget, used);
}

static ERL_NIF_TERM score_result(ErlNifEnv *env, const void *state) {
    const score_job *job = state;
    if (job->invalid)
        return wb_error(env,
                        enif_make_tuple2(env, atom_invalid_utf8, enif_make_int(env, job->invalid)));
    const wb_fz *fz = &job->fz;
    if (fz->failed) return wb_error(env, wb_atom(env, "enomem"));
    if (wb_fz_integers(&fz->o)) {
        uint64_t v = fz->value;
        if (fz->passed ? fz->too_large : !wb_fz_worst_value(&fz->o, &v)) return past_u64(env);
        return enif_make_uint64(env, v);
    }
    return enif_make_double(env, fz->passed ? fz->score : wb_fz_worst(&fz->o));
}

/* read once, after init: the symbols' blocks */
static size_t score_memory(const void *state) {
    const score_job *job = state;
    return job->bytes_a + job->bytes_b + (job->started ? job->fz.owned_bytes : 0);
}

wb_job_type wb_fuzzy_score_job = {
    .name = "fuzzy_score",
    .argc = 4,
    .args_size = sizeof(score_args),
    .state_size = sizeof(score_job),
    .decode = score_decode,
    .predict = score_predict,
    .setup = score_setup,
    .init = score_init,
    .bind = score_bind,
    .step = score_step,
    .result = score_result,
    .memory = score_memory,
    .destroy = score_destroy,
    .ps_per_unit = 2000, /* a unit is about 2 ns (kernels.h) */
};

/* ---- fuzzy_search(Query, Packed, Count, Unit, Options, Limit) ------------------------ */

typedef struct {
    double score;
    uint64_t value; /* the integer kinds: the score exactly */
    uint64_t index;
    wb_fz_bar badness; /* quick scores: for the bar (den 0: none) */
} hit;

typedef struct {
    ErlNifBinary query;
    void *holder;
    const wb_search_set *set;
    size_t count, limit;
    matrix *into; /* a row of cdist: every score, in order, into row `row` */
    size_t row;
    wb_fz_options o;
} fsearch_args;

/* How many candidates the seeds are picked from (seed_step): on the
 * lab's set (a 20-letter query, 100,000 words of 10-30 letters, limit
 * 5), the partial ratio's worst seed was the worst kept in the end from
 * 128 picks (2,216 candidates scored, 5,000 with none; 64 picks: 2,821),
 * Damerau-Levenshtein's bar of OSA distances from 512 (780 candidates'
 * rows, as with an OSA distance for each of the 1,600 that could better
 * the seeds in order; 128 picks: 1,342) */
#define PARTIAL_PICKS 128
#define DAMERAU_PICKS 512

/* The units of a step's part after which it asks whether the slice's
 * time is up (wb_slice_spent, a clock read): about 6 us of work, at the
 * 1.9-2.4 ns a unit the runtime learns of searches and cdist. A unit's
 * cost varies with the caches (an index's batches ran 3-4x slower after
 * any pause), so a step sized on the average can run a slice long: of
 * cdist's slices in :auto beside another worker (the slice 18 us), 1.4%
 * ran 30 us or more and 8-11% 20 us or more without the parts, 0.7% and
 * 3-5% with them (and the values freed at once, fsearch_destroy). */
#define SPENT_PART 3000

/* What did not fit where it goes (fsearch_job's unfit): a score past
 * 2^64 - 1; past a 32-bit cell of cdist (unfit_value: it); a distance
 * past the search core's 32-bit values (unfit_value: the candidate) */
enum { UNFIT_NONE, UNFIT_U64, UNFIT_CELL, UNFIT_LANES };

/* A candidate picked for a seed: its bound's badness (seed_bound) */
typedef struct {
    wb_fz_bar bound;
    size_t index;
} seed_pick;

typedef struct {
    wb_fz_options o;
    void *holder; /* kept while the job runs */
    const wb_search_set *set;
    uint32_t *query;
    size_t qlen;
    wb_fz_pattern pattern; /* the query's, made once */
    bool has_pattern;
    bool quick_on; /* short candidates take quick scores */
    /* or the quick partial ratio serves the partial token scores and
     * WRatio of single tokens (lanes_scores) */
    bool quick_single;
    wb_fz_quick quick;
    uint8_t *query_input; /* the query as given (the search core's) */
    size_t query_input_len;
    /* the search core's values first (its vector lanes, the batches an
     * index made once): Levenshtein with unit costs every distance; the
     * LCS (Indel and the ratios), OSA and Hamming for the candidates its
     * batches hold, the others left to the paths below; then the scores */
    bool lanes_on, lanes_live, lanes_done;
    wb_search_op lanes_op;
    /* the token scores of a query of one token: the ratio, for every
     * candidate of one token (the others by the other paths) */
    bool one_token;
    /* the partial ratios and WRatio: the LCS bounds the score; only a
     * candidate whose bound can rank (or pass the cutoff) is scored, by
     * the other paths */
    bool partial;
    /* With a limit, once it is reached: the candidates that cannot rank
     * before the worst kept, known from their value alone, in a tight
     * loop (skip_below). For a candidate of n symbols (n <=
     * VALUE_BAR_MOST), the bar on its value at value_bar[n], found for
     * the worst kept of generation bar_seen[n] (a kept hit makes a new
     * one): the least value that may rank where more is better (an LCS,
     * Hamming's or Jaro's matches), the most where less is (a distance).
     * The worst kept only gets better, so a bar moves one way only, found
     * from where it was. */
#define VALUE_BAR_MOST 256
    uint32_t value_bar[VALUE_BAR_MOST + 1];
    uint32_t bar_seen[VALUE_BAR_MOST + 1];
    uint32_t kept_generation;
    bool value_bars, more_is_better;
    /* skip_below's look past the candidate it stops at: those from
     * ahead_from up to ahead_to are passed over, and ahead_to (when
     * ahead_hit) is the next that may rank, its bytes asked into the
     * cache while the one before is scored */
    size_t ahead_from, ahead_to;
    bool ahead_hit;
    uint64_t ahead_units;  /* theirs, counted when they are reached */
    wb_fz_options lanes_o; /* the options the values are scored by exactly */
    /* Jaro and Jaro-Winkler with a limit: the best score a candidate of n
     * bytes (n <= 64) with M matches can have, whatever its
     * transpositions and prefix, at jaro_top[n * 65 + M] (a hair above,
     * for rounding): the value bars on the matches (may_rank) */
    double *jaro_top;
    wb_search lanes;
    uint32_t *text; /* the candidate under way, decoded */
    size_t text_room;
    size_t next; /* the next candidate to start */
    bool scoring;
    wb_fz fz;
    /* the kept hits: a heap whose root is the worst, then sorted */
    hit *heap;
    size_t heap_len, heap_room, limit, unsorted;
    bool sorting, failed;
    /* a row of cdist: a 32-bit cell per candidate (a float, or an unsigned
     * integer for an edit distance's own scores), the worst score of the
     * kind for those beyond the cutoff */
    matrix *into; /* kept while the job runs */
    uint8_t *cells;
    size_t width;
    bool integers; /* the scores are integers (hits and cells exact) */
    /* a score that does not fit (UNFIT_*), the job ends there */
    int unfit;
    uint64_t unfit_value;
    size_t failed_at; /* codepoint mode: a candidate that is not UTF-8 (+ 1) */
    /* Seeds, for a search with a limit of at most SEED_MOST: the partial
     * ratios (but WRatio) and Damerau-Levenshtein with a normalized score.
     * Before the scores, a pass over the values picks the pick_most
     * candidates of the best bounds from their LCS (seed_bound), then
     * their scores (the partial ratio itself; OSA's distance, never below
     * Damerau-Levenshtein's) give the worst of the limit best, seed_worst
     * in seed_scores or seed (badness). A candidate past it cannot rank
     * (as many others are at least as good, and pass the cutoff if it
     * does): its bound ends it (partial_bound) or its rows (lanes_scores),
     * before any hit is kept. The pass skips a candidate whose LCS is
     * below seed_bar[n] (0: not made since the bar moved; the last, for
     * WB_LANES_LENGTH_MOST bytes or more, never): its bound is no better
     * than pick_bar, the worst of pick_most picks
     * (PARTIAL_PICKS or DAMERAU_PICKS). */
#define SEED_MOST 64
    bool seeding, seed_on;
    size_t seed_next, seed_scored, pick_len, pick_most, seed_len, seed_worst;
    seed_pick *pick; /* 2 pick_most (owned) */
    wb_fz_bar pick_bar;
    /* one more for the seed being weighed */
    wb_fz_bar seed[SEED_MOST + 1];
    double seed_scores[SEED_MOST + 1];
    uint32_t seed_bar[WB_LANES_LENGTH_MOST + 1];
    /* Jaro with a limit: the similarity below which none ranks
     * (jaro_tau), made for the worst kept of generation jaro_tau_seen */
    double jaro_tau;
    uint32_t jaro_tau_seen;
} fsearch_job;

static bool fsearch_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    fsearch_args *in = args;
    bool codepoints;
    ErlNifUInt64 count, limit;
    if (!enif_inspect_binary(env, argv[0], &in->query) || !enif_get_uint64(env, argv[2], &count) ||
        count >= SIZE_MAX / 2 || !wb_search_set_get(env, argv[1], count, &in->holder, &in->set) ||
        !wb_get_unit(env, argv[3], &codepoints) || !get_options(env, argv[4], codepoints, &in->o))
        return false;
    in->count = (size_t)count;
    const ERL_NIF_TERM *into;
    int arity;
    ErlNifUInt64 row;
    in->into = NULL;
    if (enif_get_tuple(env, argv[5], &arity, &into) && arity == 3 &&
        enif_is_identical(into[0], atom_into)) {
        matrix *x;
        if (!enif_get_resource(env, into[1], matrix_type, (void **)&x) ||
            !enif_get_uint64(env, into[2], &row) || row >= x->rows || x->cols != count)
            return false;
        in->into = x;
        in->row = (size_t)row;
    }
    if (in->into || enif_is_identical(argv[5], atom_all))
        in->limit = SIZE_MAX;
    else if (enif_get_uint64(env, argv[5], &limit) && limit > 0)
        in->limit = limit < SIZE_MAX ? (size_t)limit : SIZE_MAX;
    else
        return false;
    return true;
}

static bool lanes_op_of(const wb_fz_options *o, bool bytes, const uint8_t *query,
                        size_t query_bytes, wb_search_op *op);

static uint64_t fsearch_predict(const void *args) {
    const fsearch_args *in = args;
    size_t count = in->set->count;
    if (count == 0) return 1;
    uint64_t bytes = in->set->offsets[count];
    size_t average = (size_t)(bytes / count);
    uint64_t each = wb_fz_units(&in->o, in->query.size, average) +
                    wb_fz_setup_units(&in->o, in->query.size, average) + decode_units(average) + 2;
    /* an index's batches give every candidate they hold its score (not
     * the partial ratios or the token scores, whose candidates may need
     * the general path): their steps, a few units a score, and the general
     * cost for the others */
    const wb_lanes_index *x = in->set->prepared;
    bool bytes_only =
        !in->o.codepoints || (in->set->ascii && wb_lev_ascii(in->query.data, in->query.size));
    wb_search_op op;
    /* Damerau-Levenshtein's values bound it: its cost is the general one */
    bool exact = (in->o.scorer < WB_FZ_PARTIAL_RATIO || in->o.scorer == WB_FZ_QRATIO) &&
                 in->o.scorer != WB_FZ_DAMERAU_LEVENSHTEIN;
    if (x && in->query.size > 0 && exact &&
        lanes_op_of(&in->o, bytes_only, in->query.data, in->query.size, &op)) {
        uint64_t rest =
            each > UINT64_MAX / (x->rest_count + 1) ? UINT64_MAX / 4 : each * x->rest_count;
        return wb_search_predict(count, bytes, in->query.size, false, true) + 4 * (uint64_t)count +
               rest;
    }
    uint64_t most = each > UINT64_MAX / count ? UINT64_MAX / 2 : each * count;
    return most + count; /* and sorting the hits */
}

static uint64_t fsearch_setup(const void *args) {
    return decode_units(((const fsearch_args *)args)->query.size);
}

static void fsearch_destroy(void *state) {
    fsearch_job *job = state;
    if (job->scoring) wb_fz_free(&job->fz);
    /* here and now, so that the next search on this scheduler takes the
     * same memory back from the VM's allocator: handed to the releasing
     * thread (even at its lowest priority, wb_block_free), the next
     * search's values were fresh memory, and the partial ratio ran
     * 8.4-10.1 ns a candidate against 7.6-8.0 (the lab's set), though
     * freeing here takes 60 us or more for 2-5% of a cdist row's 400 KB */
    if (job->lanes_live) wb_search_free_with(&job->lanes, wb_block_free_now);
    if (job->has_pattern) wb_fz_pattern_free(&job->pattern);
    wb_fz_quick_free(&job->quick);
    free(job->query);
    free(job->query_input);
    free(job->jaro_top);
    free(job->text);
    free(job->heap);
    free(job->pick);
    if (job->into) enif_release_resource(job->into);
    if (job->holder) wb_search_set_drop(job->holder);
    memset(job, 0, sizeof *job);
}

/* Whether n bytes hold whitespace (the token scores' separators in bytes
 * and in ASCII). */
static bool has_space(const uint8_t *b, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (wb_fz_ascii_space(b[k])) return true;
    return false;
}

/* Whether the search core computes values for the options' scorer (true,
 * *op what), `bytes`: the query (of query_bytes) and candidates are bytes
 * (or ASCII). */
static bool lanes_op_of(const wb_fz_options *o, bool bytes, const uint8_t *query,
                        size_t query_bytes, wb_search_op *op) {
    switch (o->scorer) {
    case WB_FZ_LEVENSHTEIN:
        *op = WB_SEARCH_LEVENSHTEIN; /* every distance, codepoints too */
        return o->ins == 1 && o->del == 1 && o->sub == 1;
    case WB_FZ_INDEL:
    case WB_FZ_RATIO:
    case WB_FZ_QRATIO:
        *op = WB_SEARCH_LCS;
        return bytes;
    case WB_FZ_OSA:
        *op = WB_SEARCH_OSA;
        return bytes;
    case WB_FZ_HAMMING:
        *op = WB_SEARCH_HAMMING;
        return bytes;
    case WB_FZ_JARO:
    case WB_FZ_JARO_WINKLER:
        *op = WB_SEARCH_JARO;
        return bytes && query_bytes <= WB_LANES_JARO_QUERY_MOST; /* a batch's Jaro in one go */
    case WB_FZ_DAMERAU_LEVENSHTEIN:
        /* the LCS bounds the distance; the quick score does the rest */
        *op = WB_SEARCH_LCS;
        return bytes && query_bytes <= 64;
    case WB_FZ_PARTIAL_RATIO:
        /* the LCS bounds the best window (lanes_scores) */
        *op = WB_SEARCH_LCS;
        return bytes;
    case WB_FZ_TOKEN_SORT_RATIO:
    case WB_FZ_TOKEN_SET_RATIO:
    case WB_FZ_TOKEN_RATIO:
    case WB_FZ_PARTIAL_TOKEN_SORT_RATIO:
    case WB_FZ_PARTIAL_TOKEN_SET_RATIO:
    case WB_FZ_PARTIAL_TOKEN_RATIO:
    case WB_FZ_WRATIO:
        /* one token against one token: the token scores are the ratio
         * (sorting one token changes nothing; two sets of one token have
         * no intersection unless equal, when both are 100), the partial
         * token scores the partial ratio, WRatio the ratio or the best of
         * it and the scaled partial ratio */
        *op = WB_SEARCH_LCS;
        return bytes && !has_space(query, query_bytes);
    default:
        return false;
    }
}

static bool fsearch_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const fsearch_args *in = args;
    fsearch_job *job = state;
    bool failed = false;
    job->query = symbols_of(in->query.data, in->query.size, in->o.codepoints, &job->qlen, &failed);
    if (!failed && job->qlen == SIZE_MAX) {
        fsearch_destroy(job);
        *reason = enif_make_tuple2(env, atom_invalid_utf8, atom_query);
        return false;
    }
    if (!failed)
        failed = !(job->has_pattern = wb_fz_pattern_init(&job->pattern, job->query, job->qlen));
    /* quick scores for bytes, and for codepoints that are all ASCII */
    bool bytes =
        !in->o.codepoints || (in->set->ascii && wb_lev_ascii(in->query.data, in->query.size));
    if (!failed && bytes)
        job->quick_on = wb_fz_quick_init(&job->quick, &in->o, in->query.data, in->query.size);
    job->lanes_on =
        lanes_op_of(&in->o, bytes && job->qlen > 0, in->query.data, in->query.size, &job->lanes_op);
    /* Damerau-Levenshtein's values are bounds the quick score finishes */
    if (in->o.scorer == WB_FZ_DAMERAU_LEVENSHTEIN && !job->quick_on) job->lanes_on = false;
    job->lanes_o = in->o;
    job->one_token =
        job->lanes_on && in->o.scorer >= WB_FZ_TOKEN_SORT_RATIO && in->o.scorer <= WB_FZ_WRATIO;
    if (job->lanes_on && in->o.scorer >= WB_FZ_PARTIAL_RATIO && in->o.scorer <= WB_FZ_WRATIO)
        job->lanes_o.scorer = WB_FZ_RATIO; /* what the values score exactly */
    job->partial =
        job->lanes_on &&
        (in->o.scorer == WB_FZ_PARTIAL_RATIO ||
         (in->o.scorer >= WB_FZ_PARTIAL_TOKEN_SORT_RATIO && in->o.scorer <= WB_FZ_WRATIO));
    if (!failed && job->partial && job->one_token && !job->quick_on) {
        /* single tokens: the partial token scores are the partial ratio */
        wb_fz_options single = in->o;
        single.scorer = WB_FZ_PARTIAL_RATIO;
        job->quick_single = wb_fz_quick_init(&job->quick, &single, in->query.data, in->query.size);
    }
    if (!failed && job->lanes_on) {
        /* the search core reads the query as given, at every step */
        job->query_input = malloc(in->query.size > 0 ? in->query.size : 1);
        failed = job->query_input == NULL;
        if (!failed) memcpy(job->query_input, in->query.data, in->query.size);
        job->query_input_len = in->query.size;
    }
    if (!failed && job->lanes_on && job->lanes_op == WB_SEARCH_JARO && !in->into &&
        in->limit != SIZE_MAX)
        failed = !(job->jaro_top = wb_fz_jaro_tops(&in->o, in->query.size));
    /* the value bars: a search with a limit, Jaro's with its table */
    job->value_bars = job->lanes_on && !in->into && in->limit != SIZE_MAX &&
                      (job->lanes_op != WB_SEARCH_JARO || job->jaro_top);
    job->more_is_better = job->lanes_op == WB_SEARCH_LCS || job->lanes_op == WB_SEARCH_HAMMING ||
                          job->lanes_op == WB_SEARCH_JARO;
    bool normalized =
        in->o.kind == WB_FZ_NORMALIZED_DISTANCE || in->o.kind == WB_FZ_NORMALIZED_SIMILARITY;
    bool partial_seeds = (in->o.scorer == WB_FZ_PARTIAL_RATIO && job->quick_on) ||
                         (job->quick_single && in->o.scorer != WB_FZ_WRATIO);
    bool damerau_seeds = job->quick_on && in->o.scorer == WB_FZ_DAMERAU_LEVENSHTEIN && normalized;
    job->seeding = job->value_bars && (partial_seeds || damerau_seeds) && in->limit >= 1 &&
                   in->limit <= SEED_MOST && !(in->o.codepoints && !in->set->ascii);
    job->pick_bar = (wb_fz_bar){1, 1}; /* any bound but the worst */
    if (job->seeding) {
        /* without room, no seeds */
        job->pick_most = damerau_seeds ? DAMERAU_PICKS : PARTIAL_PICKS;
        job->pick = malloc(2 * job->pick_most * sizeof *job->pick);
        job->seeding = job->pick != NULL;
    }
    if (!failed && in->into) {
        job->into = in->into;
        enif_keep_resource(job->into);
        job->width = in->into->width;
        job->cells = in->into->data + in->row * in->into->cols * in->into->width;
    }
    job->integers = wb_fz_integers(&in->o);
    if (failed) {
        fsearch_destroy(job);
        *reason = wb_atom(env, "enomem");
        return false;
    }
    job->o = in->o;
    job->set = in->set;
    job->limit = in->limit;
    job->holder = in->holder;
    wb_search_set_keep(job->holder);
    return true;
}

/* whether score x (value xv) ranks before y (yv): the integer kinds by
 * their exact values */
static bool better(const fsearch_job *job, double x, uint64_t xv, double y, uint64_t yv) {
    if (!job->integers) return wb_fz_better(job->o.kind, x, y);
    return job->o.kind == WB_FZ_DISTANCE ? xv < yv : xv > yv;
}

/* whether x ranks after y: a worse score, or the same from a later candidate */
static bool worse(const fsearch_job *job, const hit *x, const hit *y) {
    if (better(job, y->score, y->value, x->score, x->value)) return true;
    return !better(job, x->score, x->value, y->score, y->value) && x->index > y->index;
}

static void sift_down(const fsearch_job *job, hit *heap, size_t len, size_t at) {
    for (;;) {
        size_t child = 2 * at + 1, top = at;
        if (child < len && worse(job, &heap[child], &heap[top])) top = child;
        if (child + 1 < len && worse(job, &heap[child + 1], &heap[top])) top = child + 1;
        if (top == at) return;
        hit t = heap[at];
        heap[at] = heap[top];
        heap[top] = t;
        at = top;
    }
}

/* A row's cell: the score, or the worst of its kind beyond the cutoff
 * (an integer kind's `value`, exact); a value past the cell's type ends
 * the job (unfit). */
static void store(fsearch_job *job, size_t i, double score, uint64_t value, bool passed) {
    if (!passed) score = wb_fz_worst(&job->o);
    if (!passed && job->integers && !wb_fz_worst_value(&job->o, &value)) {
        job->unfit = UNFIT_U64;
        return;
    }
    uint8_t *cell = job->cells + job->width * i;
    if (job->width == 8 && job->integers) {
        memcpy(cell, &value, 8);
    } else if (job->width == 8) {
        memcpy(cell, &score, 8);
    } else if (job->integers) {
        if (value > UINT32_MAX) {
            job->unfit = UNFIT_CELL;
            job->unfit_value = value;
            return;
        }
        uint32_t v = (uint32_t)value;
        memcpy(cell, &v, 4);
    } else {
        /* the float kinds are in 0.0..100.0: a float holds them, rounded */
        float v = (float)score;
        memcpy(cell, &v, 4);
    }
}

/* Keeps a hit among the `limit` best; false when out of memory. */
static bool keep(fsearch_job *job, hit h) {
    job->kept_generation++;
    if (job->heap_len == job->limit) {
        if (!worse(job, &job->heap[0], &h)) return true;
        job->heap[0] = h;
        sift_down(job, job->heap, job->heap_len, 0);
        return true;
    }
    if (job->heap_len == job->heap_room) {
        size_t room = job->heap_room ? 2 * job->heap_room : 64;
        if (room > job->limit) room = job->limit;
        if (room > SIZE_MAX / sizeof(hit)) return false;
        hit *grown = realloc(job->heap, room * sizeof(hit));
        if (!grown) return false;
        job->heap = grown;
        job->heap_room = room;
    }
    size_t at = job->heap_len++;
    job->heap[at] = h;
    while (at > 0 && worse(job, &job->heap[at], &job->heap[(at - 1) / 2])) {
        hit t = job->heap[at];
        job->heap[at] = job->heap[(at - 1) / 2];
        job->heap[(at - 1) / 2] = t;
        at = (at - 1) / 2;
    }
    return true;
}

/* Candidate i's score (an integer kind's exactly, `value`): into the
 * cdist row, or among the hits kept (candidates come in order: one no
 * better than the worst kept, once `limit` are, loses the tie and ends
 * here); false when out of memory. */
static bool record_value(fsearch_job *job, size_t i, double score, uint64_t value, bool passed,
                         wb_fz_bar badness) {
    if (job->cells) {
        store(job, i, score, value, passed);
        return true;
    }
    if (!passed) return true;
    if (job->heap_len == job->limit &&
        !better(job, score, value, job->heap[0].score, job->heap[0].value))
        return true;
    return keep(job, (hit){score, value, i, badness});
}

/* The same for the scores of unit costs (the quick scores, the search
 * core's values): integers far below 2^53 where they are integers, which
 * a double holds exactly. */
static bool record(fsearch_job *job, size_t i, double score, bool passed, wb_fz_bar badness) {
    uint64_t value = job->integers && score > 0 && score < 0x1p64 ? (uint64_t)score : 0;
    return record_value(job, i, score, value, passed, badness);
}

/* Starts the score of the next candidate; false when done with it
 * already (failed, or out of memory). */
static bool start_candidate(fsearch_job *job, uint64_t *used) {
    const wb_search_set *set = job->set;
    size_t i = job->next++;
    const uint8_t *bytes = set->bytes + set->offsets[i];
    size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
    if (len > job->text_room || !job->text) {
        size_t room = len > 64 ? len : 64;
        uint32_t *grown = room <= SIZE_MAX / sizeof(uint32_t)
                              ? realloc(job->text, room * sizeof(uint32_t))
                              : NULL;
        if (!grown) {
            job->failed = true;
            return false;
        }
        job->text = grown;
        job->text_room = room;
    }
    size_t n = wb_fz_symbols(bytes, len, job->o.codepoints, job->text);
    *used += decode_units(len);
    if (n == SIZE_MAX) {
        job->failed_at = i + 1;
        return false;
    }
    if (!wb_fz_start_with(&job->fz, &job->o, &job->pattern, job->query, job->qlen, job->text, n)) {
        job->failed = true;
        return false;
    }
    *used += wb_fz_setup_units(&job->o, job->qlen, n);
    job->scoring = true;
    return true;
}

/* The next candidate's quick score, when it has one (true). */
static bool quick_candidate(fsearch_job *job, uint64_t *used) {
    const wb_search_set *set = job->set;
    size_t i = job->next;
    size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
    if (!wb_fz_quick_fits(&job->quick, len)) return false;
    double score = 0.0;
    bool passed;
    wb_fz_bar badness;
    /* the worst kept, once `limit` are: no score worse than it is needed */
    const wb_fz_bar *bar =
        !job->cells && job->heap_len == job->limit ? &job->heap[0].badness : NULL;
    *used += wb_fz_quick_score(&job->quick, set->bytes + set->offsets[i], len, bar, &score, &passed,
                               &badness);
    job->next++;
    if (!record(job, i, score, passed, badness)) job->failed = true;
    return true;
}

/* Symbols of candidate i: its bytes, or in codepoint mode its codepoints
 * (bytes that do not continue a sequence). */
static size_t symbols_in(const fsearch_job *job, size_t i) {
    const wb_search_set *set = job->set;
    size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
    if (!job->o.codepoints || set->ascii) return len;
    const uint8_t *b = set->bytes + set->offsets[i];
    size_t n = 0;
    for (size_t k = 0; k < len; k++)
        n += (b[k] & 0xC0) != 0x80;
    return n;
}

/* The search core's values (lanes_op), in budgets as the rest; true when
 * done (or failed). */
static bool lanes_step(fsearch_job *job, uint64_t budget, uint64_t *used) {
    if (!job->lanes_live) {
        wb_search_status status;
        if (job->lanes_op == WB_SEARCH_LEVENSHTEIN) {
            /* a distance cutoff cuts the same for every candidate */
            size_t k = job->o.has_cutoff && job->o.kind == WB_FZ_DISTANCE && job->o.cutoff >= 0 &&
                               job->o.cutoff < 4294967294.0
                           ? (size_t)job->o.cutoff
                           : WB_SEARCH_NO_LIMIT;
            status = wb_search_init(&job->lanes, job->set, job->query_input, job->query_input_len,
                                    job->o.codepoints, k, 0);
        } else {
            status = wb_search_init_op(&job->lanes, job->set, job->query_input,
                                       job->query_input_len, job->o.codepoints, job->lanes_op);
        }
        if (status != WB_SEARCH_OK) {
            job->failed = true;
            return true;
        }
        job->lanes_live = true;
    }
    /* in parts, the slice's time asked between them: a part's units cost
     * more while the index is out of the caches */
    uint64_t start = *used;
    for (;;) {
        uint64_t spent = *used - start, left = spent < budget ? budget - spent : 1;
        if (wb_search_step(&job->lanes, left < SPENT_PART ? left : SPENT_PART, used)) break;
        if (*used - start >= budget || wb_slice_spent()) return false;
    }
    if (job->lanes.status == WB_SEARCH_EUTF8_CANDIDATE) {
        job->failed_at = job->lanes.failed_at + 1;
    } else if (job->lanes.status == WB_SEARCH_ETOO_FAR) {
        /* a candidate's distance past the search core's 32-bit values */
        job->unfit = UNFIT_LANES;
        job->unfit_value = job->lanes.failed_at;
    } else if (job->lanes.status != WB_SEARCH_OK) {
        job->failed = true;
    }
    job->lanes_done = true;
    return true;
}

/* What a partial ratio or WRatio makes of a candidate's LCS with the query */
enum {
    BOUND_RATIO,       /* its score is the ratio: scored here */
    BOUND_SCORE,       /* it may rank: scored exactly by the other paths */
    BOUND_BELOW,       /* it cannot rank before the worst kept */
    BOUND_PAST_CUTOFF, /* it cannot pass the cutoff */
};

/* The partial ratios and WRatio from a candidate's LCS (the core's bound) */
static int partial_bound(const fsearch_job *job, size_t m, size_t n, size_t lcs) {
    double score;
    bool passes;
    if (wb_fz_partial_bound(&job->o, m, n, lcs, &score, &passes) == WB_FZ_BOUND_RATIO)
        return BOUND_RATIO;
    if (!passes) return BOUND_PAST_CUTOFF;
    if (!job->cells && job->heap_len == job->limit &&
        !wb_fz_better(job->o.kind, score, job->heap[0].score))
        return BOUND_BELOW;
    /* past the worst seed (seed_step) */
    if (job->seed_on && wb_fz_better(job->o.kind, job->seed_scores[job->seed_worst], score))
        return BOUND_BELOW;
    return BOUND_SCORE;
}

/* Whether distance d over `most` is past the worst seed's badness (of
 * the limit best OSA distances, seed_step): a candidate there cannot
 * rank, as many others are at least as good */
static bool past_seed(const fsearch_job *job, size_t d, size_t most) {
    return wb_fz_below_bar(&job->seed[job->seed_worst], d, most);
}

/* The distance a value of the search core's gives for a pair of m and n
 * symbols: the Indel distance from the LCS, Hamming's from the equal
 * positions, Levenshtein's and OSA's as they are */
static size_t distance_of(wb_search_op op, size_t m, size_t n, size_t v) {
    return op == WB_SEARCH_LCS ? m + n - 2 * v : op == WB_SEARCH_HAMMING ? (m > n ? m : n) - v : v;
}

/* Whether a candidate of n symbols whose value (for Jaro its matches) is
 * v may rank before the worst kept (the limit reached), as the paths of
 * lanes_scores find: Jaro's best score for its length and matches; the
 * partial ratios' and WRatio's bound (partial_bound), or the ratio for
 * WRatio of lengths near each other; Damerau-Levenshtein's distance of
 * at least the longer length less the LCS; the others' score from their
 * distance. Each is monotone in the value; past the cutoff (which the
 * worst kept passed) none ranks. */
static bool may_rank(fsearch_job *job, size_t m, size_t n, size_t v) {
    double score;
    bool passed;
    wb_fz_bar badness;
    if (job->lanes_op == WB_SEARCH_JARO)
        return wb_fz_better(job->o.kind, job->jaro_top[n * 65 + v], job->heap[0].score);
    if (job->partial) {
        int verdict = partial_bound(job, m, n, v);
        if (verdict != BOUND_RATIO) return verdict == BOUND_SCORE;
        wb_fz_verdict(&job->lanes_o, m, n, m + n - 2 * v, NULL, &score, &passed, &badness);
    } else if (job->o.scorer == WB_FZ_DAMERAU_LEVENSHTEIN) {
        /* and no further than the worst seed: the only bar while the
         * limit is not reached (seed_step) */
        size_t most = m > n ? m : n;
        if (job->seed_on && past_seed(job, most - v, most)) return false;
        wb_fz_verdict(&job->o, m, n, most - v, NULL, &score, &passed, &badness);
        return passed &&
               (job->heap_len < job->limit || wb_fz_better(job->o.kind, score, job->heap[0].score));
    } else {
        wb_fz_verdict(&job->lanes_o, m, n, distance_of(job->lanes_op, m, n, v), NULL, &score,
                      &passed, &badness);
    }
    return passed && wb_fz_better(job->o.kind, score, job->heap[0].score);
}

/* value_bar[n] for the worst kept now, from where it was, one way: where
 * more is better the least value that may rank (a candidate below it
 * cannot), where less is one past the most (a candidate at or past it
 * cannot); values run up to the shorter side's length (an LCS, matches)
 * or the longer's (a distance). */
static void value_bar_now(fsearch_job *job, size_t m, size_t n) {
    bool seen = job->bar_seen[n] != 0;
    size_t at;
    if (job->more_is_better) {
        size_t top = m < n ? m : n;
        at = seen ? job->value_bar[n] : 0;
        while (at <= top && !may_rank(job, m, n, at))
            at++;
    } else {
        at = seen ? job->value_bar[n] : (m > n ? m : n) + 1;
        while (at > 0 && !may_rank(job, m, n, at - 1))
            at--;
    }
    job->value_bar[n] = (uint32_t)at;
    job->bar_seen[n] = job->kept_generation;
}

/* Whether Jaro's similarity of m and n symbols with these counts is
 * surely below `tau`: M^2 (lp + lt) + (M - h) lp lt (lp, lt the shorter
 * and longer lengths, h half the transpositions) against 3 tau lp lt M,
 * the similarity times lp lt M three times, with no division; a margin
 * of 1e-9 for the rounding of the score's own (wb_fz_jaro_verdict) */
static inline bool jaro_below(size_t m, size_t n, size_t matches, size_t transpositions,
                              double tau) {
    size_t lp = m < n ? m : n, lt = m < n ? n : m, h = transpositions / 2;
    if (matches == 0 || n == 0) return 0.0 < tau - 1e-9;
    double sum = (double)(matches * matches * (lp + lt) + (matches - h) * lp * lt);
    return sum < 3.0 * tau * (double)(lp * lt * matches) * (1.0 - 1e-9);
}

/* The Jaro similarity below which a candidate cannot rank before the
 * worst kept (the limit reached), made once a kept generation: the
 * worst's similarity, and for Jaro-Winkler the most whose score with
 * the longest prefix bonus (four symbols; none at 0.7 or below) is still
 * at most that */
static double jaro_tau(fsearch_job *job) {
    if (job->jaro_tau_seen == job->kept_generation) return job->jaro_tau;
    double w = job->heap[0].score;
    double tau = wb_fz_kind_is_distance(job->o.kind) ? 1.0 - w : w;
    if (job->o.scorer == WB_FZ_JARO_WINKLER && tau > 0.7) {
        double bonus = 4.0 * job->o.prefix_weight;
        double below = bonus < 1.0 ? (tau - bonus) / (1.0 - bonus) : 0.0;
        tau = below > 0.7 ? below : 0.7;
    }
    job->jaro_tau = tau;
    job->jaro_tau_seen = job->kept_generation;
    return tau;
}

/* Whether a value `key` of a candidate of n symbols is at or past its
 * length's bar, found for the worst kept now (`generation`): it may rank */
static inline bool past_bar(const fsearch_job *job, size_t n, uint32_t key, bool more,
                            uint32_t generation) {
    return job->bar_seen[n] == generation &&
           (more ? key >= job->value_bar[n] : key < job->value_bar[n]);
}

/* From candidate i up to `end`, those passed over by their value alone
 * (the limit reached, bytes are symbols): returns the first that is not,
 * one that may rank or is for the other paths (no value yet, whitespace
 * in a token score, past the bars' lengths), or end. Inlined with
 * constant flags, each loop keeps only its own tests. */
static inline __attribute__((always_inline)) size_t
pass_over(fsearch_job *job, size_t i, size_t end, bool jaro, bool more, bool tokens) {
    const uint32_t *values = job->lanes.distances;
    const uint64_t *offsets = job->set->offsets;
    const uint64_t *spaced = tokens ? job->set->prepared->spaced : NULL;
    const uint8_t *lengths = job->set->prepared ? job->set->prepared->length : NULL;
    /* an index's lengths stop at WB_LANES_LENGTH_MOST */
    const size_t m = job->qlen, most = jaro ? 64 : WB_LANES_LENGTH_MOST - 1;
    const uint32_t generation = job->kept_generation; /* no bar moves it */
    /* Jaro's matches at the bar, its transpositions too (jaro_below) */
    const double tau = jaro ? jaro_tau(job) : 0.0;
    for (; i < end; i++) {
        size_t n = lengths ? lengths[i] : (size_t)(offsets[i + 1] - offsets[i]);
        uint32_t v = values[i];
        if (tokens && (spaced[i / 64] >> (i % 64)) & 1) break;
        /* most end here, below their length's bar as last found (one
         * load, a branch that foretells well): a bar only gets stricter,
         * so one found for an earlier worst kept passes over none that
         * may rank now; 0 where none was found yet */
        if (more && n < WB_LANES_LENGTH_MOST &&
            (jaro ? WB_SEARCH_JARO_MATCHES(v) : v) < job->value_bar[n])
            continue;
        if (n > most || v == WB_SEARCH_NOT_DONE) break;
        if (job->bar_seen[n] != generation) value_bar_now(job, m, n);
        if (past_bar(job, n, jaro ? WB_SEARCH_JARO_MATCHES(v) : v, more, generation) &&
            (!jaro ||
             !jaro_below(m, n, WB_SEARCH_JARO_MATCHES(v), WB_SEARCH_JARO_TRANSPOSITIONS(v), tau)))
            break;
    }
    return i;
}

/* pass_over for this search's kind of values */
/* Jaro's apart: its loop, which reckons with the transpositions, kept
 * out of the others' code (beside them, the ratio's loop ran a third
 * slower on this machine, the same instructions placed elsewhere) */
static __attribute__((noinline)) size_t pass_over_jaro(fsearch_job *job, size_t i, size_t end) {
    return pass_over(job, i, end, true, true, false);
}

static size_t pass_over_values(fsearch_job *job, size_t i, size_t end) {
    if (job->one_token) /* the ratio's LCS, whitespace noted */
        return pass_over(job, i, end, false, true, true);
    if (job->lanes_op == WB_SEARCH_JARO) return pass_over_jaro(job, i, end);
    if (job->more_is_better) return pass_over(job, i, end, false, true, false);
    return pass_over(job, i, end, false, false, false);
}

/* How far skip_below looks past the candidate it stops at */
#define LOOK_AHEAD 64

/* From candidate i on, those whose value alone says they cannot rank,
 * `each` units each, until one may (or is for the other paths), or the
 * budget: returns it. Then looks up to LOOK_AHEAD candidates past it for
 * the next such one, whose bytes the scores of most scorers read: asked
 * into the cache now, they are there when its turn comes (the next call,
 * from the one after this, starts where the look ended, and counts their
 * units). The bars only get stricter, so what the look passed over stays
 * passed over. */
static size_t skip_below(fsearch_job *job, size_t i, uint64_t each, uint64_t budget, uint64_t start,
                         uint64_t used, uint64_t *units) {
    size_t count = job->set->count;
    uint64_t u = *units;
    bool known = false;
    if (job->ahead_from == i && job->ahead_to > i) {
        known = job->ahead_hit;
        i = job->ahead_to;
        u += job->ahead_units;
    }
    job->ahead_to = 0;
    if (!known) {
        /* as many as the budget holds (the first one whatever it holds) */
        uint64_t spent = used + u - start, left = spent < budget ? budget - spent : 0;
        uint64_t most = left / each + (left % each != 0);
        size_t room = left ? (most < SIZE_MAX ? (size_t)most : SIZE_MAX) : u == 0;
        size_t end = count - i > room ? i + room : count, from = i;
        i = pass_over_values(job, i, end);
        u += (uint64_t)(i - from) * each;
        if (i == end && i < count) { /* the budget */
            *units = u;
            return i;
        }
    }
    if (i < count) {
        size_t k = i + 1, end = count - k > LOOK_AHEAD ? k + LOOK_AHEAD : count;
        size_t at = pass_over_values(job, k, end);
        /* counted when reached: counted now, they could end the slice
         * before candidate i, again and again */
        job->ahead_units = (uint64_t)(at - k) * each;
        job->ahead_from = i + 1;
        job->ahead_to = at;
        job->ahead_hit = at < end;
        if (job->ahead_hit) __builtin_prefetch(job->set->bytes + job->set->offsets[at]);
    }
    *units = u;
    return i;
}

/* The badness of the bound a candidate of n symbols has from its LCS v
 * with the query: for the partial ratios, 2 v over the shorter length
 * and v (its best window's ratio at most, as wb_fz_partial_bound takes
 * it); for Damerau-Levenshtein, a distance of at least the longer length
 * less v */
static wb_fz_bar seed_bound(const fsearch_job *job, size_t n, size_t v) {
    size_t m = job->qlen;
    if (job->partial) {
        size_t shorter = m < n ? m : n;
        return (wb_fz_bar){shorter - v, shorter + v > 0 ? shorter + v : 1};
    }
    size_t most = m > n ? m : n;
    return (wb_fz_bar){most - v, most > 0 ? most : 1};
}

/* The least LCS of a candidate of n symbols whose bound is better than
 * the picks' bar, or one past any */
static uint32_t seed_bar_of(const fsearch_job *job, size_t n) {
    size_t m = job->qlen, top = m < n ? m : n, v = 0;
    while (v <= top) {
        wb_fz_bar b = seed_bound(job, n, v);
        if (wb_fz_below_bar(&b, job->pick_bar.num, job->pick_bar.den)) break;
        v++;
    }
    return (uint32_t)v;
}

/* Whether pick a's bound is strictly better than b's */
static inline bool pick_better(const seed_pick *a, const seed_pick *b) {
    return a->bound.num * b->bound.den < b->bound.num * a->bound.den;
}

/* Orders picks[0 .. len) so that picks[k] is where it would be sorted
 * best first: the k before it are at least as good, the rest at most
 * (three-way partitions around a middle pick, on the part holding k) */
static void picks_select(seed_pick *p, size_t len, size_t k) {
    size_t lo = 0, hi = len;
    while (hi - lo > 1) {
        seed_pick pivot = p[lo + (hi - lo) / 2], t;
        size_t better = lo, i = lo, worse = hi;
        while (i < worse) {
            if (pick_better(&p[i], &pivot)) {
                t = p[better], p[better++] = p[i], p[i++] = t;
            } else if (pick_better(&pivot, &p[i])) {
                t = p[--worse], p[worse] = p[i], p[i] = t;
            } else {
                i++;
            }
        }
        if (k < better)
            hi = better;
        else if (k >= worse)
            lo = worse;
        else
            return;
    }
}

/* The pick_most best picks kept (the first ones), the worst of them the
 * bar the next must beat (the lengths' bars made again) */
static void picks_cut(fsearch_job *job) {
    picks_select(job->pick, job->pick_len, job->pick_most - 1);
    job->pick_len = job->pick_most;
    job->pick_bar = job->pick[job->pick_most - 1].bound;
    memset(job->seed_bar, 0, sizeof job->seed_bar);
}

/* Whether a candidate of n symbols (at most VALUE_BAR_MOST) with LCS v
 * beats the picks' bar */
static inline bool seed_may_better(fsearch_job *job, uint32_t v, size_t n) {
    if (n >= WB_LANES_LENGTH_MOST) return v >= seed_bar_of(job, n);
    if (job->seed_bar[n] == 0) job->seed_bar[n] = seed_bar_of(job, n);
    return v >= job->seed_bar[n];
}

/* Whether the seed in slot a is worse than the one in slot b */
static bool seed_worse(const fsearch_job *job, size_t a, size_t b) {
    if (job->partial) return wb_fz_better(job->o.kind, job->seed_scores[b], job->seed_scores[a]);
    return wb_fz_below_bar(&job->seed[b], job->seed[a].num, job->seed[a].den);
}

/* Keeps the seed weighed in slot SEED_MOST among the limit best: the
 * worst replaced once they are full, and the worst found again */
static void seed_keep(fsearch_job *job) {
    size_t at;
    if (job->seed_len < job->limit)
        at = job->seed_len++;
    else if (seed_worse(job, job->seed_worst, SEED_MOST))
        at = job->seed_worst;
    else
        return;
    job->seed[at] = job->seed[SEED_MOST];
    job->seed_scores[at] = job->seed_scores[SEED_MOST];
    if (job->seed_len < job->limit) return;
    size_t worst = 0;
    for (size_t k = 1; k < job->seed_len; k++)
        worst = seed_worse(job, k, worst) ? k : worst;
    job->seed_worst = worst;
}

/* Pick k's score weighed among the seeds; its units */
static uint64_t seed_score(fsearch_job *job, size_t k) {
    const uint64_t *offsets = job->set->offsets;
    size_t i = job->pick[k].index, n = (size_t)(offsets[i + 1] - offsets[i]), m = job->qlen;
    const uint8_t *t = job->set->bytes + offsets[i];
    uint64_t units;
    if (job->partial) {
        bool passed;
        units = wb_fz_quick_partial(&job->quick, t, n, job->lanes.distances[i], NULL,
                                    &job->seed_scores[SEED_MOST], &passed);
    } else {
        size_t most = m > n ? m : n;
        job->seed[SEED_MOST] =
            (wb_fz_bar){wb_fz_quick_damerau_most(&job->quick, t, n), most > 0 ? most : 1};
        /* a step a byte of about 3 ns (90 ns for 20-30 bytes, a cache
         * miss on the candidate's bytes included) */
        units = 1 + 3 * n;
    }
    seed_keep(job);
    return units;
}

/* The seeds (fsearch_job): the picks from job->seed_next on, then their
 * scores from job->seed_scored on, until the budget (false: not done).
 * A pick's bytes are asked into the cache while the one before is
 * scored. */
static bool seed_step(fsearch_job *job, uint64_t budget, uint64_t start, uint64_t *used) {
    const wb_search_set *set = job->set;
    const uint32_t *values = job->lanes.distances;
    const uint64_t *offsets = set->offsets;
    const uint64_t *spaced = set->prepared ? set->prepared->spaced : NULL;
    const uint8_t *lengths = set->prepared ? set->prepared->length : NULL;
    size_t count = set->count, i = job->seed_next;
    /* the budget left, in units (the first candidate whatever it holds) */
    uint64_t units = 0, spent = *used - start, left = spent < budget ? budget - spent : 1;
    size_t end = count - i > left ? i + (size_t)left : count, from = i;
    for (; i < end; i++) {
        uint32_t v = values[i];
        size_t n = lengths ? lengths[i] : (size_t)(offsets[i + 1] - offsets[i]);
        /* most end at their length's bar (a branch that foretells well;
         * none for WB_LANES_LENGTH_MOST bytes or more) */
        if (v < job->seed_bar[n < WB_LANES_LENGTH_MOST ? n : WB_LANES_LENGTH_MOST]) continue;
        n = (size_t)(offsets[i + 1] - offsets[i]);
        /* the others go to the other paths: scored exactly, no seeds */
        if (v == WB_SEARCH_NOT_DONE || n > VALUE_BAR_MOST || !wb_fz_quick_fits(&job->quick, n) ||
            !seed_may_better(job, v, n))
            continue;
        if (job->one_token &&
            (spaced ? (spaced[i / 64] >> (i % 64)) & 1 : has_space(set->bytes + offsets[i], n)))
            continue;
        job->pick[job->pick_len++] = (seed_pick){seed_bound(job, n, v), i};
        if (job->pick_len == 2 * job->pick_most) picks_cut(job);
    }
    units += i - from;
    job->seed_next = i;
    if (i < count) {
        *used += units;
        return false;
    }
    if (job->pick_len > job->pick_most && job->seed_scored == 0) picks_cut(job);
    size_t k = job->seed_scored;
    for (; k < job->pick_len && units < left; k++) {
        if (k + 1 < job->pick_len) __builtin_prefetch(set->bytes + offsets[job->pick[k + 1].index]);
        units += seed_score(job, k);
    }
    job->seed_scored = k;
    *used += units;
    if (k < job->pick_len) return false;
    job->seeding = false;
    job->seed_on = job->seed_len == job->limit;
    /* the value bars are the seeds' from here on, before any hit kept */
    if (job->seed_on) job->kept_generation++;
    return true;
}

/* A row of cdist scores every candidate, with a division and a store:
 * about 8 ns a candidate beyond a search's, which its one unit did not
 * count (the runtime learned 6.2 ns a unit from cdist, 2.4 from
 * searches, so a step sized on the search core's units ran several
 * slices long); 3 units more bring cdist's to 1.9 ns a unit. */
#define CELL_UNITS 3

/* The scores of the candidates from job->next on, from the search core's
 * values, until one has none (left to the other paths), the last one, or
 * the budget (false: not done). Most candidates of a search with a limit
 * end at the bar (the worst kept), compared as integers here. */
static bool lanes_scores(fsearch_job *job, uint64_t budget, uint64_t start, uint64_t *used) {
    const wb_search_set *set = job->set;
    const uint32_t *values = job->lanes.distances;
    const uint64_t *offsets = set->offsets;
    size_t count = set->count, m = job->qlen, i = job->next;
    wb_search_op op = job->lanes_op;
    /* Levenshtein in codepoints: symbols, not bytes */
    bool count_symbols = job->o.codepoints && !set->ascii;
    /* the ratios' and Indel's badness is d / (m + n), the others' d / max(m, n) */
    bool sum = op == WB_SEARCH_LCS;
    bool bars = !job->cells;
    uint64_t units = 0;
    bool general = false; /* candidate i is for the other paths */
    /* the candidates holding whitespace: known to an index's batches */
    const uint64_t *spaced = set->prepared ? set->prepared->spaced : NULL;
    /* a unit a candidate, and what looks at its bytes or divides more */
    uint64_t extra = op == WB_SEARCH_JARO ? 3 : job->partial ? 2 : 0;
    uint64_t cell = job->cells ? CELL_UNITS : 0;
    bool damerau = job->o.scorer == WB_FZ_DAMERAU_LEVENSHTEIN;
    /* the partial ratio of a candidate that may rank: the quick score */
    bool quick_wratio = job->o.scorer == WB_FZ_WRATIO && job->quick_single;
    bool quick_partial = (job->o.scorer == WB_FZ_PARTIAL_RATIO && job->quick_on) ||
                         (job->quick_single && !quick_wratio);
    /* with a limit, the candidates that cannot rank by their value alone
     * end in a tight loop: bytes as symbols, and for the token scores
     * the index's note of whitespace */
    bool skipping = job->value_bars && bars && !count_symbols && (!job->one_token || spaced);
    /* a candidate passed over there: its units beside the batches' (for
     * Jaro the runtime learned 1.0 ns a unit at 1 + extra against 1.4-2.1
     * for the others) */
    uint64_t skip_units = op == WB_SEARCH_JARO ? 2 : 1 + extra;
    uint64_t check_at = SPENT_PART;
    for (; i < count; i++) {
        if (skipping && (job->heap_len == job->limit || job->seed_on)) {
            i = skip_below(job, i, skip_units, budget, start, *used, &units);
            if (i == count) break;
        }
        if (units > 0 && *used + units - start >= budget) break;
        if (units >= check_at) {
            if (wb_slice_spent()) break;
            check_at = units + SPENT_PART;
        }
        uint32_t v = values[i];
        size_t len = (size_t)(offsets[i + 1] - offsets[i]);
        size_t n = count_symbols ? symbols_in(job, i) : len;
        units += 1 + extra + cell + (count_symbols ? len / 16 : 0);
        if (job->one_token && !spaced) units += len / 8;
        if ((op != WB_SEARCH_LEVENSHTEIN && v == WB_SEARCH_NOT_DONE) ||
            (job->one_token &&
             (spaced ? (spaced[i / 64] >> (i % 64)) & 1 : has_space(set->bytes + offsets[i], n)))) {
            general = true;
            break;
        }
        double score = 0.0;
        bool passed;
        if (op == WB_SEARCH_JARO) {
            /* its matches may rank (skip_below: Jaro's lanes are bytes and
             * its table is made with a limit, so it passes over the others);
             * Jaro-Winkler reads its bytes only if its counts may rank with
             * the longest prefix */
            if (job->o.scorer == WB_FZ_JARO_WINKLER && job->heap_len == job->limit && bars &&
                !wb_fz_better(job->o.kind,
                              wb_fz_jaro_top(&job->o, m, n, WB_SEARCH_JARO_MATCHES(v),
                                             WB_SEARCH_JARO_TRANSPOSITIONS(v)),
                              job->heap[0].score))
                continue;
            wb_fz_jaro_verdict(&job->o, job->query_input, m, set->bytes + offsets[i], n,
                               WB_SEARCH_JARO_MATCHES(v), WB_SEARCH_JARO_TRANSPOSITIONS(v), &score,
                               &passed);
            if (!record(job, i, score, passed, (wb_fz_bar){0, 0})) {
                job->failed = true;
                break;
            }
            continue;
        }
        if (damerau) {
            /* the LCS bounds it (wb_fz_quick_damerau); the query fits */
            if (!wb_fz_quick_fits(&job->quick, n)) {
                general = true;
                break;
            }
            bool full = bars && job->heap_len == job->limit;
            /* the least distance that cannot rank: the value bar's least
             * LCS that may is one past the longer length less it (the
             * seeds' bar in it, may_rank) */
            size_t cut = SIZE_MAX;
            if ((full || job->seed_on) && job->value_bars && n <= VALUE_BAR_MOST) {
                if (job->bar_seen[n] != job->kept_generation) value_bar_now(job, m, n);
                cut = (m > n ? m : n) + 1 - job->value_bar[n];
            }
            wb_fz_bar badness;
            units += wb_fz_quick_damerau(&job->quick, set->bytes + offsets[i], n, v,
                                         full ? &job->heap[0].badness : NULL, cut, &score, &passed,
                                         &badness);
            /* past the worst seed (the value bar's cut, the limit not yet
             * reached): its score a bound, and as many others are better */
            if (job->seed_on && passed && past_seed(job, badness.num, badness.den)) continue;
            if (!record(job, i, score, passed, badness)) {
                job->failed = true;
                break;
            }
            continue;
        }
        if (job->partial) {
            /* at or past its length's bar, fresh, its bound may rank (the
             * bar is where partial_bound's verdict turns; WRatio's can
             * be the ratio's instead) */
            bool known = bars && (job->heap_len == job->limit || job->seed_on) && job->value_bars &&
                         job->o.scorer != WB_FZ_WRATIO && n <= VALUE_BAR_MOST &&
                         past_bar(job, n, v, true, job->kept_generation);
            int verdict = known ? BOUND_SCORE : partial_bound(job, m, n, v);
            bool quick = n <= WB_FZ_QUICK_MATRIX_MOST && (quick_partial || quick_wratio);
            if (verdict == BOUND_SCORE && quick) {
                const uint8_t *t = set->bytes + offsets[i];
                const double *worst =
                    bars && job->heap_len == job->limit ? &job->heap[0].score : NULL;
                units +=
                    quick_wratio
                        ? wb_fz_quick_wratio_apart(&job->quick, t, n, v, worst, &score, &passed)
                        : wb_fz_quick_partial(&job->quick, t, n, v, worst, &score, &passed);
                if (!record(job, i, score, passed, (wb_fz_bar){0, 0})) {
                    job->failed = true;
                    break;
                }
                continue;
            }
            if (verdict == BOUND_SCORE) { /* to the other paths */
                general = true;
                break;
            }
            if (verdict == BOUND_PAST_CUTOFF && job->cells) store(job, i, 0.0, 0, false);
            if (verdict != BOUND_RATIO) continue;
        }
        size_t most = m > n ? m : n, d = distance_of(op, m, n, v);
        bool full = bars && job->heap_len == job->limit;
        if (full && wb_fz_below_bar(&job->heap[0].badness, d, sum ? m + n : most)) continue;
        wb_fz_bar badness;
        wb_fz_verdict(&job->lanes_o, m, n, d, full ? &job->heap[0].badness : NULL, &score, &passed,
                      &badness);
        if (!record(job, i, score, passed, badness)) {
            job->failed = true;
            break;
        }
    }
    job->next = i;
    *used += units;
    return i == count || job->failed || general;
}

static bool fsearch_step(void *state, uint64_t budget, uint64_t *used) {
    fsearch_job *job = state;
    uint64_t start = *used;
    if (job->lanes_on && !job->lanes_done) {
        if (!lanes_step(job, budget, used)) return false;
        if (*used - start >= budget) return false;
    }
    while (!job->sorting) {
        if (job->failed || job->failed_at || job->unfit) return true;
        if (!job->scoring) {
            if (job->next == job->set->count) {
                job->sorting = true;
                job->unsorted = job->heap_len;
                break;
            }
            if (job->lanes_done) {
                if (job->seeding && !seed_step(job, budget, start, used)) return false;
                /* Levenshtein's values are all there; the others' but for
                 * the candidates the batches do not hold */
                if (!lanes_scores(job, budget, start, used)) return false;
                if (job->failed) return true;
                if (job->next == job->set->count) continue;
            }
            if (job->quick_on && quick_candidate(job, used)) {
                if (job->failed) return true;
                if (*used - start >= budget) return false;
                continue;
            }
            if (!start_candidate(job, used)) continue;
        }
        uint64_t spent = *used - start;
        if (!wb_fz_step(&job->fz, budget > spent ? budget - spent : 1, used)) return false;
        bool passed = job->fz.passed, failed = job->fz.failed;
        double score = job->fz.score;
        uint64_t value = job->fz.value;
        if (passed && job->fz.too_large) job->unfit = UNFIT_U64;
        wb_fz_free(&job->fz);
        job->scoring = false;
        if (job->unfit) return true;
        if (failed || !record_value(job, job->next - 1, score, value, passed, (wb_fz_bar){0, 0})) {
            job->failed = true;
            return true;
        }
        if (*used - start >= budget) return false;
    }
    /* heapsort: the worst of the rest to the end, best first in the end */
    while (job->unsorted > 1) {
        hit t = job->heap[0];
        job->heap[0] = job->heap[job->unsorted - 1];
        job->heap[--job->unsorted] = t;
        sift_down(job, job->heap, job->unsorted, 0);
        *used += 1;
        if (*used - start >= budget && job->unsorted > 1) return false;
    }
    return true;
}

static ERL_NIF_TERM fsearch_result(ErlNifEnv *env, const void *state) {
    const fsearch_job *job = state;
    if (job->failed) return wb_error(env, wb_atom(env, "enomem"));
    if (job->failed_at)
        return wb_error(env, enif_make_tuple2(env, atom_invalid_utf8,
                                              enif_make_uint64(env, job->failed_at - 1)));
    if (job->unfit == UNFIT_U64) return past_u64(env);
    if (job->unfit == UNFIT_CELL)
        return wb_error(env, enif_make_tuple3(env, atom_does_not_fit, atom_u32,
                                              enif_make_uint64(env, job->unfit_value)));
    if (job->unfit == UNFIT_LANES)
        return wb_error(
            env, enif_make_tuple3(env, atom_does_not_fit, atom_u32,
                                  enif_make_tuple2(env, wb_atom(env, "candidate"),
                                                   enif_make_uint64(env, job->unfit_value))));
    ERL_NIF_TERM out;
    if (job->cells) return wb_atom(env, "ok");
    /* <<Index:64, Score:64/float>> a hit, native endian (the integer
     * kinds: <<Index:64, Score:64>>) */
    /* sized by the caller's limit: an allocation that can fail */
    ErlNifBinary b;
    if (!enif_alloc_binary(job->heap_len * 16, &b)) return wb_error(env, wb_atom(env, "enomem"));
    for (size_t i = 0; i < job->heap_len; i++) {
        memcpy(b.data + i * 16, &job->heap[i].index, 8);
        if (job->integers)
            memcpy(b.data + i * 16 + 8, &job->heap[i].value, 8);
        else
            memcpy(b.data + i * 16 + 8, &job->heap[i].score, 8);
    }
    out = enif_make_binary(env, &b);
    return out;
}

static size_t fsearch_memory(const void *state) {
    const fsearch_job *job = state;
    return job->qlen * sizeof(uint32_t) + job->pattern.owned_bytes + job->query_input_len +
           (job->jaro_top ? WB_FZ_JARO_TOPS * sizeof(double) : 0) +
           job->text_room * sizeof(uint32_t) + job->heap_room * sizeof(hit) +
           (job->pick ? 2 * job->pick_most * sizeof(seed_pick) : 0) +
           (job->scoring ? job->fz.owned_bytes : 0) +
           (job->lanes_live ? wb_search_memory(&job->lanes) : 0) + wb_fz_quick_memory(&job->quick);
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

/* ---- in the call: the default processor, the names --------------------------------- */

#define PROCESS_IN_CALL_MOST 65536

ERL_NIF_TERM wb_fuzzy_default_process(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifBinary in;
    if (!enif_inspect_binary(env, argv[0], &in)) return enif_make_badarg(env);
    if (in.size > PROCESS_IN_CALL_MOST || !wb_lev_ascii(in.data, in.size)) return atom_other;
    ERL_NIF_TERM out;
    unsigned char *bytes = enif_make_new_binary(env, in.size, &out);
    size_t len = 0;
    if (!bytes) return atom_other;
    wb_fz_default_process_ascii(in.data, in.size, bytes, &len);
    return len == in.size ? out : enif_make_sub_binary(env, out, 0, len);
}

ERL_NIF_TERM wb_fuzzy_names(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    return enif_make_tuple3(env, enif_make_list_from_array(env, scorer_atoms, WB_FZ_SCORERS),
                            enif_make_list_from_array(env, kind_atoms, WB_FZ_KINDS),
                            enif_make_double(env, WB_FZ_PREFIX_WEIGHT_MOST));
}

int wb_fuzzy_load(ErlNifEnv *env) {
    matrix_type = enif_open_resource_type(env, NULL, "wb_fuzzy_matrix", matrix_dtor,
                                          ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER, NULL);
    if (!matrix_type) return 1;
    for (size_t i = 0; i < WB_FZ_SCORERS; i++)
        scorer_atoms[i] = enif_make_atom(env, scorer_names[i]);
    for (size_t i = 0; i < WB_FZ_KINDS; i++)
        kind_atoms[i] = enif_make_atom(env, kind_names[i]);
    atom_all = enif_make_atom(env, "all");
    atom_into = enif_make_atom(env, "into");
    atom_nil = enif_make_atom(env, "nil");
    atom_other = enif_make_atom(env, "other");
    atom_invalid_utf8 = enif_make_atom(env, "invalid_utf8");
    atom_query = enif_make_atom(env, "query");
    atom_does_not_fit = enif_make_atom(env, "does_not_fit");
    atom_u32 = enif_make_atom(env, "u32");
    atom_u64 = enif_make_atom(env, "u64");
    return 0;
}
