/* Search as runtime jobs (the algorithm is in search/search.c), over the
 * lists pack.c copies into native memory (packed.h):
 *
 *   search(Query, Packed, Count, Unit, MaxDistance, Limit, Mode, Tiny, Ref)
 *     Packed: a packed list or an index; Count: their number. Limit 0:
 *     every distance, as a binary of native 32-bit integers; Limit > 0:
 *     [{Candidate, Distance}] of the nearest.
 *   search_index(Packed, Count, Mode, Tiny, Ref) -> {Index, Count}
 *     makes a packed list an index (its batches made once).
 *
 * Errors: {error, {not_a_binary, Position}}, {error, {invalid_utf8,
 * query}} and {error, {invalid_utf8, Position}} in codepoint mode,
 * {error, enomem}. */
#include "packed.h"

#include <stdlib.h>

static ErlNifResourceType *hits_type, *block_type;
static ERL_NIF_TERM atom_not_a_binary, atom_invalid_utf8, atom_query;

/* ---- search(Query, Candidates, Unit, MaxDistance, Limit) ------------------------ */

typedef struct {
    ErlNifBinary query;
    search_index *index; /* a packed list, or an index */
    size_t count;
    bool codepoints;
    size_t max_distance, limit;
} search_args;

typedef struct {
    wb_search search;
    search_index *index; /* kept while the job runs */
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
    ErlNifUInt64 limit;
    memset(in, 0, sizeof *in);
    if (!enif_inspect_binary(env, argv[0], &in->query)) return false;
    if (!enif_get_resource(env, argv[1], wb_packed_type, (void **)&in->index) || !in->index->sealed)
        return false;
    if (!get_count(env, argv[2], &in->count) || in->count != in->index->packed.set.count)
        return false;
    if (!wb_get_unit(env, argv[3], &in->codepoints) ||
        !wb_get_cutoff(env, argv[4], &in->max_distance))
        return false;
    if (!enif_get_uint64(env, argv[5], &limit)) return false;
    in->limit = limit < SIZE_MAX ? (size_t)limit : SIZE_MAX;
    return true;
}

/* query bytes a prediction looks at, at most */
#define PREDICT_LOOKS_AT 4096

static uint64_t search_predict(const void *args) {
    const search_args *in = args;
    const wb_search_set *set = &in->index->packed.set;
    size_t hits = in->limit < set->count ? in->limit : set->count;
    /* an ASCII query in an ASCII set is searched in byte mode (a long
     * query is not looked at here: predictions stay cheap) */
    bool codepoints = in->codepoints && !wb_search_bytes_suffice(set, in->query.data,
                                                                 in->query.size, PREDICT_LOOKS_AT);
    return wb_search_predict(set->count, set->offsets[set->count], in->query.size, codepoints,
                             set->prepared != NULL) +
           wb_search_sort_units(hits);
}

static bool search_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const search_args *in = args;
    search_job *job = state;
    switch (wb_search_init(&job->search, &in->index->packed.set, in->query.data, in->query.size,
                           in->codepoints, in->max_distance, in->limit)) {
    case WB_SEARCH_OK:
        break;
    case WB_SEARCH_EUTF8_QUERY:
        *reason = enif_make_tuple2(env, atom_invalid_utf8, atom_query);
        return false;
    default:
        *reason = wb_atom(env, "enomem");
        return false;
    }
    wb_packed_use(in->index);
    job->index = in->index;
    return true;
}

static bool search_step(void *state, uint64_t budget, uint64_t *used) {
    return wb_search_step(&((search_job *)state)->search, budget, used);
}

/* ---- a long list of hits, made a slice at a time -------------------------- */

/* more hits than this, or hits of more bytes than this, are not made into
 * a list in one call */
#define HITS_AT_ONCE      4096
#define HIT_BYTES_AT_ONCE (256 * 1024)
/* distances made into the list by result itself (a few us); more: distances_more */
#define DISTANCES_AT_ONCE 2048

