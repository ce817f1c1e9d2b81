/* Lists of binaries copied into native memory for the searches, a slice
 * at a time (packed.h):
 *
 *   pack_new(Count | any) -> Packed;
 *   pack_more(Packed, List) -> {more, Tail} | {done, Count}
 *     copy a list of binaries (Count of them, or any number) into native
 *     memory, one slice of the list per call (the caller loops): no list
 *     is walked natively in one go, no job copies one, and the caller need
 *     not walk it first to count it;
 *   pack_release, pack_keep, pack_ascii, pack_slice, pack_pick, pack_hash,
 *   pack_find (jobs.h).
 *
 * Errors: {error, {not_a_binary, Position}} for a list element (or an
 * improper tail) that is not a binary, {error, enomem}. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include "packed.h"

#include <stdlib.h>
#include <time.h>

ErlNifResourceType *wb_packed_type;
static ERL_NIF_TERM atom_not_a_binary;

/* A packed list's or an index's memory, once its resource is gone */
typedef struct {
    wb_search_owned_set packed;
    size_t room, offsets_room;
    wb_search_batches lanes;
    uint64_t *hash;
    size_t hash_slots;
} index_memory;

/* The packed bytes (`room` of them) and offsets: blocks from the VM's
 * allocators (wb_block_alloc). */
static void free_packed_now(wb_search_owned_set *packed, size_t room, size_t offsets_room) {
    wb_block_free_now(packed->bytes, room);
    wb_block_free_now(packed->offsets, offsets_room);
    memset(packed, 0, sizeof *packed);
}

static void free_index_memory(void *arg) {
    index_memory *m = arg;
    wb_block_free_now(m->hash, m->hash_slots * sizeof *m->hash);
    wb_search_batches_free(&m->lanes);
    free_packed_now(&m->packed, m->room, m->offsets_room);
    free(m);
}

/* ---- the blocks of the last list searched, kept for the next ------------------ *
 *
 * A search of a list packs it anew each time, and writing fresh memory
 * costs a page fault per 4 KiB (on a virtual machine some microseconds
 * each: more than the search itself). The blocks of a packed list given
 * back by pack_release wait here for the next pack_new, already mapped, up
 * to SPARE_MOST bytes each. */
#define SPARE_MOST (32u << 20)

static struct {
    ErlNifMutex *lock;
    uint8_t *bytes;
    size_t room;
    uint64_t *offsets;
    size_t offsets_room;
} spare;

/* Takes the spare blocks (NULL ones when none). */
static void take_spare(uint8_t **bytes, size_t *room, uint64_t **offsets, size_t *offsets_room) {
    enif_mutex_lock(spare.lock);
    *bytes = spare.bytes;
    *room = spare.room;
    *offsets = spare.offsets;
    *offsets_room = spare.offsets_room;
    spare.bytes = NULL;
    spare.offsets = NULL;
    spare.room = spare.offsets_room = 0;
    enif_mutex_unlock(spare.lock);
}

/* Keeps a packed list's blocks for the next (each if small enough), and
 * frees what they replace, or what is too large. */
static void give_spare(uint8_t *bytes, size_t room, uint64_t *offsets, size_t offsets_room) {
    if (room > SPARE_MOST) {
        wb_block_free(bytes, room);
        bytes = NULL;
        room = 0;
    }
    if (offsets_room > SPARE_MOST) {
        wb_block_free(offsets, offsets_room);
        offsets = NULL;
        offsets_room = 0;
    }
    enif_mutex_lock(spare.lock);
    uint8_t *old_bytes = NULL;
    uint64_t *old_offsets = NULL;
    size_t old_room = 0, old_offsets_room = 0;
    if (bytes) {
        old_bytes = spare.bytes;
        old_room = spare.room;
        spare.bytes = bytes;
        spare.room = room;
    }
    if (offsets) {
        old_offsets = spare.offsets;
        old_offsets_room = spare.offsets_room;
        spare.offsets = offsets;
        spare.offsets_room = offsets_room;
    }
    enif_mutex_unlock(spare.lock);
    wb_block_free(old_bytes, old_room);
    wb_block_free(old_offsets, old_offsets_room);
}

