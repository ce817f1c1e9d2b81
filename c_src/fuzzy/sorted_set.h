/*
 * An index's candidates with their tokens sorted, the set the token sort
 * scores compare (extract.h's `sorted`): each candidate's tokens, split at
 * wb_fz_ascii_space, sorted by their bytes (a prefix before what it
 * prefixes) and joined by one space, as wb_fz_sorted_tokens makes them,
 * in a set of their own in the candidates' order. Pure C, no erl_nif: the
 * NIF glue (c_src/nif/sorted_job.c) makes it a runtime job.
 *
 * Made a budget at a time, so that a host can slice the making of a large
 * index: a long candidate's scans, the merges of its tokens, the
 * comparison of two long tokens and the copies stop within the budget and
 * go on at the next step. A unit is about a nanosecond: a candidate, 4
 * bytes scanned, a token moved, a comparison, 32 bytes compared or
 * copied.
 *
 *   wb_fz_sorted_begin(s, set, alloc, release)
 *   wb_fz_sorted_step(s, budget, &used)    BUILDING until done: SAME,
 *                                          MADE or ENOMEM
 *   wb_fz_sorted_take(s, &out)             once MADE: the set, its blocks
 *                                          the caller's from then on
 *   wb_fz_sorted_free(s)                   what it holds, done or not
 *
 * SAME: every candidate is its own sorted form (one token and no
 * separator, or tokens in order joined by single spaces, or empty): the
 * caller uses the set itself. Nothing is allocated until the first
 * candidate that differs; then the output (as many bytes as the set's,
 * which no sorted form passes, and its offsets) and, for a candidate of
 * more than a few tokens, arrays of its tokens; every block from
 * `alloc`, given back to `release` with its size.
 */
#ifndef WB_FUZZY_SORTED_SET_H
#define WB_FUZZY_SORTED_SET_H

#include "../search/search.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    WB_FZ_SORTED_BUILDING = 0,
    WB_FZ_SORTED_SAME,   /* every candidate is its sorted form */
    WB_FZ_SORTED_MADE,   /* wb_fz_sorted_take hands the sorted set over */
    WB_FZ_SORTED_ENOMEM, /* out of memory: nothing kept */
} wb_fz_sorted_status;

/* a token: set->bytes[at .. at + len) */
typedef struct {
    size_t at, len;
} wb_fz_sorted_token;

/* The sorted set, taken: set.prepared is NULL; bytes (room bytes, of
 * which set.offsets[count] are used) and offsets (offsets_room bytes)
 * are blocks of the maker's `alloc`. */
typedef struct {
    wb_search_set set;
    uint8_t *bytes;
    uint64_t *offsets;
    size_t room, offsets_room;
} wb_fz_sorted_out;

typedef struct {
    const wb_search_set *set;
    void *(*alloc)(size_t bytes);
    void (*release)(void *block, size_t bytes);
    wb_fz_sorted_status status;
    int phase, after_prefix;
    size_t i;             /* the candidate under way */
    size_t first_changed; /* the first that differs from its sorted form; SIZE_MAX: none */
    /* the output, from the first candidate that differs: `out` bytes
     * written; the set before it copied first (prefix bytes, then prefix
     * offsets) */
    uint8_t *bytes;
    uint64_t *offsets;
    size_t room, offsets_room, out, prefix_bytes, prefix_offsets;
    /* a long candidate: its scan (pos, the open token's start or
     * SIZE_MAX), its tokens (k, their letters, a separator other than a
     * space), whether its sorted form differs */
    size_t pos, token_from, k, letters;
    bool odd, changed;
    wb_fz_sorted_token one; /* its only token, or itself, written whole */
    /* its tokens (cap each), collected then merged into spare and back
     * (the runs of `width`, the pair from `lo`, cursors a, b, o, the
     * bytes of the pair compared so far: cmp) */
    wb_fz_sorted_token *tokens, *spare;
    size_t cap, filled, width, lo, a, b, o, cmp;
    /* the tokens written: write[0 .. write_count), token wk from woff */
    const wb_fz_sorted_token *write;
    size_t write_count, wk, woff;
} wb_fz_sorted;

void wb_fz_sorted_begin(wb_fz_sorted *s, const wb_search_set *set, void *(*alloc)(size_t bytes),
                        void (*release)(void *block, size_t bytes));
/* Goes on for about `budget` units (at least one; a step overruns it by a
 * few units at most), adds the units spent to *used. */
wb_fz_sorted_status wb_fz_sorted_step(wb_fz_sorted *s, uint64_t budget, uint64_t *used);
/* Once MADE: the sorted set into *out (false otherwise); the maker keeps
 * nothing of it. */
bool wb_fz_sorted_take(wb_fz_sorted *s, wb_fz_sorted_out *out);
void wb_fz_sorted_free(wb_fz_sorted *s);
/* The units of making the sorted set of `count` candidates of `bytes`
 * bytes in all: at most that where no candidate is much longer than
 * their mean (the sorting of a candidate's tokens grows with the log of
 * their number). */
uint64_t wb_fz_sorted_units(size_t count, uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif
