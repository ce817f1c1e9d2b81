/* Hamming (kernels.h): the positions whose symbols differ, the shorter
 * side padded. */
#include "common.h"

/* positions compared per unit */
#define HAMMING_CHUNK 16

void wb_fz_hamming_init(wb_fz_hamming *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                        size_t cutoff) {
    *k = (wb_fz_hamming){.a = a, .b = b, .m = m, .n = n, .cutoff = cutoff};
    /* the padding alone is above the cutoff: nothing to compare */
    if (above(max_size(m, n) - min_size(m, n), cutoff)) k->at = min_size(m, n);
}

/* The differing positions of a whole chunk: a loop of a fixed count,
 * which the compiler turns into vector compares. */
static size_t chunk_differs(const uint32_t *a, const uint32_t *b) {
    uint32_t count = 0;
    for (size_t j = 0; j < HAMMING_CHUNK; j++)
        count += a[j] != b[j];
    return count;
}

bool wb_fz_hamming_step(wb_fz_hamming *k, uint64_t budget, uint64_t *used) {
    size_t common = min_size(k->m, k->n), pad = max_size(k->m, k->n) - common;
    const uint32_t *a = k->a, *b = k->b;
    size_t at = k->at, count = k->count, cutoff = k->cutoff;
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    /* whole chunks, the cutoff checked after each */
    while (common - at >= HAMMING_CHUNK && spent < budget) {
        count += chunk_differs(a + at, b + at);
        at += HAMMING_CHUNK;
        spent++;
        if (above(count + pad, cutoff)) at = common;
    }
    if (at < common && spent < budget) {
        for (size_t j = at; j < common; j++)
            count += a[j] != b[j];
        at = common;
        spent++;
    }
    k->at = at;
    k->count = count;
    charge(used, spent);
    if (at < common) return false;
    k->result = cut(count + pad, cutoff);
    return true;
}

uint64_t wb_fz_hamming_units(size_t m, size_t n) {
    return (uint64_t)min_size(m, n) / HAMMING_CHUNK + 1;
}
