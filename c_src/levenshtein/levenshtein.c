#include "levenshtein.h"

#include "../metric/levenshtein_word.h"

#include <stdlib.h>
#include <string.h>

#define WORD_BITS 64
/* columns between two looks at whether the band can still end under k */
#define BAND_CHECK_COLUMNS 8
#define TOP_BIT            (UINT64_C(1) << 63)
/* wb_lev_predict strips prefix and suffix only for bigger problems, and
 * looks this many bytes into each end at most */
#define WB_LEV_PREDICT_EXACT_FROM 4096
#define WB_LEV_PREDICT_STRIP_MOST 4096

static size_t min_size(size_t x, size_t y) {
    return x < y ? x : y;
}

static size_t ceil_blocks(size_t rows) {
    return (rows + WORD_BITS - 1) / WORD_BITS;
}

/* ---- where match tables come from ------------------------------------------------ */

static void *malloc_table(size_t bytes) {
    return malloc(bytes);
}

static void free_table(void *table, size_t bytes) {
    (void)bytes;
    free(table);
}

static wb_lev_table_allocator table_allocator = {malloc_table, free_table};

void wb_lev_set_table_allocator(const wb_lev_table_allocator *allocator) {
    table_allocator = *allocator;
}

/* ---- set-up shared by both modes ----------------------------------------- */

/* Decides the trivial cases; returns true when the result is already known.
 * The pattern is the shorter side, except for a borrowed pattern
 * (wb_lev_start_with), which may be either. */
static bool settle_trivial(wb_lev *s, size_t max_distance) {
    size_t longer = s->m > s->n ? s->m : s->n, diff = longer - min_size(s->m, s->n);
    s->k = min_size(max_distance, longer);
    if (s->m == 0 || s->n == 0 || diff > s->k) {
        /* an empty side: the other's length; else a lower bound above k */
        size_t d = s->m == 0 || s->n == 0 ? longer : diff;
        s->result = d > s->k ? s->k + 1 : d;
        s->done = true;
        return true;
    }
    s->next_check = s->k < longer ? BAND_CHECK_COLUMNS : SIZE_MAX;
    s->nblocks = ceil_blocks(s->m);
    size_t tail = s->m % WORD_BITS;
    s->last_mask = tail ? UINT64_C(1) << (tail - 1) : TOP_BIT;
    return false;
}

static uint64_t rows_in_block(const wb_lev *s, size_t b) {
    return b + 1 == s->nblocks ? s->m - b * WORD_BITS : WORD_BITS;
}

/* Column 0: D[i][0] = i, so every vertical delta is +1. */
static void first_column(wb_lev *s) {
    s->first = s->last = 0;
    s->vp[0] = ~UINT64_C(0);
    s->vn[0] = 0;
    s->last_score = rows_in_block(s, 0);
}

static bool alloc_vectors(wb_lev *s) {
    if (s->nblocks == 1) {
        s->vp = &s->one_vp;
        s->vn = &s->one_vn;
    } else {
        uint64_t *v = malloc(2 * s->nblocks * sizeof *v);
        if (!v) return false;
        s->owned_bytes += 2 * s->nblocks * sizeof *v;
        s->vp = v;
        s->vn = v + s->nblocks;
    }
    first_column(s);
    return true;
}

/* Sets the bits of pattern[from .. end) in a byte-mode match table of
 * nblocks words per symbol (peq[symbol * nblocks + block]). */
static void fill_match_table(uint64_t *peq, size_t nblocks, const uint8_t *pattern, size_t from,
                             size_t end) {
    for (size_t i = from; i < end; i++)
        peq[(size_t)pattern[i] * nblocks + i / WORD_BITS] |= UINT64_C(1) << (i % WORD_BITS);
}

/* Common prefix length, and the lengths left once prefix and suffix go;
 * each scan stops after `limit` bytes. */
static size_t strip_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                          size_t limit, size_t *la, size_t *lb) {
    size_t pre = 0, shortest = min_size(alen, blen);
    size_t pre_end = min_size(shortest, limit);
    while (pre < pre_end && a[pre] == b[pre])
        pre++;
    size_t suf = 0, suf_end = min_size(shortest - pre, limit);
    while (suf < suf_end && a[alen - 1 - suf] == b[blen - 1 - suf])
        suf++;
    *la = alen - pre - suf;
    *lb = blen - pre - suf;
    return pre;
}

#define EMPTY_KEY UINT32_MAX /* not a Unicode scalar value */

/* Fibonacci hashing: the product's high bits, which every bit of cp moves */
static uint32_t map_slot(const wb_lev *s, uint32_t cp) {
    uint32_t i = (cp * UINT32_C(2654435761)) >> s->map_shift; /* < 2^bits */
    while (s->map_keys[i] != EMPTY_KEY && s->map_keys[i] != cp)
        i = (i + 1) & s->map_mask;
    return i;
}

/* ---- set-up, in steps -------------------------------------------------------
 *
 * Both modes strip the common prefix and suffix on the bytes (PREFIX,
 * SUFFIX); in valid UTF-8 equal bytes are equal codepoints once both ends
 * sit on codepoint boundaries.
 * Byte mode: PREFIX, SUFFIX, SETTLE, then for more than one block
 * CLEAR_TABLE and FILL_TABLE, then VECTORS.
 * Codepoint mode: COUNT_A, COUNT_B (validating), PREFIX, SUFFIX, AFFIX_CPS
 * (the codepoints stripped), SETTLE, then the pattern's codepoints get
 * dense ids (CLEAR_MAP, MAP_PATTERN) and each id's occurrences are laid out
 * per block in block order (CLEAR_IDS, COUNT_OCC, SUM_OCC, FILL_OCC), then
 * VECTORS. The text stays UTF-8: the columns decode it.
 * Each phase works from `cursor` on, as much as the budget allows. */

