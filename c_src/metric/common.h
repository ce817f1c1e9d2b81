/*
 * What the metric kernels (kernels.h) share: arithmetic that saturates,
 * a step's charge in units, the order of a pair's sides, and the units
 * of the bit-parallel and the row kernels. Private to c_src/metric/.
 */
#ifndef WB_METRIC_COMMON_H
#define WB_METRIC_COMMON_H

#include "kernels.h"

#include <stdlib.h>

/* the items of a row kernel's set-up (plain stores) per unit */
#define SETUP_CELLS 8

/* Frees a block of `bytes` (NULL: nothing), through free_later when it
 * is given and the block has WB_FZ_FREE_LATER_FROM bytes or more. */
static inline void wb_fz_free_block(void *block, size_t bytes,
                                    void (*free_later)(void *block, size_t bytes)) {
    if (block && free_later && bytes >= WB_FZ_FREE_LATER_FROM)
        free_later(block, bytes);
    else
        free(block);
}

static inline size_t min_size(size_t x, size_t y) {
    return x < y ? x : y;
}

static inline size_t max_size(size_t x, size_t y) {
    return x > y ? x : y;
}

static inline uint64_t sat_add(uint64_t x, uint64_t y) {
    return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

static inline uint64_t sat_mul(uint64_t x, uint64_t y) {
    return x != 0 && y > UINT64_MAX / x ? UINT64_MAX : x * y;
}

/* A step's units: what it did, and one for a call that found nothing to
 * do (the result already known). */
static inline void charge(uint64_t *used, uint64_t spent) {
    *used = sat_add(*used, spent ? spent : 1);
}

/* The units of `items` items at `per` a unit, a part unit counted whole. */
static inline uint64_t units_of(size_t items, size_t per) {
    return (uint64_t)(items / per) + (items % per != 0);
}

/* Of `left` items at `per` a unit, those `budget` units pay for (all of
 * them when it pays for more). Taken from the start of a run of items
 * (a row), every piece but the last is a whole number of units, so the
 * run costs units_of(its items) however it is cut. */
static inline size_t affordable(size_t left, uint64_t budget, size_t per) {
    return budget > (uint64_t)(left / per) ? left : (size_t)budget * per;
}

/* A distance against the cutoff: above it, cutoff + 1 (with no cutoff
 * nothing is above). SIZE_MAX - 1 at most, never WB_FZ_NO_CUTOFF. */
static inline size_t cut(uint64_t d, size_t cutoff) {
    if (cutoff != WB_FZ_NO_CUTOFF && d > cutoff) return cutoff + 1;
    return d < SIZE_MAX ? (size_t)d : SIZE_MAX - 1;
}

/* Whether a value is above the cutoff (never, without one). */
static inline bool above(uint64_t d, size_t cutoff) {
    return cutoff != WB_FZ_NO_CUTOFF && d > cutoff;
}

/* Adds count * size to *bytes; false on overflow. */
static inline bool add_bytes(size_t *bytes, size_t count, size_t size) {
    if (count > SIZE_MAX / size || *bytes > SIZE_MAX - count * size) return false;
    *bytes += count * size;
    return true;
}

/* The shorter side first (a when the lengths are equal): the pattern of
 * the bit-parallel kernels. */
static inline void shorter_first(const uint32_t **a, size_t *m, const uint32_t **b, size_t *n) {
    if (*m <= *n) return;
    const uint32_t *s = *a;
    size_t l = *m;
    *a = *b;
    *m = *n;
    *b = s;
    *n = l;
}

/* Drops the common prefix and suffix of a and b (their edit distances
 * and OSA's are those of what is left). */
static inline void drop_affix(const uint32_t **a, size_t *m, const uint32_t **b, size_t *n) {
    size_t pre = 0, most = min_size(*m, *n);
    while (pre < most && (*a)[pre] == (*b)[pre])
        pre++;
    size_t suf = 0;
    most -= pre;
    while (suf < most && (*a)[*m - 1 - suf] == (*b)[*n - 1 - suf])
        suf++;
    *a += pre;
    *b += pre;
    *m -= pre + suf;
    *n -= pre + suf;
}

/* The longer side first: the rows of the row kernels, short rows; true
 * when the sides were swapped. */
static inline bool longer_first(const uint32_t **a, size_t *m, const uint32_t **b, size_t *n) {
    if (*m >= *n) return false;
    const uint32_t *s = *a;
    size_t l = *m;
    *a = *b;
    *m = *n;
    *b = s;
    *n = l;
    return true;
}

/* The 64-position blocks of a pattern of m symbols (one at least). */
static inline size_t blocks_of(size_t m) {
    size_t b = m / 64 + (m % 64 != 0);
    return b > 0 ? b : 1;
}

/* The units of a bit-parallel kernel with a pattern of either side: its
 * fill, and blocks(pattern) per text symbol. With a of m symbols the
 * pattern, blocks(m) n <= (m / 64 + 1) n <= blocks(n) m + n: so the
 * shorter side's pattern plus its length bounds both. */
static inline uint64_t pattern_kernel_units(size_t m, size_t n) {
    size_t s = min_size(m, n), l = max_size(m, n);
    uint64_t columns = sat_add(sat_mul(blocks_of(s), l), s);
    return sat_add(sat_add(1, wb_fz_pattern_units(s)), columns);
}

/* The units of a row kernel: the set-up's items, rows of `cells` cells
 * (each cut anywhere, units_of its cells: see affordable), and one for a
 * call with nothing left to do. */
static inline uint64_t rows_units(size_t setup, uint64_t rows, size_t cells, size_t per) {
    return sat_add(sat_add(units_of(setup, SETUP_CELLS), sat_mul(rows, units_of(cells, per))), 1);
}

/* The cases known without a matrix (an empty side, a length difference
 * above the cutoff); true when settled. For Damerau: every edit changes
 * the length by one at most. */
static inline bool settle_unit_costs(size_t m, size_t n, size_t cutoff, size_t *result) {
    size_t diff = max_size(m, n) - min_size(m, n);
    if (m != 0 && n != 0 && !above(diff, cutoff)) return false;
    *result = cut(diff, cutoff);
    return true;
}

#endif
