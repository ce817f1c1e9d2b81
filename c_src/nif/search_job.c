/* Search as runtime jobs (the algorithm is in search/search.c):
 *
 *   search(Query, Candidates, Count, Unit, MaxDistance, Limit, Mode, Tiny, Ref)
 *     Candidates: a list of binaries (copied into a packed set when the job
 *     starts) or an index; Count: their number. Limit 0: every distance, as
 *     a binary of native 32-bit integers; Limit > 0: [{Candidate, Distance}]
 *     of the nearest.
 *   search_index(Candidates, Count, Mode, Tiny, Ref) -> {Index, Count}
 *     packs a list of binaries once into native memory (a resource).
 *
 * The caller passes the list's length: decode runs at every slice of a job
 * and predict on a normal scheduler, so neither may walk the list.
 *
 * Errors: {error, {not_a_binary, Position}} for a list element (or an
 * improper tail) that is not a binary, {error, {invalid_utf8, query}} and
 * {error, {invalid_utf8, Position}} in codepoint mode, {error, enomem}. */
#include "jobs.h"

#include "../search/search.h"

#include <stdlib.h>

typedef struct {
    wb_search_owned_set packed;
    wb_lanes_index lanes; /* its batches, made once */
} search_index;

static ErlNifResourceType *index_type;
static ERL_NIF_TERM atom_byte, atom_codepoint, atom_not_a_binary, atom_invalid_utf8, atom_query;

static void index_dtor(ErlNifEnv *env, void *obj) {
    (void)env;
    search_index *index = obj;
    wb_runtime_resident_bytes(-(int64_t)(index->packed.owned_bytes + index->lanes.bytes));
    wb_lanes_index_free(&index->lanes);
    wb_search_set_free(&index->packed);
}

/* Packs a proper list of `count` binaries; on failure stores the reason
 * term and leaves nothing allocated. */
static bool pack_list(ErlNifEnv *env, ERL_NIF_TERM list, size_t count, wb_search_owned_set *out,
                      ERL_NIF_TERM *reason) {
    ERL_NIF_TERM head, tail = list;
    size_t total = 0, i = 0;
    ErlNifBinary bin;
    while (enif_get_list_cell(env, tail, &head, &tail)) {
        if (!enif_inspect_binary(env, head, &bin)) {
            *reason = enif_make_tuple2(env, atom_not_a_binary, enif_make_uint64(env, i));
            return false;
        }
        total += bin.size;
        i++;
    }
    if (!enif_is_empty_list(env, tail)) {
        *reason = enif_make_tuple2(env, atom_not_a_binary, wb_atom(env, "tail"));
        return false;
    }
    if (i != count) {
        *reason = wb_atom(env, "badarg");
        return false;
    }
    if (!wb_search_set_alloc(out, count, total)) {
        *reason = wb_atom(env, "enomem");
        return false;
    }
    tail = list;
    for (i = 0; enif_get_list_cell(env, tail, &head, &tail); i++) {
        if (!enif_inspect_binary(env, head, &bin)) { /* checked above */
            wb_search_set_free(out);
            *reason = wb_atom(env, "badarg");
            return false;
        }
        out->offsets[i + 1] = out->offsets[i] + bin.size;
        if (bin.size) memcpy(out->bytes + out->offsets[i], bin.data, bin.size);
    }
    return true;
}

/* ---- search(Query, Candidates, Unit, MaxDistance, Limit) ------------------------ */

typedef struct {
    ErlNifBinary query;
    ERL_NIF_TERM list; /* when no index */
    search_index *index;
    size_t count;
    bool codepoints;
    size_t max_distance, limit;
} search_args;

typedef struct {
    wb_search search;
    wb_search_owned_set packed; /* a list's candidates */
    search_index *index;        /* kept while the job runs */
} search_job;

/* a count of candidates, within what an index can hold */
static bool get_count(ErlNifEnv *env, ERL_NIF_TERM term, size_t *count) {
    ErlNifUInt64 n;
    if (!enif_get_uint64(env, term, &n) || n >= SIZE_MAX / sizeof(uint64_t) - 1) return false;
    *count = (size_t)n;
    return true;
}

