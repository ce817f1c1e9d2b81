/* The packed list resource shared by the pack NIFs (pack.c) and the jobs
 * that read it (search_job.c, the fuzzy jobs through jobs.h's
 * wb_search_set_get): a list of binaries copied into native memory, made
 * an index once its batches are built. Private to the NIF glue. */
#ifndef WB_NIF_PACKED_H
#define WB_NIF_PACKED_H

#include "jobs.h"

#include "../search/search.h"

#include <stdatomic.h>

typedef struct {
    wb_search_owned_set packed;
    wb_search_batches lanes; /* its batches, made once */
    /* while a list is being packed: candidates copied, bytes room, bytes
     * of the next candidate copied (a long one is copied over slices) */
    size_t filled, room, partial;
    bool counted;        /* the count was given: exactly so many are copied */
    bool sealed;         /* every candidate copied: searchable */
    atomic_bool busy;    /* a pack_more call is at work on it */
    bool indexed;        /* made an index (lanes built) */
    bool kept;           /* its bytes may be in binaries (pack_keep): never released early */
    uint8_t high;        /* every byte copied so far OR-ed: below 0x80, all ASCII */
    size_t offsets_room; /* bytes of packed.offsets (a reused block may be larger) */
    atomic_int users;    /* jobs and results reading it (use_index, drop_index) */
    /* packing failed: its memory is gone (packed.offsets is NULL) */
    /* a kept set's hash of its candidates' bytes (pack_hash, pack_find):
     * hash_slots (a power of two) slots each holding a position + 1 (0:
     * none), made a slice at a time: the first hash_zeroed slots are
     * cleared, the first hashed candidates are in */
    uint64_t *hash;
    size_t hash_slots, hash_zeroed, hashed;
} search_index;

/* the resource type of packed lists and indexes */
extern ErlNifResourceType *wb_packed_type;

/* bytes copied, or hits made, between two reads of the clock */
#define PACK_PIECE 4096

/* the monotonic clock in nanoseconds */
int64_t wb_packed_now_ns(void);

/* A job or a result reads the index until wb_packed_drop. */
void wb_packed_use(search_index *index);
void wb_packed_drop(search_index *index);

/* Frees batches a job made but did not hand over (its caller died, or
 * :auto starts it again sliced), off the scheduler when they and `extra`
 * bytes (what freeing them touches besides) are large; *lanes is left
 * empty. */
void wb_packed_let_go_batches(wb_search_batches *lanes, size_t extra);

/* pack.c's share of wb_search_load and wb_search_unload */
int wb_pack_load(ErlNifEnv *env);
void wb_pack_unload(void);

#endif
