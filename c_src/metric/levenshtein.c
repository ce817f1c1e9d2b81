/* Levenshtein (kernels.h): the unit-cost distance bit-parallel (Myers
 * 1999, in Hyyro's 2003 blocks): a pattern of one word through the word
 * step of levenshtein_word.h, a longer one in blocks of 64 positions,
 * resumable inside a column; and the weighted distance (Wagner-Fischer
 * rows, 64-bit cells that saturate or 128-bit ones). The byte and UTF-8
 * core of the Levenshtein job is c_src/levenshtein/levenshtein.c; the
 * lanes of many short candidates c_src/search/lanes*. */
#include "common.h"
#include "levenshtein_word.h"

#include <stdlib.h>
#include <string.h>

/* Work per unit of a weighted row: a cell (1.6-2.9 ns at -O2 on a 2
 * vCPU Xeon, a 128-bit one 3.5) */
#define WEIGHTED_CELLS 1

/* ---- unit costs ------------------------------------------------------------ */

uint64_t wb_fz_lev_units(size_t m, size_t n) {
    return pattern_kernel_units(m, n);
}

/* The vectors: VP all ones, VN zero (column 0: row i is i). */
static bool lev_vectors(wb_fz_lev *k, size_t nblocks) {
    if (nblocks <= 1) {
        k->vp = &k->one_vp;
        k->vn = &k->one_vn;
    } else {
        k->vp = malloc(2 * nblocks * sizeof(uint64_t));
        if (!k->vp) return false;
        k->vn = k->vp + nblocks;
        k->owned_bytes += 2 * nblocks * sizeof(uint64_t);
    }
    for (size_t w = 0; w < nblocks; w++) {
        k->vp[w] = ~(uint64_t)0;
        k->vn[w] = 0;
    }
    return true;
}

bool wb_fz_lev_init_with(wb_fz_lev *k, const wb_fz_pattern *pattern, const uint32_t *b, size_t n,
                         size_t cutoff) {
    memset(k, 0, sizeof *k);
    if (!lev_vectors(k, pattern->nblocks)) return false;
    k->use = pattern;
    k->b = b;
    k->m = pattern->m;
    k->n = n;
    k->k = cutoff;
    k->score = pattern->m;
    /* row 0 of the matrix grows by one per column */
    k->hp_carry = 1;
    return true;
}

bool wb_fz_lev_init(wb_fz_lev *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                    size_t cutoff) {
    memset(k, 0, sizeof *k);
    shorter_first(&a, &m, &b, &n);
    wb_fz_pattern pattern;
    if (!wb_fz_pattern_alloc(&pattern, a, m)) return false;
    /* the vectors' count is known before the fill */
    if (!wb_fz_lev_init_with(k, &pattern, b, n, cutoff)) {
        wb_fz_pattern_free(&pattern);
        return false;
    }
    k->pattern = pattern;
    k->use = &k->pattern;
    k->owned_bytes += pattern.owned_bytes;
    return true;
}

bool wb_fz_lev_step(wb_fz_lev *k, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    if (k->use == &k->pattern && !wb_fz_pattern_fill(&k->pattern, budget, &spent)) {
        charge(used, spent);
        return false;
    }
    const wb_fz_pattern *p = k->use;
    size_t nblocks = p->nblocks;
    if (k->m == 0) {
        k->score = k->n;
        k->col = k->n;
    }
    /* the bit of row m in the last block */
    uint64_t last = (uint64_t)1 << ((k->m - 1) % 64);
    if (nblocks == 1 && k->col < k->n) {
        /* one word, in registers: no carries between blocks */
        uint64_t left = budget > spent ? budget - spent : 0, vp = k->vp[0], vn = k->vn[0];
        size_t end = k->n - k->col > left ? k->col + (size_t)left : k->n, col = k->col;
        size_t score = k->score, cutoff = k->k;
        spent += end - col;
        while (col < end) {
            score += (size_t)wb_lev_word_column(wb_fz_pattern_get(p, k->b[col], 0), &vp, &vn, last);
            col++;
            if (cutoff != WB_FZ_NO_CUTOFF && score > cutoff + (k->n - col)) {
                col = k->n;
                score = cutoff + 1;
                break;
            }
        }
        k->vp[0] = vp;
        k->vn[0] = vn;
        k->score = score;
        k->col = col;
    }
    while (k->col < k->n && spent < budget) {
        uint32_t c = k->b[k->col];
        uint64_t hp_carry = k->hp_carry, hn_carry = k->hn_carry;
        size_t w = k->block, end = w + (size_t)min_size(nblocks - w, budget - spent);
        for (; w < end; w++) {
            uint64_t match = wb_fz_pattern_get(p, c, w), vp = k->vp[w], vn = k->vn[w];
            uint64_t x = match | hn_carry;
            uint64_t d0 = (((x & vp) + vp) ^ vp) | x | vn;
            uint64_t hp = vn | ~(d0 | vp), hn = d0 & vp;
            uint64_t hp_in = hp_carry, hn_in = hn_carry;
            if (w + 1 < nblocks) {
                hp_carry = hp >> 63;
                hn_carry = hn >> 63;
            } else {
                hp_carry = (hp & last) != 0;
                hn_carry = (hn & last) != 0;
            }
            hp = (hp << 1) | hp_in;
            hn = (hn << 1) | hn_in;
            k->vp[w] = hn | ~(d0 | hp);
            k->vn[w] = hp & d0;
        }
        spent += end - k->block;
        if (w < nblocks) {
            k->block = w;
            k->hp_carry = hp_carry;
            k->hn_carry = hn_carry;
            continue;
        }
        k->block = 0;
        k->hp_carry = 1;
        k->hn_carry = 0;
        k->score = k->score + hp_carry - hn_carry;
        k->col++;
        /* each column left can lower the last row by one at most */
        if (k->k != WB_FZ_NO_CUTOFF && k->score > k->k + (k->n - k->col)) {
            k->col = k->n;
            k->score = k->k + 1;
        }
    }
    charge(used, spent);
    if (k->col < k->n) return false;
    k->result = k->k != WB_FZ_NO_CUTOFF && k->score > k->k ? k->k + 1 : k->score;
    return true;
}

void wb_fz_lev_free(wb_fz_lev *k) {
    if (k->vp != &k->one_vp) free(k->vp);
    wb_fz_pattern_free(&k->pattern);
    memset(k, 0, sizeof *k);
}

size_t wb_fz_lev_short(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t cutoff,
                       uint64_t *used) {
    shorter_first(&a, &m, &b, &n);
    if (m == 0) {
        charge(used, 0);
        return cut(n, cutoff);
    }
    /* the units of the whole pair, whatever the affix saves */
    uint64_t units = units_of(m, WB_FZ_PATTERN_PER_UNIT) + n;
    drop_affix(&a, &m, &b, &n);
    if (m == 0) {
        charge(used, units);
        return cut(n, cutoff);
    }
    wb_fz_short p;
    wb_fz_short_begin(&p, a, m);
    uint64_t vp = ~(uint64_t)0, vn = 0, last = (uint64_t)1 << (m - 1);
    size_t score = m;
    for (size_t j = 0; j < n; j++) {
        score += (size_t)wb_lev_word_column(wb_fz_short_get(&p, b[j]), &vp, &vn, last);
        /* each column left can lower the last row by one at most */
        if (cutoff != WB_FZ_NO_CUTOFF && score > cutoff + (n - j - 1)) break;
    }
    wb_fz_short_end(&p);
    charge(used, units);
    return cut(score, cutoff);
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
