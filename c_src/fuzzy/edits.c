/*
 * The pair kernels that keep rows of a matrix (weighted Levenshtein,
 * optimal string alignment, Damerau-Levenshtein), and Hamming and Jaro.
 * See kernels.h for the protocol (init, step, free) and the units.
 */
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

#define CELLS_PER_UNIT 64 /* cells of a matrix row */
#define HAMMING_CHUNK  64 /* positions compared per unit */
#define JARO_PER_UNIT  16 /* comparisons of Jaro's window */
#define JARO_CHUNK     16 /* symbols of a per chunk of the transposition pass */
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

/* Units of `rows` rows of n + 1 cells, plus one for a call that finds
 * the result already known. */
static uint64_t rows_units(uint64_t rows, size_t n) {
    return sat_add(sat_mul(rows, 1 + (uint64_t)n / CELLS_PER_UNIT), 1);
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

/* Steps a kernel that keeps rows of a matrix: next_row computes row
 * *row + 1 (and counts it) and returns its least cell; bottom the last
 * cell once every row is done. Row minima never decrease (each kernel
 * says why), so a row whose least cell is above the cutoff settles the
 * result at cutoff + 1. One row is 1 + n / CELLS_PER_UNIT units. */
static bool rows_step(void *k, size_t *row, size_t m, size_t n, size_t cutoff, size_t *result,
                      uint64_t (*next_row)(void *), size_t (*bottom)(const void *), uint64_t budget,
                      uint64_t *used) {
    uint64_t spent = 0, row_units = 1 + (uint64_t)n / CELLS_PER_UNIT;
    while (*row < m) {
        uint64_t least = next_row(k);
        spent = sat_add(spent, row_units);
        if (above(least, cutoff)) {
            *result = cutoff + 1;
            *row = m;
        } else if (*row == m) {
            *result = cut(bottom(k), cutoff);
        }
        if (spent >= budget) break;
    }
    charge(used, spent);
    return *row == m;
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
    *k = (wb_fz_weighted){.a = a,
                          .b = b,
                          .m = m,
                          .n = n,
                          .cutoff = cutoff,
                          .ins = ins,
                          .del = del,
                          .sub = sub,
                          .wide = wide};
    /* the length difference takes that many insertions (or deletions):
     * a lower bound, and the distance itself when a side is empty */
    wb_fz_wide least = m > n ? (wb_fz_wide)(m - n) * del : (wb_fz_wide)(n - m) * ins;
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
        k->wcells[0] = 0;
        for (size_t j = 1; j <= n; j++)
            k->wcells[j] = k->wcells[j - 1] + ins;
    } else {
        k->cells = malloc(bytes);
        if (!k->cells) return false;
        k->cells[0] = 0;
        for (size_t j = 1; j <= n; j++)
            k->cells[j] = sat_add(k->cells[j - 1], ins);
    }
    k->owned_bytes = bytes;
    return true;
}

/* Turns the row in cells (row k->row) into the next one, in place;
 * returns its minimum (2^64 - 1: that or more). */
