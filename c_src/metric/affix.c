/* The common prefix or suffix of two sequences (kernels.h): Prefix's and
 * Postfix's similarity, on symbols or on the bytes themselves. */
#include "common.h"

#include <string.h>

/* positions compared per chunk, and a chunk's units: as Hamming's
 * (hamming.c), which compares the same positions and counts them too,
 * so a unit here is never more work than there */
#define AFFIX_CHUNK       16
#define AFFIX_CHUNK_UNITS 2

static void affix_start(wb_fz_affix *k, size_t m, size_t n, bool suffix, size_t least) {
    k->m = m;
    k->n = n;
    k->at = 0;
    k->suffix = suffix;
    k->result = 0;
    /* no affix the cutoff needs fits the shorter side: nothing to read */
    if (min_size(m, n) < least) k->m = k->n = 0;
}

void wb_fz_affix_init(wb_fz_affix *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                      bool suffix, size_t least) {
    k->a = a;
    k->b = b;
    k->ab = k->bb = NULL;
    affix_start(k, m, n, suffix, least);
}

void wb_fz_affix_init_bytes(wb_fz_affix *k, const uint8_t *a, size_t m, const uint8_t *b, size_t n,
                            bool suffix, size_t least) {
    k->a = k->b = NULL;
    k->ab = a;
    k->bb = b;
    affix_start(k, m, n, suffix, least);
}

/* Whether the positions x of a and y of b (from the start) hold the same
 * symbol. */
static inline bool same_at(const wb_fz_affix *k, size_t x, size_t y) {
    return k->ab ? k->ab[x] == k->bb[y] : k->a[x] == k->b[y];
}

/* Of the `len` positions of the affix from k->at on, how many are equal
 * before the first that differs (len: all of them). A whole run is
 * compared at once, and only a run that differs is walked. */
static size_t run_same(const wb_fz_affix *k, size_t len) {
    size_t at = k->at;
    /* the run's first positions in a and in b */
    size_t x = k->suffix ? k->m - at - len : at, y = k->suffix ? k->n - at - len : at;
    int differs =
        k->ab ? memcmp(k->ab + x, k->bb + y, len) : memcmp(k->a + x, k->b + y, len * sizeof *k->a);
    if (differs == 0) return len;
    size_t i = 0;
    if (k->suffix)
        while (same_at(k, x + len - 1 - i, y + len - 1 - i))
            i++;
    else
        while (same_at(k, x + i, y + i))
            i++;
    return i;
}

bool wb_fz_affix_step(wb_fz_affix *k, uint64_t budget, uint64_t *used) {
    size_t common = min_size(k->m, k->n);
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    /* a chunk when the budget pays for its units, or one at a step's
     * start (budget 1: the charge is the budget's) */
    const uint64_t per = AFFIX_CHUNK_UNITS;
    while (k->at < common && (spent + per <= budget || spent == 0)) {
        size_t len = min_size(AFFIX_CHUNK, common - k->at), same = run_same(k, len);
        k->at += same;
        spent += spent + per <= budget ? per : budget - spent;
        if (same < len) common = k->at; /* the first that differ: done */
    }
    charge(used, spent);
    if (k->at < common) return false;
    k->m = k->n = k->result = k->at; /* done: nothing left to compare */
    return true;
}

uint64_t wb_fz_affix_units(size_t m, size_t n) {
    return ((uint64_t)min_size(m, n) / AFFIX_CHUNK + 1) * AFFIX_CHUNK_UNITS;
}
