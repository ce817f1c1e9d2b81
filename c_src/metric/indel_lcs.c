/* The longest common subsequence, Indel's metric (Indel = m + n - 2 LCS):
 * bit-parallel (Allison and Dix 1986, Hyyro 2004), see kernels.h. The
 * pattern is cut into blocks of 64 positions, one machine word each; the
 * text is walked one symbol (a column) at a time, every block updated per
 * column: a pattern of one word takes the one-word loop (the word step
 * of kernels.h, wb_fz_lcs_word), a longer one the blocks, resumable
 * inside a column. The LCS is symmetric: a kernel that builds its own
 * pattern builds the shorter side's (less memory, and a short side of one
 * word takes the one-word loop), a budget at a time in its first steps. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

/* A block of S set up (in fresh memory: a page of each 512 blocks faults
 * in as it is first written, about 2 us a page where measured) costs
 * this many units. */
#define LCS_SETUP_UNITS 2

uint64_t wb_fz_lcs_units(size_t m, size_t n) {
    return sat_add(pattern_kernel_units(m, n), sat_mul(blocks_of(min_size(m, n)), LCS_SETUP_UNITS));
}

/* The vector S, block 0 set up (all ones: no position matched yet); the
 * others are set up in the first steps (lcs_setup). */
static bool lcs_vectors(wb_fz_lcs *k, size_t nblocks) {
    if (nblocks <= 1) {
        k->s = &k->one;
    } else {
        k->s = malloc(nblocks * sizeof(uint64_t));
        if (!k->s) return false;
        k->owned_bytes += nblocks * sizeof(uint64_t);
    }
    k->s[0] = ~(uint64_t)0;
    k->ready = 1;
    return true;
}

/* Blocks of S past k->ready set up, as many as `left` units pay for (one
 * at least), adding their units to *spent; true when all are. */
static bool lcs_setup(wb_fz_lcs *k, size_t nblocks, uint64_t left, uint64_t *spent) {
    uint64_t afford = left / LCS_SETUP_UNITS > 0 ? left / LCS_SETUP_UNITS : 1;
    size_t count = nblocks - k->ready <= afford ? nblocks - k->ready : (size_t)afford;
    for (size_t w = k->ready; w < k->ready + count; w++)
        k->s[w] = ~(uint64_t)0;
    k->ready += count;
    uint64_t units = (uint64_t)count * LCS_SETUP_UNITS;
    *spent += units < left ? units : (left > 0 ? left : 1);
    return k->ready == nblocks;
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

uint64_t wb_fz_lcs_setup_units(const wb_fz_lcs *k) {
    size_t nblocks = k->use ? k->use->nblocks : 0;
    return k->ready < nblocks ? (uint64_t)(nblocks - k->ready) * LCS_SETUP_UNITS : 0;
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
        k->s[0] = wb_fz_lcs_word_run(p, k->b + k->col, end - k->col, k->s[0]);
        spent += end - k->col;
        k->col = end;
    } else if (k->ready < nblocks &&
               (spent >= budget || !lcs_setup(k, nblocks, budget - spent, &spent))) {
        /* S is still being set up */
    } else {
        /* whole columns while the budget pays for them: the vector and
         * the column's row of the table through locals, the table's
         * branch (a symbol below 256 or not) once a column */
        if (k->block == 0) {
            uint64_t *sv = k->s;
            const uint32_t *b = k->b;
            size_t col = k->col, lcs = k->lcs, n = k->n;
            while (col < n && budget - spent >= nblocks) {
                uint32_t c = b[col];
                uint64_t carry = 0;
                if (c < 256) {
                    const uint64_t *row = p->low + (size_t)c * nblocks;
                    for (size_t w = 0; w < nblocks; w++) {
                        uint64_t x = sv[w], u = x & row[w];
                        uint64_t sum = x + u, total = sum + carry;
                        carry = (uint64_t)(sum < x) | (uint64_t)(total < sum);
                        sv[w] = total | (x - u);
                    }
                } else {
                    for (size_t w = 0; w < nblocks; w++) {
                        uint64_t x = sv[w], u = x & wb_fz_pattern_get(p, c, w);
                        uint64_t sum = x + u, total = sum + carry;
                        carry = (uint64_t)(sum < x) | (uint64_t)(total < sum);
                        sv[w] = total | (x - u);
                    }
                }
                lcs += carry;
                col++;
                spent += nblocks;
            }
            k->col = col;
            k->lcs = lcs;
        }
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
    if (k->s && k->s != &k->one)
        wb_fz_free_block(k->s, k->use->nblocks * sizeof(uint64_t), k->free_later);
    wb_fz_pattern_free_with(&k->pattern, k->free_later);
    memset(k, 0, sizeof *k);
}

size_t wb_fz_lcs_short(const uint32_t *a, size_t m, const uint32_t *b, size_t n, uint64_t *used) {
    shorter_first(&a, &m, &b, &n);
    if (m == 0) {
        charge(used, 0);
        return 0;
    }
    wb_fz_short p;
    wb_fz_short_begin(&p, a, m);
    size_t lcs;
    if (m <= 64) {
        uint64_t s = ~(uint64_t)0;
        for (size_t j = 0; j < n; j++)
            s = wb_fz_lcs_word(s, wb_fz_short_get(&p, b[j]));
        lcs = wb_fz_lcs_of(s, m);
    } else {
        /* two words, the carry of the first's sum into the second's */
        uint64_t s0 = ~(uint64_t)0, s1 = ~(uint64_t)0;
        for (size_t j = 0; j < n; j++) {
            uint32_t c = b[j];
            uint64_t m0 = 0, m1 = 0;
            if (c < 256) {
                m0 = p.low[c][0];
                m1 = p.low[c][1];
            } else {
                const wb_fz_short_entry *e = wb_fz_short_find(&p, c);
                if (e) {
                    m0 = e->mask[0];
                    m1 = e->mask[1];
                }
            }
            uint64_t u0 = s0 & m0, sum0 = s0 + u0;
            uint64_t u1 = s1 & m1, sum1 = s1 + u1 + (sum0 < s0);
            s0 = sum0 | (s0 - u0);
            s1 = sum1 | (s1 - u1);
        }
        lcs = wb_fz_lcs_of(s0, 64) + wb_fz_lcs_of(s1, m - 64);
    }
    wb_fz_short_end(&p);
    /* the resumable form's units: its pattern, its vector's blocks past
     * the first set up, its columns */
    charge(used, units_of(m, WB_FZ_PATTERN_PER_UNIT) + (blocks_of(m) - 1) * LCS_SETUP_UNITS +
                     blocks_of(m) * n);
    return lcs;
}