enum {
    PHASE_COUNT_A,
    PHASE_COUNT_B,
    PHASE_PREFIX,
    PHASE_SUFFIX,
    PHASE_AFFIX_CPS,
    PHASE_SETTLE,
    PHASE_CLEAR_TABLE,
    PHASE_FILL_TABLE,
    PHASE_CLEAR_MAP,
    PHASE_MAP_PATTERN,
    PHASE_CLEAR_IDS,
    PHASE_COUNT_OCC,
    PHASE_SUM_OCC,
    PHASE_FILL_OCC,
    PHASE_VECTORS,
    PHASE_COLUMNS, /* set up: wb_lev_step runs the columns */
};

/* Costs in eighths of a unit per item of each phase. */
#define COST_DECODE    8  /* a codepoint validated or decoded */
#define COST_BYTE      2  /* a byte compared or looked at */
#define COST_LINE      8  /* 64 bytes cleared */
#define COST_ITEM      8  /* a table or occurrence entry written */
#define COST_HASH      16 /* a codepoint decoded and entered in the map */
#define CLEAR_PER_ITEM 64 /* bytes cleared per COST_LINE */
#define MAP_BITS_MOST  22 /* the codepoint map's slots: at most 2^22 */

/* Items a phase may do with `left` units, at least one, so that every step
 * makes progress. */
static size_t allowance(uint64_t left, unsigned eighths) {
    if (left > UINT64_MAX / 8) return SIZE_MAX;
    uint64_t items = left * 8 / eighths;
    if (items == 0) return 1;
    return items > SIZE_MAX ? SIZE_MAX : (size_t)items;
}

/* Units for `items` items, at least one. */
static uint64_t charge(size_t items, unsigned eighths) {
    uint64_t units = ((uint64_t)items * eighths + 7) / 8;
    return units ? units : 1;
}

/* Items of `per_line` each for `lines` allowed lines (at most SIZE_MAX). */
static size_t lines_of(size_t lines, size_t per_line) {
    return lines > SIZE_MAX / per_line ? SIZE_MAX : lines * per_line;
}

/* The end of the next chunk from `from` towards `end`. */
static size_t chunk_end(size_t from, size_t end, size_t items) {
    return end - from > items ? from + items : end;
}

static size_t ids_bytes(size_t count) {
    return (count ? count : 1) * sizeof(uint32_t);
}

static void *owned_malloc(wb_lev *s, size_t bytes) {
    void *p = malloc(bytes);
    if (p) s->owned_bytes += bytes;
    return p;
}

/* Frees what only the set-up needs. */
static void release_set_up(wb_lev *s) {
    size_t bytes =
        (s->pattern_ids ? ids_bytes(s->m) : 0) + (s->seen_block ? ids_bytes(s->sigma) : 0);
    free(s->pattern_ids);
    free(s->seen_block);
    s->pattern_ids = s->seen_block = NULL;
    s->owned_bytes -= bytes < s->owned_bytes ? bytes : s->owned_bytes;
}

static uint64_t fail(wb_lev *s, wb_lev_status why, uint64_t spent) {
    wb_lev_free(s);
    s->failed = why;
    s->result = SIZE_MAX;
    s->done = true;
    return spent;
}

static void enter(wb_lev *s, int phase) {
    s->phase = phase;
    s->cursor = 0;
}

/* The pattern's bytes after the common prefix. */
static const uint8_t *pattern_bytes(const wb_lev *s, const uint8_t *a, const uint8_t *b) {
    return (s->text_is_a ? b : a) + s->pre;
}

/* Validates one input from the cursor on, counting its codepoints. */
static uint64_t validate_phase(wb_lev *s, const uint8_t *in, size_t len, wb_lev_status invalid,
                               uint64_t left) {
    size_t items = allowance(left, COST_DECODE), done = 0;
    uint32_t cp;
    while (s->cursor < len && done < items) {
        /* eight ASCII bytes at a time: eight codepoints */
        uint64_t word;
        if (len - s->cursor >= 8 && items - done >= 8 &&
            (memcpy(&word, in + s->cursor, 8), (word & UINT64_C(0x8080808080808080)) == 0)) {
            s->cursor += 8;
            done += 8;
            continue;
        }
        size_t step = wb_utf8_sequence(in + s->cursor, len - s->cursor, &cp);
        if (step == 0) return fail(s, invalid, charge(done, COST_DECODE));
        s->cursor += step;
        done++;
    }
    s->count += done;
    return charge(done, COST_DECODE);
}

/* Goes on with the common prefix, then the common suffix. */
static uint64_t affix_phase(wb_lev *s, const uint8_t *a, const uint8_t *b, uint64_t left) {
    size_t shortest = min_size(s->alen, s->blen);
    if (s->phase == PHASE_PREFIX) {
        size_t from = s->pre, end = chunk_end(from, shortest, allowance(left, COST_BYTE));
        while (s->pre < end && a[s->pre] == b[s->pre])
            s->pre++;
        if (s->pre < end || s->pre == shortest) enter(s, PHASE_SUFFIX);
        return charge(s->pre - from, COST_BYTE);
    }
    size_t from = s->suf, end = chunk_end(from, shortest - s->pre, allowance(left, COST_BYTE));
    while (s->suf < end && a[s->alen - 1 - s->suf] == b[s->blen - 1 - s->suf])
        s->suf++;
    if (s->suf < end || s->suf == shortest - s->pre) {
        if (!s->codepoints) {
            enter(s, PHASE_SETTLE);
        } else {
            /* both ends back to codepoint boundaries: a continuation byte
             * belongs to a codepoint that is not the same in both */
            while (s->pre > 0 && ((s->pre < s->alen && wb_utf8_continuation(a[s->pre])) ||
                                  (s->pre < s->blen && wb_utf8_continuation(b[s->pre]))))
                s->pre--;
            while (s->suf > 0 && wb_utf8_continuation(a[s->alen - s->suf]))
                s->suf--;
            s->count = 0;
            enter(s, PHASE_AFFIX_CPS);
        }
    }
    return charge(s->suf - from, COST_BYTE);
}

