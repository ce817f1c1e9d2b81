/*
 * The optimal string alignment distance's word form: one column of
 * Hyyro's 2003 bit-parallel algorithm (Levenshtein's, levenshtein_word.h,
 * plus transpositions of adjacent symbols) for a pattern of at most 64
 * symbols, the one step the quick scores and the fuzzy kernel's one-word
 * patterns run. Header only.
 *
 * The state: the vertical deltas *vp and *vn (as Levenshtein's), and the
 * previous column's *d0 and match mask *pm_old (both 0 to begin). The
 * block form serves patterns of several blocks (osa.c).
 */
#ifndef WB_METRIC_OSA_WORD_H
#define WB_METRIC_OSA_WORD_H

#include <stdint.h>

/* One column of one block of 64 rows, the kernel that every form runs:
 * `pm` the block's rows matching the text symbol, `tr_in` bit 0 of its
 * transpositions (bit 63 of the block above's ~d0 & pm, its d0 of the
 * column before; 0 for the first block), *hp_c and *hn_c the horizontal
 * deltas carried in from the block above (1 and 0 for the first block)
 * and out to the block below. *hp_at and *hn_at get the block's
 * horizontal deltas before the shift, from which a row's change is read. */
static inline __attribute__((always_inline)) void
wb_osa_block_column(uint64_t pm, uint64_t tr_in, uint64_t *hp_c, uint64_t *hn_c, uint64_t *vp,
                    uint64_t *vn, uint64_t *d0, uint64_t *pm_old, uint64_t *hp_at,
                    uint64_t *hn_at) {
    /* a transposition: this symbol matches a row whose symbol the
     * previous column matched one row below, where no match was */
    uint64_t tr = (((~*d0 & pm) << 1) | tr_in) & *pm_old;
    uint64_t x = pm | *hn_c;
    uint64_t d = (((x & *vp) + *vp) ^ *vp) | x | *vn | tr;
    uint64_t hp = *vn | ~(d | *vp), hn = d & *vp;
    *hp_at = hp;
    *hn_at = hn;
    uint64_t hp_in = *hp_c, hn_in = *hn_c;
    *hp_c = hp >> 63;
    *hn_c = hn >> 63;
    hp = (hp << 1) | hp_in;
    hn = (hn << 1) | hn_in;
    *vp = hn | ~(d | hp);
    *vn = hp & d;
    *d0 = d;
    *pm_old = pm;
}

/* One column of a pattern of one block: returns the change of the bottom
 * row's score (`bottom` its bit) as a wrapping uint64_t. */
static inline uint64_t wb_osa_word_column(uint64_t pm, uint64_t *vp, uint64_t *vn, uint64_t *d0,
                                          uint64_t *pm_old, uint64_t bottom) {
    uint64_t hp_c = 1, hn_c = 0, hp, hn;
    wb_osa_block_column(pm, 0, &hp_c, &hn_c, vp, vn, d0, pm_old, &hp, &hn);
    return ((hp & bottom) != 0) - (uint64_t)((hn & bottom) != 0);
}

#endif