void wb_packed_use(search_index *index) {
    enif_keep_resource(index);
    atomic_fetch_add(&index->users, 1);
}

void wb_packed_drop(search_index *index) {
    atomic_fetch_sub(&index->users, 1);
    enif_release_resource(index);
}

static void free_batches(void *arg) {
    wb_search_batches_free(arg);
    free(arg);
}

void wb_packed_let_go_batches(wb_search_batches *lanes, size_t extra) {
    size_t bytes = wb_search_batches_bytes(lanes) + extra;
    wb_search_batches *later = bytes >= WB_RELEASE_LATER_FROM ? malloc(sizeof *later) : NULL;
    if (later) {
        *later = *lanes;
        wb_release_later(free_batches, later);
    } else {
        wb_search_batches_free(lanes);
    }
    memset(lanes, 0, sizeof *lanes);
}

/* Gives the packed list's and the batches' memory back, off the scheduler
 * when it is large; the resource keeps nothing. */
static void release_memory(search_index *index) {
    size_t hash_bytes = index->hash_slots * sizeof *index->hash;
    size_t bytes =
        index->room + index->offsets_room + wb_search_batches_bytes(&index->lanes) + hash_bytes;
    index_memory *m = bytes >= WB_RELEASE_LATER_FROM ? malloc(sizeof *m) : NULL;
    if (m) {
        m->packed = index->packed;
        m->room = index->room;
        m->offsets_room = index->offsets_room;
        m->lanes = index->lanes;
        m->hash = index->hash;
        m->hash_slots = index->hash_slots;
        wb_release_later(free_index_memory, m);
    } else {
        wb_block_free_now(index->hash, hash_bytes);
        wb_search_batches_free(&index->lanes);
        free_packed_now(&index->packed, index->room, index->offsets_room);
    }
    memset(&index->packed, 0, sizeof index->packed);
    memset(&index->lanes, 0, sizeof index->lanes);
    index->room = index->offsets_room = 0;
    index->hash = NULL;
    index->hash_slots = index->hash_zeroed = index->hashed = 0;
}

static void index_dtor(ErlNifEnv *env, void *obj) {
    (void)env;
    search_index *index = obj;
    /* owned_bytes is counted once sealed (0 before), lanes once built,
     * the hash once allocated */
    wb_runtime_resident_bytes(-(int64_t)(index->packed.owned_bytes +
                                         wb_search_batches_bytes(&index->lanes) +
                                         index->hash_slots * sizeof *index->hash));
    release_memory(index);
}

/* ---- pack_new(Count | any), pack_more(Packed, List) ---------------------- */

/* bytes copied between clock reads: one page, as the first write to a
 * fresh page can cost ~10 us (a page fault, on a virtual machine) */

int64_t wb_packed_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The room `count` candidates need, from `bytes` in the first `done`,
 * with a quarter more (the room shrinks to fit once every one is in). */
static size_t projected_room(size_t bytes, size_t done, size_t count) {
    double guess = (double)bytes / (double)done * (double)count * 1.25 + 4096;
    return guess < (double)(SIZE_MAX / 2) ? (size_t)guess : SIZE_MAX / 2;
}

/* The bytes of a packed list moved to a block of `room` bytes: only the
 * `written` ones copied (a reallocation copies the whole block, and a
 * spare block taken can be tens of MiB); NULL when out of memory (the
 * block is then left as it was). */
static uint8_t *moved_bytes(uint8_t *bytes, size_t old_room, size_t written, size_t room) {
    uint8_t *moved = wb_block_alloc(room);
    if (!moved) return NULL;
    if (written) memcpy(moved, bytes, written);
    wb_block_free(bytes, old_room);
    return moved;
}

/* bytes a packed list's room may be shrunk to fit by a copy, at most */
#define SHRINK_COPY_MOST (1u << 20)

/* A list of unknown length: its first room, in bytes and in offsets (each
 * doubles as needed) */