typedef struct {
    wb_search_hit *hits; /* taken from the finished search, by (distance, index) */
    size_t left;         /* hits[0 .. left) are not in the list yet */
    size_t bytes;        /* counted in resident_bytes */
    search_index *set;   /* their candidates' bytes */
    atomic_bool busy;
} hits_list;

static void hits_dtor(ErlNifEnv *env, void *obj) {
    (void)env;
    hits_list *h = obj;
    wb_block_free(h->hits, h->bytes); /* NULL once every hit was made */
    if (h->set) wb_packed_drop(h->set);
    wb_runtime_resident_bytes(-(int64_t)h->bytes);
}

/* {hits, Hits, N}: the finished search's hits, handed to a resource from
 * which hits_more/2 makes the list, a slice at a time. The job's state is
 * destroyed right after its result is made: its heap of hits moves here. */
static ERL_NIF_TERM hits_resource(ErlNifEnv *env, search_job *job, size_t n) {
    hits_list *h = enif_alloc_resource(hits_type, sizeof *h);
    if (!h) return wb_error(env, wb_atom(env, "enomem"));
    memset(h, 0, sizeof *h);
    atomic_init(&h->busy, false);
    h->hits = job->search.heap;
    h->left = n;
    h->bytes = n * sizeof(wb_search_hit);
    job->search.heap = NULL;
    job->search.heap_len = 0;
    h->set = job->index;
    wb_packed_use(h->set);
    wb_runtime_resident_bytes((int64_t)h->bytes);
    ERL_NIF_TERM out = enif_make_tuple3(env, wb_atom(env, "hits"), enif_make_resource(env, h),
                                        enif_make_uint64(env, n));
    enif_release_resource(h);
    return out;
}

/* Puts hits[0 .. *left) in front of *list, the last first, each as
 * {Candidate, Distance}; with `slice` (ns) set, stops once it has passed
 * since `start` (the clock read every 256 hits or PACK_PIECE bytes
 * copied). False when out of memory. */
static bool prepend_hits(ErlNifEnv *env, const wb_search_set *set, const wb_search_hit *hits,
                         size_t *left, ERL_NIF_TERM *list, int64_t start, int64_t slice) {
    size_t unchecked = 0;
    for (size_t made = 1; *left > 0; made++) {
        const wb_search_hit *hit = &hits[*left - 1];
        size_t at = (size_t)hit->index;
        size_t len = (size_t)(set->offsets[at + 1] - set->offsets[at]);
        ERL_NIF_TERM word;
        unsigned char *data = enif_make_new_binary(env, len, &word);
        if (!data) return false;
        if (len) memcpy(data, set->bytes + set->offsets[at], len);
        *list = enif_make_list_cell(
            env, enif_make_tuple2(env, word, enif_make_uint(env, hit->distance)), *list);
        --*left;
        unchecked += len;
        if (slice && (made % 256 == 0 || unchecked >= PACK_PIECE)) {
            unchecked = 0;
            if (wb_packed_now_ns() - start >= slice) break;
        }
    }
    return true;
}

/* hits_more(Hits, List): List with the hits before it put in front, the
 * last ones first, until a slice of the runtime has passed: {more, List}
 * or {done, List}. Once done, the hits and the candidates go. */