static bool search_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    search_args *in = args;
    ErlNifUInt64 k, limit;
    memset(in, 0, sizeof *in);
    if (!enif_inspect_binary(env, argv[0], &in->query)) return false;
    if (!enif_get_resource(env, argv[1], index_type, (void **)&in->index)) {
        if (!enif_is_list(env, argv[1])) return false;
        in->list = argv[1];
    }
    if (!get_count(env, argv[2], &in->count)) return false;
    if (enif_is_identical(argv[3], atom_byte))
        in->codepoints = false;
    else if (enif_is_identical(argv[3], atom_codepoint))
        in->codepoints = true;
    else
        return false;
    if (enif_get_uint64(env, argv[4], &k))
        in->max_distance = k < SIZE_MAX - 1 ? (size_t)k : WB_SEARCH_NO_LIMIT;
    else if (enif_is_atom(env, argv[4]))
        in->max_distance = WB_SEARCH_NO_LIMIT;
    else
        return false;
    if (!enif_get_uint64(env, argv[5], &limit)) return false;
    in->limit = limit < SIZE_MAX ? (size_t)limit : SIZE_MAX;
    return true;
}

static uint64_t search_predict(const void *args) {
    const search_args *in = args;
    if (in->index) {
        const wb_search_set *set = &in->index->packed.set;
        return wb_search_predict(set->count, set->offsets[set->count], in->query.size,
                                 in->codepoints, set->prepared != NULL);
    }
    /* a list's bytes are not known before it is walked: about the query's */
    return wb_search_predict(in->count, (uint64_t)in->count * in->query.size, in->query.size,
                             in->codepoints, false);
}

/* copying a list's candidates: a few units per candidate */
static uint64_t search_setup(const void *args) {
    const search_args *in = args;
    return in->index ? 0 : (uint64_t)in->count * 16;
}

static bool search_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const search_args *in = args;
    search_job *job = state;
    const wb_search_set *set;
    if (in->index) {
        set = &in->index->packed.set;
    } else {
        if (!pack_list(env, in->list, in->count, &job->packed, reason)) return false;
        set = &job->packed.set;
    }
    switch (wb_search_init(&job->search, set, in->query.data, in->query.size, in->codepoints,
                           in->max_distance, in->limit)) {
    case WB_SEARCH_OK:
        break;
    case WB_SEARCH_EUTF8_QUERY:
        *reason = enif_make_tuple2(env, atom_invalid_utf8, atom_query);
        wb_search_set_free(&job->packed);
        return false;
    default:
        *reason = wb_atom(env, "enomem");
        wb_search_set_free(&job->packed);
        return false;
    }
    if (in->index) {
        enif_keep_resource(in->index);
        job->index = in->index;
    }
    return true;
}

static bool search_step(void *state, uint64_t budget, uint64_t *used) {
    return wb_search_step(&((search_job *)state)->search, budget, used);
}

static ERL_NIF_TERM search_result(ErlNifEnv *env, const void *state) {
    const search_job *job = state;
    const wb_search *s = &job->search;
    const wb_search_set *set = s->set;
    switch (s->status) {
    case WB_SEARCH_OK:
        break;
    case WB_SEARCH_EUTF8_CANDIDATE:
        return wb_error(
            env, enif_make_tuple2(env, atom_invalid_utf8, enif_make_uint64(env, s->failed_at)));
    default:
        return wb_error(env, wb_atom(env, "enomem"));
    }
    if (s->limit == 0) {
        ERL_NIF_TERM out;
        size_t bytes = set->count * sizeof(uint32_t);
        unsigned char *data = enif_make_new_binary(env, bytes, &out);
        if (!data) return wb_error(env, wb_atom(env, "enomem"));
        if (bytes) memcpy(data, s->distances, bytes);
        return out;
    }
    const wb_search_hit *hits;
    size_t n = wb_search_hits(s, &hits);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (size_t i = n; i-- > 0;) {
        size_t at = (size_t)hits[i].index;
        size_t len = (size_t)(set->offsets[at + 1] - set->offsets[at]);
        ERL_NIF_TERM word;
        unsigned char *data = enif_make_new_binary(env, len, &word);
        if (!data) return wb_error(env, wb_atom(env, "enomem"));
        if (len) memcpy(data, set->bytes + set->offsets[at], len);
        list = enif_make_list_cell(
            env, enif_make_tuple2(env, word, enif_make_uint(env, hits[i].distance)), list);
    }
    return list;
}