#define PACK_FIRST_ROOM    65536
#define PACK_FIRST_OFFSETS 4096

ERL_NIF_TERM wb_pack_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    ErlNifUInt64 n = 0;
    (void)argc;
    bool counted = enif_get_uint64(env, argv[0], &n);
    if (counted ? n >= SIZE_MAX / sizeof(uint64_t) - 1
                : !enif_is_identical(argv[0], wb_atom(env, "any")))
        return enif_make_badarg(env);
    search_index *index = enif_alloc_resource(wb_packed_type, sizeof *index);
    if (!index) return wb_error(env, wb_atom(env, "enomem"));
    memset(index, 0, sizeof *index);
    atomic_init(&index->busy, false);
    index->counted = counted;
    size_t count = (size_t)n;
    /* room for 32 bytes a candidate to start with (only what is written
     * is ever touched); it doubles as needed, and shrinks to fit at the end */
    size_t room = !counted                         ? PACK_FIRST_ROOM
                  : count < (SIZE_MAX - 4096) / 32 ? count * 32 + 4096
                                                   : count;
    /* offsets[i + 1] is written as candidate i is copied; the blocks of
     * the last list searched serve again when they can (already mapped) */
    size_t offsets_room = (counted ? count + 1 : PACK_FIRST_OFFSETS) * sizeof(uint64_t), spare_room,
           spare_offsets_room;
    uint8_t *bytes;
    uint64_t *offsets;
    take_spare(&bytes, &spare_room, &offsets, &spare_offsets_room);
    if (bytes) room = spare_room; /* it grows as needed, like any */
    if (offsets && spare_offsets_room >= offsets_room) {
        offsets_room = spare_offsets_room;
    } else {
        wb_block_free(offsets, spare_offsets_room);
        offsets = wb_block_alloc(offsets_room);
    }
    if (!bytes) bytes = wb_block_alloc(room);
    index->packed.set.count = count;
    index->packed.offsets = offsets;
    index->packed.bytes = bytes;
    if (!offsets || !bytes) {
        free_packed_now(&index->packed, room, offsets_room);
        enif_release_resource(index);
        return wb_error(env, wb_atom(env, "enomem"));
    }
    index->packed.offsets[0] = 0;
    index->room = room;
    index->offsets_room = offsets_room;
    ERL_NIF_TERM out = enif_make_resource(env, index);
    enif_release_resource(index);
    return out;
}

/* Copies the list's binaries into the packed set until the list ends or a
 * slice of the runtime has passed: {more, Tail}, {done, Count}, or
 * {error, Reason} ({not_a_binary, Position}, {not_a_binary, tail}, badarg
 * when the list holds more or fewer than the Count given, enomem). */
/* A packing that cannot go on: {error, Reason}, noted in *failed. */
static ERL_NIF_TERM pack_failed(ErlNifEnv *env, bool *failed, ERL_NIF_TERM reason) {
    *failed = true;
    return wb_error(env, reason);
}

/* The packed list `term` names, taken (busy) if no other call holds it;
 * NULL otherwise. The caller clears busy. */
static search_index *take_packed(ErlNifEnv *env, ERL_NIF_TERM term) {
    search_index *index;
    bool idle = false;
    if (!enif_get_resource(env, term, wb_packed_type, (void **)&index) ||
        !atomic_compare_exchange_strong(&index->busy, &idle, true))
        return NULL;
    return index;
}

