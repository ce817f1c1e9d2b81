/* The bit-parallel kernels (kernels.h): the longest common subsequence
 * (Allison and Dix 1986, Hyyro 2004), the Levenshtein distance with unit
 * costs (Myers 1999, in Hyyro's 2003 blocks) and the optimal string
 * alignment distance (Hyyro 2003). The pattern is cut
 * into blocks of 64 positions, one machine word each; the text is walked
 * one symbol (a column) at a time, every block updated per column. Both
 * measures are symmetric: a kernel that builds its own pattern builds the
 * shorter side's (less memory, and a short side of one word takes the
 * one-word loop), a budget at a time in its first steps. */
#include "kernels.h"

#include "levenshtein_word.h"
#include "osa_word.h"

#include <stdlib.h>
#include <string.h>

static size_t blocks_of(size_t m) {
    size_t b = m / 64 + (m % 64 != 0);
    return b > 0 ? b : 1;
}

static uint64_t saturating_product(uint64_t x, uint64_t y) {
    return y != 0 && x > UINT64_MAX / y ? UINT64_MAX : x * y;
}

static uint64_t saturating_sum(uint64_t x, uint64_t y) {
    return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

static size_t min_size(size_t x, size_t y) {
    return x < y ? x : y;
}

/* A step's units: what it did, and one for a call that found nothing to
 * do (the result already known). */
static void charge(uint64_t *used, uint64_t spent) {
    *used = saturating_sum(*used, spent ? spent : 1);
}

/* The units of a pattern of either side: its fill, and blocks(pattern)
 * per text symbol. With a of m symbols the pattern, blocks(m) n <=
 * (m / 64 + 1) n <= blocks(n) m + n: so the shorter side's pattern plus
 * its length bounds both. */
static uint64_t pattern_kernel_units(size_t m, size_t n) {
    size_t s = min_size(m, n), l = m < n ? n : m;
    uint64_t columns = saturating_sum(saturating_product(blocks_of(s), l), s);
    return saturating_sum(saturating_sum(1, wb_fz_pattern_units(s)), columns);
}

/* The shorter side first (a when the lengths are equal). */
static void shorter_first(const uint32_t **a, size_t *m, const uint32_t **b, size_t *n) {
    if (*m <= *n) return;
    const uint32_t *s = *a;
    size_t l = *m;
    *a = *b;
    *m = *n;
    *b = s;
    *n = l;
}

/* ---- LCS -------------------------------------------------------------- */

uint64_t wb_fz_lcs_units(size_t m, size_t n) {
    return pattern_kernel_units(m, n);
}

/* The vector S: all ones (no position matched yet). */
static bool lcs_vectors(wb_fz_lcs *k, size_t nblocks) {
    if (nblocks <= 1) {
        k->s = &k->one;
    } else {
        k->s = malloc(nblocks * sizeof(uint64_t));
        if (!k->s) return false;
        k->owned_bytes += nblocks * sizeof(uint64_t);
    }
    for (size_t w = 0; w < nblocks; w++)
        k->s[w] = ~(uint64_t)0;
    return true;
}

bool wb_fz_lcs_init(wb_fz_lcs *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    memset(k, 0, sizeof *k);
    shorter_first(&a, &m, &b, &n);
    if (!wb_fz_pattern_alloc(&k->pattern, a, m)) return false;
    if (!lcs_vectors(k, k->pattern.nblocks)) {
        wb_fz_pattern_free(&k->pattern);
        return false;
    }
    k->owned_bytes += k->pattern.owned_bytes;
    k->use = &k->pattern;
    k->b = b;
    k->m = m;
    k->n = n;
    return true;
}

bool wb_fz_lcs_init_with(wb_fz_lcs *k, const wb_fz_pattern *pattern, const uint32_t *b, size_t n) {
    memset(k, 0, sizeof *k);
    if (!lcs_vectors(k, pattern->nblocks)) return false;
    k->use = pattern;
    k->b = b;
    k->m = pattern->m;
    k->n = n;
    return true;
}

bool wb_fz_lcs_step(wb_fz_lcs *k, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    if (k->use == &k->pattern && !wb_fz_pattern_fill(&k->pattern, budget, &spent)) {
        charge(used, spent);
        return false;
    }
    const wb_fz_pattern *p = k->use;
    size_t nblocks = p->nblocks;
    if (k->m == 0) k->col = k->n;
    if (nblocks == 1) {
        uint64_t left = budget > spent ? budget - spent : 0;
        size_t end = k->n - k->col > left ? k->col + (size_t)left : k->n;
        uint64_t s = k->s[0];
        for (size_t j = k->col; j < end; j++)
            s = wb_fz_lcs_word(s, wb_fz_pattern_get(p, k->b[j], 0));
        k->s[0] = s;
        spent += end - k->col;
        k->col = end;
    } else {
        while (k->col < k->n && spent < budget) {
            uint32_t c = k->b[k->col];
            uint64_t carry = k->carry;
            size_t w = k->block, end = w + (size_t)min_size(nblocks - w, budget - spent);
            for (; w < end; w++) {
                uint64_t s = k->s[w], u = s & wb_fz_pattern_get(p, c, w);
                uint64_t sum = s + u, total = sum + carry;
                carry = (uint64_t)(sum < s) | (uint64_t)(total < sum);
                k->s[w] = total | (s - u);
            }
            spent += end - k->block;
            if (w == nblocks) {
                /* the carry out of the last block: one more matched
                 * position (wb_fz_lcs_word_counted's reasoning, over the
                 * whole vector) */
                k->lcs += carry;
                k->carry = 0;
                k->block = 0;
                k->col++;
            } else {
                k->carry = carry;
                k->block = w;
            }
        }
    }
    charge(used, spent);
    if (k->col < k->n) return false;
    k->result = k->m == 0 ? 0 : nblocks == 1 ? wb_fz_lcs_of(k->s[0], k->m) : k->lcs;
    return true;
}

void wb_fz_lcs_free(wb_fz_lcs *k) {
    if (k->s != &k->one) free(k->s);
    wb_fz_pattern_free(&k->pattern);
    memset(k, 0, sizeof *k);
}

/* ---- Levenshtein ---------------------------------------------------------- */

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
    if (k->vp != k->one) free(k->vp);
    wb_fz_pattern_free(&k->pattern);
    memset(k, 0, sizeof *k);
}
