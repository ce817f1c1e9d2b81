/*
 * A bit helper of the lane kernels (lanes.c) and the batches made once
 * (lanes_index.c). Internal to c_src/search/.
 */
#ifndef WB_LANES_BITS_H
#define WB_LANES_BITS_H

#include <stddef.h>
#include <stdint.h>

/* The n (1..64) low bits. */
static inline uint64_t low_bits(size_t n) {
    return n == 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

#endif
