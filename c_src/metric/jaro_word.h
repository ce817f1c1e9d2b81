/*
 * Jaro's word form: the matching of a walked side p (lp symbols) against
 * the other side t (lt <= 64 symbols, lp <= 64), on masks: masks[c] holds
 * the positions of symbol c in t. The one matching the quick scores
 * (bytes, c_src/fuzzy/quick.c) and the Jaro kernel's short pairs
 * (symbols below 256, jaro.c) run. Header only.
 *
 * Each symbol of p, in order, takes the lowest position of t holding it,
 * not yet taken, within max(lp, lt) / 2 - 1 positions of its own
 * (kernels.h's conventions, with lt the longer side). Returns the
 * matches M and in *transpositions the matched pairs, taken in order on
 * both sides, whose symbols differ (T before halving): a pair differs
 * exactly when t's position is not in the mask of p's symbol.
 */
#ifndef WB_METRIC_JARO_WORD_H
#define WB_METRIC_JARO_WORD_H

#include <stddef.h>
#include <stdint.h>

#define WB_JARO_WORD_DEFINE(name, symbol_t)                                                        \
    static inline size_t name(const symbol_t *p, size_t lp, size_t lt, const uint64_t *masks,      \
                              size_t *transpositions) {                                            \
        size_t bound = lt / 2 > 0 ? lt / 2 - 1 : 0;                                                \
        uint64_t taken = 0, walked = 0;                                                            \
        for (size_t i = 0; i < lp; i++) {                                                          \
            size_t lo = i > bound ? i - bound : 0, hi = i + bound + 1 < lt ? i + bound + 1 : lt;   \
            uint64_t window = (hi - lo >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (hi - lo)) - 1)      \
                              << lo;                                                               \
            uint64_t open = masks[p[i]] & window & ~taken;                                         \
            if (open) {                                                                            \
                taken |= open & (~open + 1);                                                       \
                walked |= (uint64_t)1 << i;                                                        \
            }                                                                                      \
        }                                                                                          \
        size_t matches = 0, out_of_order = 0;                                                      \
        while (walked) {                                                                           \
            size_t i = (size_t)__builtin_ctzll(walked), j = (size_t)__builtin_ctzll(taken);        \
            out_of_order += !((masks[p[i]] >> j) & 1);                                             \
            matches++;                                                                             \
            walked &= walked - 1;                                                                  \
            taken &= taken - 1;                                                                    \
        }                                                                                          \
        *transpositions = out_of_order;                                                            \
        return matches;                                                                            \
    }

/* bytes (the quick scores) and symbols (the kernel) */
WB_JARO_WORD_DEFINE(wb_jaro_word_bytes, uint8_t)
WB_JARO_WORD_DEFINE(wb_jaro_word_symbols, uint32_t)

#endif
