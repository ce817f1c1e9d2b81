/*
 * WellBehaved SDK: a job's output of any size, written a step at a time and
 * handed over as the job's result without a copy.
 *
 * A job type's result callback runs in one go on the caller's scheduler:
 * copying a 100 MB output there holds it for tens of milliseconds, once per
 * call. With a wb_output in its state, a job writes its output in `step`
 * (sliced like the rest of its work) into blocks of at most
 * WB_OUTPUT_CHUNK_MAX bytes, and `take_result` hands them over as binaries
 * that own them (wb_make_malloc_binary: their memory goes back off the
 * scheduler when they are garbage):
 *
 *   - wb_output_take: the output as iodata, a binary or a list of binaries
 *     (sub-binaries of the chunks, no copy);
 *   - or, when the caller wants one binary, wb_output_flatten in the last
 *     steps copies the chunks into one block a budget at a time (giving
 *     each chunk back once copied), and wb_output_take then hands that
 *     over.
 *
 *     typedef struct { ...; wb_output out; } rle_state;     // zeroed by the runtime
 *     step:         if (!wb_output_write(&s->out, pair, 2)) return true;  // out of memory
 *                   ...
 *     take_result:  if (s->out.failed) return wb_error(env, wb_atom(env, "enomem"));
 *                   return wb_output_take(env, &s->out);
 *     destroy:      wb_output_free(&s->out);
 *
 * A zeroed wb_output is empty and ready. Allocation failures never write
 * out of bounds: the call that failed returns false (or NULL, or -1), and
 * `failed` stays set. Works in a server program (:external) too. Header-
 * only: include it in the job's source.
 */
#ifndef WB_OUTPUT_H
#define WB_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wb_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Chunks grow from the first size to the last, doubling; a chunk is what
 * one allocation, one copy at flatten and one release cost at most. */
#define WB_OUTPUT_CHUNK_MIN ((size_t)64 * 1024)
#define WB_OUTPUT_CHUNK_MAX ((size_t)1024 * 1024)

typedef struct {
    unsigned char *data; /* malloc'd */
    size_t size, used;   /* capacity, bytes written */
} wb_output_chunk;

typedef struct {
    wb_output_chunk *chunks; /* chunks[0 .. count - 1]; the last is written to */
    size_t count, capacity;  /* of the array */
    uint64_t size;           /* bytes written in all */
    bool failed;             /* an allocation failed: the output is incomplete */
    /* flatten: the one block (malloc'd), the chunk being copied and where */
    unsigned char *flat;
    size_t flat_chunk, flat_pos;
    uint64_t flat_done;
} wb_output;

/* Bytes written so far. */
static inline uint64_t wb_output_size(const wb_output *out) {
    return out->size;
}

/* A new chunk of at least `n` bytes (n <= WB_OUTPUT_CHUNK_MAX) to write to. */
static inline bool wb_output_grow_(wb_output *out, size_t n) {
    if (out->failed) return false;
    if (out->count == out->capacity) {
        size_t cap = out->capacity ? 2 * out->capacity : 16;
        wb_output_chunk *more = (wb_output_chunk *)realloc(out->chunks, cap * sizeof *out->chunks);
        if (!more) {
            out->failed = true;
            return false;
        }
        out->chunks = more;
        out->capacity = cap;
    }
    size_t want = WB_OUTPUT_CHUNK_MIN;
    if (out->count > 0) {
        size_t last = out->chunks[out->count - 1].size;
        want = last >= WB_OUTPUT_CHUNK_MAX / 2 ? WB_OUTPUT_CHUNK_MAX : 2 * last;
    }
    if (want < n) want = n;
    wb_output_chunk *c = &out->chunks[out->count];
    if (!(c->data = (unsigned char *)malloc(want))) {
        out->failed = true;
        return false;
    }
    c->size = want;
    c->used = 0;
    out->count++;
    return true;
}

/* Room for `n` contiguous bytes (1 <= n <= WB_OUTPUT_CHUNK_MAX), to fill
 * then count with wb_output_commit; NULL when memory ran out, n is out of
 * that range, or a flatten began. */
static inline unsigned char *wb_output_reserve(wb_output *out, size_t n) {
    if (n == 0 || n > WB_OUTPUT_CHUNK_MAX || out->flat) return NULL;
    wb_output_chunk *c = out->count ? &out->chunks[out->count - 1] : NULL;
    if (!c || c->size - c->used < n) {
        if (!wb_output_grow_(out, n)) return NULL;
        c = &out->chunks[out->count - 1];
    }
    return c->data + c->used;
}

/* Counts `n` bytes written into the room wb_output_reserve gave (n at
 * most what was reserved). */
static inline void wb_output_commit(wb_output *out, size_t n) {
    out->chunks[out->count - 1].used += n;
    out->size += n;
}

/* Appends `n` bytes; false when memory ran out (nothing more is written)
 * or a flatten began. */
