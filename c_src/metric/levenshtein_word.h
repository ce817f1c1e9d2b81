/*
 * Levenshtein's word form: one column of Myers' bit-parallel algorithm
 * (Myers 1999, in Hyyro's form) for a pattern of at most 64 symbols, the
 * one step every single-word Levenshtein loop runs (the Levenshtein core's
 * short pairs and one-block columns, the search core's candidates, the
 * quick scores, the fuzzy kernel's one-word patterns). Header only.
 *
 * The state is the column's vertical deltas: bit i of *vp (*vn) set when
 * row i + 1's value is one above (below) row i's. A pattern of m rows
 * starts with the low m bits of *vp set (or all of them: bits at m and
 * above never reach the rows below) and *vn clear, the bottom row's score
 * at m; each text symbol's column adds what wb_lev_word_column returns to
 * it, `bottom` being the bit of the last row, 1 << (m - 1).
 */
#ifndef WB_METRIC_LEVENSHTEIN_WORD_H
#define WB_METRIC_LEVENSHTEIN_WORD_H

#include <stdint.h>

/* One column: `eq` the rows matching the text symbol; the deltas move on,
 * and the change of the bottom row's score is returned (+1, 0, or -1 as a
 * wrapping uint64_t). The horizontal +1 deltas are kept complemented
 * (hpc = ~hp): every NOT then falls on a value known early (vn, d0), off
 * the chain from one column's vp to the next, 9 dependent operations
 * instead of the textbook's 11. */
static inline uint64_t wb_lev_word_column(uint64_t eq, uint64_t *vp, uint64_t *vn,
                                          uint64_t bottom) {
    uint64_t d0 = (((eq & *vp) + *vp) ^ *vp) | eq | *vn;
    uint64_t hpc = ~*vn & (d0 | *vp);
    uint64_t hn = d0 & *vp;
    uint64_t delta = ((~hpc & bottom) != 0) - (uint64_t)((hn & bottom) != 0);
    hpc <<= 1; /* ~((hp << 1) | 1): the row above the first, a +1 delta */
    hn <<= 1;
    *vp = hn | (~d0 & hpc);
    *vn = d0 & ~hpc;
    return delta;
}

#endif
