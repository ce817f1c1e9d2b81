/* Jaro and Jaro-Winkler (kernels.h), bit-parallel and resumable over
 * symbols of any length. The positions of b that some window reaches
 * are matched on masks: one word of them (jaro_word.h's word form, which
 * the quick scores of c_src/fuzzy/quick.c run too, or masks made per
 * symbol of a), or a pattern of blocks (pattern.c) whose window is
 * scanned a word at a time from its lowest. The lanes of many
 * candidates are in the search core (c_src/search/lanes_run.h). */
#include "common.h"
#include "jaro_word.h"

#include <stdlib.h>
#include <string.h>

/* Work per unit (about 2 ns) */
#define JARO_COMPARES 16 /* symbols compared making a's masks (short pairs) */
#define JARO_FLAGS    4  /* symbols of a flagged on their masks (short pairs) */
/* 1 << this words of a window scanned a unit, a symbol below 256 (one a
 * symbol of 256 and up: a map's look-up). Measured (thread CPU time, a
 * million words a side): 2 words a unit took 8.4-9.0 ns a unit, one
 * 4.5, near the Levenshtein kernel's 2.6-3.1. */
#define JARO_BYTE_SHIFT 0
/* moves of the pairing a unit: a matched pair or a word passed (each a
 * read of b at a scattered position: 4 a unit took 9-11 ns) */
#define JARO_PAIRS 2

bool wb_fz_jaro_init(wb_fz_jaro *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    /* walk the shorter, a when the lengths are equal */
    shorter_first(&a, &m, &b, &n);
    /* the pattern and the masks are made whole before they are read */
    memset(k, 0, offsetof(wb_fz_jaro, pattern));
    k->a = a;
    k->b = b;
    k->m = m;
    k->n = n;
    if (m == 0) {
        k->result = n == 0 ? 1.0 : 0.0;
        k->done = true;
        return true;
    }
    k->bound = n / 2 > 0 ? n / 2 - 1 : 0;
    /* a[m - 1]'s window ends at m + bound: past it no window reaches */
    k->reach = n - k->bound > m ? m + k->bound : n;
    k->taken = &k->small[0];
    k->walked = &k->small[1];
    if (k->reach <= 64) return true; /* m <= reach: a fits a word too */
    k->blocks = true;
    if (!wb_fz_pattern_alloc(&k->pattern, b, k->reach)) return false;
    /* b's flags, a's, and the bytes' cursors (2 a word) */
    size_t words = blocks_of(k->reach) + blocks_of(m) + 128;
    k->owned = calloc(words, sizeof(uint64_t));
    if (!k->owned) {
        wb_fz_pattern_free(&k->pattern);
        return false;
    }
    k->taken = k->owned;
    k->walked = k->owned + blocks_of(k->reach);
    k->cursor = (uint32_t *)(k->walked + blocks_of(m));
    k->owned_bytes = k->pattern.owned_bytes + words * sizeof(uint64_t);
    return true;
}

static void jaro_finish(wb_fz_jaro *k) {
    k->result = wb_fz_jaro_of(k->m, k->n, k->matches, k->trans);
    k->done = true;
}

/* The units of the one-step word form: the masks cleared and set, a's
 * walk and the pairing. */
static uint64_t word_units(size_t m, size_t reach) {
    return 1 + units_of(2 * (m + reach), 4);
}

/* The word form of a short pair (reach <= 64) on the stack's masks, when
 * its symbols are all below 256 (false otherwise: nothing found). Only
 * the masks of a's symbols are read, so only they are cleared: those of
 * b's other symbols get their bits on top of whatever the table held
 * (an unsigned word, never read). */
static bool jaro_word(wb_fz_jaro *k) {
    uint64_t masks[256];
    const uint32_t *a = k->a, *b = k->b;
    size_t m = k->m, reach = k->reach;
    uint32_t any = 0;
    /* indices cut to a byte: in the table whatever the symbols, and the
     * masks read only when they were all bytes */
    for (size_t i = 0; i < m; i++) {
        any |= a[i];
        masks[a[i] & 255] = 0;
    }
    for (size_t j = 0; j < reach; j++) {
        any |= b[j];
        masks[b[j] & 255] |= (uint64_t)1 << j;
    }
    if (any >= 256) return false;
    size_t transpositions;
    k->matches = wb_jaro_word_symbols_within(a, m, reach, k->bound, masks, &transpositions);
    k->trans = transpositions;
    jaro_finish(k);
    return true;
}

/* Short pairs: a's masks over b, `left` units' worth of compares from
 * the flat index k->at (i * reach + j); returns the units. */
