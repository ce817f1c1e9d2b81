/*
 * The pair kernels that keep rows of a matrix (weighted Levenshtein,
 * Damerau-Levenshtein), and Hamming and Jaro.
 * See kernels.h for the protocol (init, step, free) and the units.
 */
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

/* Work per unit (about 2 ns on the reference machine; measured on a 2
 * vCPU Xeon at -O2: a cell of a weighted or Zhao row 1.6-2.9 ns,
 * of a 128-bit weighted row 3.5; a position of Jaro's window 0.7); the
 * set-up's cells are plain stores. */
#define WEIGHTED_CELLS 1
#define DAMERAU_CELLS  1
#define SETUP_CELLS    8
#define HAMMING_CHUNK  16 /* positions compared per unit */
#define JARO_PER_UNIT  4  /* comparisons of Jaro's window */
#define JARO_PASS      4  /* moves of the transposition pass per unit */
#define FREE_SLOT      SIZE_MAX

static size_t min_size(size_t x, size_t y) {
    return x < y ? x : y;
}

static size_t max_size(size_t x, size_t y) {
    return x > y ? x : y;
}

static uint64_t sat_add(uint64_t x, uint64_t y) {
    return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

static uint64_t sat_mul(uint64_t x, uint64_t y) {
    return x != 0 && y > UINT64_MAX / x ? UINT64_MAX : x * y;
}

/* The units of `items` items at `per` a unit, a part unit counted whole. */
static uint64_t units_of(size_t items, size_t per) {
    return (uint64_t)(items / per) + (items % per != 0);
}

/* Of `left` items at `per` a unit, those `budget` units pay for (all of
 * them when it pays for more). Taken from the start of a run of items
 * (a row), every piece but the last is a whole number of units, so the
 * run costs units_of(its items) however it is cut. */
static size_t affordable(size_t left, uint64_t budget, size_t per) {
    return budget > (uint64_t)(left / per) ? left : (size_t)budget * per;
}

/* A distance against the cutoff: above it, cutoff + 1 (with no cutoff
 * nothing is above). SIZE_MAX - 1 at most, never WB_FZ_NO_CUTOFF. */
static size_t cut(uint64_t d, size_t cutoff) {
    if (cutoff != WB_FZ_NO_CUTOFF && d > cutoff) return cutoff + 1;
    return d < SIZE_MAX ? (size_t)d : SIZE_MAX - 1;
}

/* Whether a value is above the cutoff (never, without one). */
static bool above(uint64_t d, size_t cutoff) {
    return cutoff != WB_FZ_NO_CUTOFF && d > cutoff;
}

/* Adds count * size to *bytes; false on overflow. */
static bool add_bytes(size_t *bytes, size_t count, size_t size) {
    if (count > SIZE_MAX / size || *bytes > SIZE_MAX - count * size) return false;
    *bytes += count * size;
    return true;
}

static void charge(uint64_t *used, uint64_t spent) {
    /* a call always costs something, even one finding the result known */
    *used = sat_add(*used, spent ? spent : 1);
}

/* The longer side first: rows over it, short rows. */
static bool longer_first(const uint32_t **a, size_t *m, const uint32_t **b, size_t *n) {
    if (*m >= *n) return false;
    const uint32_t *s = *a;
    size_t l = *m;
    *a = *b;
    *m = *n;
    *b = s;
    *n = l;
    return true;
}

/* The units of a row kernel: the set-up's items, rows of `cells` cells
 * (each cut anywhere, units_of its cells: see affordable), and one for a
 * call with nothing left to do. */
static uint64_t rows_units(size_t setup, uint64_t rows, size_t cells, size_t per) {
    return sat_add(sat_add(units_of(setup, SETUP_CELLS), sat_mul(rows, units_of(cells, per))), 1);
}

/* ---- weighted Levenshtein ------------------------------------------------ */

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

/* The cases known without a matrix (an empty side, a length difference
 * above the cutoff); true when settled. For Damerau: every edit changes
 * the length by one at most. */
static bool settle_unit_costs(size_t m, size_t n, size_t cutoff, size_t *result) {
    size_t diff = max_size(m, n) - min_size(m, n);
    if (m != 0 && n != 0 && !above(diff, cutoff)) return false;
    *result = cut(diff, cutoff);
    return true;
}

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

/* ---- Hamming --------------------------------------------------------------- */

void wb_fz_hamming_init(wb_fz_hamming *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                        size_t cutoff) {
    *k = (wb_fz_hamming){.a = a, .b = b, .m = m, .n = n, .cutoff = cutoff};
    /* the padding alone is above the cutoff: nothing to compare */
    if (above(max_size(m, n) - min_size(m, n), cutoff)) k->at = min_size(m, n);
}

bool wb_fz_hamming_step(wb_fz_hamming *k, uint64_t budget, uint64_t *used) {
    size_t common = min_size(k->m, k->n), pad = max_size(k->m, k->n) - common;
    uint64_t spent = 0;
    while (k->at < common) {
        size_t end = common - k->at > HAMMING_CHUNK ? k->at + HAMMING_CHUNK : common;
        size_t count = k->count;
        for (size_t j = k->at; j < end; j++)
            count += k->a[j] != k->b[j];
        k->count = count;
        k->at = end;
        spent++;
        if (above(count + pad, k->cutoff)) k->at = common;
        if (spent >= budget) break;
    }
    charge(used, spent);
    if (k->at < common) return false;
    k->result = cut(k->count + pad, k->cutoff);
    return true;
}

uint64_t wb_fz_hamming_units(size_t m, size_t n) {
    return (uint64_t)min_size(m, n) / HAMMING_CHUNK + 1;
}

/* ---- Jaro and Jaro-Winkler ------------------------------------------------- */

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
    if (n > SIZE_MAX - m) return false;
    k->flags = calloc(m + n, 1);
    if (!k->flags) return false;
    k->owned_bytes = m + n;
    return true;
}

static void jaro_finish(wb_fz_jaro *k) {
    size_t matches = k->matches, t = k->trans / 2;
    k->result =
        matches == 0
            ? 0.0
            : ((double)matches / k->m + (double)matches / k->n + (double)(matches - t) / matches) /
                  3.0;
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

bool wb_fz_jaro_step(wb_fz_jaro *k, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
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
    free(k->flags);
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