/* The stripped sizes known: decides the trivial cases, or allocates. */
static uint64_t settle_phase(wb_lev *s, const uint8_t *a, const uint8_t *b) {
    size_t la = s->alen - s->pre - s->suf, lb = s->blen - s->pre - s->suf;
    if (s->codepoints) { /* lengths in codepoints; s->count: the stripped ones */
        la = s->la - s->count;
        lb = s->lb - s->count;
    }
    s->text_is_a = la > lb;
    s->text_off = s->pre;
    s->text_len = (s->text_is_a ? s->alen : s->blen) - s->pre - s->suf;
    s->m = s->text_is_a ? lb : la;
    s->n = s->text_is_a ? la : lb;
    if (settle_trivial(s, s->max_distance)) return 1;
    if (s->codepoints) {
        /* twice the symbols, which are at most the pattern's codepoints and
         * at most all of Unicode's (1,112,064 < 2^21) */
        size_t cap = 2;
        uint32_t bits = 1;
        while (cap < 2 * s->m && bits < MAP_BITS_MOST) {
            cap *= 2;
            bits++;
        }
        s->map_mask = (uint32_t)(cap - 1);
        s->map_shift = 32 - bits;
        s->map_keys = owned_malloc(s, ids_bytes(cap));
        s->map_ids = owned_malloc(s, ids_bytes(cap));
        s->pattern_ids = owned_malloc(s, ids_bytes(s->m));
        if (!s->map_keys || !s->map_ids || !s->pattern_ids) return fail(s, WB_LEV_ENOMEM, 1);
        enter(s, PHASE_CLEAR_MAP);
        return 1;
    }
    if (s->nblocks > 1) {
        s->peq = table_allocator.alloc(256 * s->nblocks * sizeof *s->peq);
        if (!s->peq) return fail(s, WB_LEV_ENOMEM, 1);
        s->owned_bytes += 256 * s->nblocks * sizeof *s->peq;
        enter(s, PHASE_CLEAR_TABLE);
        return 1;
    }
    /* one block: the table inside the state, filled at once (64 bytes) */
    const uint8_t *pattern = pattern_bytes(s, a, b);
    s->peq = s->one_peq;
    if (s->m + s->n < 128) {
        /* short inputs: clear just the entries they can read */
        const uint8_t *text = (s->text_is_a ? a : b) + s->pre;
        for (size_t i = 0; i < s->m; i++)
            s->peq[pattern[i]] = 0;
        for (size_t j = 0; j < s->n; j++)
            s->peq[text[j]] = 0;
    } else {
        memset(s->one_peq, 0, sizeof s->one_peq);
    }
    for (size_t i = 0; i < s->m; i++)
        s->peq[pattern[i]] |= UINT64_C(1) << i;
    enter(s, PHASE_VECTORS);
    return 1 + s->m / 4;
}

