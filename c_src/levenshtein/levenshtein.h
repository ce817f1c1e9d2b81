/*
 * Resumable bit-parallel Levenshtein distance (Myers 1999 / Hyyro 2003).
 *
 * Pure C, no erl_nif: the NIF glue owns scheduling, this file owns the
 * algorithm. A computation is a state (wb_lev) advanced by wb_lev_step in
 * bounded amounts of work, so that any scheduler can slice it.
 *
 * The shorter input (after stripping the common prefix and suffix) is the
 * pattern: its match table has one 64-bit word per symbol per 64-row block.
 * The longer input is the text, walked column by column. With a cutoff k only
 * the blocks inside the diagonal band of width O(k) are computed.
 *
 * Unit of work: one 64-row block updated for one text column (64 cells).
 * The set-up (decoding UTF-8, stripping the common prefix and suffix,
 * building the match table) is done in steps too, in the same ~2 ns units,
 * when the computation begins with wb_lev_start.
 */
#ifndef WB_LEVENSHTEIN_H
#define WB_LEVENSHTEIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../metric/levenshtein_block.h"
#include "../text/utf8.h"

#define WB_LEV_NO_LIMIT SIZE_MAX

/* The two units by the names the Elixir side gives them (the atoms of
 * `unit:`), for every host that decodes them: the NIF jobs and the
 * external server. */
#define WB_LEV_UNIT_BYTE      "byte"
#define WB_LEV_UNIT_CODEPOINT "codepoint"

/* A cutoff decoded as an unsigned 64-bit integer: itself, or
 * WB_LEV_NO_LIMIT when it cuts nothing a size_t can count (one below
 * SIZE_MAX too, so that k + 1 never wraps). */
static inline size_t wb_lev_cutoff(uint64_t k) {
    return k < (uint64_t)SIZE_MAX - 1 ? (size_t)k : WB_LEV_NO_LIMIT;
}

typedef enum {
    WB_LEV_OK = 0,
    WB_LEV_ENOMEM,
    WB_LEV_EUTF8_A, /* first input is not valid UTF-8 (codepoint mode) */
    WB_LEV_EUTF8_B, /* second input is not valid UTF-8 (codepoint mode) */
} wb_lev_status;

/* Codepoint mode: the pattern's symbols, per symbol the blocks where it
 * occurs and the bit mask of its rows in that block, sorted by block. */
typedef struct {
    uint32_t block;
    uint64_t mask;
} wb_lev_occurrence;

typedef struct wb_lev {
    bool codepoints;
    int phase;            /* set-up phase; the last one runs the columns */
    wb_lev_status failed; /* a set-up that failed: why */
    bool text_is_a;       /* which caller input is the text */
    size_t text_off;      /* first text byte after the common prefix */
    size_t m, n;          /* pattern and text length in units, after stripping */
    size_t k;             /* effective cutoff, <= n */
    size_t nblocks;
    size_t col;         /* next text column to process */
    size_t first, last; /* block range computed for the current column */
    uint64_t last_mask; /* bit of row m inside the last block */
    size_t next_check;  /* the column after which to look whether k is out of reach */
    bool borrowed;      /* the match table and vectors are a wb_lev_pattern's */
    bool done;
    size_t result;

    /* byte mode match table: peq[symbol * nblocks + block] */
    uint64_t *peq;
    /* codepoint mode: the pattern's codepoints get ids 0..sigma-1 (a hash
     * map, open addressing), the text's are looked up as the columns
     * decode them (absent_id = sigma when not in the pattern) */
    uint32_t *map_keys, *map_ids, map_mask, map_shift;
    uint32_t sigma, absent_id;
    size_t text_pos, text_len; /* next text byte, text bytes after stripping */
    uint32_t *occ_start;       /* occurrences of id s: occ[occ_start[s] .. occ_start[s+1]) */
    wb_lev_occurrence *occ;

    /* per block vertical delta vectors, one allocation, vp first */
    uint64_t *vp, *vn;
    /* D[bottom row of block `last`][col]: the band only ever needs this one */
    uint64_t last_score;

    /* the set-up under way: inputs' sizes, a cursor into the phase's input,
     * and what only the set-up needs (freed when it ends) */
    size_t alen, blen, max_distance;
    size_t cursor, count, pre, suf;
    size_t la, lb; /* codepoint mode: the inputs' lengths in codepoints */
    uint32_t *pattern_ids, *seen_block;

    size_t owned_bytes;
    /* storage for the one-block case, so short inputs allocate nothing */
    uint64_t one_vp, one_vn;
    uint64_t one_peq[256];
} wb_lev;

/* Where byte-mode match tables (256 words per 64 pattern bytes) come from:
 * malloc/free unless set; the core clears them, in steps. Set it once,
 * before any computation starts. A host whose allocator caches memory
 * avoids the page faults that fresh memory costs on every call. */