ERL_NIF_TERM wb_hits_more(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    hits_list *h;
    (void)argc;
    if (!enif_get_resource(env, argv[0], hits_type, (void **)&h) || !enif_is_list(env, argv[1]))
        return enif_make_badarg(env);
    bool idle = false;
    if (!atomic_compare_exchange_strong(&h->busy, &idle, true)) return enif_make_badarg(env);
    ERL_NIF_TERM list = argv[1], out;
    if (!h->set) {
        out = enif_make_tuple2(env, wb_atom(env, "done"), list);
    } else if (!prepend_hits(env, &h->set->packed.set, h->hits, &h->left, &list, wb_packed_now_ns(),
                             wb_slice_ns())) {
        out = wb_error(env, wb_atom(env, "enomem"));
    } else if (h->left > 0) {
        enif_consume_timeslice(env, 100);
        out = enif_make_tuple2(env, wb_atom(env, "more"), list);
    } else {
        out = enif_make_tuple2(env, wb_atom(env, "done"), list);
        /* every hit made: their memory and the candidates' need not wait
         * for the VM to collect this resource */
        wb_runtime_resident_bytes(-(int64_t)h->bytes);
        wb_block_free(h->hits, h->bytes);
        wb_packed_drop(h->set);
        h->hits = NULL;
        h->set = NULL;
        h->bytes = 0;
    }
    atomic_store(&h->busy, false);
    return out;
}

/* distances_more(Distances, Count, List): List with the first Count of the
 * distances in the binary (native 32-bit words) put in front, the last
 * first, until a slice of the runtime has passed: {more, Left, List}, or
 * {done, List}. Making the list here costs a few ns an element; an Elixir
 * binary comprehension over the same binary cost 5-34 ns at 1,000-100,000
 * elements (measured). */
ERL_NIF_TERM wb_distances_more(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    ErlNifBinary bin;
    ErlNifUInt64 left;
    (void)argc;
    if (!enif_inspect_binary(env, argv[0], &bin) || !enif_get_uint64(env, argv[1], &left) ||
        left > bin.size / sizeof(uint32_t) || !enif_is_list(env, argv[2]))
        return enif_make_badarg(env);
    ERL_NIF_TERM list = argv[2];
    int64_t start = wb_packed_now_ns(), slice = wb_slice_ns();
    while (left > 0) {
        uint32_t d;
        memcpy(&d, bin.data + (left - 1) * sizeof d, sizeof d);
        list = enif_make_list_cell(env, enif_make_uint(env, d), list);
        left--;
        if (left % 1024 == 0 && left > 0 && wb_packed_now_ns() - start >= slice) {
            enif_consume_timeslice(env, 100);
            return enif_make_tuple3(env, wb_atom(env, "more"), enif_make_uint64(env, left), list);
        }
    }
    return enif_make_tuple2(env, wb_atom(env, "done"), list);
}

/* ---- distances handed over without a copy -------------------------------- */

/* a finished search's distances, the bytes of the binary that answers */
typedef struct {
    uint32_t *data;
    size_t bytes; /* counted in resident_bytes */
} owned_block;

static void block_dtor(ErlNifEnv *env, void *obj) {
    (void)env;
    owned_block *b = obj;
    wb_runtime_resident_bytes(-(int64_t)b->bytes);
    wb_block_free(b->data, b->bytes);
}

/* The binary over a block of wb_block_alloc, which it takes (freed with
 * wb_block_free when the binary goes; at once when it cannot be made). */
static ERL_NIF_TERM block_binary(ErlNifEnv *env, void *data, size_t bytes) {
    owned_block *b = enif_alloc_resource(block_type, sizeof *b);
    if (!b) {
        wb_block_free(data, bytes);
        return wb_error(env, wb_atom(env, "enomem"));
    }
    b->data = data;
    b->bytes = bytes;
    wb_runtime_resident_bytes((int64_t)bytes);
    ERL_NIF_TERM out = enif_make_resource_binary(env, b, b->data, bytes);
    enif_release_resource(b);
    return out;
}

/* The binary of every distance, over the job's own array (taken from its
 * state, which is destroyed right after): copying it made one step of
 * 4 bytes a candidate, 40 MB for 10 million. */
static ERL_NIF_TERM distances_binary(ErlNifEnv *env, search_job *job) {
    uint32_t *data = job->search.distances;
    job->search.distances = NULL;
    return block_binary(env, data, job->search.set->count * sizeof(uint32_t));
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
    case WB_SEARCH_ETOO_FAR:
        return wb_error(env,
                        enif_make_tuple3(env, wb_atom(env, "does_not_fit"), wb_atom(env, "u32"),
                                         enif_make_tuple2(env, wb_atom(env, "candidate"),
                                                          enif_make_uint64(env, s->failed_at))));
    default:
        return wb_error(env, wb_atom(env, "enomem"));
    }
    if (s->limit == 0) {
        /* a short list at once; a long one is made from the binary a
         * slice at a time (distances_more) */
        if (set->count > DISTANCES_AT_ONCE) return distances_binary(env, (search_job *)state);
        ERL_NIF_TERM list = enif_make_list(env, 0);
        for (size_t i = set->count; i > 0; i--)
            list = enif_make_list_cell(env, enif_make_uint(env, s->distances[i - 1]), list);
        return list;
    }
    const wb_search_hit *hits;
    size_t n = wb_search_hits(s, &hits), bytes = 0;
    for (size_t i = 0; i < n && n <= HITS_AT_ONCE; i++)
        bytes += (size_t)(set->offsets[hits[i].index + 1] - set->offsets[hits[i].index]);
    if (n > HITS_AT_ONCE || bytes > HIT_BYTES_AT_ONCE)
        return hits_resource(env, (search_job *)state, n);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    size_t left = n;
    if (!prepend_hits(env, set, hits, &left, &list, 0, 0))
        return wb_error(env, wb_atom(env, "enomem"));
    return list;
}

static size_t search_memory(const void *state) {
    return wb_search_memory(&((const search_job *)state)->search);
}

static void search_destroy(void *state) {
    search_job *job = state;
    wb_search_free_with(&job->search, wb_block_free);
    if (job->index) wb_packed_drop(job->index);
    job->index = NULL;
}

wb_job_type wb_search_job = {
    .name = "search",
    .argc = 6,
    .args_size = sizeof(search_args),
    .state_size = sizeof(search_job),
    .decode = search_decode,
    .predict = search_predict,
    .init = search_init,
    .step = search_step,
    .result = search_result,
    .memory = search_memory,
    .destroy = search_destroy,
    .ps_per_unit = 3000, /* see the unit in search.h */
};

/* ---- search_index(Packed, Count) ----------------------------------------- */

typedef struct {
    search_index *packed;
    size_t count;
} index_args;

/* The batches are built in the job's state, a budget at a time (a long
 * candidate's scan stops inside it), and handed to the index by its
 * result: built in init they held a scheduler for as long as they took
 * (tens of milliseconds for 100 MB of candidates). */
typedef struct {
    search_index *index; /* the job's reference, released by destroy */
    bool holding;        /* the job holds index->busy */
    bool owns_lanes;     /* lanes are the job's (not handed to the index) */
    wb_lanes_build_status status;
    wb_search_batches lanes;
    wb_search_batches_builder builder;
} index_job;

/* units between looks at the clock (wb_slice_spent) within a step: about
 * a microsecond */
#define INDEX_CHECK_UNITS 1024

static bool index_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    index_args *in = args;
    return enif_get_resource(env, argv[0], wb_packed_type, (void **)&in->packed) &&
           in->packed->sealed && get_count(env, argv[1], &in->count) &&
           in->count == in->packed->packed.set.count;
}

static uint64_t index_predict(const void *args) {
    const wb_search_set *set = &((const index_args *)args)->packed->packed.set;
    return wb_search_batches_units(set->count, set->offsets[set->count]);
}

/* The packed list's resource becomes the index once its batches are
 * built: a packed list is made for one call of Index.new, and is made an
 * index at most once. */
static bool index_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    search_index *index = ((const index_args *)args)->packed;
    index_job *job = state;
    bool idle = false;
    if (index->indexed || !atomic_compare_exchange_strong(&index->busy, &idle, true)) {
        *reason = wb_atom(env, "badarg");
        return false;
    }
    job->holding = true;
    job->owns_lanes = true;
    job->status = WB_LANES_BUILDING;
    wb_search_batches_begin(&job->lanes, &job->builder);
    wb_packed_use(index);
    job->index = index;
    return true;
}