/* One phase of the set-up, within about `left` units; returns the units. */
static uint64_t set_up_phase(wb_lev *s, const uint8_t *a, const uint8_t *b, uint64_t left) {
    uint64_t spent;
    size_t from = s->cursor, end;
    switch (s->phase) {
    case PHASE_COUNT_A:
        spent = validate_phase(s, a, s->alen, WB_LEV_EUTF8_A, left);
        if (!s->done && s->cursor == s->alen) {
            s->la = s->count;
            s->count = 0;
            enter(s, PHASE_COUNT_B);
        }
        return spent;
    case PHASE_COUNT_B:
        spent = validate_phase(s, b, s->blen, WB_LEV_EUTF8_B, left);
        if (!s->done && s->cursor == s->blen) {
            s->lb = s->count;
            /* valid UTF-8 with as many codepoints as bytes is ASCII, whose
             * codepoint distance is the byte distance: byte mode from here */
            if (s->la == s->alen && s->lb == s->blen) s->codepoints = false;
            enter(s, PHASE_PREFIX);
        }
        return spent;
    case PHASE_PREFIX:
    case PHASE_SUFFIX:
        return affix_phase(s, a, b, left);
    case PHASE_AFFIX_CPS: {
        /* the codepoints of the prefix and suffix: bytes that start one */
        size_t affixes = s->pre + s->suf;
        end = chunk_end(from, affixes, allowance(left, COST_BYTE));
        for (size_t i = from; i < end; i++)
            s->count +=
                !wb_utf8_continuation(i < s->pre ? a[i] : a[s->alen - s->suf + (i - s->pre)]);
        s->cursor = end;
        if (end == affixes) enter(s, PHASE_SETTLE);
        return charge(end - from, COST_BYTE);
    }
    case PHASE_SETTLE:
        return settle_phase(s, a, b);
    case PHASE_CLEAR_TABLE: {
        size_t bytes = 256 * s->nblocks * sizeof *s->peq;
        end = chunk_end(from, bytes, lines_of(allowance(left, COST_LINE), CLEAR_PER_ITEM));
        memset((char *)s->peq + from, 0, end - from);
        s->cursor = end;
        if (end == bytes) enter(s, PHASE_FILL_TABLE);
        return charge((end - from) / CLEAR_PER_ITEM, COST_LINE);
    }
    case PHASE_FILL_TABLE: {
        const uint8_t *pattern = pattern_bytes(s, a, b);
        end = chunk_end(from, s->m, allowance(left, COST_ITEM));
        fill_match_table(s->peq, s->nblocks, pattern, from, end);
        s->cursor = end;
        if (end == s->m) enter(s, PHASE_VECTORS);
        return charge(end - from, COST_ITEM);
    }
    case PHASE_CLEAR_MAP: {
        size_t cap = (size_t)s->map_mask + 1, per_line = CLEAR_PER_ITEM / sizeof(uint32_t);
        end = chunk_end(from, cap, lines_of(allowance(left, COST_LINE), per_line));
        memset(s->map_keys + from, 0xFF, (end - from) * sizeof(uint32_t));
        s->cursor = end;
        if (end == cap) {
            s->count = 0;
            enter(s, PHASE_MAP_PATTERN);
        }
        return charge((end - from) / per_line, COST_LINE);
    }
    case PHASE_MAP_PATTERN: {
        /* cursor: the next pattern byte; count: the next codepoint */
        const uint8_t *pattern = pattern_bytes(s, a, b);
        size_t bytes = (s->text_is_a ? s->blen : s->alen) - s->pre - s->suf;
        size_t items = allowance(left, COST_HASH), done = 0;
        while (s->count < s->m && done < items) {
            uint32_t cp;
            s->cursor += wb_utf8_sequence(pattern + s->cursor, bytes - s->cursor, &cp);
            uint32_t slot = map_slot(s, cp);
            if (s->map_keys[slot] == EMPTY_KEY) {
                s->map_keys[slot] = cp;
                s->map_ids[slot] = s->sigma++;
            }
            s->pattern_ids[s->count++] = s->map_ids[slot];
            done++;
        }
        if (s->count == s->m) {
            s->absent_id = s->sigma;
            s->occ_start = owned_malloc(s, ((size_t)s->sigma + 2) * sizeof(uint32_t));
            s->seen_block = owned_malloc(s, ids_bytes(s->sigma));
            if (!s->occ_start || !s->seen_block)
                return fail(s, WB_LEV_ENOMEM, charge(done, COST_HASH));
            enter(s, PHASE_CLEAR_IDS);
        }
        return charge(done, COST_HASH);
    }
    case PHASE_CLEAR_IDS: {
        size_t ids = (size_t)s->sigma + 2, per_line = CLEAR_PER_ITEM / 8;
        end = chunk_end(from, ids, lines_of(allowance(left, COST_LINE), per_line));
        for (size_t id = from; id < end; id++) {
            s->occ_start[id] = 0;
            if (id < s->sigma) s->seen_block[id] = UINT32_MAX;
        }
        s->cursor = end;
        if (end == ids) {
            s->count = 0;
            enter(s, PHASE_COUNT_OCC);
        }
        return charge((end - from) / per_line, COST_LINE);
    }
    case PHASE_COUNT_OCC:
        /* the (id, block) pairs, each counted once */
        end = chunk_end(from, s->m, allowance(left, COST_ITEM));
        for (size_t i = from; i < end; i++) {
            uint32_t id = s->pattern_ids[i], blk = (uint32_t)(i / WORD_BITS);
            if (s->seen_block[id] != blk) {
                s->seen_block[id] = blk;
                s->occ_start[id + 1]++;
                s->count++;
            }
        }
        s->cursor = end;
        if (end == s->m) enter(s, PHASE_SUM_OCC);
        return charge(end - from, COST_ITEM);
    case PHASE_SUM_OCC: {
        /* occ_start becomes each id's first slot; seen_block, each id's
         * next free slot */
        uint32_t *next = s->seen_block;
        end = chunk_end(from, (size_t)s->sigma + 1, allowance(left, COST_ITEM));
        for (size_t id = from; id < end; id++) {
            if (id < s->sigma) next[id] = s->occ_start[id];
            s->occ_start[id + 1] += s->occ_start[id];
        }
        s->cursor = end;
        if (end == (size_t)s->sigma + 1) {
            s->occ = owned_malloc(s, (s->count ? s->count : 1) * sizeof *s->occ);
            if (!s->occ) return fail(s, WB_LEV_ENOMEM, charge(end - from, COST_ITEM));
            enter(s, PHASE_FILL_OCC);
        }
        return charge(end - from, COST_ITEM);
    }
    case PHASE_FILL_OCC: {
        uint32_t *next = s->seen_block;
        end = chunk_end(from, s->m, allowance(left, COST_ITEM));
        for (size_t i = from; i < end; i++) {
            uint32_t id = s->pattern_ids[i], blk = (uint32_t)(i / WORD_BITS);
            uint64_t bit = UINT64_C(1) << (i % WORD_BITS);
            if (next[id] > s->occ_start[id] && s->occ[next[id] - 1].block == blk) {
                s->occ[next[id] - 1].mask |= bit;
            } else {
                s->occ[next[id]].block = blk;
                s->occ[next[id]].mask = bit;
                next[id]++;
            }
        }
        s->cursor = end;
        if (end == s->m) enter(s, PHASE_VECTORS);
        return charge(end - from, COST_ITEM);
    }
    case PHASE_VECTORS:
        release_set_up(s);
        if (!alloc_vectors(s)) return fail(s, WB_LEV_ENOMEM, 1);
        enter(s, PHASE_COLUMNS);
        return 1;
    default:
        return 1;
    }
}

/* The set-up, phase after phase, within about `budget` units (at least one
 * phase's chunk); returns the units. */
