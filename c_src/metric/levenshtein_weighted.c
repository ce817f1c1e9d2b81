/* Levenshtein with weights (kernels.h): inserting, deleting and
 * substituting at costs of their own, in Wagner-Fischer rows of 64-bit
 * cells that saturate, or 128-bit ones (wide). The unit-cost distance is
 * levenshtein.c. */
#include "common.h"

#include <stdlib.h>

/* Work per unit of a weighted row: a cell (1.6-2.9 ns at -O2 on a 2
 * vCPU Xeon, a 128-bit one 3.5) */
#define WEIGHTED_CELLS 1

/* A weighted distance against the cutoff: above it, cutoff + 1. */
static wb_fz_wide weighted_cut(wb_fz_wide d, size_t cutoff) {
    if (cutoff != WB_FZ_NO_CUTOFF && d > cutoff) return (wb_fz_wide)cutoff + 1;
    return d;
}

bool wb_fz_weighted_init(wb_fz_weighted *k, const uint32_t *a, size_t m, const uint32_t *b,
                         size_t n, uint64_t ins, uint64_t del, uint64_t sub, size_t cutoff,
                         bool wide) {
    /* b's symbols inserted are a's deleted the other way round */
    if (longer_first(&a, &m, &b, &n)) {
        uint64_t x = ins;
        ins = del;
        del = x;
    }
    *k = (wb_fz_weighted){.a = a,
                          .b = b,
                          .m = m,
                          .n = n,
                          .cutoff = cutoff,
                          .ins = ins,
                          .del = del,
                          .sub = sub,
                          .wide = wide};
    /* the length difference takes that many deletions (a is the longer):
     * a lower bound, and the distance itself when a side is empty */
    wb_fz_wide least = (wb_fz_wide)(m - n) * del;
    if (m == 0 || n == 0 || (cutoff != WB_FZ_NO_CUTOFF && least > cutoff)) {
        k->result = weighted_cut(least, cutoff);
        k->row = m;
        return true;
    }
    size_t bytes = 0;
    if (n == SIZE_MAX || !add_bytes(&bytes, n + 1, wide ? sizeof *k->wcells : sizeof *k->cells))
        return false;
    if (wide) {
        k->wcells = malloc(bytes);
        if (!k->wcells) return false;
    } else {
        k->cells = malloc(bytes);
        if (!k->cells) return false;
    }
    k->owned_bytes = bytes;
    return true;
}

/* Row 0, cells [k->prep, end): j insertions. */
static void weighted_setup(wb_fz_weighted *k, size_t end) {
    for (size_t j = k->prep; j < end; j++) {
        if (k->wide)
            k->wcells[j] = j == 0 ? 0 : k->wcells[j - 1] + k->ins;
        else
            k->cells[j] = j == 0 ? 0 : sat_add(k->cells[j - 1], k->ins);
    }
    k->prep = end;
}

/* Cells [k->col, end) of row k->row + 1, in place over row k->row (cells
 * below col hold the new row, the others the old one); the running least
 * (2^64 - 1: that or more). */
static void weighted_cells(wb_fz_weighted *k, size_t end) {
    uint64_t *d = k->cells;
    const uint32_t *b = k->b;
    uint32_t c = k->a[k->row];
    size_t j = k->col;
    uint64_t diag = (uint64_t)k->diag, least = (uint64_t)k->least;
    if (j == 0) {
        diag = d[0];
        d[0] = sat_add(d[0], k->del);
        least = d[0];
        j = 1;
    }
    for (; j < end; j++) {
        uint64_t up = d[j];
        uint64_t v = sat_add(up, k->del);
        uint64_t left = sat_add(d[j - 1], k->ins);
        if (left < v) v = left;
        uint64_t change = c == b[j - 1] ? diag : sat_add(diag, k->sub);
        if (change < v) v = change;
        d[j] = v;
        diag = up;
        if (v < least) least = v;
    }
    k->diag = diag;
    k->least = least;
    k->col = end;
}

/* The same in 128 bits, which no sum here reaches the end of. */
static void weighted_cells_wide(wb_fz_weighted *k, size_t end) {
    wb_fz_wide *d = k->wcells;
    const uint32_t *b = k->b;
    uint32_t c = k->a[k->row];
    size_t j = k->col;
    wb_fz_wide diag = k->diag, least = k->least;
    if (j == 0) {
        diag = d[0];
        d[0] += k->del;
        least = d[0];
        j = 1;
    }
    for (; j < end; j++) {
        wb_fz_wide up = d[j];
        wb_fz_wide v = up + k->del;
        wb_fz_wide left = d[j - 1] + k->ins;
        if (left < v) v = left;
        wb_fz_wide change = c == b[j - 1] ? diag : diag + k->sub;
        if (change < v) v = change;
        d[j] = v;
        diag = up;
        if (v < least) least = v;
    }
    k->diag = diag;
    k->least = least;
    k->col = end;
}

bool wb_fz_weighted_step(wb_fz_weighted *k, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    size_t w = k->n + 1;
    if (budget == 0) budget = 1;
    if (k->row < k->m && k->prep < w) {
        size_t count = affordable(w - k->prep, budget, SETUP_CELLS);
        weighted_setup(k, k->prep + count);
        spent += units_of(count, SETUP_CELLS);
    }
    /* every cell comes from the row above plus costs >= 0 (or from its
     * left neighbour): row minima never decrease, so a row whose least
     * cell is above the cutoff settles the result at cutoff + 1 (a
     * saturated least is above any cutoff, at most SIZE_MAX - 1) */
    while (k->row < k->m && spent < budget) {
        size_t count = affordable(w - k->col, budget - spent, WEIGHTED_CELLS);
        if (k->wide)
            weighted_cells_wide(k, k->col + count);
        else
            weighted_cells(k, k->col + count);
        spent += units_of(count, WEIGHTED_CELLS);
        if (k->col < w) break;
        k->row++;
        k->col = 0;
        if (k->cutoff != WB_FZ_NO_CUTOFF && k->least > k->cutoff) {
            k->result = (wb_fz_wide)k->cutoff + 1;
            k->row = k->m;
        } else if (k->row == k->m) {
            k->result = weighted_cut(k->wide ? k->wcells[k->n] : k->cells[k->n], k->cutoff);
        }
    }
    charge(used, spent);
    return k->row == k->m;
}

void wb_fz_weighted_free(wb_fz_weighted *k) {
    free(k->cells);
    free(k->wcells);
    k->cells = NULL;
    k->wcells = NULL;
    k->owned_bytes = 0;
}

uint64_t wb_fz_weighted_units(size_t m, size_t n) {
    size_t s = min_size(m, n);
    return rows_units(s + 1, max_size(m, n), s + 1, WEIGHTED_CELLS);
}