typedef struct {
    void *(*alloc)(size_t bytes);
    void (*free)(void *table, size_t bytes);
} wb_lev_table_allocator;

void wb_lev_set_table_allocator(const wb_lev_table_allocator *allocator);

/* The columns of a multi-block pair are the block form's
 * (../metric/levenshtein_block.h), whose paths (wb_lev_path,
 * wb_lev_choose_path) are chosen there for the whole process. */

/* Begins a computation and does nothing else (it allocates nothing and
 * cannot fail): wb_lev_step does the set-up within its budget like the
 * rest, and a set-up that fails ends the computation (wb_lev_error).
 * a and b must stay readable until wb_lev_free, the same bytes passed again
 * to every wb_lev_step (they may move between steps).
 * max_distance: WB_LEV_NO_LIMIT, or k such that any distance above k
 * is reported as k + 1. wb_lev_free frees the state, finished or not. */
void wb_lev_start(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                  bool codepoints, size_t max_distance);

/* wb_lev_start and the whole set-up in one go. On error nothing is left
 * allocated. */
wb_lev_status wb_lev_init(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                          bool codepoints, size_t max_distance);

/* Does up to about `budget` units (always some progress: part of the
 * set-up, or at least one column) and adds the units done to *used.
 * Returns true when the computation ended: the distance is known, or
 * the set-up failed (wb_lev_error). */
bool wb_lev_step(wb_lev *s, const uint8_t *a, const uint8_t *b, uint64_t budget, uint64_t *used);

/* Once wb_lev_step returned true: WB_LEV_OK, or why the set-up failed. */
wb_lev_status wb_lev_error(const wb_lev *s);

/* The distance (or k + 1), valid once wb_lev_step returned true and
 * wb_lev_error is WB_LEV_OK. */
size_t wb_lev_result(const wb_lev *s);

/* Units the whole computation will take, from the stripped lengths. */
uint64_t wb_lev_units(const wb_lev *s);

/* Units a computation will take, estimated from the raw bytes (in
 * codepoint mode an over-estimate), without allocating. */
uint64_t wb_lev_predict(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                        size_t max_distance);

/* Units (the same ~2 ns units as the work) that wb_lev_init takes. */
uint64_t wb_lev_setup_units(size_t alen, size_t blen, bool codepoints);

/* Bytes of heap memory owned by the state. */
size_t wb_lev_memory(const wb_lev *s);

void wb_lev_free(wb_lev *s);

/* A pair of at most WB_LEV_SHORT_BYTES bytes in all whose shorter side,
 * once the common prefix and suffix are gone, is at most 64 bytes, or
 * whose cutoff is at most WB_LEV_MBLEVEN_MOST (and in codepoint mode both
 * ASCII, where codepoints are bytes): stores the
 * distance (or max_distance + 1) in *distance and returns true, having
 * allocated nothing (under 2 us); false for any other pair. wb_lev_init
 * takes this way when it can. (In codepoint mode, inputs found to be ASCII
 * while the set-up validates them are computed in byte mode too.) */
#define WB_LEV_SHORT_BYTES 512
bool wb_lev_short(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, bool codepoints,
                  size_t max_distance, size_t *distance);

/* One input compared with many (a search's query), in byte mode: its match
 * table built once, and room for one computation's vectors. */
typedef struct {
    size_t m, nblocks;
    uint64_t *peq;     /* peq[symbol * nblocks + block] */
    uint64_t *vectors; /* vp then vn, nblocks each */
    size_t bytes;
} wb_lev_pattern;

/* false when out of memory (nothing left allocated). */
bool wb_lev_pattern_init(wb_lev_pattern *p, const uint8_t *pattern, size_t m);
void wb_lev_pattern_free(wb_lev_pattern *p);

/* Begins the byte-mode distance from the pattern to a text of n bytes,
 * with the pattern's table and vectors instead of its own: nothing is
 * allocated or built, and nothing fails. The pattern may be the longer
 * side; no common prefix or suffix is stripped. Go on with wb_lev_step
 * (its `b` is the text, `a` unused) and end with wb_lev_free; one
 * computation at a time per pattern. */
void wb_lev_start_with(wb_lev *s, wb_lev_pattern *p, size_t n, size_t max_distance);

/* Byte mode with a cutoff max_distance <= WB_LEV_MBLEVEN_MOST: the distance,
 * or max_distance + 1, by trying each order of spending the edits
 * (mbleven), without allocating. Time: a few passes over the inputs, each
 * stopping at its edits' last difference (the whole input only for pairs
 * within the cutoff). A larger max_distance is taken as the most. */
#define WB_LEV_MBLEVEN_MOST 3
size_t wb_lev_mbleven(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                      size_t max_distance);

/* One-shot convenience: init, step to the end, free. Returns SIZE_MAX on
 * error and stores the status in *status when status is not NULL. */
size_t wb_lev_distance(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                       bool codepoints, size_t max_distance, wb_lev_status *status);

#endif
