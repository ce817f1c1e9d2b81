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
    /* the vectors and the table through locals: a store through a vector
     * could otherwise reload k's and p's fields */
    uint64_t *restrict vps = k->vp, *restrict vns = k->vn, *restrict d0s = k->d0,
                       *restrict pms = k->pm;
    const uint64_t *low = p->low;
    while (k->col < k->n && spent < budget) {
        uint32_t c = k->b[k->col];
        const uint64_t *row = c < 256 ? low + (size_t)c * nblocks : NULL;
        uint64_t hp_carry = k->hp_carry, hn_carry = k->hn_carry;
        uint64_t d0_below = k->d0_below, pm_below = k->pm_below;
        uint64_t hp_end = 0, hn_end = 0;
        size_t w = k->block, end = w + (size_t)min_size(nblocks - w, budget - spent);
        for (; w < end; w++) {
            /* row 63's deltas go into the next block (the last block's
             * bottom row is read from hp_end and hn_end) */
            uint64_t pm = row ? row[w] : wb_fz_pattern_get(p, c, w), d0_old = d0s[w];
            wb_osa_block_column(pm, (~d0_below & pm_below) >> 63, &hp_carry, &hn_carry, &vps[w],
                                &vns[w], &d0s[w], &pms[w], &hp_end, &hn_end);
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
        k->score = k->score + ((hp_end & last) != 0) - ((hn_end & last) != 0);
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

/* The distance from a last column's vertical deltas (vp, vn, rows under
 * `rows` counted) and its row 0 (n): no bottom row kept column by
 * column, when no cutoff can end the kernel early. */
static inline size_t osa_from_column(size_t n, uint64_t vp, uint64_t vn, uint64_t rows) {
    return n + wb_fz_popcount(vp & rows) - wb_fz_popcount(vn & rows);
}

/* Whether a cutoff can end a kernel early: the bottom row is at most n
 * (the longer side's length), so at column j < n it never passes
 * cutoff + (n - j) when cutoff >= n. */
static inline bool osa_may_end(size_t cutoff, size_t n) {
    return cutoff != WB_FZ_NO_CUTOFF && cutoff < n;
}

/* Two blocks' vectors, and their D0 and matches of the last column. */
typedef struct {
    uint64_t vp0, vn0, d00, pm0, vp1, vn1, d01, pm1;
} osa_two;

/* One column of two blocks against matches pm0 and pm1 (the block
 * kernel's carries between them): returns the change of the bottom row
 * (`last` its bit in block 1) as a wrapping uint64_t. */
static inline uint64_t osa_two_column(osa_two *v, uint64_t pm0, uint64_t pm1, uint64_t last) {
    uint64_t hp_c = 1, hn_c = 0, hp, hn, d0_old = v->d00;
    wb_osa_block_column(pm0, 0, &hp_c, &hn_c, &v->vp0, &v->vn0, &v->d00, &v->pm0, &hp, &hn);
    /* block 1: its transposition's low bit from block 0's row 63 */
    wb_osa_block_column(pm1, (~d0_old & pm0) >> 63, &hp_c, &hn_c, &v->vp1, &v->vn1, &v->d01,
                        &v->pm1, &hp, &hn);
    return ((hp & last) != 0) - (uint64_t)((hn & last) != 0);
}

/* Symbol c's matches in the short pattern's two words. */
static inline void osa_two_get(const wb_fz_short *p, uint32_t c, uint64_t *pm0, uint64_t *pm1) {
    if (c < 256) {
        *pm0 = p->low[c][0];
        *pm1 = p->low[c][1];
        return;
    }
    const wb_fz_short_entry *e = wb_fz_short_find(p, c);
    *pm0 = e ? e->mask[0] : 0;
    *pm1 = e ? e->mask[1] : 0;
}

/* Two words (65 to 128 pattern symbols), the affix kept: the block
 * kernel's column in registers, its early end and units exactly (the
 * pattern's fill, two a column done). */
static size_t osa_short_two(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t cutoff,
                            uint64_t *used) {
    wb_fz_short p;
    wb_fz_short_begin(&p, a, m);
    osa_two v = {~(uint64_t)0, 0, 0, 0, ~(uint64_t)0, 0, 0, 0};
    uint64_t last = (uint64_t)1 << (m - 65);
    size_t score = m, j = 0;
    uint64_t pm0, pm1;
    if (!osa_may_end(cutoff, n)) {
        for (; j < n; j++) {
            osa_two_get(&p, b[j], &pm0, &pm1);
            osa_two_column(&v, pm0, pm1, last);
        }
        score = osa_from_column(n, v.vp0, v.vn0, ~(uint64_t)0) +
                osa_from_column(0, v.vp1, v.vn1, wb_fz_low_bits(m - 64));
    } else {
        while (j < n) {
            osa_two_get(&p, b[j], &pm0, &pm1);
            score += (size_t)osa_two_column(&v, pm0, pm1, last);
            j++;
            /* each column left lowers the last row by one at most */
            if (score > cutoff + (n - j)) break;
        }
    }
    wb_fz_short_end(&p);
    charge(used, units_of(m, WB_FZ_PATTERN_PER_UNIT) + 2 * (uint64_t)j);
    return cut(score, cutoff);
}

size_t wb_fz_osa_short(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t cutoff,
                       uint64_t *used) {
    shorter_first(&a, &m, &b, &n);
    size_t gap = n - m;
    if (m == 0 || above(gap, cutoff)) {
        charge(used, 0);
        return cut(gap, cutoff);
    }
    if (m > 64) return osa_short_two(a, m, b, n, cutoff, used);
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
    if (!osa_may_end(cutoff, n)) {
        for (size_t j = 0; j < n; j++)
            wb_osa_word_column(wb_fz_short_get(&p, b[j]), &vp, &vn, &d0, &pm_old, last);
        score = osa_from_column(n, vp, vn, wb_fz_low_bits(m));
    } else {
        for (size_t j = 0; j < n; j++) {
            score +=
                (size_t)wb_osa_word_column(wb_fz_short_get(&p, b[j]), &vp, &vn, &d0, &pm_old, last);
            if (score > cutoff + (n - j - 1)) break;
        }
    }
    wb_fz_short_end(&p);
    charge(used, units);
    return cut(score, cutoff);
}