static uint64_t make_masks(wb_fz_jaro *k, uint64_t left) {
    size_t reach = k->reach, total = k->m * reach;
    size_t f = k->at, end = f + affordable(total - f, left, JARO_COMPARES);
    uint64_t units = units_of(end - f, JARO_COMPARES);
    while (f < end) {
        size_t i = f / reach, j = f % reach, stop = min_size(reach, j + (end - f));
        uint32_t c = k->a[i];
        uint64_t x = j == 0 ? 0 : k->masks[i];
        for (size_t t = j; t < stop; t++)
            x |= (uint64_t)(k->b[t] == c) << t;
        k->masks[i] = x;
        f += stop - j;
    }
    k->at = end;
    if (end == total) {
        k->phase = 1;
        k->at = 0;
    }
    return units;
}

/* The window of symbol i: b's positions lo .. hi - 1. */
static void window_of(const wb_fz_jaro *k, size_t i, size_t *lo, size_t *hi) {
    *lo = i > k->bound ? i - k->bound : 0;
    *hi = k->reach - i > k->bound ? i + k->bound + 1 : k->reach;
}

/* Short pairs: flags `left` units' worth of a's symbols on their masks. */
static uint64_t flag_word(wb_fz_jaro *k, uint64_t left) {
    size_t i = k->at, end = i + affordable(k->m - i, left, JARO_FLAGS);
    uint64_t units = units_of(end - i, JARO_FLAGS), taken = *k->taken, walked = *k->walked;
    for (; i < end; i++) {
        size_t lo, hi;
        window_of(k, i, &lo, &hi);
        uint64_t open = k->masks[i] & wb_fz_low_bits(hi) & ~wb_fz_low_bits(lo) & ~taken;
        taken |= open & (~open + 1);
        walked |= (uint64_t)(open != 0) << i;
        k->matches += open != 0;
    }
    *k->taken = taken;
    *k->walked = walked;
    k->at = end;
    return units;
}

/* Blocks: flags a's symbols, each on the words of its window from the
 * lowest (resumed at k->word), within `left` units; returns the units.
 * A symbol costs one item, and one a word scanned; 1 << shift items a
 * unit (JARO_BYTE_SHIFT for a symbol below 256; 0 for others: a map's
 * look-up).
 *
 * A byte's scan starts at its cursor when that is higher: the word its
 * last scan ended in. The words below hold no free position of it from
 * that scan's window's start on (the windows only move up, the flags
 * only grow), and the last word holds none up to that window's end.
 *
 * The state's fields are kept in locals: b's flags, stored to, are words
 * of the same type as they. */
static uint64_t flag_blocks(wb_fz_jaro *k, uint64_t left) {
    uint64_t spent = 0;
    const wb_fz_pattern *p = &k->pattern;
    const uint32_t *a = k->a;
    uint64_t *taken = k->taken, *walked = k->walked;
    uint32_t *cursor = k->cursor;
    size_t at = k->at, m = k->m, matches = k->matches, bound = k->bound, reach = k->reach;
    size_t nblocks = p->nblocks, w = k->scanning ? k->word : SIZE_MAX;
    while (at < m && spent < left) {
        size_t lo = at > bound ? at - bound : 0;
        size_t hi = reach - at > bound ? at + bound + 1 : reach;
        size_t first = lo / 64, last = (hi - 1) / 64;
        uint32_t c = a[at];
        size_t fresh = w == SIZE_MAX;
        if (fresh) w = c < 256 && cursor[c] > first ? cursor[c] : first;
        size_t from = w;
        unsigned shift = c < 256 ? JARO_BYTE_SHIFT : 0;
        uint64_t afford = left - spent;
        size_t rest = (w <= last ? last + 1 - w : 0) + fresh; /* items */
        size_t end =
            afford > (uint64_t)((rest - 1) >> shift) ? last + 1 : w + (afford << shift) - fresh;
        const uint64_t *row = c < 256 ? p->low + (size_t)c * nblocks : NULL;
        bool found = false;
        for (; w < end; w++) {
            uint64_t bits = (row ? row[w] : wb_fz_pattern_get(p, c, w)) & ~taken[w];
            if (w == first) bits &= ~wb_fz_low_bits(lo % 64);
            if (w == last) bits &= wb_fz_low_bits(hi - 64 * last);
            if (bits) {
                taken[w] |= bits & (~bits + 1);
                walked[at / 64] |= (uint64_t)1 << (at % 64);
                matches++;
                found = true;
                break;
            }
        }
        spent += ((w - from) + found + fresh + ((size_t)1 << shift) - 1) >> shift;
        if (found || w > last) {
            if (c < 256) cursor[c] = (uint32_t)(found ? w : max_size(cursor[c], last));
            at++;
            w = SIZE_MAX;
        }
    }
    k->at = at;
    k->matches = matches;
    k->scanning = w != SIZE_MAX;
    k->word = w;
    return spent;
}