static uint64_t weighted_row(wb_fz_weighted *k) {
    uint64_t *d = k->cells;
    const uint32_t *b = k->b;
    uint32_t c = k->a[k->row];
    uint64_t diag = d[0];
    d[0] = sat_add(d[0], k->del);
    uint64_t least = d[0];
    for (size_t j = 1; j <= k->n; j++) {
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
    k->row++;
    return least;
}

/* The same in 128 bits, which no sum here reaches the end of. */
static wb_fz_wide weighted_row_wide(wb_fz_weighted *k) {
    wb_fz_wide *d = k->wcells;
    const uint32_t *b = k->b;
    uint32_t c = k->a[k->row];
    wb_fz_wide diag = d[0];
    d[0] += k->del;
    wb_fz_wide least = d[0];
    for (size_t j = 1; j <= k->n; j++) {
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
    k->row++;
    return least;
}

bool wb_fz_weighted_step(wb_fz_weighted *k, uint64_t budget, uint64_t *used) {
    /* every cell comes from the row above plus costs >= 0 (or from its
     * left neighbour): row minima never decrease, so a row whose least
     * cell is above the cutoff settles the result at cutoff + 1 (a
     * saturated least is above any cutoff, at most SIZE_MAX - 1) */
    uint64_t spent = 0, row_units = 1 + (uint64_t)k->n / CELLS_PER_UNIT;
    while (k->row < k->m) {
        wb_fz_wide least = k->wide ? weighted_row_wide(k) : weighted_row(k);
        spent = sat_add(spent, row_units);
        if (k->cutoff != WB_FZ_NO_CUTOFF && least > k->cutoff) {
            k->result = (wb_fz_wide)k->cutoff + 1;
            k->row = k->m;
        } else if (k->row == k->m) {
            k->result = weighted_cut(k->wide ? k->wcells[k->n] : k->cells[k->n], k->cutoff);
        }
        if (spent >= budget) break;
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
    return rows_units(m, n);
}

/* ---- optimal string alignment ---------------------------------------------- */

/* The cases known without a matrix (an empty side, a length difference
 * above the cutoff); true when settled. For OSA and Damerau: every edit
 * changes the length by one at most. */
static bool settle_unit_costs(size_t m, size_t n, size_t cutoff, size_t *result) {
    size_t diff = max_size(m, n) - min_size(m, n);
    if (m != 0 && n != 0 && !above(diff, cutoff)) return false;
    *result = cut(diff, cutoff);
    return true;
}

bool wb_fz_osa_init(wb_fz_osa *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                    size_t cutoff) {
    *k = (wb_fz_osa){.a = a, .b = b, .m = m, .n = n, .cutoff = cutoff};
    if (settle_unit_costs(m, n, cutoff, &k->result)) {
        k->row = m;
        return true;
    }
    size_t bytes = 0;
    if (n == SIZE_MAX || n + 1 > SIZE_MAX / 3 || !add_bytes(&bytes, 3 * (n + 1), sizeof *k->rows))
        return false;
    k->rows = malloc(bytes);
    if (!k->rows) return false;
    k->owned_bytes = bytes;
    for (size_t j = 0; j <= n; j++)
        k->rows[j] = j;
    return true;
}

/* Computes row k->row + 1; row i sits in rows[i % 3]. Returns its
 * minimum. */
static size_t osa_row(wb_fz_osa *k) {
    size_t i = ++k->row, w = k->n + 1;
    size_t *cur = k->rows + i % 3 * w, *prev = k->rows + (i - 1) % 3 * w;
    size_t *prev2 = k->rows + (i + 1) % 3 * w; /* row i - 2 (unused for i = 1) */
    const uint32_t *b = k->b;
    uint32_t c = k->a[i - 1], before = i > 1 ? k->a[i - 2] : 0;
    cur[0] = i;
    size_t least = i;
    for (size_t j = 1; j <= k->n; j++) {
        size_t v = prev[j] + 1, left = cur[j - 1] + 1, diag = prev[j - 1] + (c != b[j - 1]);
        if (left < v) v = left;
        if (diag < v) v = diag;
        /* the two symbols ending here swapped */
        if (i > 1 && j > 1 && c == b[j - 2] && before == b[j - 1] && prev2[j - 2] + 1 < v)
            v = prev2[j - 2] + 1;
        cur[j] = v;
        if (v < least) least = v;
    }
    return least;
}

static uint64_t osa_next(void *k) {
    return osa_row(k);
}

static size_t osa_bottom(const void *k) {
    const wb_fz_osa *p = k;
    return p->rows[p->m % 3 * (p->n + 1) + p->n];
}

bool wb_fz_osa_step(wb_fz_osa *k, uint64_t budget, uint64_t *used) {
    /* a transposition adds 1 to row i - 2, whose minimum is at most one
     * less than row i - 1's: row minima never decrease */
    return rows_step(k, &k->row, k->m, k->n, k->cutoff, &k->result, osa_next, osa_bottom, budget,
                     used);
}

void wb_fz_osa_free(wb_fz_osa *k) {
    free(k->rows);
    k->rows = NULL;
    k->owned_bytes = 0;
}

uint64_t wb_fz_osa_units(size_t m, size_t n) {
    return rows_units(m, n);
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
 * slot for each b[j] is found once, in init. */

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

    /* row 0 in the first row, row -1 in the second, FR unset */
    size_t *r0 = k->rows, *r1 = k->rows + (n + 2), *fr = k->rows + 2 * (n + 2);
    r0[0] = k->big;
    for (size_t j = 0; j <= n; j++)
        r0[j + 1] = j;
    for (size_t j = 0; j < n + 2; j++)
        r1[j] = fr[j] = k->big;

    for (size_t s = 0; s < k->slots; s++)
        k->last[s] = FREE_SLOT;
    for (size_t j = 0; j < n; j++) {
        size_t s = damerau_slot(k, b[j]);
        if (k->last[s] == FREE_SLOT) {
            k->keys[s] = b[j];
            k->last[s] = 0;
        }
        k->slot_of[j] = s;
    }
    return true;
}

/* Computes row k->row + 1: even rows in the first row array, odd ones in
 * the second (which, before, holds row i - 2). Returns its minimum. */
static size_t damerau_row(wb_fz_damerau *k) {
    size_t i = ++k->row, n = k->n, w = n + 2;
    /* pointers to column 0: column -1 is at index -1 */
    size_t *cur = k->rows + (i & 1 ? w : 0) + 1, *prev = k->rows + (i & 1 ? 0 : w) + 1;
    size_t *fr = k->rows + 2 * w + 1;
    const uint32_t *b = k->b;
    const size_t *last = k->last, *slot_of = k->slot_of;
    uint32_t c = k->a[i - 1];
    size_t l = 0;           /* last column of this row where b matched c (0: none) */
    size_t t = k->big;      /* d[i - 2][l - 1] */
    size_t two_up = cur[0]; /* d[i - 2][j - 1]: cur still holds row i - 2 */
    cur[0] = i;
    size_t least = i;
    for (size_t j = 1; j <= n; j++) {
        /* column j - 2 of row i - 1, -1 when j is 1: counted from the
         * row's start (prev - 1), never below it */
        size_t v = wb_fz_zhao_cell(i, j, prev[j], cur[j - 1], prev[j - 1], c == b[j - 1],
                                   last[slot_of[j - 1]], two_up, (prev - 1)[j - 1], &l, &t, &fr[j]);
        two_up = cur[j];
        cur[j] = v;
        if (v < least) least = v;
    }
    /* c's own entry is read only by later rows */
    size_t s = damerau_slot(k, c);
    if (k->last[s] != FREE_SLOT) k->last[s] = i;
    return least;
}

static uint64_t damerau_next(void *k) {
    return damerau_row(k);
}

static size_t damerau_bottom(const void *k) {
    const wb_fz_damerau *p = k;
    return p->rows[(p->m & 1 ? p->n + 2 : 0) + 1 + p->n];
}

bool wb_fz_damerau_step(wb_fz_damerau *k, uint64_t budget, uint64_t *used) {
    /* a transposition from row k - 1 adds at least i - k, and row
     * minima grow by one at most per row: they never decrease */
    return rows_step(k, &k->row, k->m, k->n, k->cutoff, &k->result, damerau_next, damerau_bottom,
                     budget, used);
}

void wb_fz_damerau_free(wb_fz_damerau *k) {
    free(k->rows);
    k->rows = NULL;
    k->last = k->slot_of = NULL;
    k->keys = NULL;
    k->owned_bytes = 0;
}

uint64_t wb_fz_damerau_units(size_t m, size_t n) {
    /* the map of b's symbols: about one more row */
    return rows_units(sat_add(m, 1), n);
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

/* Matches symbol k->at of a with the first unmatched equal symbol of b in
 * its window; returns the units. */
static uint64_t jaro_match(wb_fz_jaro *k) {
    size_t i = k->at++;
    uint8_t *a_matched = k->flags, *b_matched = k->flags + k->m;
    size_t lo = i > k->bound ? i - k->bound : 0;
    size_t hi = k->n - i > k->bound ? i + k->bound + 1 : k->n;
    uint32_t c = k->a[i];
    for (size_t j = lo; j < hi; j++) {
        if (!b_matched[j] && k->b[j] == c) {
            a_matched[i] = b_matched[j] = 1;
            k->matches++;
            break;
        }
    }
    if (k->at == k->m && k->matches == 0) jaro_finish(k);
    return 1 + (uint64_t)(hi - lo) / JARO_PER_UNIT;
}

/* Pairs the matched symbols of a and b in order, up to JARO_CHUNK
 * symbols of a, counting those that differ; returns the units. */
static uint64_t jaro_transpositions(wb_fz_jaro *k) {
    const uint8_t *a_matched = k->flags, *b_matched = k->flags + k->m;
    size_t end = min_size(k->m, k->walked + JARO_CHUNK), from = k->bpos;
    for (; k->walked < end; k->walked++) {
        if (!a_matched[k->walked]) continue;
        /* b holds as many matched symbols as a: this one is there */
        while (!b_matched[k->bpos])
            k->bpos++;
        k->trans += k->a[k->walked] != k->b[k->bpos];
        k->bpos++;
        if (++k->seen == k->matches) {
            jaro_finish(k);
            break;
        }
    }
    return 1 + (uint64_t)(k->bpos - from) / JARO_PER_UNIT;
}

bool wb_fz_jaro_step(wb_fz_jaro *k, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    while (!k->done) {
        spent = sat_add(spent, k->at < k->m ? jaro_match(k) : jaro_transpositions(k));
        if (spent >= budget) break;
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
    uint64_t matching = sat_mul(s, 1 + window / JARO_PER_UNIT);
    /* the pass in chunks: one per JARO_CHUNK symbols of a, and b once */
    uint64_t pass = (uint64_t)s / JARO_CHUNK + 1 + (uint64_t)l / JARO_PER_UNIT;
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
