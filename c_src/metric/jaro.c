/* Jaro and Jaro-Winkler (kernels.h), resumable over symbols of any
 * length; a pair of at most 64 symbols below 256 a side in one go in the
 * word form (jaro_word.h, which the quick scores of c_src/fuzzy/quick.c
 * run too) when the step's budget pays for it. The lanes of many
 * candidates are in the search core (c_src/search/lanes_run.h). */
#include "common.h"
#include "jaro_word.h"

#include <stdlib.h>
#include <string.h>

/* Work per unit (a position of Jaro's window: 0.7 ns at -O2 on a 2 vCPU
 * Xeon) */
#define JARO_PER_UNIT 4 /* comparisons of Jaro's window */
#define JARO_PASS     4 /* moves of the transposition pass per unit */

bool wb_fz_jaro_init(wb_fz_jaro *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    /* walk the shorter, a when the lengths are equal */
    if (m > n) {
        const uint32_t *s = a;
        a = b;
        b = s;
        size_t l = m;
        m = n;
        n = l;
    }
    *k = (wb_fz_jaro){.a = a, .b = b, .m = m, .n = n};
    if (m == 0) {
        k->result = n == 0 ? 1.0 : 0.0;
        k->done = true;
        return true;
    }
    k->bound = n / 2 > 0 ? n / 2 - 1 : 0;
    if (n <= 64) {
        k->flags = k->small_flags;
        memset(k->flags, 0, m + n);
        return true;
    }
    if (n > SIZE_MAX - m) return false;
    k->flags = calloc(m + n, 1);
    if (!k->flags) return false;
    k->owned_bytes = m + n;
    return true;
}

static void jaro_finish(wb_fz_jaro *k) {
    k->result = wb_fz_jaro_of(k->m, k->n, k->matches, k->trans);
    k->done = true;
}

/* Looks for a match of symbol k->at of a, the first unmatched equal
 * symbol of b in its window, over at most `most` (> 0) positions from
 * where the last call stopped; moves to the next symbol once found or
 * once the window is done. Returns the positions looked at. */
static size_t jaro_scan(wb_fz_jaro *k, size_t most) {
    size_t i = k->at;
    uint8_t *a_matched = k->flags, *b_matched = k->flags + k->m;
    size_t lo = i > k->bound ? i - k->bound : 0;
    size_t hi = k->n - i > k->bound ? i + k->bound + 1 : k->n;
    size_t from = k->scanning ? k->scan : lo, j = from;
    size_t end = hi - from > most ? from + most : hi;
    uint32_t c = k->a[i];
    bool found = false;
    for (; j < end; j++) {
        if (!b_matched[j] && k->b[j] == c) {
            a_matched[i] = b_matched[j] = 1;
            k->matches++;
            found = true;
            break;
        }
    }
    size_t looked = (found ? j + 1 : j) - from;
    if (found || j == hi) {
        k->at++;
        k->scanning = false;
        if (k->at == k->m && k->matches == 0) jaro_finish(k);
    } else {
        k->scan = j;
        k->scanning = true;
    }
    return looked;
}

/* Pairs the matched symbols of a and b in order, counting those that
 * differ, in at most `most` (> 0) moves (a move passes a symbol of a
 * or b); returns the moves made. */
static size_t jaro_pass(wb_fz_jaro *k, size_t most) {
    const uint8_t *a_matched = k->flags, *b_matched = k->flags + k->m;
    size_t moves = 0;
    /* b holds as many matched symbols as a: each of a's has its pair */
    while (moves < most) {
        moves++;
        if (!a_matched[k->walked]) {
            k->walked++;
        } else if (!b_matched[k->bpos]) {
            k->bpos++;
        } else {
            k->trans += k->a[k->walked] != k->b[k->bpos];
            k->walked++;
            k->bpos++;
            if (++k->seen == k->matches) {
                jaro_finish(k);
                break;
            }
        }
    }
    return moves;
}

/* The units of the word form: the symbols looked at, a's walk. */
static uint64_t word_units(size_t m, size_t n) {
    return 1 + (uint64_t)m + (uint64_t)(m + n) / JARO_PASS;
}

/* The word form, for a pair of at most 64 symbols a side, all below 256
 * (false otherwise: nothing done): the matches on b's masks. */
static bool jaro_word(wb_fz_jaro *k) {
    uint32_t any = 0;
    for (size_t i = 0; i < k->m; i++)
        any |= k->a[i];
    for (size_t j = 0; j < k->n; j++)
        any |= k->b[j];
    if (any >= 256) return false;
    uint64_t masks[256];
    for (size_t i = 0; i < k->m; i++)
        masks[k->a[i]] = 0;
    for (size_t j = 0; j < k->n; j++)
        masks[k->b[j]] = 0;
    for (size_t j = 0; j < k->n; j++)
        masks[k->b[j]] |= (uint64_t)1 << j;
    size_t transpositions;
    k->matches = wb_jaro_word_symbols(k->a, k->m, k->n, masks, &transpositions);
    k->trans = transpositions;
    jaro_finish(k);
    return true;
}

bool wb_fz_jaro_step(wb_fz_jaro *k, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    /* a short pair, not begun, whose word form the budget pays for */
    if (!k->done && k->flags == k->small_flags && k->at == 0 && !k->scanning &&
        budget >= word_units(k->m, k->n) && jaro_word(k)) {
        charge(used, word_units(k->m, k->n));
        return true;
    }
    while (!k->done && spent < budget) {
        uint64_t left = budget - spent;
        if (k->at < k->m) {
            /* a symbol's scan costs one unit, and one more per
             * JARO_PER_UNIT positions past its first */
            size_t most = affordable(k->n, left, JARO_PER_UNIT);
            size_t looked = jaro_scan(k, most);
            spent += looked == 0 ? 1 : 1 + (looked - 1) / JARO_PER_UNIT;
        } else {
            size_t moves = jaro_pass(k, affordable(k->m + k->n, left, JARO_PASS));
            spent += units_of(moves, JARO_PASS);
        }
    }
    charge(used, spent);
    return k->done;
}

void wb_fz_jaro_free(wb_fz_jaro *k) {
    if (k->flags != k->small_flags) free(k->flags);
    k->flags = NULL;
    k->owned_bytes = 0;
}

uint64_t wb_fz_jaro_units(size_t m, size_t n) {
    size_t s = min_size(m, n), l = max_size(m, n);
    size_t bound = l / 2 > 0 ? l / 2 - 1 : 0;
    uint64_t window = 2 * (uint64_t)bound + 1; /* symbols of b at most */
    /* a symbol's window, cut anywhere: whole units but for its last piece */
    uint64_t matching = sat_mul(s, 1 + window / JARO_PER_UNIT);
    /* the pass: m + n moves at most */
    uint64_t pass = units_of(sat_add(s, l) < SIZE_MAX ? s + l : SIZE_MAX, JARO_PASS);
    return sat_add(sat_add(matching, pass), 1);
}

double wb_fz_winkler(double jaro, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                     double prefix_weight) {
    if (!(jaro > 0.7)) return jaro;
    size_t most = min_size(min_size(m, n), 4), l = 0;
    while (l < most && a[l] == b[l])
        l++;
    return jaro + ((double)l * prefix_weight) * (1.0 - jaro);
}