ERL_NIF_TERM wb_pack_more(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    search_index *index = enif_is_list(env, argv[1]) ? take_packed(env, argv[0]) : NULL;
    if (!index) return enif_make_badarg(env);
    ERL_NIF_TERM out, head, at_head, tail = argv[1];
    ErlNifBinary bin;
    wb_search_owned_set *p = &index->packed;
    int64_t start = wb_packed_now_ns(), slice = wb_slice_ns();
    size_t unchecked = 0; /* bytes copied since the clock was read */
    bool failed = false;
    /* in locals while the loop runs: stores through index could alias
     * the bytes copied */
    size_t filled = index->filled;
    uint8_t high = index->high;
    if (index->sealed || !p->offsets) { /* packed already, or failed */
        atomic_store(&index->busy, false);
        return enif_make_badarg(env);
    }
    for (size_t steps = 1;; steps++) {
        at_head = tail;
        if (!enif_get_list_cell(env, tail, &head, &tail)) {
            if (!enif_is_empty_list(env, tail))
                out = pack_failed(env, &failed,
                                  enif_make_tuple2(env, atom_not_a_binary, wb_atom(env, "tail")));
            else if (index->counted && filled != p->set.count)
                out = pack_failed(env, &failed, wb_atom(env, "badarg"));
            else {
                p->set.count = filled;
                size_t used = (size_t)p->offsets[p->set.count] + 1;
                /* shrunk to fit where that copies little: a block that
                 * changes allocator is copied whole (64 MB held the
                 * scheduler 12-42 ms), so is one the VM's allocator moves */
                bool cheap = used <= SHRINK_COPY_MOST ||
                             (index->room > WB_BLOCK_VM_MOST && used > WB_BLOCK_VM_MOST);
                uint8_t *fit = cheap ? wb_block_realloc(p->bytes, index->room, used) : NULL;
                if (fit) {
                    p->bytes = fit;
                    index->room = used;
                }
                index->sealed = true;
                p->owned_bytes = index->offsets_room + index->room;
                p->set.bytes = p->bytes;
                p->set.offsets = p->offsets;
                p->set.ascii = high < 0x80;
                wb_runtime_resident_bytes((int64_t)p->owned_bytes);
                out = enif_make_tuple2(env, wb_atom(env, "done"), enif_make_uint64(env, filled));
            }
            break;
        }
        if (!enif_inspect_binary(env, head, &bin)) {
            out = pack_failed(
                env, &failed,
                enif_make_tuple2(env, atom_not_a_binary, enif_make_uint64(env, filled)));
            break;
        }
        if (index->counted && filled == p->set.count) {
            out = pack_failed(env, &failed, wb_atom(env, "badarg"));
            break;
        }
        if (!index->counted && (filled + 2) * sizeof(uint64_t) > index->offsets_room) {
            /* offsets[filled + 1] is next: the offsets double */
            size_t offsets_room = index->offsets_room <= SIZE_MAX / 2 ? 2 * index->offsets_room : 0;
            uint64_t *grown = offsets_room
                                  ? wb_block_realloc(p->offsets, index->offsets_room, offsets_room)
                                  : NULL;
            if (!grown) {
                out = pack_failed(env, &failed, wb_atom(env, "enomem"));
                break;
            }
            p->offsets = grown;
            index->offsets_room = offsets_room;
        }
        size_t at = (size_t)p->offsets[filled];
        /* the room grows to what the list will need, extrapolated from the
         * candidates so far, while little of it is written: moving many
         * written pages costs milliseconds (~0.1 ms per MiB) */
        /* (the first candidate too: a spare block taken may be far too
         * small for a few long candidates) */
        bool checkpoint = filled == 0 || ((filled & (filled - 1)) == 0 && filled >= 64);
        if (bin.size > index->room - 1 - at || (checkpoint && index->partial == 0)) {
            size_t want = at + bin.size + 1, room = index->room, plain = index->room;
            while (plain < want)
                plain = plain > SIZE_MAX / 2 ? want : plain * 2;
            size_t guess =
                index->counted ? projected_room(at + bin.size, filled + 1, p->set.count) : 0;
            if (guess > plain && (want > room || guess / 2 > room)) room = guess;
            if (room < plain) room = plain;
            /* a guess that does not fit (early candidates longer than the
             * rest) falls back to what this candidate needs */
            size_t written = at + index->partial;
            uint8_t *grown =
                room == index->room ? p->bytes : moved_bytes(p->bytes, index->room, written, room);
            if (!grown && room > plain && plain > index->room) {
                room = plain;
                grown = moved_bytes(p->bytes, index->room, written, room);
            }
            if (!grown) {
                out = pack_failed(env, &failed, wb_atom(env, "enomem"));
                break;
            }
            p->bytes = grown;
            index->room = room;
        }
        /* a long binary goes in pieces, the clock read between them */
        bool whole = true;
        while (index->partial < bin.size) {
            size_t piece = bin.size - index->partial;
            if (piece > PACK_PIECE) piece = PACK_PIECE;
            high |= wb_search_copy_bytes(p->bytes + at + index->partial, bin.data + index->partial,
                                         piece);
            index->partial += piece;
            unchecked += piece;
            if (index->partial < bin.size && wb_packed_now_ns() - start >= slice) {
                whole = false;
                break;
            }
        }
        if (!whole) { /* this candidate again, from where it stopped */
            enif_consume_timeslice(env, 100);
            out = enif_make_tuple2(env, wb_atom(env, "more"), at_head);
            break;
        }
        index->partial = 0;
        p->offsets[filled + 1] = at + bin.size;
        filled++;
        if (steps % 64 == 0 || unchecked >= PACK_PIECE) {
            unchecked = 0;
            if (wb_packed_now_ns() - start >= slice) {
                enif_consume_timeslice(env, 100);
                out = enif_make_tuple2(env, wb_atom(env, "more"), tail);
                break;
            }
        }
    }
    /* a list that cannot be packed: its memory goes now, not when the VM
     * collects the resource */
    index->filled = filled;
    index->high = high;
    if (failed) release_memory(index);
    atomic_store(&index->busy, false);
    return out;
}

