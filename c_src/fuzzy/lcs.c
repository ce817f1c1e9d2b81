/* The bit-parallel kernels (kernels.h): the longest common subsequence
 * (Allison and Dix 1986, Hyyro 2004) and the Levenshtein distance with
 * unit costs (Myers 1999, in Hyyro's 2003 blocks). The pattern a is cut
 * into blocks of 64 positions, one machine word each; the text b is walked
 * one symbol (a column) at a time, every block updated per column. */
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

static size_t blocks_of(size_t m) {
    return m / 64 + (m % 64 != 0);
}

static uint64_t saturating_product(uint64_t x, uint64_t y) {
    return y != 0 && x > UINT64_MAX / y ? UINT64_MAX : x * y;
}

/* ---- LCS -------------------------------------------------------------- */

uint64_t wb_fz_lcs_units(size_t m, size_t n) {
    return 1 + saturating_product(blocks_of(m), n);
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
    if (!wb_fz_pattern_init(&k->pattern, a, m)) return false;
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
    const wb_fz_pattern *p = k->use;
    size_t nblocks = p->nblocks;
    uint64_t done = 0;
    if (k->m == 0) k->col = k->n;
    if (nblocks == 1) {
        uint64_t s = k->s[0];
        for (; k->col < k->n && done < budget; k->col++, done++)
            s = wb_fz_lcs_word(s, wb_fz_pattern_get(p, k->b[k->col], 0));
        k->s[0] = s;
    } else {
        for (; k->col < k->n && done < budget; k->col++) {
            uint32_t c = k->b[k->col];
            uint64_t carry = 0;
            for (size_t w = 0; w < nblocks; w++) {
                uint64_t s = k->s[w], u = s & wb_fz_pattern_get(p, c, w);
                uint64_t sum = s + u, total = sum + carry;
                carry = (uint64_t)(sum < s) | (uint64_t)(total < sum);
                k->s[w] = total | (s - u);
            }
            done += nblocks;
        }
    }
    *used += done + 1;
    if (k->col < k->n) return false;
    /* the zeros of S among the m positions: the matched ones */
    size_t lcs = 0;
    for (size_t w = 0; w < nblocks && k->m > 0; w++)
        lcs += wb_fz_lcs_of(k->s[w], w + 1 < nblocks ? 64 : k->m - 64 * w);
    k->result = lcs;
    return true;
}

void wb_fz_lcs_free(wb_fz_lcs *k) {
    if (k->s != &k->one) free(k->s);
    wb_fz_pattern_free(&k->pattern);
    memset(k, 0, sizeof *k);
}

/* ---- Levenshtein ---------------------------------------------------------- */

uint64_t wb_fz_lev_units(size_t m, size_t n) {
    return wb_fz_lcs_units(m, n);
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
    return true;
}

bool wb_fz_lev_init(wb_fz_lev *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                    size_t cutoff) {
    memset(k, 0, sizeof *k);
    wb_fz_pattern pattern;
    if (!wb_fz_pattern_init(&pattern, a, m)) return false;
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
    const wb_fz_pattern *p = k->use;
    size_t nblocks = p->nblocks;
    uint64_t done = 0;
    if (k->m == 0) {
        k->score = k->n;
        k->col = k->n;
    }
    /* the bit of row m in the last block */
    uint64_t last = (uint64_t)1 << ((k->m - 1) % 64);
    for (; k->col < k->n && done < budget; k->col++) {
        uint32_t c = k->b[k->col];
        /* the horizontal deltas entering each block from the one above:
         * row 0 of the matrix grows by one per column */
        uint64_t hp_carry = 1, hn_carry = 0;
        for (size_t w = 0; w < nblocks; w++) {
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
        k->score = k->score + hp_carry - hn_carry;
        done += nblocks;
        /* each column left can lower the last row by one at most */
        if (k->k != WB_FZ_NO_CUTOFF && k->score > k->k + (k->n - k->col - 1)) {
            k->col = k->n;
            k->score = k->k + 1;
            break;
        }
    }
    *used += done + 1;
    if (k->col < k->n) return false;
    k->result = k->k != WB_FZ_NO_CUTOFF && k->score > k->k ? k->k + 1 : k->score;
    return true;
}

void wb_fz_lev_free(wb_fz_lev *k) {
    if (k->vp != &k->one_vp) free(k->vp);
    wb_fz_pattern_free(&k->pattern);
    memset(k, 0, sizeof *k);
}
