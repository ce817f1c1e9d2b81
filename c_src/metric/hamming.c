/* Hamming (kernels.h): the positions whose symbols differ, the shorter
 * side padded; on symbols, or on the bytes themselves. */
#include "common.h"

#include <string.h>

/* positions compared per unit */
#define HAMMING_CHUNK 16
/* units a chunk costs: measured (wb_fzunits, thread CPU time, 100 KB and
 * a million words a side) a chunk of bytes took 6.7-7.2 ns, where the
 * Levenshtein kernel's unit takes 2.4-3.1; symbols (four times the
 * bytes read) are charged the same, so both modes take the same units */
#define HAMMING_CHUNK_UNITS 2

static void hamming_start(wb_fz_hamming *k, size_t m, size_t n, size_t cutoff) {
    k->m = m;
    k->n = n;
    k->at = k->count = 0;
    k->cutoff = cutoff;
    /* the padding alone is above the cutoff: nothing to compare */
    if (above(max_size(m, n) - min_size(m, n), cutoff)) k->at = min_size(m, n);
}

void wb_fz_hamming_init(wb_fz_hamming *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                        size_t cutoff) {
    k->a = a;
    k->b = b;
    k->ab = k->bb = NULL;
    hamming_start(k, m, n, cutoff);
}

void wb_fz_hamming_init_bytes(wb_fz_hamming *k, const uint8_t *a, size_t m, const uint8_t *b,
                              size_t n, size_t cutoff) {
    k->a = k->b = NULL;
    k->ab = a;
    k->bb = b;
    hamming_start(k, m, n, cutoff);
}

/* The differing positions of a whole chunk: a loop of a fixed count,
 * which the compiler turns into vector compares. */
static size_t chunk_differs(const uint32_t *a, const uint32_t *b) {
    uint32_t count = 0;
    for (size_t j = 0; j < HAMMING_CHUNK; j++)
        count += a[j] != b[j];
    return count;
}

/* The bytes of x that are not zero, each as its high bit. */
static inline uint64_t nonzero_bytes(uint64_t x) {
    const uint64_t low7 = UINT64_C(0x7F7F7F7F7F7F7F7F);
    return (((x & low7) + low7) | x) & ~low7;
}

/* The same for bytes: eight a word, the words' flags summed by one
 * multiplication (at most 16 a chunk: no carry between the bytes). */
static size_t chunk_differs_bytes(const uint8_t *a, const uint8_t *b) {
    uint64_t x[2], y[2];
    memcpy(x, a, sizeof x);
    memcpy(y, b, sizeof y);
    uint64_t flags = (nonzero_bytes(x[0] ^ y[0]) >> 7) + (nonzero_bytes(x[1] ^ y[1]) >> 7);
    return (size_t)((flags * UINT64_C(0x0101010101010101)) >> 56);
}

/* Positions [at, end) of a short tail, one by one. */
static size_t tail_differs(const wb_fz_hamming *k, size_t at, size_t end) {
    size_t count = 0;
    if (k->ab) {
        const uint8_t *a = k->ab, *b = k->bb;
        if (end - at >= 8) {
            uint64_t x, y;
            memcpy(&x, a + at, 8);
            memcpy(&y, b + at, 8);
            count += (size_t)(((nonzero_bytes(x ^ y) >> 7) * UINT64_C(0x0101010101010101)) >> 56);
            at += 8;
        }
        for (size_t j = at; j < end; j++)
            count += a[j] != b[j];
        return count;
    }
    for (size_t j = at; j < end; j++)
        count += k->a[j] != k->b[j];
    return count;
}

bool wb_fz_hamming_step(wb_fz_hamming *k, uint64_t budget, uint64_t *used) {
    size_t common = min_size(k->m, k->n), pad = max_size(k->m, k->n) - common;
    size_t at = k->at, count = k->count, cutoff = k->cutoff;
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    /* whole chunks, the cutoff checked after each: a chunk when the
     * budget pays for its units, or one at a step's start (budget 1: the
     * charge is the budget's) */
    const uint64_t per = HAMMING_CHUNK_UNITS;
    while (common - at >= HAMMING_CHUNK && (spent + per <= budget || spent == 0)) {
        count += k->ab ? chunk_differs_bytes(k->ab + at, k->bb + at)
                       : chunk_differs(k->a + at, k->b + at);
        at += HAMMING_CHUNK;
        spent += spent + per <= budget ? per : budget - spent;
        if (above(count + pad, cutoff)) at = common;
    }
    if (at < common && (spent + per <= budget || spent == 0)) {
        count += tail_differs(k, at, common);
        at = common;
        spent += spent + per <= budget ? per : budget - spent;
    }
    k->at = at;
    k->count = count;
    charge(used, spent);
    if (at < common) return false;
    k->result = cut(count + pad, cutoff);
    return true;
}

uint64_t wb_fz_hamming_units(size_t m, size_t n) {
    return ((uint64_t)min_size(m, n) / HAMMING_CHUNK + 1) * HAMMING_CHUNK_UNITS;
}
