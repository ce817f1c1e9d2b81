/* Damerau-Levenshtein, unrestricted (kernels.h): Zhao and Sahni's rows. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

/* Work per unit: a cell of a Zhao row; a column of the set-up (four
 * stores, SETUP_CELLS / 2 of them a unit); SETUP_CELLS comparisons of the
 * affix */
#define DAMERAU_CELLS 1
#define SETUP_COLUMNS (SETUP_CELLS / 2)

/* ---- Damerau-Levenshtein (Zhao and Sahni) -------------------------------------
 *
 * The common prefix and suffix dropped first (they change no distance),
 * then rows R (row i) and R1 (row i - 1) of n + 2 cells, column -1 and
 * row -1 holding `big`. A transposition ending at (i, j) pairs the last
 * row k < i of a holding b[j - 1] with the last column l < j of row i
 * where b matched a[i - 1]; only l = j - 1 or k = i - 1 can beat the other
 * edits, which gives two candidates:
 *   l = j - 1: FR[j] + (i - k), FR[j] = d[k - 1][j - 2] saved at row k
 *   k = i - 1: T + (j - l),     T = d[i - 2][l - 1] saved at column l
 * The row k is column j's own: SEEN[j], the last row that matched b[j - 1]
 * (set where FR[j] is), so no map of symbols is kept. With 0 for "none"
 * (k or l) and `big` in FR and T until set, a candidate without its match
 * comes out at big or more and never wins; each one is a real script's
 * cost otherwise, so all are taken with the plain edits, match or not. */

/* a row's running values: l, T, d[i - 2][j - 1] and the row's least */
typedef struct {
    size_t l, t, two_up, least;
} zhao_run;

/* Column 0 of row i (cur holds row i - 2 there, pointers at column 0). */
static inline void zhao_begin(size_t i, size_t big, size_t *cur, zhao_run *z) {
    z->l = 0;
    z->t = big;
    z->two_up = cur[0];
    cur[0] = i;
    z->least = i;
}

/* Symbol x of a side held as symbols (s32) or as bytes (s8, s32 NULL). */
static inline __attribute__((always_inline)) uint32_t
zhao_symbol(const uint32_t *s32, const uint8_t *s8, size_t x, bool bytes) {
    return bytes ? s8[x] : s32[x];
}

/* Cells [j, end) of row i (1 <= j), symbol c of a (`above` the one a row
 * up, UINT64_MAX for none): cur holds row i - 2 from column j on, prev
 * row i - 1; fr and seen per column; b as symbols or bytes (a constant
 * where inlined). A swap needs a match a column back in this row (j - l
 * = 1) or a row up in this column (i - r = 1, so b[j - 1] = above): with
 * neither, seen and fr are not read. */
static inline __attribute__((always_inline)) void
zhao_cells(size_t i, uint32_t c, uint64_t above, const uint32_t *b, const uint8_t *b8, bool bytes,
           size_t *restrict cur, const size_t *restrict prev, size_t *restrict fr,
           size_t *restrict seen, size_t j, size_t end, zhao_run *z) {
    size_t l = z->l, t = z->t, two_up = z->two_up, least = z->least, left = cur[j - 1];
    size_t diag = prev[j - 1];
    bool after_match = j - l == 1;
    for (; j < end; j++) {
        size_t up = prev[j], old = cur[j];
        uint32_t s = zhao_symbol(b, b8, j - 1, bytes);
        bool match = c == s;
        /* every candidate but the cell on the left first: from one cell
         * to the next, the row's chain is then one add and one min */
        size_t v = up + 1, d = diag + !match;
        if (d < v) v = d;
        if (__builtin_expect(after_match | (s == above), 0)) {
            size_t r = seen[j];
            if (after_match) {
                size_t x = fr[j] + (i - r);
                if (x < v) v = x;
            }
            if (i - r == 1) {
                size_t x = t + (j - l);
                if (x < v) v = x;
            }
        }
        if (left + 1 < v) v = left + 1;
        if (match) {
            l = j;
            t = two_up;
            fr[j] = prev[(ptrdiff_t)j - 2]; /* column -1 at j = 1 (arrays start at -1) */
            seen[j] = i;
        }
        after_match = match;
        diag = up;
        two_up = old;
        cur[j] = v;
        left = v;
        if (v < least) least = v;
    }
    z->l = l;
    z->t = t;
    z->two_up = two_up;
    z->least = least;
}

/* Column x of the set-up: row 0 in r0, row -1 in r1, FR unset, SEEN none. */
static inline void zhao_setup(size_t x, size_t big, size_t *r0, size_t *r1, size_t *fr,
                              size_t *seen) {
    r0[x] = x == 0 ? big : x - 1;
    r1[x] = fr[x] = big;
    seen[x] = 0;
}

