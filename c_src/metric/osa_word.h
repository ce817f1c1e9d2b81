/*
 * The optimal string alignment distance's word form: one column of
 * Hyyro's 2003 bit-parallel algorithm (Levenshtein's, levenshtein_word.h,
 * plus transpositions of adjacent symbols) for a pattern of at most 64
 * symbols, the one step the quick scores and the fuzzy kernel's one-word
 * patterns run. Header only.
 *
 * The state: the vertical deltas *vp and *vn (as Levenshtein's), and the
 * previous column's *d0 and match mask *pm_old (both 0 to begin).
 */
#ifndef WB_METRIC_OSA_WORD_H
#define WB_METRIC_OSA_WORD_H

#include <stdint.h>

/* One column: `pm` the rows matching the text symbol; returns the change
 * of the bottom row's score (`bottom` its bit) as a wrapping uint64_t. */
static inline uint64_t wb_osa_word_column(uint64_t pm, uint64_t *vp, uint64_t *vn, uint64_t *d0,
                                          uint64_t *pm_old, uint64_t bottom) {
    /* a transposition: this symbol matches a row whose symbol the
     * previous column matched one row below, where no match was */
    uint64_t tr = ((~*d0 & pm) << 1) & *pm_old;
    uint64_t d = (((pm & *vp) + *vp) ^ *vp) | pm | *vn | tr;
    uint64_t hp = *vn | ~(d | *vp), hn = d & *vp;
    uint64_t delta = ((hp & bottom) != 0) - (uint64_t)((hn & bottom) != 0);
    hp = (hp << 1) | 1;
    hn <<= 1;
    *vp = hn | ~(d | hp);
    *vn = hp & d;
    *d0 = d;
    *pm_old = pm;
    return delta;
}

#endif
