/* The score of two binaries as a runtime job (the algorithms are in
 * c_src/fuzzy/), apart from the searches (fuzzy_job.c) so that a server of
 * the library's job types (c_src/external/wb_ext_library.c) runs it too
 * with the erl_nif subset of wb_ext_nif.c: no resource, no packed set.
 *
 *   fuzzy_score(A, B, Unit, Options, Mode, Tiny, Ref) -> Score
 *     the score of two binaries (a float; an exact integer for an edit
 *     distance's own kinds); the worst of its kind when it does not pass
 *     the cutoff (wb_fz_worst). Errors: {invalid_utf8, 1 | 2} in codepoint
 *     mode, enomem, {does_not_fit, u64} for a score past 2^64 - 1,
 *     {unequal_lengths, M, N} for hamming without padding of sides of M
 *     and N symbols. With the alignment asked for (the ratio and the
 *     partial ratio): {Score, {SrcStart, SrcEnd, DestStart, DestEnd} | nil},
 *     where the score is in A (src) and B (dest), in the unit's symbols,
 *     nil when it does not pass the cutoff.
 *   fuzzy_score_short(A, B, Unit, Options) -> Score | long
 *     the same for a short pair, in the call itself (no job), or `long`.
 *   fuzzy_names() -> {Scorers, Kinds, MostPrefixWeight}
 *
 * Options (wb_fuzzy_get_options, the searches' too): {Scorer, Kind,
 * Cutoff | nil, Ins, Del, Sub, PrefixWeight, Pad, Alignment}, the atoms
 * of fuzzy.h's names (the cutoff of an integer kind, and the weights,
 * 64-bit unsigned integers; Pad true or false, hamming's; Alignment a
 * boolean, true only for the ratio and the partial ratio). */
#include "pair_symbols.h"

#include "../fuzzy/fuzzy.h"

#include <stdlib.h>

static const char *const scorer_names[] = WB_FZ_SCORER_NAMES;
static const char *const kind_names[] = WB_FZ_KIND_NAMES;
static ERL_NIF_TERM scorer_atoms[WB_FZ_SCORERS], kind_atoms[WB_FZ_KINDS];
static ERL_NIF_TERM atom_nil, atom_invalid_utf8, atom_does_not_fit, atom_u64, atom_long;
static ERL_NIF_TERM atom_true, atom_false, atom_unequal_lengths;

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

bool wb_fuzzy_get_options(ErlNifEnv *env, ERL_NIF_TERM term, bool codepoints, wb_fz_options *o) {
    const ERL_NIF_TERM *t;
    int arity;
    ErlNifUInt64 ins, del, sub;
    memset(o, 0, sizeof *o);
    if (!enif_get_tuple(env, term, &arity, &t) || arity != 9) return false;
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
    if (enif_is_identical(t[7], atom_false))
        o->no_pad = true;
    else if (!enif_is_identical(t[7], atom_true))
        return false;
    o->ins = ins;
    o->del = del;
    o->sub = sub;
    o->codepoints = codepoints;
    /* the alignment: the ratio's and the partial ratio's only */
    o->alignment = enif_is_identical(t[8], atom_true);
    return (o->alignment || enif_is_identical(t[8], atom_false)) &&
           (!o->alignment || o->scorer == WB_FZ_RATIO || o->scorer == WB_FZ_PARTIAL_RATIO);
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
    wb_pair_symbols p; /* the binaries and their symbols (score_bind) */
    bool started;      /* fz is started: the symbols are all decoded */
    wb_fz fz;
} score_job;

static bool score_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    score_args *in = args;
    bool codepoints;
    return enif_inspect_binary(env, argv[0], &in->a) && enif_inspect_binary(env, argv[1], &in->b) &&
           wb_get_unit(env, argv[2], &codepoints) &&
           wb_fuzzy_get_options(env, argv[3], codepoints, &in->o);
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
    wb_pair_bind(&job->p, &in->a, &in->b);
    /* a score on the bytes themselves reads them where they are now */
    if (job->started && job->fz.ab) wb_fz_rebind_bytes(&job->fz, job->p.in_a, job->p.in_b);
}

static void score_destroy(void *state) {
    score_job *job = state;
    if (job->started) wb_fz_free(&job->fz);
    job->started = false;
    wb_pair_free(&job->p);
}

static bool score_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const score_args *in = args;
    score_job *job = state;
    job->o = in->o;
    job->p.len_a = in->a.size;
    job->p.len_b = in->b.size;
    if (wb_fz_reads_bytes(&job->o)) {
        /* no symbols: the pair is started on the bytes in the first step */
        score_bind(args, state);
        return true;
    }
    if (!wb_pair_alloc(&job->p, in->a.size, in->b.size)) {
        score_destroy(job);
        *reason = wb_atom(env, "enomem");
        return false;
    }
    score_bind(args, state);
    return true;
}

static bool score_step(void *state, uint64_t budget, uint64_t *used) {
    score_job *job = state;
    if (!job->started && wb_fz_reads_bytes(&job->o)) {
        /* records the pair: no work that grows with it, cannot fail */
        wb_fz_start_bytes(&job->fz, &job->o, job->p.in_a, job->p.len_a, job->p.in_b, job->p.len_b);
        job->fz.alloc = wb_block_alloc;
        job->fz.release = wb_block_free;
        job->started = true;
    }
    if (!job->started) {
        uint64_t start = *used;
        if (!wb_pair_decode_step(&job->p, job->o.codepoints, budget, used)) return false;
        if (job->p.invalid) return true;
        /* records the pair: no work that grows with it, cannot fail */
        wb_fz_start(&job->fz, &job->o, job->p.a, job->p.da.count, job->p.b, job->p.db.count);
        job->fz.alloc = wb_block_alloc;
        job->fz.release = wb_block_free;
        job->fz.free_later = wb_free_later;
        job->started = true;
        uint64_t spent = *used - start;
        if (spent >= budget) return false;
        budget -= spent;
    }
    return wb_fz_step(&job->fz, budget, used);
}