/* The affix's comparisons, at most `most`, from (*pre, *suf) on (the
 * prefix until a mismatch, then the suffix, of at most n - pre symbols);
 * *phase 2 once both are found. Returns the comparisons made. */
static inline __attribute__((always_inline)) size_t
zhao_affix_of(const uint32_t *a, const uint8_t *a8, size_t m, const uint32_t *b, const uint8_t *b8,
              size_t n, bool bytes, size_t *pre, size_t *suf, int *phase, size_t most) {
    size_t done = 0;
    while (*phase < 2 && done < most) {
        size_t left = n - *pre - *suf, cap = min_size(left, most - done), x = 0;
        if (*phase == 0) {
            while (x < cap &&
                   zhao_symbol(a, a8, *pre + x, bytes) == zhao_symbol(b, b8, *pre + x, bytes))
                x++;
            *pre += x;
        } else {
            while (x < cap && zhao_symbol(a, a8, m - 1 - *suf - x, bytes) ==
                                  zhao_symbol(b, b8, n - 1 - *suf - x, bytes))
                x++;
            *suf += x;
        }
        done += x;
        if (x < cap) {
            done++; /* the mismatch */
            (*phase)++;
        } else if (x == left) {
            *phase = 2; /* nothing left for the suffix */
        }
    }
    return done;
}

static size_t zhao_affix(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t *pre,
                         size_t *suf, int *phase, size_t most) {
    return zhao_affix_of(a, NULL, m, b, NULL, n, false, pre, suf, phase, most);
}

bool wb_fz_damerau_init(wb_fz_damerau *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                        size_t cutoff) {
    longer_first(&a, &m, &b, &n);
    *k = (wb_fz_damerau){.a = a, .b = b, .m = m, .n = n, .cutoff = cutoff};
    if (settle_unit_costs(m, n, cutoff, &k->result)) {
        k->affix = 2;
        k->row = m;
        return true;
    }
    /* cells stay below 3 * big: no overflow, as m, n <= SIZE_MAX / 4 (a
     * uint32_t array) */
    if (n > SIZE_MAX / 4) return false;
    size_t bytes = 0;
    if (!add_bytes(&bytes, n + 2, 4 * sizeof(size_t))) return false;
    k->rows = malloc(bytes);
    if (!k->rows) return false;
    k->owned_bytes = bytes;
    return true;
}

/* The arrays of k: rows 0 and 1, FR, SEEN, pointers at column -1. */
static inline size_t *damerau_array(const wb_fz_damerau *k, size_t which) {
    return k->rows + which * (k->n + 2);
}

/* Once the affix is known: the sides without it. */
static void damerau_trimmed(wb_fz_damerau *k) {
    size_t drop = k->pre + k->suf;
    k->a += k->pre;
    k->b += k->pre;
    k->m -= drop;
    k->n -= drop;
    k->big = k->m + 1;
    if (k->n == 0) {
        k->result = cut(k->m, k->cutoff);
        k->row = k->m;
    }
}

/* Cells [k->col, end) of row i = k->row + 1: even rows in the first row
 * array, odd ones in the second (which, before, holds row i - 2). */
static void damerau_cells(wb_fz_damerau *k, size_t end) {
    size_t i = k->row + 1;
    size_t *cur = damerau_array(k, i & 1) + 1, *prev = damerau_array(k, !(i & 1)) + 1;
    zhao_run z = {k->l, k->t, k->two_up, k->least};
    size_t j = k->col;
    if (j == 0) {
        zhao_begin(i, k->big, cur, &z);
        j = 1;
    }
    if (j < end)
        zhao_cells(i, k->a[i - 1], i >= 2 ? k->a[i - 2] : UINT64_MAX, k->b, NULL, false, cur, prev,
                   damerau_array(k, 2) + 1, damerau_array(k, 3) + 1, j, end, &z);
    k->l = z.l;
    k->t = z.t;
    k->two_up = z.two_up;
    k->least = z.least;
    k->col = end;
}

