/*
 * The Levenshtein distance of two texts (UTF-8 or bytes), resumable: the
 * Levenshtein.distance jobs' and the search core's pairs, on the one
 * Levenshtein kernel of the project (wb_fz_lev over a wb_fz_pattern,
 * kernels.h / levenshtein.c). Pure C, no erl_nif.
 *
 * A computation is a state (wb_lev) advanced by wb_lev_step in bounded
 * amounts of work, so that any scheduler can slice it: codepoint inputs
 * are decoded into symbols (validated as they go) unless both are ASCII;
 * bytes are read as symbols where they are (the pattern's fill and the
 * kernel's text, wb_fz_pattern.s8 / wb_fz_lev.b8); the common prefix and
 * suffix dropped, the shorter side's pattern built, then the kernel's
 * columns run (a cutoff's band stopping them once it cannot end under
 * it), each part a budget at a time
 * (levenshtein_text.c). Pairs that finish in one go without a state (one
 * word of pattern, or a cutoff of at most 3) are levenshtein_short.c's.
 *
 * Units: the kernels' (kernels.h, about 2 ns each): one 64-row block of a
 * column, WB_FZ_DECODE_BYTES bytes decoded, WB_FZ_PATTERN_PER_UNIT
 * symbols placed in the pattern.
 */
#ifndef WB_METRIC_LEVENSHTEIN_TEXT_H
#define WB_METRIC_LEVENSHTEIN_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../text/sized_alloc.h"
#include "../text/utf8.h"
#include "kernels.h"
#include "levenshtein_block.h"

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

/* One input compared with many (a search's query), in byte mode: its
 * symbols and their pattern, made once. */
typedef struct {
    uint32_t *symbols;
    wb_fz_pattern pattern;
    size_t m;
    size_t bytes;
    bool ready;
} wb_lev_pattern;

#define WB_LEV_INLINE_SYMBOLS 512

typedef struct wb_lev {
    bool codepoints;
    int phase;            /* the part under way (levenshtein_text.c) */
    wb_lev_status failed; /* a set-up that failed: why */
    bool done;
    size_t result;
    size_t alen, blen, k; /* the inputs' bytes, the cutoff asked */
    /* the symbols: a's then b's (from symbols + alen), or the text's only
     * with a pattern made once */
    uint32_t *symbols;
    size_t symbols_bytes;
    wb_fz_decoding decoding;
    size_t la, lb;         /* symbols decoded */
    size_t pre, suf;       /* common affix found so far */
    size_t cursor, high;   /* the pattern side's symbols of 256 and up, counted */
    const uint32_t *p, *t; /* the pattern (shorter side) and the text, after the affixes */
    bool p_is_a;           /* bytes (no symbols): the pattern is a's, from pre */
    size_t m, n;
    const wb_lev_pattern *with; /* wb_lev_start_with's, or NULL */
    wb_fz_pattern pattern;      /* its own, else */
    bool touching;              /* its pages written first (a long one) */
    size_t touched;             /* bytes of its tables gone past */
    bool kernel_on;
    /* from here on not cleared by wb_lev_start: the kernel (set up by its
     * init, read only once kernel_on), the symbols of a pair of at most
     * WB_LEV_INLINE_SYMBOLS bytes in all (no allocation) */
    wb_fz_lev kernel;
    uint32_t inline_symbols[WB_LEV_INLINE_SYMBOLS];
} wb_lev;

/* Where the symbol buffers (4 bytes per input byte) come from:
 * malloc/free unless set. Set it once, before any computation starts. A
 * host whose allocator caches memory avoids the page faults that fresh
 * memory costs on every call, and accounts for it. */
typedef wb_sized_allocator wb_lev_table_allocator;

void wb_lev_set_table_allocator(const wb_lev_table_allocator *allocator);

/* Begins a computation and does nothing else (it allocates nothing and
 * cannot fail): wb_lev_step does the set-up within its budget like the
 * rest, and a set-up that fails ends the computation (wb_lev_error).
 * a and b must stay readable until the computation ends (bytes are read as
 * symbols, not copied), the same bytes passed again to every wb_lev_step
 * (they may move between steps).
 * max_distance: WB_LEV_NO_LIMIT, or k such that any distance above k is
 * reported as k + 1. wb_lev_free frees the state, finished or not. The
 * state must stay where it is until then. */