/* a finished score's term */
static ERL_NIF_TERM score_term(ErlNifEnv *env, const wb_fz *fz) {
    if (fz->failed) return wb_error(env, wb_atom(env, "enomem"));
    if (fz->unequal)
        return wb_error(env,
                        enif_make_tuple3(env, atom_unequal_lengths, enif_make_uint64(env, fz->m),
                                         enif_make_uint64(env, fz->n)));
    if (wb_fz_integers(&fz->o)) {
        uint64_t v = fz->value;
        if (fz->passed ? fz->too_large : !wb_fz_worst_value(&fz->o, &v)) return past_u64(env);
        return enif_make_uint64(env, v);
    }
    ERL_NIF_TERM score = enif_make_double(env, fz->passed ? fz->score : wb_fz_worst(&fz->o));
    if (!fz->o.alignment) return score;
    /* {Score, {SrcStart, SrcEnd, DestStart, DestEnd} | nil}: where, when it passes */
    const wb_fz_alignment *x = &fz->alignment;
    ERL_NIF_TERM at = fz->passed ? enif_make_tuple4(env, enif_make_uint64(env, x->src_start),
                                                    enif_make_uint64(env, x->src_end),
                                                    enif_make_uint64(env, x->dest_start),
                                                    enif_make_uint64(env, x->dest_end))
                                 : atom_nil;
    return enif_make_tuple2(env, score, at);
}

static ERL_NIF_TERM score_result(ErlNifEnv *env, const void *state) {
    const score_job *job = state;
    if (job->p.invalid)
        return wb_error(
            env, enif_make_tuple2(env, atom_invalid_utf8, enif_make_int(env, job->p.invalid)));
    return score_term(env, &job->fz);
}

/* fuzzy_score_short(A, B, Unit, Options): the score of a pair of at most
 * SHORT_BYTES bytes a side whose work is at most SHORT_UNITS units (about
 * a microsecond, less than a slice), computed in the call itself with no
 * job; `long` for any other pair, and for one the job must answer (not
 * UTF-8, out of memory), for the job. */
#define SHORT_BYTES 64
#define SHORT_UNITS 2500

ERL_NIF_TERM wb_fuzzy_score_short(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    score_args in;
    if (!score_decode(env, argv, &in)) return enif_make_badarg(env);
    if (in.a.size > SHORT_BYTES || in.b.size > SHORT_BYTES || score_predict(&in) > SHORT_UNITS)
        return atom_long;
    uint32_t a[SHORT_BYTES], b[SHORT_BYTES];
    wb_fz fz;
    if (wb_fz_reads_bytes(&in.o)) {
        if (!wb_fz_start_bytes(&fz, &in.o, in.a.data, in.a.size, in.b.data, in.b.size))
            return atom_long;
    } else {
        size_t m = wb_fz_symbols(in.a.data, in.a.size, in.o.codepoints, a);
        size_t n =
            m == SIZE_MAX ? SIZE_MAX : wb_fz_symbols(in.b.data, in.b.size, in.o.codepoints, b);
        if (n == SIZE_MAX || !wb_fz_start(&fz, &in.o, a, m, b, n)) return atom_long;
    }
    uint64_t used = 0;
    while (!wb_fz_step(&fz, UINT64_MAX / 4, &used)) {
    }
    ERL_NIF_TERM out = fz.failed ? atom_long : score_term(env, &fz);
    wb_fz_free(&fz);
    return out;
}

/* read once, after init: the symbols' blocks */
static size_t score_memory(const void *state) {
    const score_job *job = state;
    return job->p.bytes_a + job->p.bytes_b + (job->started ? job->fz.owned_bytes : 0);
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

/* ---- the names --------------------------------------------------------------------- */

ERL_NIF_TERM wb_fuzzy_names(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    return enif_make_tuple3(env, enif_make_list_from_array(env, scorer_atoms, WB_FZ_SCORERS),
                            enif_make_list_from_array(env, kind_atoms, WB_FZ_KINDS),
                            enif_make_double(env, WB_FZ_PREFIX_WEIGHT_MOST));
}

void wb_fuzzy_score_load(ErlNifEnv *env) {
    for (size_t i = 0; i < WB_FZ_SCORERS; i++)
        scorer_atoms[i] = enif_make_atom(env, scorer_names[i]);
    for (size_t i = 0; i < WB_FZ_KINDS; i++)
        kind_atoms[i] = enif_make_atom(env, kind_names[i]);
    atom_nil = enif_make_atom(env, "nil");
    atom_invalid_utf8 = enif_make_atom(env, "invalid_utf8");
    atom_does_not_fit = enif_make_atom(env, "does_not_fit");
    atom_u64 = enif_make_atom(env, "u64");
    atom_long = enif_make_atom(env, "long");
    atom_true = enif_make_atom(env, "true");
    atom_false = enif_make_atom(env, "false");
    atom_unequal_lengths = enif_make_atom(env, "unequal_lengths");
}
