/* An index's candidates with their tokens sorted, as a runtime job
 * (the making is fuzzy/sorted_set.c's):
 *
 *   search_sorted(Packed, Count, Mode, Tiny, Ref) -> same | {Sorted, Count}
 *     Packed: a packed list or an index of Count candidates. same: every
 *     candidate is its own sorted form (use Packed); Sorted: an index
 *     (pack.c's resource, its batches made) of their sorted forms.
 *
 * The sorted forms, then their batches, are made in the job's state a
 * budget at a time, and handed to a new resource by the result: a caller
 * that dies leaves nothing behind (destroy frees what the state holds).
 * Errors: {error, enomem}. */
#include "packed.h"

#include "../fuzzy/sorted_set.h"

#include <stdlib.h>

typedef struct {
    search_index *packed;
    size_t count;
} sorted_args;

typedef struct {
    search_index *index; /* read while the job runs: its reference */
    wb_fz_sorted making;
    wb_fz_sorted_status status;
    /* once MADE: the sorted set, the job's until the result takes it,
     * and its batches */
    wb_fz_sorted_out out;
    bool owns_out, building;
    wb_lanes_build_status lanes_status;
    wb_search_batches lanes;
    wb_search_batches_builder builder;
} sorted_job;

/* units between looks at the clock within a step: about a microsecond */
#define SORTED_CHECK_UNITS 1024

static bool sorted_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    sorted_args *in = args;
    ErlNifUInt64 n;
    if (!enif_get_resource(env, argv[0], wb_packed_type, (void **)&in->packed) ||
        !in->packed->sealed || !enif_get_uint64(env, argv[1], &n) ||
        n != in->packed->packed.set.count)
        return false;
    in->count = (size_t)n;
    return true;
}

static uint64_t sorted_predict(const void *args) {
    const wb_search_set *set = &((const sorted_args *)args)->packed->packed.set;
    uint64_t bytes = set->offsets[set->count];
    /* the sorted forms are at most as long: their batches at most these */
    return wb_fz_sorted_units(set->count, bytes) + wb_search_batches_units(set->count, bytes);
}

static bool sorted_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    search_index *index = ((const sorted_args *)args)->packed;
    sorted_job *job = state;
    wb_packed_use(index);
    job->index = index;
    wb_fz_sorted_begin(&job->making, &index->packed.set, wb_block_alloc, wb_block_free);
    job->status = WB_FZ_SORTED_BUILDING;
    return true;
}

/* The sorted forms, then their batches, a part of the budget at a time
 * between looks at the clock. */
static bool sorted_step(void *state, uint64_t budget, uint64_t *used) {
    sorted_job *job = state;
    uint64_t done = 0;
    for (;;) {
        uint64_t part = budget - done < SORTED_CHECK_UNITS ? budget - done : SORTED_CHECK_UNITS;
        if (part == 0) part = 1;
        if (job->status == WB_FZ_SORTED_BUILDING) {
            job->status = wb_fz_sorted_step(&job->making, part, &done);
            if (job->status == WB_FZ_SORTED_MADE) {
                job->owns_out = wb_fz_sorted_take(&job->making, &job->out);
                /* the candidates' batches laid out already: the sorted
                 * forms' taken from them (their lengths and bytes are
                 * the candidates', but for runs of whitespace) */
                if (job->index->indexed)
                    wb_lanes_index_begin_like(&job->lanes, &job->builder, &job->index->lanes);
                else
                    wb_search_batches_begin(&job->lanes, &job->builder);
                job->building = true;
                job->lanes_status = WB_LANES_BUILDING;
            }
        } else if (job->status == WB_FZ_SORTED_MADE && job->lanes_status == WB_LANES_BUILDING) {
            job->lanes_status =
                wb_search_batches_step(&job->lanes, &job->builder, &job->out.set, part, &done);
        }
        bool finished =
            job->status == WB_FZ_SORTED_SAME || job->status == WB_FZ_SORTED_ENOMEM ||
            (job->status == WB_FZ_SORTED_MADE && job->lanes_status != WB_LANES_BUILDING);
        if (finished || done >= budget || wb_slice_spent()) {
            *used += done;
            return finished;
        }
    }
}

/* The sorted set and its batches handed to a new resource: an index, as
 * pack.c makes them (its memory freed by pack.c's destructor). */
static ERL_NIF_TERM sorted_take_result(ErlNifEnv *env, void *state) {
    sorted_job *job = state;
    if (job->status == WB_FZ_SORTED_SAME) return wb_atom(env, "same");
    if (job->status != WB_FZ_SORTED_MADE || !job->owns_out || job->lanes_status != WB_LANES_BUILT)
        return wb_error(env, wb_atom(env, "enomem"));
    search_index *sorted = enif_alloc_resource(wb_packed_type, sizeof *sorted);
    if (!sorted) return wb_error(env, wb_atom(env, "enomem"));
    memset(sorted, 0, sizeof *sorted);
    atomic_init(&sorted->busy, false);
    atomic_init(&sorted->users, 0);
    wb_search_owned_set *p = &sorted->packed;
    p->set = job->out.set;
    p->bytes = job->out.bytes;
    p->offsets = job->out.offsets;
    p->owned_bytes = job->out.room + job->out.offsets_room;
    sorted->room = job->out.room;
    sorted->offsets_room = job->out.offsets_room;
    sorted->filled = p->set.count;
    sorted->counted = true;
    sorted->sealed = true;
    sorted->high = p->set.ascii ? 0 : 0x80;
    job->owns_out = false;
    sorted->lanes = job->lanes;
    memset(&job->lanes, 0, sizeof job->lanes);
    job->building = false;
    p->set.prepared = &sorted->lanes;
    sorted->indexed = true;
    wb_runtime_resident_bytes((int64_t)(p->owned_bytes + wb_search_batches_bytes(&sorted->lanes)));
    ERL_NIF_TERM out =
        enif_make_tuple2(env, enif_make_resource(env, sorted), enif_make_uint64(env, p->set.count));
    enif_release_resource(sorted);
    return out;
}

static void sorted_destroy(void *state) {
    sorted_job *job = state;
    wb_fz_sorted_free(&job->making);
    if (job->owns_out) {
        wb_block_free(job->out.bytes, job->out.room);
        wb_block_free(job->out.offsets, job->out.offsets_room);
        job->owns_out = false;
    }
    if (job->building) {
        /* batches not handed over (the caller died, or :auto starts the
         * job again sliced): large ones freed off the scheduler */
        wb_packed_let_go_batches(&job->lanes, job->out.set.count * 16);
        job->building = false;
    }
    if (job->index) wb_packed_drop(job->index);
    job->index = NULL;
}

wb_job_type wb_search_sorted_job = {
    .name = "search_sorted",
    .argc = 2,
    .args_size = sizeof(sorted_args),
    .state_size = sizeof(sorted_job),
    .decode = sorted_decode,
    .predict = sorted_predict,
    .init = sorted_init,
    .step = sorted_step,
    .take_result = sorted_take_result,
    .destroy = sorted_destroy,
    .ps_per_unit = 1000, /* a unit of sorted_set.c or lanes.c: about a nanosecond */
};