void wb_lev_start(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                  bool codepoints, size_t max_distance);

/* wb_lev_start, and the whole computation at once for a pair that
 * wb_lev_short takes (then the first wb_lev_step returns true). */
void wb_lev_begin(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                  bool codepoints, size_t max_distance);

/* wb_lev_start and the whole set-up in one go. On error nothing is left
 * allocated. */
wb_lev_status wb_lev_init(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                          bool codepoints, size_t max_distance);

/* Does up to about `budget` units (always some progress) and adds the
 * units done to *used. Returns true when the computation ended: the
 * distance is known, or the set-up failed (wb_lev_error). */
bool wb_lev_step(wb_lev *s, const uint8_t *a, const uint8_t *b, uint64_t budget, uint64_t *used);

/* Once wb_lev_step returned true: WB_LEV_OK, or why the set-up failed. */
wb_lev_status wb_lev_error(const wb_lev *s);

/* The distance (or k + 1), valid once wb_lev_step returned true and
 * wb_lev_error is WB_LEV_OK. */
size_t wb_lev_result(const wb_lev *s);

/* Units the columns will take, estimated from the raw bytes (in
 * codepoint mode an over-estimate), without allocating. */
uint64_t wb_lev_predict(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                        size_t max_distance);

/* Units the set-up takes at most (decoding, affixes, the pattern). */
uint64_t wb_lev_setup_units(size_t alen, size_t blen, bool codepoints);

/* Bytes of heap memory owned by the state; before its set-up is done,
 * what the set-up will allocate at most if that is more (a job's memory
 * is read once, after init). */
size_t wb_lev_memory(const wb_lev *s);

void wb_lev_free(wb_lev *s);

/* false when out of memory (nothing left allocated). */
bool wb_lev_pattern_init(wb_lev_pattern *p, const uint8_t *pattern, size_t m);
void wb_lev_pattern_free(wb_lev_pattern *p);

/* Begins the byte-mode distance from the pattern to a text of n bytes,
 * with the pattern made once: only the text is decoded. The pattern may
 * be the longer side; no common prefix or suffix is dropped. Go on with
 * wb_lev_step (its `b` is the text, `a` unused) and end with wb_lev_free;
 * the pattern must outlive the computation. */
void wb_lev_start_with(wb_lev *s, const wb_lev_pattern *p, size_t n, size_t max_distance);

/* One-shot convenience: the short path, or init, step to the end, free.
 * Returns SIZE_MAX on error and stores the status in *status when status
 * is not NULL. */
size_t wb_lev_distance(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                       bool codepoints, size_t max_distance, wb_lev_status *status);

/* ---- without a state (levenshtein_short.c) ------------------------------ */

/* The common prefix's length, and in *la / *lb the lengths left once the
 * common prefix and suffix go; each scan stops after `limit` bytes. */
size_t wb_lev_strip_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                          size_t limit, size_t *la, size_t *lb);

/* A pair of at most WB_LEV_SHORT_BYTES bytes in all whose shorter side,
 * once the common prefix and suffix are gone, is at most 64 bytes, or
 * whose cutoff is at most WB_LEV_MBLEVEN_MOST (and in codepoint mode both
 * ASCII, where codepoints are bytes): stores the distance (or
 * max_distance + 1) in *distance and returns true, having allocated
 * nothing (under 2 us); false for any other pair. */
#define WB_LEV_SHORT_BYTES 512
bool wb_lev_short(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, bool codepoints,
                  size_t max_distance, size_t *distance);

/* Byte mode with a cutoff max_distance <= WB_LEV_MBLEVEN_MOST: the distance,
 * or max_distance + 1, by trying each order of spending the edits
 * (mbleven), without allocating. Time: a few passes over the inputs, each
 * stopping at its edits' last difference (the whole input only for pairs
 * within the cutoff). A larger max_distance is taken as the most. */
#define WB_LEV_MBLEVEN_MOST 3
size_t wb_lev_mbleven(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                      size_t max_distance);

/* Byte mode, the whole pair at once when what is left after the common
 * affixes has a side of at most 64 bytes, or the cutoff is at most
 * WB_LEV_MBLEVEN_MOST: true with the distance in *out; false otherwise. */
bool wb_lev_short_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, size_t k,
                        size_t *out);

#endif