/* Pairs the matched symbols of a and b in order, counting those that
 * differ, in `left` units' worth of moves; returns the units. (The
 * state's fields in locals, as in flag_blocks.) */
static uint64_t pair_up(wb_fz_jaro *k, uint64_t left) {
    uint64_t most = left > UINT64_MAX / JARO_PAIRS ? UINT64_MAX : left * JARO_PAIRS, moves = 0;
    const uint32_t *a = k->a, *b = k->b;
    const uint64_t *walked = k->walked, *taken = k->taken;
    uint64_t abits = k->abits, bbits = k->bbits;
    size_t pa = k->pa, pb = k->pb, seen = k->seen, trans = k->trans, matches = k->matches;
    /* b holds as many flags as a: each of a's has its pair */
    while (moves < most && seen < matches) {
        moves++;
        if (!abits) {
            abits = walked[++pa];
        } else if (!bbits) {
            bbits = taken[++pb];
        } else {
            size_t i = 64 * pa + (size_t)__builtin_ctzll(abits);
            size_t j = 64 * pb + (size_t)__builtin_ctzll(bbits);
            trans += a[i] != b[j];
            abits &= abits - 1;
            bbits &= bbits - 1;
            seen++;
        }
    }
    k->abits = abits;
    k->bbits = bbits;
    k->pa = pa;
    k->pb = pb;
    k->seen = seen;
    k->trans = trans;
    if (seen == matches) jaro_finish(k);
    return units_of((size_t)moves, JARO_PAIRS);
}

bool wb_fz_jaro_step(wb_fz_jaro *k, uint64_t budget, uint64_t *used) {
    if (budget == 0) budget = 1;
    uint64_t spent = 0;
    /* a short pair, not begun, in one go when the budget pays for it */
    if (!k->done && !k->blocks && !k->wide && k->phase == 0 && k->at == 0 &&
        budget >= word_units(k->m, k->reach)) {
        spent = word_units(k->m, k->reach);
        if (jaro_word(k)) {
            charge(used, spent);
            return true;
        }
        k->wide = true;
    }
    while (!k->done && spent < budget) {
        uint64_t left = budget - spent;
        if (k->phase == 0) {
            if (k->blocks) {
                if (wb_fz_pattern_fill(&k->pattern, left, &spent)) k->phase = 1;
            } else {
                spent += make_masks(k, left);
            }
        } else if (k->phase == 1) {
            spent += k->blocks ? flag_blocks(k, left) : flag_word(k, left);
            if (k->at == k->m) {
                if (k->matches == 0) {
                    jaro_finish(k);
                } else {
                    k->phase = 2;
                    k->abits = k->walked[0];
                    k->bbits = k->taken[0];
                }
            }
        } else {
            spent += pair_up(k, left);
        }
    }
    charge(used, spent);
    return k->done;
}

void wb_fz_jaro_free(wb_fz_jaro *k) {
    if (k->blocks) {
        size_t owned = k->owned_bytes - k->pattern.owned_bytes;
        wb_fz_pattern_free_with(&k->pattern, k->free_later);
        if (k->owned && k->free_later && owned >= WB_FZ_FREE_LATER_FROM)
            k->free_later(k->owned, owned);
        else
            free(k->owned);
    }
    k->owned = NULL;
    k->blocks = false;
    k->owned_bytes = 0;
}

uint64_t wb_fz_jaro_units(size_t m, size_t n) {
    size_t s = min_size(m, n), l = max_size(m, n);
    if (s == 0) return 1;
    size_t bound = l / 2 > 0 ? l / 2 - 1 : 0;
    size_t reach = l - bound > s ? s + bound : l;
    /* the pairing: each match, and each word of flags passed */
    uint64_t pairing = units_of(s + blocks_of(s) + blocks_of(reach), JARO_PAIRS);
    if (reach <= 64) {
        uint64_t masks = units_of(s * reach, JARO_COMPARES) + units_of(s, JARO_FLAGS);
        uint64_t stepped = masks + pairing;
        /* the one go tried first, maybe on a symbol of 256 and up */
        return 1 + word_units(s, reach) + stepped;
    }
    /* a window: 2 bound + 1 positions, on as many words and one more */
    uint64_t words = min_size(blocks_of(reach), (2 * (uint64_t)bound + 1) / 64 + 2);
    uint64_t flags = sat_mul(s, words + 1);
    return sat_add(sat_add(sat_add(wb_fz_pattern_units(reach), flags), pairing), 1);
}

double wb_fz_winkler(double jaro, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                     double prefix_weight) {
    if (!(jaro > 0.7)) return jaro;
    size_t most = min_size(min_size(m, n), 4), l = 0;
    while (l < most && a[l] == b[l])
        l++;
    return jaro + ((double)l * prefix_weight) * (1.0 - jaro);
}
