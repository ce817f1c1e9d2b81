/* The optimal string alignment distance (kernels.h): Levenshtein plus
 * transpositions of adjacent symbols, bit-parallel (Hyyro 2003): a
 * pattern of one word through the word step of osa_word.h, a longer one
 * in blocks of 64 positions, resumable inside a column. */
#include "common.h"
#include "osa_word.h"

#include <stdlib.h>
#include <string.h>

/* ---- optimal string alignment (Hyyro 2003) --------------------------------
 *
 * Myers' column step, and one more source for D0 (the rows whose vertical
 * delta is zero, the diagonal kept): a transposition ending at row i of
 * column j needs a[i] = b[j - 1] and a[i - 1] = b[j], and the diagonal
 * two back not to have been kept already (D0 of column j - 1 clear at
 * row i - 1). So TR = ((~D0' & PM) << 1) & PM', D0' and PM' the previous
 * column's D0 and matches, PM this column's; across blocks, the bit
 * shifted in at row 0 of block w comes from row 63 of block w - 1. */

uint64_t wb_fz_osa_units(size_t m, size_t n) {
    return pattern_kernel_units(m, n);
}

bool wb_fz_osa_init(wb_fz_osa *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                    size_t cutoff) {
    memset(k, 0, sizeof *k);
    shorter_first(&a, &m, &b, &n);
    k->b = b;
    k->m = m;
    k->n = n;
    k->cutoff = cutoff;
    /* every edit changes the length by one at most: the gap is a lower
     * bound, and the distance when a side is empty */
    size_t gap = n - m;
    if (m == 0 || (cutoff != WB_FZ_NO_CUTOFF && gap > cutoff)) {
        k->settled = true;
        k->result = cutoff != WB_FZ_NO_CUTOFF && gap > cutoff ? cutoff + 1 : gap;
        return true;
    }
    if (!wb_fz_pattern_alloc(&k->pattern, a, m)) return false;
    size_t nblocks = k->pattern.nblocks;
    if (nblocks == 1) {
        k->vp = k->one;
    } else {
        if (nblocks > SIZE_MAX / (4 * sizeof(uint64_t)) ||
            !(k->vp = malloc(4 * nblocks * sizeof(uint64_t)))) {
            wb_fz_pattern_free(&k->pattern);
            return false;
        }
        k->owned_bytes = 4 * nblocks * sizeof(uint64_t);
    }
    k->vn = k->vp + nblocks;
    k->d0 = k->vn + nblocks;
    k->pm = k->d0 + nblocks;
    for (size_t w = 0; w < nblocks; w++) {
        k->vp[w] = ~(uint64_t)0;
        k->vn[w] = k->d0[w] = k->pm[w] = 0;
    }
    k->owned_bytes += k->pattern.owned_bytes;
    k->score = m;
    k->hp_carry = 1;
    return true;
}

/* After column col: the result when it was the last, or is known to pass
 * the cutoff (each column left lowers the last row by one at most). */
static void osa_column_done(wb_fz_osa *k) {
    k->col++;
    if (k->cutoff != WB_FZ_NO_CUTOFF && k->score > k->cutoff + (k->n - k->col)) {
        k->col = k->n;
        k->score = k->cutoff + 1;
    }
}

bool wb_fz_osa_step(wb_fz_osa *k, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    if (k->settled) {
        charge(used, 0);
        return true;
    }
    if (!wb_fz_pattern_fill(&k->pattern, budget, &spent)) {
        charge(used, spent);
        return false;
    }
    const wb_fz_pattern *p = &k->pattern;
    size_t nblocks = p->nblocks;
    uint64_t last = (uint64_t)1 << ((k->m - 1) % 64);
    if (nblocks == 1 && k->col < k->n) {
        uint64_t left = budget > spent ? budget - spent : 0;
        uint64_t vp = k->vp[0], vn = k->vn[0], d0 = k->d0[0], pm_old = k->pm[0];
        size_t end = k->n - k->col > left ? k->col + (size_t)left : k->n;
        spent += end - k->col;
        while (k->col < end) {
            k->score += (size_t)wb_osa_word_column(wb_fz_pattern_get(p, k->b[k->col], 0), &vp, &vn,
                                                   &d0, &pm_old, last);
            osa_column_done(k);
        }
        k->vp[0] = vp;
        k->vn[0] = vn;
        k->d0[0] = d0;
        k->pm[0] = pm_old;
    }
    while (k->col < k->n && spent < budget) {
        uint32_t c = k->b[k->col];
        uint64_t hp_carry = k->hp_carry, hn_carry = k->hn_carry;
        uint64_t d0_below = k->d0_below, pm_below = k->pm_below;
        size_t w = k->block, end = w + (size_t)min_size(nblocks - w, budget - spent);
        for (; w < end; w++) {
            uint64_t pm = wb_fz_pattern_get(p, c, w), vp = k->vp[w], vn = k->vn[w];
            uint64_t d0_old = k->d0[w];
            uint64_t tr = (((~d0_old & pm) << 1) | ((~d0_below & pm_below) >> 63)) & k->pm[w];
            uint64_t x = pm | hn_carry;
            uint64_t d0 = (((x & vp) + vp) ^ vp) | x | vn | tr;
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
            k->d0[w] = d0;
            k->pm[w] = pm;
            d0_below = d0_old;
            pm_below = pm;
        }
        spent += end - k->block;
        if (w < nblocks) {
            k->block = w;
            k->hp_carry = hp_carry;
            k->hn_carry = hn_carry;
            k->d0_below = d0_below;
            k->pm_below = pm_below;
            continue;
        }
        k->block = 0;
        k->hp_carry = 1;
        k->hn_carry = 0;
        k->d0_below = k->pm_below = 0;
        k->score = k->score + hp_carry - hn_carry;
        osa_column_done(k);
    }
    charge(used, spent);
    if (k->col < k->n) return false;
    k->result = k->cutoff != WB_FZ_NO_CUTOFF && k->score > k->cutoff ? k->cutoff + 1 : k->score;
    return true;
}

void wb_fz_osa_free(wb_fz_osa *k) {
    if (k->vp && k->vp != k->one)
        wb_fz_free_block(k->vp, 4 * k->pattern.nblocks * sizeof(uint64_t), k->free_later);
    wb_fz_pattern_free_with(&k->pattern, k->free_later);
    memset(k, 0, sizeof *k);
}

size_t wb_fz_osa_short(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t cutoff,
                       uint64_t *used) {
    shorter_first(&a, &m, &b, &n);
    size_t gap = n - m;
    if (m == 0 || above(gap, cutoff)) {
        charge(used, 0);
        return cut(gap, cutoff);
    }
    /* the units of the whole pair, whatever the affix saves */
    uint64_t units = units_of(m, WB_FZ_PATTERN_PER_UNIT) + n;
    drop_affix(&a, &m, &b, &n);
    if (m == 0) {
        charge(used, units);
        return cut(gap, cutoff);
    }
    wb_fz_short p;
    wb_fz_short_begin(&p, a, m);
    uint64_t vp = ~(uint64_t)0, vn = 0, d0 = 0, pm_old = 0, last = (uint64_t)1 << (m - 1);
    size_t score = m;
    for (size_t j = 0; j < n; j++) {
        score +=
            (size_t)wb_osa_word_column(wb_fz_short_get(&p, b[j]), &vp, &vn, &d0, &pm_old, last);
        if (cutoff != WB_FZ_NO_CUTOFF && score > cutoff + (n - j - 1)) break;
    }
    wb_fz_short_end(&p);
    charge(used, units);
    return cut(score, cutoff);
}
