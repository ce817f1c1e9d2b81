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