static uint64_t set_up(wb_lev *s, const uint8_t *a, const uint8_t *b, uint64_t budget) {
    uint64_t spent = 0;
    do
        spent += set_up_phase(s, a, b, budget > spent ? budget - spent : 0);
    while (s->phase != PHASE_COLUMNS && !s->done && spent < budget);
    return spent;
}

/* ---- public ------------------------------------------------------------------ */

void wb_lev_start(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                  bool codepoints, size_t max_distance) {
    (void)a;
    (void)b;
    /* only the fields read before any write need clearing; the 2 KiB
     * one-block table is cleared when used */
    memset(s, 0, offsetof(wb_lev, one_peq));
    s->codepoints = codepoints;
    s->alen = alen;
    s->blen = blen;
    s->max_distance = max_distance;
    s->phase = codepoints ? PHASE_COUNT_A : PHASE_PREFIX;
}

/* The whole set-up of a started computation, for a pair the short path
 * did not take. */
static wb_lev_status set_up_at_once(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b,
                                    size_t blen) {
    if (!s->codepoints) {
        /* bytes, all at once: the affixes in one scan, then what is left
         * (a short pair of distance/3 costs tens of nanoseconds in all) */
        size_t la, lb;
        s->pre = strip_bytes(a, alen, b, blen, SIZE_MAX, &la, &lb);
        s->suf = alen - s->pre - la;
        settle_phase(s, a, b);
        if (s->phase == PHASE_VECTORS) {
            if (!alloc_vectors(s)) {
                fail(s, WB_LEV_ENOMEM, 1);
                return s->failed;
            }
            s->phase = PHASE_COLUMNS;
        }
    }
    if (s->phase != PHASE_COLUMNS && !s->done) set_up(s, a, b, UINT64_MAX);
    return s->failed;
}

wb_lev_status wb_lev_init(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                          bool codepoints, size_t max_distance) {
    wb_lev_start(s, a, alen, b, blen, codepoints, max_distance);
    size_t d;
    if (wb_lev_short(a, alen, b, blen, codepoints, max_distance, &d)) {
        s->result = d;
        s->done = true;
        return WB_LEV_OK;
    }
    return set_up_at_once(s, a, alen, b, blen);
}

wb_lev_status wb_lev_error(const wb_lev *s) {
    return s->failed;
}

/* After the last block: its bottom row's horizontal delta moves the score. */
static void add_bottom_delta(wb_lev *s, uint64_t hp_full, uint64_t hn_full) {
    uint64_t bottom = s->last + 1 == s->nblocks ? s->last_mask : TOP_BIT;
    s->last_score += ((hp_full & bottom) != 0) - (uint64_t)((hn_full & bottom) != 0);
}

/* The block range that columns j0..j1 (1-based) need (the block form's
 * band), the blocks entering it set up. (A borrowed pattern may be the
 * longer side: the same band, mirrored.) */
static void select_blocks(wb_lev *s, size_t j0, size_t j1) {
    size_t below, above, last;
    wb_lev_band(s->m, s->n, s->k, &below, &above);
    wb_lev_band_blocks(s->m, below, above, j0, j1, &s->first, &last);
    while (s->last < last) {
        size_t b = ++s->last;
        s->vp[b] = ~UINT64_C(0);
        s->vn[b] = 0;
        s->last_score += rows_in_block(s, b);
    }
}

/* Codepoint mode: decodes the next text codepoint and looks up its id. */
static uint32_t next_text_id(wb_lev *s, const uint8_t *text) {
    uint32_t cp;
    size_t at = s->text_pos;
    if (at >= s->text_len) return s->absent_id; /* other bytes than at the start */
    size_t step = wb_utf8_sequence(text + at, s->text_len - at, &cp);
    s->text_pos += step ? step : 1;
    if (!step) return s->absent_id;
    uint32_t slot = map_slot(s, cp);
    return s->map_keys[slot] == EMPTY_KEY ? s->absent_id : s->map_ids[slot];
}

/* Codepoint mode, one block: the id's only occurrence entry, if any. */
static uint64_t one_block_mask(const wb_lev *s, uint32_t id) {
    return s->occ_start[id + 1] > s->occ_start[id] ? s->occ[s->occ_start[id]].mask : 0;
}

/* Byte mode, one word: `columns` bytes of `text` against the match table
 * `peq`; the vertical deltas in and out, the bottom row's score returned. */
static inline uint64_t one_word_bytes(const uint64_t *peq, const uint8_t *text, size_t columns,
                                      uint64_t *vp_io, uint64_t *vn_io, uint64_t score,
                                      uint64_t bottom) {
    uint64_t vp = *vp_io, vn = *vn_io;
    for (size_t j = 0; j < columns; j++)
        score += wb_lev_word_column(peq[text[j]], &vp, &vn, bottom);
    *vp_io = vp;
    *vn_io = vn;
    return score;
}

/* The pattern fits one word, so the band is the whole column: the classic
 * Myers loop with the state in registers. */
static void step_one_block(wb_lev *s, const uint8_t *text, size_t columns) {
    if (!s->codepoints) {
        s->last_score = one_word_bytes(s->peq, text + s->col, columns, &s->vp[0], &s->vn[0],
                                       s->last_score, s->last_mask);
        s->col += columns;
        return;
    }
    uint64_t vp = s->vp[0], vn = s->vn[0], score = s->last_score, bottom = s->last_mask;
    for (size_t j = 0; j < columns; j++)
        score += wb_lev_word_column(one_block_mask(s, next_text_id(s, text)), &vp, &vn, bottom);
    s->vp[0] = vp;
    s->vn[0] = vn;
    s->last_score = score;
    s->col += columns;
}