/* pack_release(Packed): a packed list searched for the last time gives its
 * memory back at once, its blocks kept for the next list (see spare);
 * nothing is done while a job or a result still reads it, or for an
 * index. Always ok. */
ERL_NIF_TERM wb_pack_release(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    search_index *index;
    (void)argc;
    if (!enif_get_resource(env, argv[0], wb_packed_type, (void **)&index))
        return enif_make_badarg(env);
    bool idle = false;
    if (!atomic_compare_exchange_strong(&index->busy, &idle, true)) return wb_atom(env, "ok");
    if (index->sealed && !index->indexed && !index->kept && atomic_load(&index->users) == 0 &&
        index->packed.offsets) {
        wb_runtime_resident_bytes(-(int64_t)index->packed.owned_bytes);
        give_spare(index->packed.bytes, index->room, index->packed.offsets, index->offsets_room);
        memset(&index->packed, 0, sizeof index->packed);
        index->room = index->offsets_room = 0;
        index->sealed = false; /* nothing left to search */
    }
    atomic_store(&index->busy, false);
    return wb_atom(env, "ok");
}

/* ---- the packed binaries handed back without a copy ---------------------------- */

ERL_NIF_TERM wb_pack_keep(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    search_index *index = take_packed(env, argv[0]);
    if (!index) return enif_make_badarg(env);
    bool ok = index->sealed;
    if (ok) index->kept = true;
    atomic_store(&index->busy, false);
    return ok ? wb_atom(env, "ok") : enif_make_badarg(env);
}

/* pack_ascii(Packed): whether every byte of a sealed packed list is ASCII,
 * as packing found it */
ERL_NIF_TERM wb_pack_ascii(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    search_index *index = take_packed(env, argv[0]);
    if (!index) return enif_make_badarg(env);
    bool sealed = index->sealed, ascii = index->packed.set.ascii;
    atomic_store(&index->busy, false);
    if (!sealed) return enif_make_badarg(env);
    return wb_atom(env, ascii ? "true" : "false");
}

/* binaries made by one pack_slice call, at most: a few microseconds */
#define SLICE_MOST 4096

/* The sub-binary of candidate i over `whole` (the set's bytes). */
static ERL_NIF_TERM candidate_binary(ErlNifEnv *env, const wb_search_set *set, ERL_NIF_TERM whole,
                                     size_t i) {
    return enif_make_sub_binary(env, whole, set->offsets[i],
                                (size_t)(set->offsets[i + 1] - set->offsets[i]));
}