static size_t search_memory(const void *state) {
    const search_job *job = state;
    return wb_search_memory(&job->search) + job->packed.owned_bytes;
}

static void search_destroy(void *state) {
    search_job *job = state;
    wb_search_free(&job->search);
    wb_search_set_free(&job->packed);
    if (job->index) enif_release_resource(job->index);
    job->index = NULL;
}

wb_job_type wb_search_job = {
    .name = "search",
    .argc = 6,
    .args_size = sizeof(search_args),
    .state_size = sizeof(search_job),
    .decode = search_decode,
    .predict = search_predict,
    .setup = search_setup,
    .init = search_init,
    .step = search_step,
    .result = search_result,
    .memory = search_memory,
    .destroy = search_destroy,
    .ps_per_unit = 3000, /* see the unit in search.h */
};

/* ---- search_index(Candidates) ----------------------------------------------- */

typedef struct {
    ERL_NIF_TERM list;
    size_t count;
} index_args;

typedef struct {
    search_index *index; /* the job's reference, released by destroy */
} index_job;

static bool index_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    index_args *in = args;
    in->list = argv[0];
    return enif_is_list(env, argv[0]) && get_count(env, argv[1], &in->count);
}

static uint64_t index_predict(const void *args) {
    (void)args;
    return 1;
}

static uint64_t index_setup(const void *args) {
    return (uint64_t)((const index_args *)args)->count * 48;
}

static bool index_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const index_args *in = args;
    index_job *job = state;
    search_index *index = enif_alloc_resource(index_type, sizeof *index);
    if (!index) {
        *reason = wb_atom(env, "enomem");
        return false;
    }
    memset(index, 0, sizeof *index);
    if (!pack_list(env, in->list, in->count, &index->packed, reason)) {
        enif_release_resource(index); /* the destructor frees nothing */
        return false;
    }
    if (!wb_lanes_index_build(&index->lanes, index->packed.bytes, index->packed.offsets,
                              index->packed.set.count)) {
        wb_search_set_free(&index->packed);
        enif_release_resource(index);
        *reason = wb_atom(env, "enomem");
        return false;
    }
    index->packed.set.prepared = &index->lanes;
    wb_runtime_resident_bytes((int64_t)(index->packed.owned_bytes + index->lanes.bytes));
    job->index = index;
    return true;
}

static bool index_step(void *state, uint64_t budget, uint64_t *used) {
    (void)state;
    (void)budget;
    *used += 1;
    return true;
}

static ERL_NIF_TERM index_result(ErlNifEnv *env, const void *state) {
    const index_job *job = state;
    return enif_make_tuple2(env, enif_make_resource(env, job->index),
                            enif_make_uint64(env, job->index->packed.set.count));
}

static void index_destroy(void *state) {
    index_job *job = state;
    if (job->index) enif_release_resource(job->index);
    job->index = NULL;
}

wb_job_type wb_search_index_job = {
    .name = "search_index",
    .argc = 2,
    .args_size = sizeof(index_args),
    .state_size = sizeof(index_job),
    .decode = index_decode,
    .predict = index_predict,
    .setup = index_setup,
    .init = index_init,
    .step = index_step,
    .result = index_result,
    .destroy = index_destroy,
    .ps_per_unit = 1000,
};

int wb_search_load(ErlNifEnv *env) {
    atom_byte = enif_make_atom(env, "byte");
    atom_codepoint = enif_make_atom(env, "codepoint");
    atom_not_a_binary = enif_make_atom(env, "not_a_binary");
    atom_invalid_utf8 = enif_make_atom(env, "invalid_utf8");
    atom_query = enif_make_atom(env, "query");
    ErlNifResourceTypeInit init = {.dtor = index_dtor};
    index_type = enif_open_resource_type_x(env, "wb_search_index", &init, ERL_NIF_RT_CREATE, NULL);
    return index_type ? 0 : 1;
}