static uint64_t step_column_bytes(wb_lev *s, uint8_t symbol) {
    uint64_t hp_full, hn_full;
    wb_lev_block_column(s->vp + s->first, s->vn + s->first, s->last - s->first + 1,
                        s->peq + (size_t)symbol * s->nblocks + s->first, &hp_full, &hn_full);
    add_bottom_delta(s, hp_full, hn_full);
    return s->last - s->first + 1;
}

/* Byte mode: the next `columns` columns at once (the block form's
 * wavefront), over the blocks select_blocks chose for all of them. */
static uint64_t step_wave_bytes(wb_lev *s, wb_lev_wave_fn wave, size_t columns,
                                const uint8_t *symbols) {
    const uint64_t *eq[WB_LEV_WAVE_MOST];
    for (size_t c = 0; c < columns; c++)
        eq[c] = s->peq + (size_t)symbols[c] * s->nblocks + s->first;
    size_t count = s->last - s->first + 1;
    uint64_t bottom = s->last + 1 == s->nblocks ? s->last_mask : TOP_BIT;
    s->last_score += wave(s->vp + s->first, s->vn + s->first, count, eq, bottom);
    return (uint64_t)columns * count;
}

static uint64_t step_column_codepoints(wb_lev *s, uint32_t id) {
    const wb_lev_occurrence *e = s->occ + s->occ_start[id], *end = s->occ + s->occ_start[id + 1];
    /* first occurrence at or after the first computed block */
    const wb_lev_occurrence *lo = e, *hi = end;
    while (lo < hi) {
        const wb_lev_occurrence *mid = lo + (hi - lo) / 2;
        if (mid->block < s->first)
            lo = mid + 1;
        else
            hi = mid;
    }
    e = lo;
    uint64_t hp = 1, hn = 0, hp_full = 0, hn_full = 0;
    for (size_t b = s->first, last = s->last; b <= last; b++) {
        uint64_t eq = 0;
        if (e < end && e->block == b) eq = (e++)->mask;
        wb_lev_block_advance(eq, &hp, &hn, &s->vp[b], &s->vn[b], &hp_full, &hn_full);
    }
    add_bottom_delta(s, hp_full, hn_full);
    return s->last - s->first + 1;
}

/* Whether, after s->col columns, no computed cell can still lie on a path
 * of cost <= k, so the distance is above k. Every path to (m, n) crosses
 * this column; from cell (i, j) it costs at least D[i][j] plus
 * |(m - i) - (n - j)|. Within a block, D[i] >= D[bottom] - (bottom - i)
 * (a column's values grow by at most one a row), which bounds each block
 * by its bottom score; the bottoms come from the last block's, the
 * vertical deltas summed block by block upwards. Computed values are the
 * costs of real paths (at least the true ones) and exact for every cell
 * that can matter, so the bound holds for those; cells outside the blocks
 * computed cannot matter (the band). */
static bool band_hopeless(const wb_lev *s) {
    int64_t c = (int64_t)s->col + (int64_t)s->m - (int64_t)s->n, k = (int64_t)s->k;
    int64_t score = (int64_t)s->last_score;
    for (size_t b = s->last + 1; b-- > s->first;) {
        bool final = b + 1 == s->nblocks;
        int64_t bottom = final ? (int64_t)s->m : (int64_t)((b + 1) * WORD_BITS);
        int64_t top = (int64_t)(b * WORD_BITS) + 1;
        /* min over rows i of the block of i + |i - c| */
        int64_t least = c >= top ? c : 2 * top - c;
        if (score - bottom + least <= k) return false;
        uint64_t rows = final ? (s->last_mask << 1) - 1 : ~UINT64_C(0);
        score -= (int64_t)__builtin_popcountll(s->vp[b] & rows) -
                 (int64_t)__builtin_popcountll(s->vn[b] & rows);
    }
    return true;
}

bool wb_lev_step(wb_lev *s, const uint8_t *a, const uint8_t *b, uint64_t budget, uint64_t *used) {
    if (s->done) return true;
    uint64_t spent = 0;
    if (s->phase != PHASE_COLUMNS) {
        spent = set_up(s, a, b, budget);
        if (s->done || s->phase != PHASE_COLUMNS || spent >= budget) {
            *used += spent;
            return s->done;
        }
    }
    const uint8_t *text = (s->text_is_a ? a : b) + s->text_off;
    if (s->nblocks == 1) {
        uint64_t left = budget > spent ? budget - spent : 1;
        size_t columns = min_size(s->n - s->col, left < SIZE_MAX ? (size_t)left : SIZE_MAX);
        step_one_block(s, text, columns);
        spent += columns;
    } else {
        size_t columns;
        wb_lev_wave_fn wave = wb_lev_wave(&columns);
        do {
            if (!s->codepoints && s->n - s->col >= columns) {
                select_blocks(s, s->col + 1, s->col + columns);
                spent += step_wave_bytes(s, wave, columns, text + s->col);
                s->col += columns;
            } else {
                select_blocks(s, s->col + 1, s->col + 1);
                spent += s->codepoints ? step_column_codepoints(s, next_text_id(s, text))
                                       : step_column_bytes(s, text[s->col]);
                s->col++;
            }
            if (s->col >= s->next_check && s->col < s->n) {
                /* a cutoff below the longer length: stop once it is out of reach */
                s->next_check = s->col + BAND_CHECK_COLUMNS;
                if (band_hopeless(s)) {
                    *used += spent + (s->last - s->first + 1) / 4 + 1;
                    s->result = s->k + 1;
                    s->done = true;
                    return true;
                }
            }
        } while (s->col < s->n && spent < budget);
    }
    *used += spent;
    if (s->col < s->n) return false;
    uint64_t d = s->last_score;
    s->result = d > s->k ? s->k + 1 : (size_t)d;
    s->done = true;
    return true;
}