static inline bool wb_output_write(wb_output *out, const void *bytes, size_t n) {
    const unsigned char *p = (const unsigned char *)bytes;
    if (out->failed || out->flat) return false;
    while (n > 0) {
        wb_output_chunk *c = out->count ? &out->chunks[out->count - 1] : NULL;
        if (!c || c->used == c->size) {
            if (!wb_output_grow_(out, 1)) return false;
            c = &out->chunks[out->count - 1];
        }
        size_t room = c->size - c->used, take = n < room ? n : room;
        memcpy(c->data + c->used, p, take);
        c->used += take;
        out->size += take;
        p += take;
        n -= take;
    }
    return true;
}

/* For a step: copies up to `budget` bytes of the output into one block of
 * its size (allocated at the first call), giving each chunk back once
 * copied; adds the bytes copied to *copied. 1 when the whole output is in
 * that block, 0 when there is more to copy, -1 when memory ran out. No
 * more writes after the first call. */
static inline int wb_output_flatten(wb_output *out, uint64_t budget, uint64_t *copied) {
    if (out->failed) return -1;
    if (!out->flat && !(out->flat = (unsigned char *)malloc(out->size ? (size_t)out->size : 1))) {
        out->failed = true;
        return -1;
    }
    while (out->flat_chunk < out->count && budget > 0) {
        wb_output_chunk *c = &out->chunks[out->flat_chunk];
        size_t left = c->used - out->flat_pos;
        size_t take = (uint64_t)left < budget ? left : (size_t)budget;
        memcpy(out->flat + out->flat_done, c->data + out->flat_pos, take);
        out->flat_done += take;
        out->flat_pos += take;
        budget -= take;
        *copied += take;
        if (out->flat_pos == c->used) {
            wb_free_later(c->data, c->size);
            c->data = NULL;
            out->flat_chunk++;
            out->flat_pos = 0;
        }
    }
    return out->flat_chunk == out->count ? 1 : 0;
}

typedef struct {
    wb_output_chunk *chunks;
    size_t from, count;
} wb_output_garbage_;

static inline void wb_output_release_(void *arg) {
    wb_output_garbage_ *g = (wb_output_garbage_ *)arg;
    for (size_t i = g->from; i < g->count; i++)
        free(g->chunks[i].data);
    free(g->chunks);
    free(g);
}

/* Gives back the chunks from `from` on and the array, in one go on the
 * runtime's releasing thread (for take's failure and free): a job whose
 * caller died may hold hundreds of chunks. The output is empty after. */
static inline void wb_output_drop_(wb_output *out, size_t from) {
    wb_output_garbage_ *g = (wb_output_garbage_ *)malloc(sizeof *g);
    if (g) {
        g->chunks = out->chunks;
        g->from = from;
        g->count = out->count;
        wb_release_later(wb_output_release_, g);
    } else {
        for (size_t i = from; i < out->count; i++)
            free(out->chunks[i].data);
        free(out->chunks);
    }
    out->chunks = NULL;
    out->count = out->capacity = 0;
}

/* The output, for take_result, without a copy (wb_make_malloc_binary): the
 * flattened binary once wb_output_flatten has answered 1; otherwise
 * iodata, an empty binary, a binary (one chunk) or a list of binaries. The
 * output is empty afterwards (its memory belongs to the term). Raises
 * badarg after a failure or between a flatten's first step and its last:
 * check `failed`, and flatten to the end; enomem when out of memory. */
static inline ERL_NIF_TERM wb_output_take(ErlNifEnv *env, wb_output *out) {
    ERL_NIF_TERM term;
    if (out->failed || (out->flat && out->flat_chunk < out->count)) return enif_make_badarg(env);
    if (out->flat) {
        term = wb_make_malloc_binary(env, out->flat, (size_t)out->size);
        out->flat = NULL;
        out->count = 0;
    } else if (out->count == 0) {
        if (!enif_make_new_binary(env, 0, &term)) term = enif_make_badarg(env);
    } else {
        bool one = out->count == 1;
        term = enif_make_list(env, 0);
        while (out->count > 0) {
            wb_output_chunk *c = &out->chunks[--out->count];
            ERL_NIF_TERM part = wb_make_malloc_binary(env, c->data, c->used);
            if (enif_has_pending_exception(env, NULL)) {
                wb_output_drop_(out, 0); /* the chunks not handed over yet */
                return part;
            }
            term = one ? part : enif_make_list_cell(env, part, term);
        }
    }
    free(out->chunks);
    memset(out, 0, sizeof *out);
    return term;
}

/* Gives back what the output still owns (for destroy): a job that ended
 * without handing its output over, or whose caller died. The memory goes
 * back off the scheduler (wb_release_later, wb_free_later). */
static inline void wb_output_free(wb_output *out) {
    if (out->chunks) wb_output_drop_(out, out->flat_chunk);
    if (out->flat) wb_free_later(out->flat, out->size ? (size_t)out->size : 1);
    memset(out, 0, sizeof *out);
}

#ifdef __cplusplus
}
#endif

#endif