bool wb_fz_damerau_step(wb_fz_damerau *k, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    if (k->affix < 2) {
        /* at most n + 1 comparisons: a piece is whole units but the last */
        size_t most = affordable(k->n + 1, budget, SETUP_CELLS);
        size_t done = zhao_affix(k->a, k->m, k->b, k->n, &k->pre, &k->suf, &k->affix, most);
        spent += units_of(done, SETUP_CELLS);
        if (k->affix == 2) damerau_trimmed(k);
    }
    size_t w = k->n + 1, setup = k->n + 2;
    if (k->affix == 2 && k->row < k->m && k->prep < setup && spent < budget) {
        size_t count = affordable(setup - k->prep, budget - spent, SETUP_COLUMNS);
        for (size_t x = k->prep; x < k->prep + count; x++)
            zhao_setup(x, k->big, damerau_array(k, 0), damerau_array(k, 1), damerau_array(k, 2),
                       damerau_array(k, 3));
        k->prep += count;
        spent += units_of(count, SETUP_COLUMNS);
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
        if (above(k->least, k->cutoff)) {
            k->result = k->cutoff + 1;
            k->row = k->m;
        } else if (k->row == k->m) {
            k->result = cut(damerau_array(k, k->m & 1)[1 + k->n], k->cutoff);
        }
    }
    charge(used, spent);
    return k->row == k->m;
}

void wb_fz_damerau_free(wb_fz_damerau *k) {
    free(k->rows);
    k->rows = NULL;
    k->owned_bytes = 0;
}

uint64_t wb_fz_damerau_units(size_t m, size_t n) {
    size_t s = min_size(m, n);
    /* the affix (s + 1 comparisons at most), the set-up's columns, the
     * rows, one for a call with nothing left */
    uint64_t setup = sat_add(units_of(s + 1, SETUP_CELLS), units_of(s + 2, SETUP_COLUMNS));
    return sat_add(sat_add(setup, sat_mul(max_size(m, n), units_of(s + 1, DAMERAU_CELLS))), 1);
}

/* ---- the short form ----------------------------------------------------------- */

/* The short form's rows (a the longer side, b at most WB_FZ_SHORT
 * symbols), over symbols or bytes (a constant where inlined): the
 * distance against the cutoff, its units into *used. */
static inline __attribute__((always_inline)) size_t
zhao_short(const uint32_t *a, const uint8_t *a8, size_t m, const uint32_t *b, const uint8_t *b8,
           size_t n, size_t cutoff, bool bytes, uint64_t *used) {
    size_t result;
    if (settle_unit_costs(m, n, cutoff, &result)) {
        charge(used, 0);
        return result;
    }
    size_t pre = 0, suf = 0;
    int phase = 0;
    uint64_t spent =
        units_of(zhao_affix_of(a, a8, m, b, b8, n, bytes, &pre, &suf, &phase, n + 1), SETUP_CELLS);
    if (bytes) {
        a8 += pre;
        b8 += pre;
    } else {
        a += pre;
        b += pre;
    }
    m -= pre + suf;
    n -= pre + suf;
    if (n == 0) {
        charge(used, spent);
        return cut(m, cutoff);
    }
    size_t big = m + 1;
    size_t r0[WB_FZ_SHORT + 2], r1[WB_FZ_SHORT + 2], fr[WB_FZ_SHORT + 2], seen[WB_FZ_SHORT + 2];
    for (size_t x = 0; x < n + 2; x++)
        zhao_setup(x, big, r0, r1, fr, seen);
    spent += units_of(n + 2, SETUP_COLUMNS);
    size_t *rows[2] = {r0 + 1, r1 + 1};
    result = SIZE_MAX;
    for (size_t i = 1; i <= m; i++) {
        size_t *cur = rows[i & 1], *prev = rows[!(i & 1)];
        zhao_run z;
        zhao_begin(i, big, cur, &z);
        uint64_t up_symbol = i >= 2 ? zhao_symbol(a, a8, i - 2, bytes) : UINT64_MAX;
        zhao_cells(i, zhao_symbol(a, a8, i - 1, bytes), up_symbol, b, b8, bytes, cur, prev, fr + 1,
                   seen + 1, 1, n + 1, &z);
        spent += n + 1;
        if (above(z.least, cutoff)) {
            result = cutoff + 1;
            break;
        }
    }
    if (result == SIZE_MAX) result = cut(rows[m & 1][n], cutoff);
    charge(used, spent);
    return result;
}

size_t wb_fz_damerau_short(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t cutoff,
                           uint64_t *used) {
    longer_first(&a, &m, &b, &n);
    return zhao_short(a, NULL, m, b, NULL, n, cutoff, false, used);
}

size_t wb_fz_damerau_bytes(const uint8_t *a, size_t m, const uint8_t *b, size_t n, size_t cutoff,
                           uint64_t *used) {
    if (m < n) return zhao_short(NULL, b, n, NULL, a, m, cutoff, true, used);
    return zhao_short(NULL, a, m, NULL, b, n, cutoff, true, used);
}