size_t wb_lev_result(const wb_lev *s) {
    return s->result;
}

/* Units for an m x n problem (m <= n) with cutoff k <= n: per column the
 * band's k + 1 rows, plus a block of misalignment, at most every block. */
static uint64_t units_for(size_t m, size_t n, size_t k) {
    if (m > n) { /* a borrowed pattern longer than the text */
        size_t t = m;
        m = n;
        n = t;
    }
    if (m == 0 || n - m > k) return 1;
    size_t per_column = min_size(ceil_blocks(m), ceil_blocks(k + 1) + 1);
    return (uint64_t)per_column * n;
}

uint64_t wb_lev_units(const wb_lev *s) {
    return s->done ? 1 : units_for(s->m, s->n, s->k);
}

uint64_t wb_lev_predict(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                        size_t max_distance) {
    /* the unstripped sizes bound the work; strip only when the bound is big */
    size_t small = min_size(alen, blen), large = alen + blen - small;
    uint64_t bound = units_for(small, large, min_size(max_distance, large));
    if (bound < WB_LEV_PREDICT_EXACT_FROM) return bound;
    /* a bounded look at prefix and suffix: predictions must stay cheap */
    size_t la, lb;
    strip_bytes(a, alen, b, blen, WB_LEV_PREDICT_STRIP_MOST, &la, &lb);
    size_t m = min_size(la, lb), n = la + lb - m;
    return units_for(m, n, min_size(max_distance, n));
}

uint64_t wb_lev_setup_units(size_t alen, size_t blen, bool codepoints) {
    /* decoding and indexing codepoints: a few ns per byte; bytes: the strip
     * scan plus zeroing the match table (256 words per 64-byte block) */
    if (codepoints) return 2 * ((uint64_t)alen + blen);
    return ((uint64_t)alen + blen) / 4 + 16 * (uint64_t)ceil_blocks(min_size(alen, blen));
}

size_t wb_lev_memory(const wb_lev *s) {
    return s->owned_bytes;
}

void wb_lev_free(wb_lev *s) {
    release_set_up(s);
    if (s->borrowed) { /* the pattern's table and vectors */
        s->peq = NULL;
        s->vp = s->vn = NULL;
    }
    if (s->peq && s->peq != s->one_peq)
        table_allocator.free(s->peq, 256 * s->nblocks * sizeof *s->peq);
    if (s->vp != &s->one_vp) free(s->vp);
    free(s->map_keys);
    free(s->map_ids);
    free(s->occ_start);
    free(s->occ);
    s->peq = NULL;
    s->vp = s->vn = NULL;
    s->map_keys = s->map_ids = s->occ_start = NULL;
    s->occ = NULL;
    s->owned_bytes = 0;
}

/* ---- one pattern, many texts --------------------------------------------------- */

bool wb_lev_pattern_init(wb_lev_pattern *p, const uint8_t *pattern, size_t m) {
    memset(p, 0, sizeof *p);
    size_t nblocks = ceil_blocks(m ? m : 1);
    if (nblocks > SIZE_MAX / (258 * sizeof(uint64_t))) return false;
    p->peq = calloc(256 * nblocks, sizeof *p->peq);
    p->vectors = malloc(2 * nblocks * sizeof *p->vectors);
    if (!p->peq || !p->vectors) {
        wb_lev_pattern_free(p);
        return false;
    }
    p->m = m;
    p->nblocks = nblocks;
    p->bytes = 258 * nblocks * sizeof(uint64_t);
    fill_match_table(p->peq, nblocks, pattern, 0, m);
    return true;
}

void wb_lev_pattern_free(wb_lev_pattern *p) {
    free(p->peq);
    free(p->vectors);
    memset(p, 0, sizeof *p);
}

void wb_lev_start_with(wb_lev *s, wb_lev_pattern *p, size_t n, size_t max_distance) {
    memset(s, 0, offsetof(wb_lev, one_peq));
    s->alen = p->m;
    s->blen = n;
    s->max_distance = max_distance;
    s->m = p->m;
    s->n = n;
    s->text_len = n;
    s->borrowed = true;
    if (settle_trivial(s, max_distance)) return;
    s->peq = p->peq;
    s->vp = p->vectors;
    s->vn = p->vectors + p->nblocks;
    first_column(s);
    s->phase = PHASE_COLUMNS;
}

/* ---- small cutoffs: every way of spending k <= 3 edits ------------------------ *
 *
 * With a cutoff of at most 3 the distance is found without a table by
 * trying each order in which the k edits can be spent (the mbleven idea):
 * walk both inputs, equal bytes advance both sides, and at each difference
 * the model's next edit advances the longer side (a deletion), the shorter
 * (an insertion) or both (a substitution). A model's cost is its edits
 * spent plus whatever is left of either side when its edits run out. The
 * models are the sequences of k edits whose deletions minus insertions is
 * the length difference (shorter ones are their prefixes). Two bits per
 * edit, the first in the low bits: 1 delete, 2 insert, 3 substitute. */
#define MB_D         1u
#define MB_I         2u
#define MB_S         3u
#define MB2(x, y)    ((x) | (y) << 2)
#define MB3(x, y, z) ((x) | (y) << 2 | (z) << 4)