ERL_NIF_TERM wb_pack_slice(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    search_index *index;
    ErlNifUInt64 from, count;
    (void)argc;
    if (!enif_get_resource(env, argv[0], wb_packed_type, (void **)&index) || !index->kept ||
        !enif_get_uint64(env, argv[1], &from) || !enif_get_uint64(env, argv[2], &count))
        return enif_make_badarg(env);
    const wb_search_set *set = &index->packed.set;
    if (from > set->count || count > set->count - from || count > SLICE_MOST)
        return enif_make_badarg(env);
    ERL_NIF_TERM whole =
        enif_make_resource_binary(env, index, set->bytes, (size_t)set->offsets[set->count]);
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (size_t i = (size_t)(from + count); i > from; i--)
        list = enif_make_list_cell(env, candidate_binary(env, set, whole, i - 1), list);
    return list;
}

ERL_NIF_TERM wb_pack_pick(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    search_index *index;
    unsigned length;
    (void)argc;
    if (!enif_get_resource(env, argv[0], wb_packed_type, (void **)&index) || !index->kept ||
        !enif_get_list_length(env, argv[1], &length) || length > SLICE_MOST)
        return enif_make_badarg(env);
    const wb_search_set *set = &index->packed.set;
    ERL_NIF_TERM whole =
        enif_make_resource_binary(env, index, set->bytes, (size_t)set->offsets[set->count]);
    ERL_NIF_TERM picked = enif_make_list(env, 0), head, tail = argv[1], out;
    for (unsigned k = 0; k < length; k++) {
        ErlNifUInt64 i;
        if (!enif_get_list_cell(env, tail, &head, &tail) || !enif_get_uint64(env, head, &i) ||
            i >= set->count)
            return enif_make_badarg(env);
        picked = enif_make_list_cell(env, candidate_binary(env, set, whole, (size_t)i), picked);
    }
    return enif_make_reverse_list(env, picked, &out) ? out : enif_make_badarg(env);
}

/* ---- the kept candidates found by their bytes ------------------------------- */

/* FNV-1a, 64 bits */
static uint64_t bytes_hash(const uint8_t *bytes, size_t n) {
    uint64_t h = 14695981039346656037u;
    for (size_t i = 0; i < n; i++) {
        h ^= bytes[i];
        h *= 1099511628211u;
    }
    return h;
}

/* slots cleared, or candidates hashed, between clock reads */
#define HASH_PIECE 4096

/* pack_hash(Packed): a kept set's hash of its candidates' bytes made, a
 * slice of the runtime at a time: more (call again) or done. The table
 * (twice the candidates' slots, rounded up to a power of two) is
 * allocated by the first call, cleared and filled by the following. */
ERL_NIF_TERM wb_pack_hash(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    search_index *index = take_packed(env, argv[0]);
    if (!index) return enif_make_badarg(env);
    ERL_NIF_TERM out;
    const wb_search_set *set = &index->packed.set;
    if (!index->sealed || !index->kept) {
        out = enif_make_badarg(env);
    } else if (!index->hash) {
        size_t slots = 16;
        while (slots < set->count * 2 && slots <= SIZE_MAX / 2 / sizeof(uint64_t))
            slots *= 2;
        index->hash = slots >= set->count * 2 ? wb_block_alloc(slots * sizeof(uint64_t)) : NULL;
        if (index->hash) {
            index->hash_slots = slots;
            wb_runtime_resident_bytes((int64_t)(slots * sizeof(uint64_t)));
            out = wb_atom(env, "more");
        } else {
            out = wb_error(env, wb_atom(env, "enomem"));
        }
    } else {
        int64_t start = wb_packed_now_ns(), slice = wb_slice_ns();
        size_t mask = index->hash_slots - 1;
        out = wb_atom(env, "done");
        while (index->hash_zeroed < index->hash_slots || index->hashed < set->count) {
            if (index->hash_zeroed < index->hash_slots) {
                size_t n = index->hash_slots - index->hash_zeroed;
                if (n > HASH_PIECE) n = HASH_PIECE;
                memset(index->hash + index->hash_zeroed, 0, n * sizeof(uint64_t));
                index->hash_zeroed += n;
            } else {
                size_t end = set->count - index->hashed > HASH_PIECE ? index->hashed + HASH_PIECE
                                                                     : set->count;
                for (size_t i = index->hashed; i < end; i++) {
                    const uint8_t *bytes = set->bytes + set->offsets[i];
                    size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
                    size_t at = (size_t)bytes_hash(bytes, len) & mask;
                    while (index->hash[at]) /* fewer candidates than slots: one is free */
                        at = (at + 1) & mask;
                    index->hash[at] = (uint64_t)i + 1;
                }
                index->hashed = end;
            }
            if ((index->hash_zeroed < index->hash_slots || index->hashed < set->count) &&
                wb_packed_now_ns() - start >= slice) {
                enif_consume_timeslice(env, 100);
                out = wb_atom(env, "more");
                break;
            }
        }
    }
    atomic_store(&index->busy, false);
    return out;
}

