/*
 * Jaro's word form: the matching of a walked side p (lp <= 64 symbols)
 * against the other side t (lt <= 64 symbols), on masks: masks[c] holds
 * the positions of symbol c in t. The one matching the quick scores
 * (bytes, c_src/fuzzy/quick.c) and the Jaro kernel's short pairs of
 * symbols below 256 (jaro.c) run. Header only.
 *
 * Each symbol of p, in order, takes the lowest position of t holding it,
 * not yet taken, within `bound` positions of its own (kernels.h's
 * conventions: max(lp, lt) / 2 - 1 for the whole pair; the kernel passes
 * t cut to the positions any window reaches, with the bound of its whole
 * length). Returns the matches M and in *transpositions the matched
 * pairs, taken in order on both sides, whose symbols differ (T before
 * halving): a pair differs exactly when t's position is not in the mask
 * of p's symbol.
 *
 * The window slides one position a symbol: it grows at its top while
 * symbol i's window starts at 0, and moves up whole after.
 */
#ifndef WB_METRIC_JARO_WORD_H
#define WB_METRIC_JARO_WORD_H

#include <stddef.h>
#include <stdint.h>

#define WB_JARO_WORD_DEFINE(name, symbol_t)                                                        \
    static inline size_t name##_within(const symbol_t *p, size_t lp, size_t lt, size_t bound,      \
                                       const uint64_t *masks, size_t *transpositions) {            \
        /* the window of symbol 0: positions 0 .. bound (all of t past 63) */                      \
        uint64_t window = bound >= 63 ? ~(uint64_t)0 : ((uint64_t)1 << (bound + 1)) - 1;           \
        uint64_t taken = 0, walked = 0;                                                            \
        for (size_t i = 0; i < lp; i++) {                                                          \
            uint64_t open = masks[p[i]] & window & ~taken;                                         \
            taken |= open & (~open + 1);                                                           \
            walked |= (uint64_t)(open != 0) << i;                                                  \
            window = (window << 1) | (uint64_t)(i < bound);                                        \
        }                                                                                          \
        size_t matches = 0, out_of_order = 0;                                                      \
        while (walked) {                                                                           \
            size_t i = (size_t)__builtin_ctzll(walked), j = (size_t)__builtin_ctzll(taken);        \
            out_of_order += !((masks[p[i]] >> j) & 1);                                             \
            matches++;                                                                             \
            walked &= walked - 1;                                                                  \
            taken &= taken - 1;                                                                    \
        }                                                                                          \
        (void)lt;                                                                                  \
        *transpositions = out_of_order;                                                            \
        return matches;                                                                            \
    }                                                                                              \
    static inline size_t name(const symbol_t *p, size_t lp, size_t lt, const uint64_t *masks,      \
                              size_t *transpositions) {                                            \
        size_t longer = lp > lt ? lp : lt;                                                         \
        size_t bound = longer / 2 > 0 ? longer / 2 - 1 : 0;                                        \
        return name##_within(p, lp, lt, bound, masks, transpositions);                             \
    }

/* bytes (the quick scores) and symbols (the kernel) */
WB_JARO_WORD_DEFINE(wb_jaro_word_bytes, uint8_t)
WB_JARO_WORD_DEFINE(wb_jaro_word_symbols, uint32_t)

#endif