static const uint8_t mbleven_models[WB_LEV_MBLEVEN_MOST + 1][WB_LEV_MBLEVEN_MOST + 1][8] = {
    [1] = {[0] = {MB_S}, [1] = {MB_D}},
    [2] = {[0] = {MB2(MB_S, MB_S), MB2(MB_D, MB_I), MB2(MB_I, MB_D)},
           [1] = {MB2(MB_D, MB_S), MB2(MB_S, MB_D)},
           [2] = {MB2(MB_D, MB_D)}},
    [3] = {[0] = {MB3(MB_S, MB_S, MB_S), MB3(MB_S, MB_D, MB_I), MB3(MB_S, MB_I, MB_D),
                  MB3(MB_D, MB_S, MB_I), MB3(MB_D, MB_I, MB_S), MB3(MB_I, MB_S, MB_D),
                  MB3(MB_I, MB_D, MB_S)},
           [1] = {MB3(MB_D, MB_S, MB_S), MB3(MB_S, MB_D, MB_S), MB3(MB_S, MB_S, MB_D),
                  MB3(MB_D, MB_D, MB_I), MB3(MB_D, MB_I, MB_D), MB3(MB_I, MB_D, MB_D)},
           [2] = {MB3(MB_D, MB_D, MB_S), MB3(MB_D, MB_S, MB_D), MB3(MB_S, MB_D, MB_D)},
           [3] = {MB3(MB_D, MB_D, MB_D)}},
};

/* One model: `lo` the longer side, `sh` the shorter. */
static size_t mbleven_cost(const uint8_t *lo, size_t ln, const uint8_t *sh, size_t sn,
                           unsigned edits) {
    size_t i = 0, j = 0, cost = 0;
    while (i < ln && j < sn) {
        if (lo[i] == sh[j]) {
            i++, j++;
            continue;
        }
        if (!edits) break;
        cost++;
        i += edits & 1;
        j += edits >> 1 & 1;
        edits >>= 2;
    }
    return cost + (ln - i) + (sn - j);
}

/* The pair without its common affixes, the longer side first, k <= 3. */
static size_t mbleven_stripped(const uint8_t *lo, size_t ln, const uint8_t *sh, size_t sn,
                               size_t k) {
    size_t diff = ln - sn;
    if (diff > k) return k + 1;
    if (sn == 0) return diff; /* ln == diff <= k */
    if (k == 0) return 1;     /* something is left after the affixes */
    size_t best = k + 1;
    const uint8_t *models = mbleven_models[k][diff];
    for (size_t m = 0; m < sizeof mbleven_models[k][diff] && models[m]; m++) {
        size_t cost = mbleven_cost(lo, ln, sh, sn, models[m]);
        if (cost < best) best = cost;
    }
    return best;
}

size_t wb_lev_mbleven(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, size_t k) {
    if (k > WB_LEV_MBLEVEN_MOST) k = WB_LEV_MBLEVEN_MOST; /* misuse: still a lower cutoff */
    size_t la, lb;
    size_t pre = strip_bytes(a, alen, b, blen, SIZE_MAX, &la, &lb);
    return la >= lb ? mbleven_stripped(a + pre, la, b + pre, lb, k)
                    : mbleven_stripped(b + pre, lb, a + pre, la, k);
}

/* Byte mode, when what is left after the common affixes has a side of at
 * most one word: the whole computation at once, on the stack, without the
 * resumable state (a short pair's set-up is most of its time). */
static bool short_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, size_t k,
                        size_t *out) {
    size_t la, lb;
    size_t pre = strip_bytes(a, alen, b, blen, SIZE_MAX, &la, &lb);
    const uint8_t *p = a + pre, *t = b + pre;
    size_t m = la, n = lb;
    if (m > n) {
        p = b + pre, t = a + pre;
        m = lb, n = la;
    }
    if (m > WORD_BITS) {
        if (k > WB_LEV_MBLEVEN_MOST) return false;
        *out = mbleven_stripped(t, n, p, m, k);
        return true;
    }
    k = min_size(k, n);
    if (m == 0 || n - m > k) {
        *out = n > k ? k + 1 : n;
        return true;
    }
    uint64_t peq[256];
    if (m + n < 128) {
        /* clear just the entries the inputs can read */
        for (size_t i = 0; i < m; i++)
            peq[p[i]] = 0;
        for (size_t j = 0; j < n; j++)
            peq[t[j]] = 0;
    } else {
        memset(peq, 0, sizeof peq);
    }
    for (size_t i = 0; i < m; i++)
        peq[p[i]] |= UINT64_C(1) << i;
    uint64_t vp = ~UINT64_C(0), vn = 0;
    uint64_t d = one_word_bytes(peq, t, n, &vp, &vn, m, UINT64_C(1) << (m - 1));
    *out = d > k ? k + 1 : (size_t)d;
    return true;
}

bool wb_lev_short(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, bool codepoints,
                  size_t max_distance, size_t *distance) {
    return alen <= WB_LEV_SHORT_BYTES && blen <= WB_LEV_SHORT_BYTES - alen &&
           (!codepoints || (wb_text_ascii(a, alen) && wb_text_ascii(b, blen))) &&
           short_bytes(a, alen, b, blen, max_distance, distance);
}

size_t wb_lev_distance(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                       bool codepoints, size_t max_distance, wb_lev_status *status) {
    size_t d;
    if (codepoints ? wb_lev_short(a, alen, b, blen, true, max_distance, &d)
                   : short_bytes(a, alen, b, blen, max_distance, &d)) {
        if (status) *status = WB_LEV_OK;
        return d;
    }
    /* the short path said no: the set-up without asking it again */
    wb_lev s;
    wb_lev_start(&s, a, alen, b, blen, codepoints, max_distance);
    wb_lev_status st = set_up_at_once(&s, a, alen, b, blen);
    if (status) *status = st;
    if (st != WB_LEV_OK) return SIZE_MAX;
    uint64_t used = 0;
    while (!wb_lev_step(&s, a, b, UINT64_MAX, &used)) {
    }
    d = wb_lev_result(&s);
    wb_lev_free(&s);
    return d;
}