/* pack_find(Packed, [Binary]): the positions of the candidates (of a set
 * whose hash pack_hash made) equal to one of the binaries (at most
 * SLICE_MOST of them), in no particular order. */
ERL_NIF_TERM wb_pack_find(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    search_index *index;
    unsigned length;
    (void)argc;
    if (!enif_get_resource(env, argv[0], wb_packed_type, (void **)&index) || !index->kept ||
        !index->hash || index->hash_zeroed != index->hash_slots ||
        index->hashed != index->packed.set.count || !enif_get_list_length(env, argv[1], &length) ||
        length > SLICE_MOST)
        return enif_make_badarg(env);
    const wb_search_set *set = &index->packed.set;
    size_t mask = index->hash_slots - 1;
    ERL_NIF_TERM found = enif_make_list(env, 0), head, tail = argv[1];
    ErlNifBinary key;
    for (unsigned k = 0; k < length; k++) {
        if (!enif_get_list_cell(env, tail, &head, &tail) || !enif_inspect_binary(env, head, &key))
            return enif_make_badarg(env);
        for (size_t at = (size_t)bytes_hash(key.data, key.size) & mask; index->hash[at];
             at = (at + 1) & mask) {
            size_t i = (size_t)(index->hash[at] - 1);
            size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
            if (len == key.size &&
                (len == 0 || !memcmp(set->bytes + set->offsets[i], key.data, len)))
                found = enif_make_list_cell(env, enif_make_uint64(env, i), found);
        }
    }
    return found;
}

/* ---- the packed candidates, for other jobs (jobs.h) -------------------------- */

bool wb_search_set_get(ErlNifEnv *env, ERL_NIF_TERM term, size_t count, void **holder,
                       const wb_search_set **set) {
    search_index *index;
    if (!enif_get_resource(env, term, wb_packed_type, (void **)&index) || !index->sealed ||
        index->packed.set.count != count)
        return false;
    *holder = index;
    *set = &index->packed.set;
    return true;
}

void wb_search_set_keep(void *holder) {
    wb_packed_use(holder);
}

void wb_search_set_drop(void *holder) {
    wb_packed_drop(holder);
}

/* ---- load, unload ------------------------------------------------------------ */

int wb_pack_load(ErlNifEnv *env) {
    spare.lock = enif_mutex_create("wb_search_spare");
    if (!spare.lock) return 1;
    atom_not_a_binary = enif_make_atom(env, "not_a_binary");
    ErlNifResourceTypeInit init = {.dtor = index_dtor};
    wb_packed_type =
        enif_open_resource_type_x(env, "wb_search_index", &init, ERL_NIF_RT_CREATE, NULL);
    return wb_packed_type ? 0 : 1;
}

void wb_pack_unload(void) {
    if (!spare.lock) return;
    wb_block_free_now(spare.bytes, spare.room);
    wb_block_free_now(spare.offsets, spare.offsets_room);
    spare.bytes = NULL;
    spare.offsets = NULL;
    enif_mutex_destroy(spare.lock);
    spare.lock = NULL;
}
