/* Damerau-Levenshtein, unrestricted (kernels.h): Zhao and Sahni's rows. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

/* Work per unit: a cell of a Zhao row (1.6-2.9 ns at -O2 on a 2 vCPU
 * Xeon); the set-up's cells are plain stores (SETUP_CELLS) */
#define DAMERAU_CELLS 1
#define FREE_SLOT     SIZE_MAX

/* ---- Damerau-Levenshtein (Zhao and Sahni) -------------------------------------
 *
 * Rows R (row i) and R1 (row i - 1) of n + 2 cells, column -1 and row -1
 * holding `big`. A transposition ending at (i, j) pairs the last row
 * k < i of a holding b[j - 1] with the last column l < j of row i where
 * b matched a[i - 1]; only l = j - 1 or k = i - 1 can beat the other
 * edits, which gives the two cases below:
 *   l = j - 1: FR[j] + (i - k), FR[j] = d[k - 1][j - 2] saved at row k
 *   k = i - 1: T + (j - l),     T = d[i - 2][l - 1] saved at column l
 * Only symbols of b are ever looked up, so the map holds those: its
 * slot for each b[j] is found once, in the set-up. */

static size_t damerau_hash(const wb_fz_damerau *k, uint32_t c) {
    return (size_t)(((uint64_t)c * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - k->bits));
}

/* The slot of symbol c, or the free slot where it would go. */
static size_t damerau_slot(const wb_fz_damerau *k, uint32_t c) {
    size_t mask = k->slots - 1, i = damerau_hash(k, c);
    while (k->last[i] != FREE_SLOT && k->keys[i] != c)
        i = (i + 1) & mask;
    return i;
}

bool wb_fz_damerau_init(wb_fz_damerau *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                        size_t cutoff) {
    longer_first(&a, &m, &b, &n);
    *k = (wb_fz_damerau){.a = a, .b = b, .m = m, .n = n, .cutoff = cutoff};
    if (settle_unit_costs(m, n, cutoff, &k->result)) {
        k->row = m;
        return true;
    }
    /* cells stay below 3 * big: no overflow, as m, n <= SIZE_MAX / 4 (a
     * uint32_t array; n checked for the map anyway) */
    if (n > SIZE_MAX / 4) return false;
    k->big = max_size(m, n) + 1;
    /* a power of two at least 2 n: the map at most half full */
    k->slots = 2;
    k->bits = 1;
    while (k->slots < 2 * n) {
        k->slots <<= 1;
        k->bits++;
    }
    size_t bytes = 0;
    if (!add_bytes(&bytes, n + 2, 3 * sizeof(size_t)) ||
        !add_bytes(&bytes, k->slots, sizeof(size_t)) || !add_bytes(&bytes, n, sizeof(size_t)) ||
        !add_bytes(&bytes, k->slots, sizeof(uint32_t)))
        return false;
    k->rows = malloc(bytes);
    if (!k->rows) return false;
    k->owned_bytes = bytes;
    k->last = k->rows + 3 * (n + 2);
    k->slot_of = k->last + k->slots;
    k->keys = (uint32_t *)(k->slot_of + n);
    return true;
}

/* The set-up's items [k->prep, end): the n + 2 columns of the rows (row
 * 0 in the first row, row -1 in the second, FR unset), the map's slots
 * (free), then b's n symbols (their slots). */
static void damerau_setup(wb_fz_damerau *k, size_t end) {
    size_t n = k->n, w = n + 2;
    size_t *r0 = k->rows, *r1 = k->rows + w, *fr = k->rows + 2 * w;
    for (size_t x = k->prep; x < end; x++) {
        if (x < w) {
            r0[x] = x == 0 ? k->big : x - 1;
            r1[x] = fr[x] = k->big;
        } else if (x < w + k->slots) {
            k->last[x - w] = FREE_SLOT;
        } else {
            size_t j = x - w - k->slots, s = damerau_slot(k, k->b[j]);
            if (k->last[s] == FREE_SLOT) {
                k->keys[s] = k->b[j];
                k->last[s] = 0;
            }
            k->slot_of[j] = s;
        }
    }
    k->prep = end;
}