static bool index_step(void *state, uint64_t budget, uint64_t *used) {
    index_job *job = state;
    const wb_search_set *set = &job->index->packed.set;
    uint64_t done = 0;
    for (;;) {
        uint64_t part = budget - done < INDEX_CHECK_UNITS ? budget - done : INDEX_CHECK_UNITS;
        job->status =
            wb_search_batches_step(&job->lanes, &job->builder, set, part ? part : 1, &done);
        if (job->status != WB_LANES_BUILDING || done >= budget || wb_slice_spent()) break;
    }
    *used += done;
    return job->status != WB_LANES_BUILDING;
}

static ERL_NIF_TERM index_take_result(ErlNifEnv *env, void *state) {
    index_job *job = state;
    search_index *index = job->index;
    if (job->status != WB_LANES_BUILT) return wb_error(env, wb_atom(env, "enomem"));
    index->lanes = job->lanes;
    memset(&job->lanes, 0, sizeof job->lanes);
    job->owns_lanes = false;
    index->packed.set.prepared = &index->lanes;
    index->indexed = true;
    wb_runtime_resident_bytes((int64_t)wb_search_batches_bytes(&index->lanes));
    atomic_store(&index->busy, false);
    job->holding = false;
    return enif_make_tuple2(env, enif_make_resource(env, index),
                            enif_make_uint64(env, index->packed.set.count));
}

static void index_destroy(void *state) {
    index_job *job = state;
    if (job->owns_lanes) {
        /* a building that did not finish (its caller died, or :auto
         * starts it again sliced): large ones freed off the scheduler */
        wb_packed_let_go_batches(&job->lanes, job->index ? job->index->packed.set.count * 16 : 0);
        job->owns_lanes = false;
    }
    if (job->holding) atomic_store(&job->index->busy, false);
    job->holding = false;
    if (job->index) wb_packed_drop(job->index);
    job->index = NULL;
}

wb_job_type wb_search_index_job = {
    .name = "search_index",
    .argc = 2,
    .args_size = sizeof(index_args),
    .state_size = sizeof(index_job),
    .decode = index_decode,
    .predict = index_predict,
    .init = index_init,
    .step = index_step,
    .take_result = index_take_result,
    .destroy = index_destroy,
    .ps_per_unit = 1000, /* see the unit in lanes.c */
};

ERL_NIF_TERM wb_levenshtein_paths(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    return enif_make_tuple2(env, wb_atom(env, wb_lev_path_name(wb_lev_current_path())),
                            wb_atom(env, wb_search_lanes_name()));
}

int wb_search_load(ErlNifEnv *env) {
    if (wb_pack_load(env) != 0) return 1;
    /* the results' blocks from the VM's allocators, like the tables */
    static const wb_search_block_allocator vm_blocks = {wb_block_alloc, wb_block_free_now};
    wb_search_set_block_allocator(&vm_blocks);
    atom_not_a_binary = enif_make_atom(env, "not_a_binary");
    atom_invalid_utf8 = enif_make_atom(env, "invalid_utf8");
    atom_query = enif_make_atom(env, "query");
    ErlNifResourceTypeInit hits_init = {.dtor = hits_dtor};
    hits_type =
        enif_open_resource_type_x(env, "wb_search_hits", &hits_init, ERL_NIF_RT_CREATE, NULL);
    ErlNifResourceTypeInit block_init = {.dtor = block_dtor};
    block_type =
        enif_open_resource_type_x(env, "wb_search_block", &block_init, ERL_NIF_RT_CREATE, NULL);
    return hits_type && block_type ? 0 : 1;
}

void wb_search_unload(void) {
    wb_pack_unload();
}