/* Cells [k->col, end) of row i = k->row + 1: even rows in the first row
 * array, odd ones in the second (which, before, holds row i - 2). */
static void damerau_cells(wb_fz_damerau *k, size_t end) {
    size_t i = k->row + 1, w = k->n + 2;
    /* pointers to column 0: column -1 is at index -1 */
    size_t *cur = k->rows + (i & 1 ? w : 0) + 1, *prev = k->rows + (i & 1 ? 0 : w) + 1;
    size_t *fr = k->rows + 2 * w + 1;
    const uint32_t *b = k->b;
    const size_t *last = k->last, *slot_of = k->slot_of;
    uint32_t c = k->a[i - 1];
    size_t j = k->col;
    size_t l = k->l;           /* last column of this row where b matched c (0: none) */
    size_t t = k->t;           /* d[i - 2][l - 1] */
    size_t two_up = k->two_up; /* d[i - 2][j - 1]: cur still holds row i - 2 */
    size_t least = k->least;
    if (j == 0) {
        l = 0;
        t = k->big;
        two_up = cur[0];
        cur[0] = i;
        least = i;
        j = 1;
    }
    for (; j < end; j++) {
        /* column j - 2 of row i - 1, -1 when j is 1: counted from the
         * row's start (prev - 1), never below it */
        size_t v = wb_fz_zhao_cell(i, j, prev[j], cur[j - 1], prev[j - 1], c == b[j - 1],
                                   last[slot_of[j - 1]], two_up, (prev - 1)[j - 1], &l, &t, &fr[j]);
        two_up = cur[j];
        cur[j] = v;
        if (v < least) least = v;
    }
    k->l = l;
    k->t = t;
    k->two_up = two_up;
    k->least = least;
    k->col = end;
}

bool wb_fz_damerau_step(wb_fz_damerau *k, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    size_t w = k->n + 1, setup = (k->n + 2) + k->slots + k->n;
    if (budget == 0) budget = 1;
    if (k->row < k->m && k->prep < setup) {
        size_t count = affordable(setup - k->prep, budget, SETUP_CELLS);
        damerau_setup(k, k->prep + count);
        spent += units_of(count, SETUP_CELLS);
    }
    /* a transposition from row k - 1 adds at least i - k, and row
     * minima grow by one at most per row: they never decrease */
    while (k->row < k->m && k->prep == setup && spent < budget) {
        size_t count = affordable(w - k->col, budget - spent, DAMERAU_CELLS);
        damerau_cells(k, k->col + count);
        spent += units_of(count, DAMERAU_CELLS);
        if (k->col < w) break;
        k->row++;
        k->col = 0;
        /* c's own entry is read only by later rows */
        size_t s = damerau_slot(k, k->a[k->row - 1]);
        if (k->last[s] != FREE_SLOT) k->last[s] = k->row;
        if (above(k->least, k->cutoff)) {
            k->result = k->cutoff + 1;
            k->row = k->m;
        } else if (k->row == k->m) {
            k->result = cut(k->rows[(k->m & 1 ? k->n + 2 : 0) + 1 + k->n], k->cutoff);
        }
    }
    charge(used, spent);
    return k->row == k->m;
}

void wb_fz_damerau_free(wb_fz_damerau *k) {
    free(k->rows);
    k->rows = NULL;
    k->last = k->slot_of = NULL;
    k->keys = NULL;
    k->owned_bytes = 0;
}

uint64_t wb_fz_damerau_units(size_t m, size_t n) {
    size_t s = min_size(m, n), slots = 2;
    while (slots < 2 * s)
        slots <<= 1;
    /* the set-up: the rows' columns, the map's slots, b's symbols */
    return rows_units(s + 2 + slots + s, max_size(m, n), s + 1, DAMERAU_CELLS);
}
